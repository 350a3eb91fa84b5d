/* reader.h -- the request-path JSON reader: parses an AdmissionReview body into a jansson tree
 * that holds only what the rules read.
 *
 * Contract (differentially fuzzed against jansson, tests/fuzz/fuzz_reader.c):
 * - it accepts exactly the inputs json_loadb(buf, len, 0, &err) accepts and rejects the others
 *   (syntax, strict UTF-8, no \u0000, integer and real overflow, depth 2048, trailing bytes);
 * - the tree equals jansson's tree with these members removed (tg_reader_prune does the same
 *   removal on a jansson tree):
 *     every member of request but uid, kind, operation, namespace, name, dryRun, userInfo,
 *     object and oldObject (options, resource, requestKind, requestResource, subResource...),
 *     every member of request.userInfo but username,
 *     request.object.status, request.object.metadata.managedFields,
 *     request.object.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"],
 *     and the same three under request.oldObject. oldObject itself is kept for every kind:
 *     the rules skip an UPDATE whose spec is unchanged (tg_workload_spec_unchanged), and
 *     nodeset.* compares old and new spec.
 * Skipped members are still fully validated; they are just never built.
 * Two exceptions to "accepts exactly what jansson accepts":
 * - a NUL byte outside a string is refused, as RFC 8259 says; jansson 2.14 drops one that comes
 *   right after a number or a literal (`[1\0]` and `{"a":null\0}` parse), an artefact of its
 *   stream buffer, which uses NUL as its end mark (found by fuzzing; no API server sends it);
 * - a review whose built tree would hold more than TG_READER_MAX_VALUES values is refused
 *   ("review too large"). Each value costs about 50 bytes, so a 3 MiB body of tiny values (an
 *   array of zeros in a CRD's preserved fields, or a huge labels map seen by /mutate before
 *   validation) built ~80 MiB per request, and a few at once OOM-killed a pod with a 128 MiB
 *   limit. Real objects hold a few thousand values. */
#define TG_READER_MAX_VALUES 250000
#ifndef TG_READER_H
#define TG_READER_H

#include <jansson.h>
#include <stddef.h>

/* New reference, or NULL with "malformed JSON at line L, column C: reason" in err. */
json_t *tg_reader_load(const char *buf, size_t len, char *err, size_t errlen);

/* The members of an AdmissionReview that tg_review_parse checks: the root's, and those of the
 * root's request when it is an object. */
enum tg_review_member {
    TG_RM_API_VERSION,
    TG_RM_KIND,
    TG_RM_REQUEST,
    TG_RM_UID, /* request.uid, ... */
    TG_RM_REQUEST_KIND,
    TG_RM_OPERATION,
    TG_RM_NAMESPACE,
    TG_RM_NAME,
    TG_RM_DRY_RUN,
    TG_RM_USER_INFO,
    TG_RM_OBJECT,
    TG_RM_OLD_OBJECT,
    TG_RM_COUNT
};

/* tg_reader_load, noting those members as they are built: on success members[m] is what
 * json_object_get would return for m on the tree (borrowed; the last of duplicate keys; NULL when
 * absent, and every request member NULL when the request is absent or not an object). A review
 * then needs no lookups by name. */
/* The key of member m in its object ("kind" for both TG_RM_KIND and TG_RM_REQUEST_KIND). */
const char *tg_review_member_name(enum tg_review_member m);
json_t *tg_reader_load_review(const char *buf, size_t len, json_t *members[TG_RM_COUNT], char *err,
                              size_t errlen);

/* Removes from a full AdmissionReview tree what tg_reader_load never builds. */
void tg_reader_prune(json_t *root);

#endif
