/* review.h -- an admission.k8s.io AdmissionReview request, decoded and checked. */
#ifndef TG_REVIEW_H
#define TG_REVIEW_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

#include "tg/workload.h"

/* Owns root; every other pointer is borrowed from it and lives as long as the review. */
struct tg_review {
    json_t *root;
    const char *api_version; /* "admission.k8s.io/v1" or ".../v1beta1" */
    const char *uid;
    const char *group, *version, *kind; /* request.kind; group "" for core */
    const char *namespace, *name;       /* "" when absent */
    const char *operation;              /* as sent */
    enum tg_op op;
    bool dry_run;
    const char *username;        /* "" when absent */
    json_t *object, *old_object; /* NULL when absent or null */
};

#define TG_REVIEW_ERR_MAX 256

/* Parses and checks an AdmissionReview request body. On success returns 0 and fills rv (release
 * with tg_review_release). On failure returns -EINVAL (the body is not a valid review: malformed
 * JSON, wrong apiVersion/kind, missing request or uid, wrong JSON types) or -ENOMEM, with a
 * one-line reason in err that names the field. */
int tg_review_parse(const char *buf, size_t len, struct tg_review *rv, char *err, size_t errlen);

/* Fills rv from an already-parsed root (stolen). Same contract as tg_review_parse. */
int tg_review_from_json(json_t *root, struct tg_review *rv, char *err, size_t errlen);

/* A synthetic CREATE review around a manifest (for `trainguard check`). obj is borrowed and must
 * outlive rv; group/version/kind come from its apiVersion and kind. */
int tg_review_from_object(json_t *obj, struct tg_review *rv, char *err, size_t errlen);

void tg_review_release(struct tg_review *rv);

const char *tg_op_name(enum tg_op op);

#endif
