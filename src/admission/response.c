/* response.c -- the only encoder of AdmissionReview responses and of HTTP error bodies. */
#include <stdlib.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/jsonw.h"
#include "tg/response.h"

/* A string literal appended without measuring it at run time. */
#define TG_BUF_LIT(b, lit) tg_buf_put((b), (lit), sizeof(lit) - 1)

/* kube-apiserver checks (docs/references.md#ref-admission-response-checks): uid echoed, same
 * apiVersion and kind AdmissionReview, patch and patchType together and only from a mutating
 * webhook. Written by hand with the compact writer: json_dumps of this small object cost more than
 * the rules. */
char *tg_response_encode(const struct tg_review *rv, const struct tg_result *res, bool mutating,
                         size_t *len)
{
    struct tg_buf b;
    char code[16];
    tg_buf_init(&b);
    TG_BUF_LIT(&b, "{\"apiVersion\":");
    tg_buf_json_string(&b, rv->api_version, strlen(rv->api_version));
    TG_BUF_LIT(&b, ",\"kind\":\"AdmissionReview\",\"response\":{\"uid\":");
    tg_buf_json_string(&b, rv->uid, strlen(rv->uid));
    if (res->allowed)
        TG_BUF_LIT(&b, ",\"allowed\":true");
    else
        TG_BUF_LIT(&b, ",\"allowed\":false");
    if (!res->allowed) {
        const char *msg = res->message ? res->message : "denied";
        snprintf(code, sizeof(code), "%d", res->code >= 400 ? res->code : 403);
        TG_BUF_LIT(&b, ",\"status\":{\"status\":\"Failure\",\"reason\":\"Forbidden\",\"message\":");
        tg_buf_json_string(&b, msg, strlen(msg));
        TG_BUF_LIT(&b, ",\"code\":");
        tg_buf_puts(&b, code);
        TG_BUF_LIT(&b, "}");
    }
    if (json_array_size(res->warnings)) {
        TG_BUF_LIT(&b, ",\"warnings\":");
        tg_buf_json(&b, res->warnings);
    }
    if (json_object_size(res->audit)) {
        TG_BUF_LIT(&b, ",\"auditAnnotations\":");
        tg_buf_json(&b, res->audit);
    }
    if (mutating && tg_patch_count(&res->patch) > 0) {
        TG_BUF_LIT(&b, ",\"patchType\":\"JSONPatch\",\"patch\":\"");
        if (tg_patch_base64_to(&res->patch, &b) < 0) { /* encoded into the body itself */
            tg_buf_release(&b);
            return NULL;
        }
        TG_BUF_LIT(&b, "\"");
    }
    TG_BUF_LIT(&b, "}}");
    return tg_buf_steal(&b, len);
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
    struct tg_buf b;
    tg_buf_init(&b);
    tg_buf_json(&b, st);
    json_decref(st);
    return tg_buf_steal(&b, len);
}
