/* response.h -- the one encoder of AdmissionReview responses and of bad-request Status bodies. */
#ifndef TG_RESPONSE_H
#define TG_RESPONSE_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/pipeline.h"
#include "tg/review.h"

/* Encodes the AdmissionReview response for rv (same apiVersion, uid echoed). The patch and
 * patchType are included only when mutating and res->patch is non-empty. Returns a malloc'd
 * JSON string or NULL on ENOMEM. */
char *tg_response_encode(const struct tg_review *rv, const struct tg_result *res, bool mutating,
                         size_t *len);

/* A JSON error body for bad requests (HTTP 4xx/5xx): a meta.k8s.io/v1 Status
 * {"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":...,"reason":...,
 * "code":N}, which client-go decodes into the error the apiserver reports, and a person with curl
 * can read. Malloc'd, NULL on ENOMEM. */
char *tg_error_body(int code, const char *message, size_t *len);

#endif
