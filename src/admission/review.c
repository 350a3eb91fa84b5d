/* review.c -- decode and check an AdmissionReview request (admission.k8s.io v1 and v1beta1). */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "tg/arena.h"
#include "tg/finding.h"
#include "tg/reader.h"
#include "tg/review.h"

static const char *const review_versions[] = {"admission.k8s.io/v1", "admission.k8s.io/v1beta1"};

const char *tg_op_name(enum tg_op op)
{
    switch (op) {
    case TG_OP_CREATE:
        return "CREATE";
    case TG_OP_UPDATE:
        return "UPDATE";
    case TG_OP_DELETE:
        return "DELETE";
    case TG_OP_CONNECT:
        return "CONNECT";
    }
    return "UNKNOWN";
}

static int op_parse(const char *s, enum tg_op *op)
{
    static const enum tg_op ops[] = {TG_OP_CREATE, TG_OP_UPDATE, TG_OP_DELETE, TG_OP_CONNECT};
    for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
        if (!strcmp(s, tg_op_name(ops[i]))) {
            *op = ops[i];
            return 0;
        }
    }
    return -EINVAL;
}

/* A field of an object the review reads, by name. */
struct field {
    const char *name;
    size_t len;
};
#define FIELD(s)                                                                                   \
    {                                                                                              \
        s, sizeof(s) - 1                                                                           \
    }

/* The members of obj named in fields[0..n) into out[0..n) (NULL when absent), in one pass over
 * obj: a request has about a dozen members and each json_object_get hashed its key and searched
 * the table, which cost more than reading every member once. A jansson object holds each key
 * once, so this finds what json_object_get would. */
static void get_fields(json_t *obj, const struct field *fields, size_t n, json_t **out)
{
    for (size_t i = 0; i < n; i++)
        out[i] = NULL;
    for (void *it = json_object_iter(obj); it; it = json_object_iter_next(obj, it)) {
        const char *key = json_object_iter_key(it);
        size_t len = json_object_iter_key_len(it);
        for (size_t i = 0; i < n; i++) {
            if (fields[i].len == len && fields[i].name[0] == key[0] &&
                !memcmp(fields[i].name, key, len)) {
                out[i] = json_object_iter_value(it);
                break;
            }
        }
    }
}

/* A string member v (named key): 0 and *out when present and a string; "" when absent or null
 * (optional); -EINVAL with a message when of another type. */
static int opt_string(json_t *v, const char *key, const char *where, const char **out, char *err,
                      size_t errlen)
{
    if (!v || json_is_null(v)) {
        *out = "";
        return 0;
    }
    if (!json_is_string(v)) {
        snprintf(err, errlen, "%s%s must be a string", where, key);
        return -EINVAL;
    }
    *out = json_string_value(v);
    return 0;
}

static int opt_object(json_t *v, const char *key, json_t **out, char *err, size_t errlen)
{
    *out = NULL;
    if (!v || json_is_null(v))
        return 0;
    if (!json_is_object(v)) {
        snprintf(err, errlen, "request.%s must be an object", key);
        return -EINVAL;
    }
    *out = v;
    return 0;
}

enum { K_GROUP, K_VERSION, K_KIND, K_COUNT };
static const struct field kind_fields[K_COUNT] = {FIELD("group"), FIELD("version"), FIELD("kind")};

static const struct field request_fields[TG_RM_COUNT - TG_RM_UID] = {
    [TG_RM_UID - TG_RM_UID] = FIELD("uid"),
    [TG_RM_REQUEST_KIND - TG_RM_UID] = FIELD("kind"),
    [TG_RM_OPERATION - TG_RM_UID] = FIELD("operation"),
    [TG_RM_NAMESPACE - TG_RM_UID] = FIELD("namespace"),
    [TG_RM_NAME - TG_RM_UID] = FIELD("name"),
    [TG_RM_DRY_RUN - TG_RM_UID] = FIELD("dryRun"),
    [TG_RM_USER_INFO - TG_RM_UID] = FIELD("userInfo"),
    [TG_RM_OBJECT - TG_RM_UID] = FIELD("object"),
    [TG_RM_OLD_OBJECT - TG_RM_UID] = FIELD("oldObject"),
};

/* Checks the request whose members are f (indexed by enum tg_review_member). */
static int check_request(struct tg_review *rv, json_t *const *f, char *err, size_t errlen)
{
    json_t *k[K_COUNT], *kind, *dry, *user, *uid;
    const char *op;
    int rc;
    uid = f[TG_RM_UID];
    if (!uid || json_is_null(uid) || (json_is_string(uid) && !json_string_length(uid))) {
        snprintf(err, errlen, "request.uid is missing");
        return -EINVAL;
    }
    if (!json_is_string(uid)) {
        snprintf(err, errlen, "request.uid must be a string");
        return -EINVAL;
    }
    rv->uid = json_string_value(uid);
    kind = f[TG_RM_REQUEST_KIND];
    if (!json_is_object(kind)) {
        snprintf(err, errlen, "request.kind must be an object {group, version, kind}");
        return -EINVAL;
    }
    get_fields(kind, kind_fields, K_COUNT, k);
    if ((rc = opt_string(k[K_GROUP], "group", "request.kind.", &rv->group, err, errlen)) ||
        (rc = opt_string(k[K_VERSION], "version", "request.kind.", &rv->version, err, errlen)) ||
        (rc = opt_string(k[K_KIND], "kind", "request.kind.", &rv->kind, err, errlen)))
        return rc;
    if (!*rv->kind || !*rv->version) {
        snprintf(err, errlen, "request.kind.version and request.kind.kind are required");
        return -EINVAL;
    }
    if ((rc = opt_string(f[TG_RM_OPERATION], "operation", "request.", &op, err, errlen)))
        return rc;
    if (op_parse(op, &rv->op) < 0) {
        snprintf(err, errlen, "request.operation must be CREATE, UPDATE, DELETE or CONNECT");
        return -EINVAL;
    }
    rv->operation = op;
    if ((rc = opt_string(f[TG_RM_NAMESPACE], "namespace", "request.", &rv->namespace, err,
                         errlen)) ||
        (rc = opt_string(f[TG_RM_NAME], "name", "request.", &rv->name, err, errlen)))
        return rc;
    dry = f[TG_RM_DRY_RUN];
    if (dry && !json_is_null(dry) && !json_is_boolean(dry)) {
        snprintf(err, errlen, "request.dryRun must be a boolean");
        return -EINVAL;
    }
    rv->dry_run = json_is_true(dry);
    user = f[TG_RM_USER_INFO];
    rv->username = "";
    if (user && !json_is_null(user)) {
        if (!json_is_object(user)) {
            snprintf(err, errlen, "request.userInfo must be an object");
            return -EINVAL;
        }
        if ((rc = opt_string(json_object_get(user, "username"), "username", "request.userInfo.",
                             &rv->username, err, errlen)))
            return rc;
    }
    if ((rc = opt_object(f[TG_RM_OBJECT], "object", &rv->object, err, errlen)) ||
        (rc = opt_object(f[TG_RM_OLD_OBJECT], "oldObject", &rv->old_object, err, errlen)))
        return rc;
    if (!rv->object && (rv->op == TG_OP_CREATE || rv->op == TG_OP_UPDATE)) {
        snprintf(err, errlen, "request.object is required for %s", op);
        return -EINVAL;
    }
    return 0;
}

static const struct field review_fields[TG_RM_UID] = {
    [TG_RM_API_VERSION] = FIELD("apiVersion"),
    [TG_RM_KIND] = FIELD("kind"),
    [TG_RM_REQUEST] = FIELD("request"),
};

/* Fills rv from root (stolen) and its members m (enum tg_review_member). */
static int review_check(json_t *root, json_t *const *m, struct tg_review *rv, char *err,
                        size_t errlen)
{
    json_t *req;
    int rc = -EINVAL;
    memset(rv, 0, sizeof(*rv));
    rv->root = root;
    if (!json_is_object(root)) {
        snprintf(err, errlen, "body must be a JSON object (an AdmissionReview)");
        goto fail;
    }
    json_t *av = m[TG_RM_API_VERSION];
    json_t *kind = m[TG_RM_KIND];
    if (!json_is_string(av) || !json_is_string(kind) ||
        strcmp(json_string_value(kind), "AdmissionReview")) {
        snprintf(err, errlen, "apiVersion and kind must be admission.k8s.io/v1 AdmissionReview");
        goto fail;
    }
    for (size_t i = 0; i < sizeof(review_versions) / sizeof(review_versions[0]); i++) {
        if (!strcmp(json_string_value(av), review_versions[i]))
            rv->api_version = review_versions[i];
    }
    if (!rv->api_version) {
        /* Cut by runes, not bytes: a split UTF-8 sequence made the Status body unencodable, and
         * the client got a 400 without any message. */
        char shown[64 * 4 + 1];
        tg_text_sanitize(json_string_value(av), shown, sizeof(shown), 64);
        snprintf(err, errlen,
                 "unsupported apiVersion \"%s\": expected admission.k8s.io/v1 or v1beta1", shown);
        goto fail;
    }
    req = m[TG_RM_REQUEST];
    if (!req || json_is_null(req)) {
        snprintf(err, errlen, "request is missing");
        goto fail;
    }
    if (!json_is_object(req)) {
        snprintf(err, errlen, "request must be an object");
        goto fail;
    }
    if ((rc = check_request(rv, m, err, errlen)) < 0)
        goto fail;
    return 0;
fail:
    json_decref(root);
    memset(rv, 0, sizeof(*rv));
    return rc;
}

int tg_review_from_json(json_t *root, struct tg_review *rv, char *err, size_t errlen)
{
    json_t *m[TG_RM_COUNT] = {0};
    if (json_is_object(root)) {
        get_fields(root, review_fields, TG_RM_UID, m);
        if (json_is_object(m[TG_RM_REQUEST]))
            get_fields(m[TG_RM_REQUEST], request_fields, TG_RM_COUNT - TG_RM_UID, m + TG_RM_UID);
    }
    return review_check(root, m, rv, err, errlen);
}

int tg_review_parse(const char *buf, size_t len, struct tg_review *rv, char *err, size_t errlen)
{
    memset(rv, 0, sizeof(*rv));
    if (len == 0) {
        snprintf(err, errlen, "empty body: expected an AdmissionReview");
        return -EINVAL;
    }
    /* Duplicate keys: the last one wins, as in Go's encoding/json on the API server's side. */
    json_t *m[TG_RM_COUNT];
    json_t *root = tg_reader_load_review(buf, len, m, err, errlen);
    if (!root)
        return strstr(err, "out of memory") ? -ENOMEM : -EINVAL;
    return review_check(root, m, rv, err, errlen);
}

int tg_review_from_object(json_t *obj, struct tg_review *rv, char *err, size_t errlen)
{
    static char empty[] = "";
    memset(rv, 0, sizeof(*rv));
    if (!json_is_object(obj)) {
        snprintf(err, errlen, "document is not an object");
        return -EINVAL;
    }
    const char *av = json_string_value(json_object_get(obj, "apiVersion"));
    const char *kind = json_string_value(json_object_get(obj, "kind"));
    if (!av || !kind || !*kind) {
        snprintf(err, errlen, "document has no apiVersion and kind");
        return -EINVAL;
    }
    /* Split "group/version"; a core object has no group. Stored in root to be owned. */
    const char *slash = strchr(av, '/');
    json_t *root = json_pack("{s:s%, s:s}", "group", av, slash ? (size_t)(slash - av) : (size_t)0,
                             "version", slash ? slash + 1 : av);
    if (!root)
        return -ENOMEM;
    rv->root = root;
    rv->api_version = "admission.k8s.io/v1";
    rv->uid = "offline";
    rv->group = json_string_value(json_object_get(root, "group"));
    rv->version = json_string_value(json_object_get(root, "version"));
    rv->kind = kind;
    json_t *meta = json_object_get(obj, "metadata");
    const char *ns = json_string_value(json_object_get(meta, "namespace"));
    const char *name = json_string_value(json_object_get(meta, "name"));
    rv->namespace = ns ? ns : empty;
    rv->name = name ? name : empty;
    rv->operation = "CREATE";
    rv->op = TG_OP_CREATE;
    rv->username = empty;
    rv->object = obj;
    return 0;
}

void tg_review_release(struct tg_review *rv)
{
    /* A tree built in the request arena goes with the arena: walking it to free each value (which
     * the arena ignores) cost more than the rules. Nothing outside the request holds a part of it.
     */
    if (!tg_arena_holds(rv->root))
        json_decref(rv->root);
    memset(rv, 0, sizeof(*rv));
}
