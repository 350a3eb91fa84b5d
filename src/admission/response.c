/* response.c -- the only encoder of AdmissionReview responses and of HTTP error bodies. */
#include <stdlib.h>
#include <string.h>

#include "tg/pipeline.h"

/* kube-apiserver checks (api-facts 1.5): uid echoed, same apiVersion and kind AdmissionReview,
 * patch and patchType together and only from a mutating webhook. */
char *tg_response_encode(const struct tg_review *rv, const struct tg_result *res, bool mutating,
                         size_t *len)
{
    char *out = NULL;
    json_t *resp = json_pack("{s:s, s:b}", "uid", rv->uid, "allowed", res->allowed);
    if (!resp)
        return NULL;
    if (!res->allowed) {
        json_t *st = json_pack("{s:s, s:s, s:s, s:i}", "status", "Failure", "reason", "Forbidden",
                               "message", res->message ? res->message : "denied", "code",
                               res->code >= 400 ? res->code : 403);
        if (!st || json_object_set_new(resp, "status", st))
            goto out;
    }
    if (json_array_size(res->warnings) &&
        json_object_set(resp, "warnings", res->warnings))
        goto out;
    if (json_object_size(res->audit) && json_object_set(resp, "auditAnnotations", res->audit))
        goto out;
    if (mutating && tg_patch_count(&res->patch) > 0) {
        char *b64 = tg_patch_base64(&res->patch);
        if (!b64 || json_object_set_new(resp, "patchType", json_string("JSONPatch")) ||
            json_object_set_new(resp, "patch", json_string(b64))) {
            free(b64);
            goto out;
        }
        free(b64);
    }
    json_t *root = json_pack("{s:s, s:s, s:O}", "apiVersion", rv->api_version, "kind",
                             "AdmissionReview", "response", resp);
    if (!root)
        goto out;
    out = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    if (out && len)
        *len = strlen(out);
out:
    json_decref(resp);
    return out;
}

static const char *reason_for(int code)
{
    switch (code) {
    case 400:
        return "BadRequest";
    case 401:
        return "Unauthorized";
    case 403:
        return "Forbidden";
    case 404:
        return "NotFound";
    case 405:
        return "MethodNotAllowed";
    case 413:
        return "RequestEntityTooLarge";
    case 415:
        return "UnsupportedMediaType";
    case 503:
        return "ServiceUnavailable";
    default:
        return code >= 500 ? "InternalError" : "BadRequest";
    }
}

char *tg_error_body(int code, const char *message, size_t *len)
{
    json_t *st = json_pack("{s:s, s:s, s:{}, s:s, s:s, s:s, s:i}", "kind", "Status", "apiVersion",
                           "v1", "metadata", "status", "Failure", "message", message, "reason",
                           reason_for(code), "code", code);
    if (!st)
        return NULL;
    char *out = json_dumps(st, JSON_COMPACT);
    json_decref(st);
    if (out && len)
        *len = strlen(out);
    return out;
}
