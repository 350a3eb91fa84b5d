/* handler.h -- one AdmissionReview request body in, one HTTP answer out. The server and the
 * golden tests both call this, so what is tested is what is served. */
#ifndef TG_HANDLER_H
#define TG_HANDLER_H

#include <stdbool.h>
#include <stddef.h>

#include "tg/pipeline.h"

struct tg_admission_out {
    int http_status; /* 200 with a review; 400 bad request; 500 could not decide */
    char *body;      /* malloc'd JSON (review or Status); release frees it */
    size_t len;
    bool decoded;            /* a review was decoded: the fields below are set */
    struct tg_review review; /* the decoded request (uid, kind, namespace, name, user ...) */
    struct tg_result result; /* verdict, findings, patch; valid when http_status == 200 */
    const char *verdict;     /* "allowed", "denied", "error" (static) */
    char error[256];         /* why, for 4xx/5xx */
};

/* Decodes body, evaluates it under policy (mutating: /mutate semantics), encodes the answer.
 * Never fails: errors become a 4xx/5xx with a Status body (see tg_error_body). The JSON values of
 * the request live in the thread's arena when tg_arena_install() was called (include/tg/arena.h):
 * release `out` on the same thread, before handling the next request there. */
void tg_admission_handle(const struct tg_policy *policy, const struct tg_pipeline_opts *base,
                         bool mutating, const char *body, size_t len, struct tg_admission_out *out);
void tg_admission_out_release(struct tg_admission_out *out);

#endif
