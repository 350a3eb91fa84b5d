/* test_engine.c -- findings, text, paths, JSON Patch, base64, review decoding, the verdict under
 * each mode, and the response encoder, driven by test-only rules and mutators. */
#include <check.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tg/base64.h"
#include "tg/catalogue.h"
#include "tg/handler.h"
#include "tg/jsonw.h"
#include "tg/patch.h"
#include "tg/path.h"
#include "tg/pipeline.h"
#include "tg/response.h"
#include "tg/yaml_json.h"

/* ---- findings and text ---------------------------------------------------------------------- */

START_TEST(findings_drop_duplicates_and_sort_by_rule_table_order)
{
    struct tg_findings fs;
    tg_findings_init(&fs);
    ck_assert_int_eq(tg_findings_add(&fs, "b", 5, TG_ACTION_WARN, "f1", "first %d", 1), 0);
    ck_assert_int_eq(tg_findings_add(&fs, "a", 2, TG_ACTION_DENY, "f2", "x"), 0);
    ck_assert_int_eq(tg_findings_add(&fs, "b", 5, TG_ACTION_WARN, "f1", "again"), 0);
    ck_assert_int_eq(tg_findings_add(&fs, "b", 5, TG_ACTION_WARN, "f0", "second"), 0);
    ck_assert_uint_eq(fs.n, 3);
    tg_findings_sort(&fs);
    ck_assert_str_eq(fs.v[0].rule, "a");
    ck_assert_str_eq(fs.v[1].field, "f1");
    ck_assert_str_eq(fs.v[1].message, "first 1");
    ck_assert_str_eq(fs.v[2].field, "f0");
    char line[128];
    tg_finding_format(&fs.v[0], line, sizeof(line));
    ck_assert_str_eq(line, "[a] f2: x");
    tg_findings_release(&fs);
}
END_TEST

START_TEST(sanitize_replaces_control_characters_and_cuts_at_rune_limit)
{
    char out[1200];
    tg_text_sanitize("a\nb\tc\x7f"
                     "d",
                     out, sizeof(out), 256);
    ck_assert_str_eq(out, "a b c d");
    tg_text_sanitize("bad \xff byte \xc3\x28", out, sizeof(out), 256);
    ck_assert_str_eq(out, "bad ? byte ?(");
    char longtext[400];
    memset(longtext, 'x', 300);
    longtext[300] = '\0';
    tg_text_sanitize(longtext, out, sizeof(out), 256);
    ck_assert_uint_eq(strlen(out), 256);
    ck_assert_str_eq(out + 253, "...");
    /* 300 two-byte runes: cut at 256 runes, never inside a sequence. */
    char utf[700] = "";
    for (int i = 0; i < 300; i++)
        memcpy(utf + 2 * i, "\xc3\xa9", 3);
    tg_text_sanitize(utf, out, sizeof(out), 256);
    ck_assert_uint_eq(strlen(out), 253 * 2 + 3);
}
END_TEST

/* ---- paths ------------------------------------------------------------------------------------
 */

START_TEST(paths_escape_keys_for_people_and_for_json_pointers)
{
    struct tg_path p;
    tg_path_root(&p);
    tg_path_key(&p, &p, "spec");
    tg_path_key(&p, &p, "containers");
    tg_path_index(&p, &p, 0);
    tg_path_key(&p, &p, "resources");
    tg_path_key(&p, &p, "limits");
    tg_path_key(&p, &p, "vpc.amazonaws.com/efa");
    ck_assert_str_eq(p.field, "spec.containers[0].resources.limits[vpc.amazonaws.com/efa]");
    ck_assert_str_eq(p.ptr, "/spec/containers/0/resources/limits/vpc.amazonaws.com~1efa");
    ck_assert(!p.overflow);
    char buf[32] = "";
    ck_assert_int_eq(tg_ptr_append(buf, sizeof(buf), "a~b/c"), 0);
    ck_assert_str_eq(buf, "/a~0b~1c");
    char tiny[4] = "";
    ck_assert_int_eq(tg_ptr_append(tiny, sizeof(tiny), "abcdef"), -ENAMETOOLONG);
    ck_assert_str_eq(tiny, "");
    for (int i = 0; i < 100; i++)
        tg_path_key(&p, &p, "deeper");
    ck_assert(p.overflow);
}
END_TEST

/* Which keys print after a dot: letters, digits, '_' and '-' only (the C locale's isalnum);
 * anything else, a byte above 0x7f included, and the empty key print in brackets. */
START_TEST(paths_print_plain_keys_after_a_dot_and_others_in_brackets)
{
    static const char *const keys[] = {"aZ09_-", "a.b", "a b", "caf\xc3\xa9",
                                       "",       "~",   "x/y", "A:b"};
    static const char *const fields[] = {"r.aZ09_-", "r[a.b]", "r[a b]", "r[caf\xc3\xa9]",
                                         "r[]",      "r[~]",   "r[x/y]", "r[A:b]"};
    static const char *const ptrs[] = {"/r/aZ09_-", "/r/a.b", "/r/a b",  "/r/caf\xc3\xa9",
                                       "/r/",       "/r/~0",  "/r/x~1y", "/r/A:b"};
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        struct tg_path r, p;
        tg_path_root(&r);
        tg_path_key(&r, &r, "r");
        tg_path_key(&p, &r, keys[i]);
        ck_assert_str_eq(p.field, fields[i]);
        ck_assert_str_eq(p.ptr, ptrs[i]);
        ck_assert_uint_eq(p.field_len, strlen(fields[i]));
        ck_assert_uint_eq(p.ptr_len, strlen(ptrs[i]));
    }
}
END_TEST

/* Every byte, alone and between plain ones: a key prints after a dot when each of its bytes is an
 * ASCII letter or digit, '_' or '-', else in brackets; the pointer escapes only '~' and '/'. */
START_TEST(paths_classify_every_byte)
{
    for (int c = 1; c < 256; c++) {
        for (int pad = 0; pad < 2; pad++) {
            char key[4], field[16], ptr[16];
            const char *tok = c == '~' ? "~0" : c == '/' ? "~1" : NULL;
            bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '_' || c == '-';
            if (pad)
                snprintf(key, sizeof(key), "a%cb", c);
            else
                snprintf(key, sizeof(key), "%c", c);
            snprintf(field, sizeof(field), plain ? "r.%s" : "r[%s]", key);
            if (tok)
                snprintf(ptr, sizeof(ptr), pad ? "/r/a%sb" : "/r/%s", tok);
            else
                snprintf(ptr, sizeof(ptr), "/r/%s", key);
            struct tg_path r, p;
            tg_path_root(&r);
            tg_path_key(&r, &r, "r");
            tg_path_key(&p, &r, key);
            ck_assert_msg(!strcmp(p.field, field), "byte %d: field %s, expected %s", c, p.field,
                          field);
            ck_assert_msg(!strcmp(p.ptr, ptr), "byte %d: ptr %s, expected %s", c, p.ptr, ptr);
            ck_assert_uint_eq(p.field_len, strlen(field));
            ck_assert_uint_eq(p.ptr_len, strlen(ptr));
        }
    }
}
END_TEST

/* A key at the root prints without a dot (or in brackets); a key fills the field up to its last
 * byte, and one byte more overflows and leaves the field as it was. */
START_TEST(paths_at_the_root_and_at_the_last_byte)
{
    struct tg_path r, p;
    char key[TG_PATH_MAX + 1];
    tg_path_root(&r);
    tg_path_key(&p, &r, "spec");
    ck_assert_str_eq(p.field, "spec");
    ck_assert_str_eq(p.ptr, "/spec");
    tg_path_key(&p, &r, "a b");
    ck_assert_str_eq(p.field, "[a b]");
    ck_assert_str_eq(p.ptr, "/a b");
    tg_path_key(&p, &r, "");
    ck_assert_str_eq(p.field, "[]");
    ck_assert_str_eq(p.ptr, "/");
    for (size_t n = TG_PATH_MAX - 2; n <= TG_PATH_MAX; n++) {
        memset(key, 'k', n);
        key[n] = '\0';
        tg_path_key(&p, &r, key);
        /* field: n bytes + NUL; pointer: '/' + n bytes + NUL */
        ck_assert_uint_eq(p.field_len, n < TG_PATH_MAX ? n : 0);
        ck_assert_uint_eq(strlen(p.field), p.field_len);
        ck_assert_uint_eq(p.ptr_len, n < TG_PATH_MAX - 1 ? n + 1 : 0);
        ck_assert_uint_eq(strlen(p.ptr), p.ptr_len);
        ck_assert(p.overflow == (n >= TG_PATH_MAX - 1));
    }
    tg_path_key(&r, &r, "r");
    memset(key, 'k', TG_PATH_MAX - 4);
    key[TG_PATH_MAX - 4] = '\0';
    tg_path_key(&p, &r, key); /* "r." + 252 bytes + NUL fills 255 + 1 */
    ck_assert_uint_eq(p.field_len, TG_PATH_MAX - 2);
    key[TG_PATH_MAX - 4] = 'k';
    key[TG_PATH_MAX - 3] = '\0';
    tg_path_key(&p, &r, key);
    ck_assert_uint_eq(p.field_len, TG_PATH_MAX - 1);
    key[TG_PATH_MAX - 3] = 'k';
    key[TG_PATH_MAX - 2] = '\0';
    tg_path_key(&p, &r, key);
    ck_assert_str_eq(p.field, "r");
    ck_assert(p.overflow);
}
END_TEST

/* The kept lengths match the strings through escapes, indexes, copies and overflow. */
/* An index prints as "[i]" and "/i"; one that fills the field or the pointer up to its last byte
 * fits, one byte more overflows and leaves that string as it was; 0 and SIZE_MAX print whole. */
START_TEST(paths_index_at_the_last_byte)
{
    struct tg_path r, p;
    char key[TG_PATH_MAX + 1], want[TG_PATH_MAX + 32];
    tg_path_root(&r);
    tg_path_index(&p, &r, 0);
    ck_assert_str_eq(p.field, "[0]");
    ck_assert_str_eq(p.ptr, "/0");
    tg_path_index(&p, &r, SIZE_MAX);
    snprintf(want, sizeof(want), "[%zu]", (size_t)SIZE_MAX);
    ck_assert_str_eq(p.field, want);
    snprintf(want, sizeof(want), "/%zu", (size_t)SIZE_MAX);
    ck_assert_str_eq(p.ptr, want);
    /* a key of n bytes, then index 12: the field needs n + 4 + 1 bytes, the pointer n + 4 + 1 */
    for (size_t n = TG_PATH_MAX - 7; n <= TG_PATH_MAX - 4; n++) {
        memset(key, 'k', n);
        key[n] = '\0';
        tg_path_root(&r);
        tg_path_key(&r, &r, key);
        tg_path_index(&p, &r, 12);
        bool fits_field = n + 4 + 1 <= TG_PATH_MAX, fits_ptr = n + 1 + 3 + 1 <= TG_PATH_MAX;
        snprintf(want, sizeof(want), "%s[12]", key);
        ck_assert_str_eq(p.field, fits_field ? want : key);
        snprintf(want, sizeof(want), "/%s/12", key);
        ck_assert_str_eq(p.ptr, fits_ptr ? want : r.ptr);
        ck_assert_uint_eq(p.field_len, strlen(p.field));
        ck_assert_uint_eq(p.ptr_len, strlen(p.ptr));
        ck_assert(p.overflow == (r.overflow || !fits_field || !fits_ptr));
    }
}
END_TEST

START_TEST(paths_keep_their_lengths_through_every_append)
{
    static const char *const keys[] = {"spec", "a/b", "x~y", "vpc.amazonaws.com/efa", "", "k-1"};
    struct tg_path p, q;
    tg_path_root(&p);
    for (int i = 0; i < 60; i++) {
        if (i % 7 == 3)
            tg_path_index(&q, &p, (size_t)i * 1000);
        else
            tg_path_key(&q, &p, keys[i % 6]);
        ck_assert_uint_eq(q.field_len, strlen(q.field));
        ck_assert_uint_eq(q.ptr_len, strlen(q.ptr));
        p = q;
    }
    ck_assert(p.overflow);
    ck_assert_uint_lt(p.field_len, TG_PATH_MAX);
    ck_assert_uint_lt(p.ptr_len, TG_PATH_MAX);
}
END_TEST

/* ---- base64 and patches -----------------------------------------------------------------------
 */

START_TEST(base64_round_trips_and_rejects_bad_input)
{
    static const char *const in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
    static const char *const want[] = {"",         "Zg==",     "Zm8=",    "Zm9v",
                                       "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
    for (size_t i = 0; i < 7; i++) {
        char *e = tg_base64_encode((const unsigned char *)in[i], strlen(in[i]));
        ck_assert_str_eq(e, want[i]);
        size_t n;
        unsigned char *d = tg_base64_decode(e, &n);
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(n, strlen(in[i]));
        ck_assert(memcmp(d, in[i], n) == 0);
        free(d);
        free(e);
    }
    /* every byte value, at every position of a group, for lengths on both sides of each tail */
    unsigned char all[259];
    for (size_t i = 0; i < sizeof(all); i++)
        all[i] = (unsigned char)(255 - i * 7);
    for (size_t len = 250; len <= sizeof(all); len++) {
        char *e = tg_base64_encode(all, len);
        ck_assert_uint_eq(strlen(e), 4 * ((len + 2) / 3));
        size_t m;
        unsigned char *d = tg_base64_decode(e, &m);
        ck_assert_ptr_nonnull(d);
        ck_assert_uint_eq(m, len);
        ck_assert(memcmp(d, all, len) == 0);
        free(d);
        free(e);
    }
    /* every 12-bit half of a group (the encoder looks two characters up at once) against the
     * alphabet, character by character */
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (unsigned v = 0; v < 4096; v++) {
        unsigned g = v << 12 | (4095 - v);
        unsigned char three[3] = {(unsigned char)(g >> 16), (unsigned char)(g >> 8),
                                  (unsigned char)g};
        char *e = tg_base64_encode(three, 3);
        char want4[5] = {alphabet[v >> 6], alphabet[v & 63], alphabet[(4095 - v) >> 6],
                         alphabet[(4095 - v) & 63], '\0'};
        ck_assert_str_eq(e, want4);
        free(e);
    }
    size_t n;
    ck_assert_ptr_null(tg_base64_decode("Zg=", &n));
    ck_assert_ptr_null(tg_base64_decode("Z!==", &n));
    ck_assert_ptr_null(tg_base64_decode("Zg==Zg==", &n));
}
END_TEST

static json_t *parse(const char *text)
{
    json_error_t e;
    json_t *v = json_loads(text, 0, &e);
    ck_assert_msg(v != NULL, "bad test JSON: %s", e.text);
    return v;
}

/* The patch text is appended to a buffer as it is returned on its own: base64 of the compact ops.
 */
START_TEST(patch_base64_appends_the_same_text)
{
    struct tg_patch p;
    ck_assert_int_eq(tg_patch_init(&p), 0);
    for (int n = 0; n < 3; n++) {
        char *alone = tg_patch_base64(&p);
        char *text = json_dumps(p.ops, JSON_COMPACT);
        char *want = tg_base64_encode((const unsigned char *)text, strlen(text));
        ck_assert_str_eq(alone, want);
        struct tg_buf b;
        tg_buf_init(&b);
        tg_buf_puts(&b, "head:");
        ck_assert_int_eq(tg_patch_base64_to(&p, &b), 0);
        size_t len;
        char *got = tg_buf_steal(&b, &len);
        ck_assert_str_eq(got + 5, want);
        ck_assert_uint_eq(len, 5 + strlen(want));
        free(alone);
        free(text);
        free(want);
        free(got);
        ck_assert_int_eq(tg_patch_add_new(&p, "/spec/x", json_string("a\"b")), 0);
    }
    tg_patch_release(&p);
}
END_TEST

START_TEST(append_items_creates_a_missing_array_in_one_add)
{
    json_t *doc =
        parse("{\"spec\":{\"containers\":[{\"name\":\"a\"},{\"name\":\"b\",\"env\":[]}]}}");
    struct tg_patch p;
    char err[128];
    ck_assert_int_eq(tg_patch_init(&p), 0);
    json_t *c0 = json_array_get(json_object_get(json_object_get(doc, "spec"), "containers"), 0);
    json_t *c1 = json_array_get(json_object_get(json_object_get(doc, "spec"), "containers"), 1);
    ck_assert_int_eq(
        tg_patch_append_items(&p, c0, "/spec/containers/0", "env",
                              parse("[{\"name\":\"A\",\"value\":\"1\"},{\"name\":\"B\"}]")),
        0);
    ck_assert_uint_eq(tg_patch_count(&p), 1);
    ck_assert_int_eq(tg_patch_append_items(&p, c1, "/spec/containers/1", "env",
                                           parse("[{\"name\":\"A\"},{\"name\":\"B\"}]")),
                     0);
    ck_assert_uint_eq(tg_patch_count(&p), 3);
    ck_assert_str_eq(json_string_value(json_object_get(json_array_get(p.ops, 1), "path")),
                     "/spec/containers/1/env/-");
    ck_assert_int_eq(tg_patch_append_items(&p, c0, "/x", "name", parse("[1]")), -EINVAL);
    ck_assert_int_eq(tg_patch_append_items(&p, c0, "/x", "env", parse("[]")), 0);
    ck_assert_uint_eq(tg_patch_count(&p), 3);
    ck_assert_int_eq(tg_patch_apply(&doc, p.ops, err, sizeof(err)), 0);
    json_t *want = parse("{\"spec\":{\"containers\":[{\"name\":\"a\",\"env\":[{\"name\":\"A\","
                         "\"value\":\"1\"},{\"name\":\"B\"}]},{\"name\":\"b\",\"env\":[{\"name\":"
                         "\"A\"},{\"name\":\"B\"}]}]}}");
    ck_assert(json_equal(doc, want));
    json_decref(want);
    json_decref(doc);
    tg_patch_release(&p);
}
END_TEST

struct apply_case {
    const char *doc, *ops, *want; /* want NULL: must fail */
};

static const struct apply_case apply_cases[] = {
    {"{\"a\":{}}", "[{\"op\":\"add\",\"path\":\"/a/b\",\"value\":1}]", "{\"a\":{\"b\":1}}"},
    {"{\"a\":{}}", "[{\"op\":\"add\",\"path\":\"/x/env/-\",\"value\":1}]", NULL},
    {"{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/-\",\"value\":2}]", "{\"a\":[1,2]}"},
    {"{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/0\",\"value\":0}]", "{\"a\":[0,1]}"},
    {"{\"a\":[1]}", "[{\"op\":\"add\",\"path\":\"/a/5\",\"value\":0}]", NULL},
    {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/a\",\"value\":2}]", "{\"a\":2}"},
    {"{\"a\":1}", "[{\"op\":\"replace\",\"path\":\"/b\",\"value\":2}]", NULL},
    {"{\"a\":1}", "[{\"op\":\"remove\",\"path\":\"/a\"}]", "{}"},
    {"{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":1}]", "{\"a\":1}"},
    {"{\"a\":1}", "[{\"op\":\"test\",\"path\":\"/a\",\"value\":2}]", NULL},
    {"{\"a/b\":{}}", "[{\"op\":\"add\",\"path\":\"/a~1b/c~0d\",\"value\":1}]",
     "{\"a/b\":{\"c~d\":1}}"},
    {"{}", "[{\"op\":\"move\",\"from\":\"/a\",\"path\":\"/b\"}]", NULL},
    {"{}", "[{\"path\":\"/b\"}]", NULL},
    {"{}", "{}", NULL},
};

START_TEST(apply_follows_apiserver_json_patch_semantics)
{
    const struct apply_case *c = &apply_cases[_i];
    json_t *doc = parse(c->doc), *ops = parse(c->ops);
    char err[256] = "";
    int rc = tg_patch_apply(&doc, ops, err, sizeof(err));
    if (c->want) {
        ck_assert_msg(rc == 0, "case %d: %s", _i, err);
        json_t *want = parse(c->want);
        ck_assert(json_equal(doc, want));
        json_decref(want);
    } else {
        ck_assert_int_eq(rc, -EINVAL);
        ck_assert(err[0] != '\0');
    }
    json_decref(doc);
    json_decref(ops);
}
END_TEST

/* ---- review decoding ----------------------------------------------------------------------------
 */

#define POD "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{}}"
#define REQ(extra)                                                                                 \
    "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":"   \
    "\"u1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},\"operation\":"          \
    "\"CREATE\",\"namespace\":\"ns\",\"object\":" POD extra "}}"

struct bad_review {
    const char *body;
    const char *needle; /* must appear in the error */
};

static const struct bad_review bad_reviews[] = {
    {"", "empty body"},
    {"{", "malformed JSON"},
    {"[]", "JSON object"},
    {"{\"apiVersion\":\"admission.k8s.io/v2\",\"kind\":\"AdmissionReview\",\"request\":{}}",
     "apiVersion"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"Pod\",\"request\":{}}", "kind"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\"}", "request is missing"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":[]}",
     "request must be an object"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"kind\":{}}}",
     "uid is missing"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":7}}",
     "uid must be a string"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":\"Pod\"}}",
     "request.kind"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\","
     "\"kind\":\"Pod\"},\"operation\":\"PATCH\"}}",
     "operation"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\","
     "\"kind\":\"Pod\"},\"operation\":\"CREATE\"}}",
     "object is required"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\","
     "\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":[1]}}",
     "object must be an object"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\","
     "\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":{},\"dryRun\":\"yes\"}}",
     "dryRun"},
    {"{\"apiVersion\":\"admission.k8s.io/"
     "v1\",\"kind\":\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"version\":\"v1\","
     "\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":{},\"userInfo\":\"me\"}}",
     "userInfo"},
    {"{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"apiVersion\":\"x\"}",
     "unsupported apiVersion"},
};

START_TEST(bad_reviews_are_refused_with_a_reason)
{
    struct tg_review rv;
    char err[TG_REVIEW_ERR_MAX] = "";
    const struct bad_review *b = &bad_reviews[_i];
    ck_assert_int_eq(tg_review_parse(b->body, strlen(b->body), &rv, err, sizeof(err)), -EINVAL);
    ck_assert_msg(strstr(err, b->needle) != NULL, "case %d: '%s' lacks '%s'", _i, err, b->needle);
    ck_assert_ptr_null(rv.root);
}
END_TEST

START_TEST(review_fields_are_decoded)
{
    static const char body[] = REQ(",\"dryRun\":true,\"userInfo\":{\"username\":\"alice\"}");
    struct tg_review rv;
    char err[TG_REVIEW_ERR_MAX];
    ck_assert_int_eq(tg_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
    ck_assert_str_eq(rv.uid, "u1");
    ck_assert_str_eq(rv.group, "");
    ck_assert_str_eq(rv.kind, "Pod");
    ck_assert_str_eq(rv.namespace, "ns");
    ck_assert_str_eq(rv.username, "alice");
    ck_assert(rv.dry_run);
    ck_assert_int_eq(rv.op, TG_OP_CREATE);
    ck_assert_ptr_nonnull(rv.object);
    ck_assert_ptr_null(rv.old_object);
    tg_review_release(&rv);
}
END_TEST

/* ---- verdicts under each mode, with test-only rules ---------------------------------------- */

static int rule_deny_and_warn(struct tg_eval *ev)
{
    tg_report(ev, TG_RULE_EFA_NO_HUGEPAGES, "spec.containers[0].resources",
              "warn finding\nwith newline");
    tg_report(ev, TG_RULE_EFA_LIMIT_REQUIRED, "spec.containers[0].resources.limits",
              "deny finding");
    tg_report(ev, TG_RULE_EFA_LIMIT_REQUIRED, "spec.containers[1].resources.limits", "second deny");
    return 0;
}

static int rule_fails(struct tg_eval *ev)
{
    (void)ev;
    return -ENOMEM;
}

static int mutator_add_env(struct tg_eval *ev)
{
    struct tg_container *c = &ev->wl->tpl[0].containers[0];
    return tg_patch_append_items(ev->patch, c->c, c->path.ptr, "env",
                                 json_pack("[{s:s, s:s}]", "name", "X", "value", "1"));
}

static int rule_many_warnings(struct tg_eval *ev)
{
    char field[64];
    for (int i = 0; i < 30; i++) {
        snprintf(field, sizeof(field), "spec.containers[%d].resources", i);
        /* ~200 runes each: 30 of them are far above the API server's 4096 in total */
        tg_report(ev, TG_RULE_EFA_NO_HUGEPAGES, field, "warn %d: %0160d", i, 0);
    }
    return 0;
}

static const struct tg_validator many_validators[] = {
    {"many", TG_KIND_BIT(TG_KIND_POD), TG_OP_CREATE, rule_many_warnings},
};

static const struct tg_validator test_validators[] = {
    {"test", TG_KIND_BIT(TG_KIND_POD), TG_OP_CREATE | TG_OP_UPDATE, rule_deny_and_warn},
};
static const struct tg_validator failing_validators[] = {
    {"fail", TG_KIND_BIT(TG_KIND_POD), TG_OP_CREATE, rule_fails},
};
static const struct tg_validator test_mutators[] = {
    {"env", TG_KIND_BIT(TG_KIND_POD), TG_OP_CREATE, mutator_add_env},
};

#define POD_C                                                                                      \
    "{\"apiVersion\":\"v1\",\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},"                       \
    "\"spec\":{\"containers\":[{\"name\":\"c\"}]}}"

static json_t *review_json(const char *ns, const char *op, const char *obj)
{
    return json_pack("{s:s, s:s, s:{s:s, s:{s:s, s:s, s:s}, s:s, s:s, s:o}}", "apiVersion",
                     "admission.k8s.io/v1", "kind", "AdmissionReview", "request", "uid", "u-42",
                     "kind", "group", "", "version", "v1", "kind", "Pod", "operation", op,
                     "namespace", ns, "object", parse(obj));
}

static void run_with(struct tg_policy *pol, const char *ns, const char *op, bool mutate,
                     struct tg_review *rv, struct tg_result *res)
{
    char err[256];
    struct tg_pipeline_opts opts = {0};
    opts.validators = test_validators;
    opts.nvalidators = 1;
    opts.mutators = test_mutators;
    opts.nmutators = 1;
    opts.mutate = mutate;
    ck_assert_int_eq(tg_review_from_json(review_json(ns, op, POD_C), rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, rv, &opts, res), 0);
}

START_TEST(enforce_denies_with_one_line_per_finding_and_keeps_warnings)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    run_with(pol, "team", "CREATE", false, &rv, &res);
    ck_assert(!res.allowed);
    ck_assert_int_eq(res.code, 403);
    ck_assert_str_eq(res.message,
                     "[efa.limit-required] spec.containers[0].resources.limits: deny finding\n"
                     "[efa.limit-required] spec.containers[1].resources.limits: second deny");
    ck_assert_uint_eq(json_array_size(res.warnings), 1);
    ck_assert_str_eq(json_string_value(json_array_get(res.warnings, 0)),
                     "[efa.no-hugepages] spec.containers[0].resources: warn finding with newline");
    ck_assert_str_eq(json_string_value(json_object_get(res.audit, "would-deny")), "true");
    size_t len;
    char *out = tg_response_encode(&rv, &res, false, &len);
    json_t *resp = parse(out);
    json_t *r = json_object_get(resp, "response");
    ck_assert_str_eq(json_string_value(json_object_get(resp, "apiVersion")), "admission.k8s.io/v1");
    ck_assert_str_eq(json_string_value(json_object_get(resp, "kind")), "AdmissionReview");
    ck_assert_str_eq(json_string_value(json_object_get(r, "uid")), "u-42");
    ck_assert(json_is_false(json_object_get(r, "allowed")));
    ck_assert_int_eq(json_integer_value(json_object_get(json_object_get(r, "status"), "code")),
                     403);
    ck_assert_ptr_null(json_object_get(r, "patch"));
    ck_assert_ptr_null(json_object_get(r, "patchType"));
    const char *key;
    json_t *v;
    json_object_foreach (json_object_get(r, "auditAnnotations"), key, v) {
        ck_assert(strchr(key, '/') == NULL);
        ck_assert(strlen(key) <= 63);
    }
    json_decref(resp);
    free(out);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(warn_mode_turns_denials_into_would_deny_warnings)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    pol->mode = TG_MODE_WARN;
    run_with(pol, "team", "CREATE", false, &rv, &res);
    ck_assert(res.allowed);
    ck_assert_ptr_null(res.message);
    ck_assert_uint_eq(json_array_size(res.warnings), 3);
    /* Sorted by the rule table: limit-required (both containers) before no-hugepages. */
    ck_assert_str_eq(
        json_string_value(json_array_get(res.warnings, 0)),
        "[efa.limit-required] spec.containers[0].resources.limits: would deny: deny finding");
    ck_assert_str_eq(json_string_value(json_array_get(res.warnings, 2)),
                     "[efa.no-hugepages] spec.containers[0].resources: warn finding with newline");
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(audit_mode_allows_silently_and_records_annotations)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    pol->mode = TG_MODE_AUDIT;
    run_with(pol, "team", "CREATE", true, &rv, &res);
    ck_assert(res.allowed);
    ck_assert_uint_eq(json_array_size(res.warnings), 0);
    ck_assert_uint_eq(tg_patch_count(&res.patch), 0);
    ck_assert_str_eq(json_string_value(json_object_get(res.audit, "would-deny")), "true");
    ck_assert_str_eq(json_string_value(json_object_get(res.audit, "would-patch")),
                     "/spec/containers/0/env");
    ck_assert_str_eq(json_string_value(json_object_get(res.audit, "findings")),
                     "[efa.limit-required] spec.containers[0].resources.limits; "
                     "[efa.limit-required] spec.containers[1].resources.limits; "
                     "[efa.no-hugepages] spec.containers[0].resources");
    char *out = tg_response_encode(&rv, &res, true, NULL);
    json_t *resp = parse(out);
    ck_assert_ptr_null(json_object_get(json_object_get(resp, "response"), "patch"));
    json_decref(resp);
    free(out);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(mutate_returns_a_base64_patch_with_patch_type)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    run_with(pol, "team", "CREATE", true, &rv, &res);
    ck_assert_uint_eq(tg_patch_count(&res.patch), 1);
    char *out = tg_response_encode(&rv, &res, true, NULL);
    json_t *resp = parse(out);
    json_t *r = json_object_get(resp, "response");
    ck_assert_str_eq(json_string_value(json_object_get(r, "patchType")), "JSONPatch");
    size_t n;
    unsigned char *ops = tg_base64_decode(json_string_value(json_object_get(r, "patch")), &n);
    ck_assert_ptr_nonnull(ops);
    json_t *got = parse((const char *)ops);
    json_t *want = parse("[{\"op\":\"add\",\"path\":\"/spec/containers/0/env\","
                         "\"value\":[{\"name\":\"X\",\"value\":\"1\"}]}]");
    ck_assert(json_equal(got, want));
    json_decref(got);
    json_decref(want);
    free(ops);
    json_decref(resp);
    free(out);
    /* The same result encoded for /validate never carries a patch. */
    out = tg_response_encode(&rv, &res, false, NULL);
    ck_assert_ptr_null(strstr(out, "patch"));
    free(out);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

/* The webhook builds no plan view (no_plan_view): the same findings, messages and verdict as
 * `check`, which keeps the plan per role and the values not read. */
START_TEST(no_plan_view_keeps_the_findings_and_drops_only_the_plan_view)
{
    static const char *const bodies[] = {"bench/bodies/pod-torch.json",
                                         "bench/bodies/mpijob-torch.json"};
    for (size_t b = 0; b < sizeof(bodies) / sizeof(bodies[0]); b++) {
        char err[256];
        size_t len;
        char *body = tg_read_file(bodies[b], 1u << 20, &len, err, sizeof(err));
        ck_assert_msg(body != NULL, "%s", err);
        struct tg_policy *pol = tg_policy_new_default();
        struct tg_result res[2];
        for (int quiet = 0; quiet < 2; quiet++) {
            struct tg_review rv;
            struct tg_pipeline_opts opts = {0};
            opts.no_plan_view = quiet;
            ck_assert_int_eq(tg_review_parse(body, len, &rv, err, sizeof(err)), 0);
            ck_assert_int_eq(tg_pipeline_run(pol, &rv, &opts, &res[quiet]), 0);
            tg_review_release(&rv);
        }
        ck_assert_ptr_nonnull(res[0].explain);
        ck_assert_ptr_null(res[1].explain);
        ck_assert_ptr_null(res[1].unresolved);
        ck_assert_int_eq(res[0].allowed, res[1].allowed);
        ck_assert_uint_eq(res[0].findings.n, res[1].findings.n);
        for (size_t i = 0; i < res[0].findings.n; i++) {
            ck_assert_int_eq(res[0].findings.v[i].rule_index, res[1].findings.v[i].rule_index);
            ck_assert_str_eq(res[0].findings.v[i].message, res[1].findings.v[i].message);
        }
        ck_assert(json_equal(res[0].warnings, res[1].warnings));
        tg_result_release(&res[0]);
        tg_result_release(&res[1]);
        tg_policy_unref(pol);
        free(body);
    }
}
END_TEST

START_TEST(exempt_namespaces_delete_and_unknown_kinds_are_not_evaluated)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    run_with(pol, "kube-system", "CREATE", true, &rv, &res);
    ck_assert(res.allowed && !res.evaluated);
    ck_assert_uint_eq(res.findings.n, 0);
    ck_assert_uint_eq(tg_patch_count(&res.patch), 0);
    tg_result_release(&res);
    tg_review_release(&rv);
    char err[256];
    json_t *del = review_json("team", "DELETE", POD_C);
    ck_assert_int_eq(tg_review_from_json(del, &rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, &rv, NULL, &res), 0);
    ck_assert(res.allowed && !res.evaluated);
    tg_result_release(&res);
    tg_review_release(&rv);
    json_t *other = review_json("team", "CREATE", POD_C);
    json_object_set_new(json_object_get(json_object_get(other, "request"), "kind"), "kind",
                        json_string("Deployment"));
    ck_assert_int_eq(tg_review_from_json(other, &rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, &rv, NULL, &res), 0);
    ck_assert(res.allowed && !res.evaluated);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(a_rule_that_cannot_decide_is_an_error_not_an_allow)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    struct tg_pipeline_opts opts = {0};
    char err[256];
    opts.validators = failing_validators;
    opts.nvalidators = 1;
    ck_assert_int_eq(
        tg_review_from_json(review_json("team", "CREATE", POD_C), &rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, &rv, &opts, &res), -ENOMEM);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(policy_rule_actions_and_namespace_modes_apply)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    pol->actions[tg_rule_index("efa.limit-required")] = TG_ACTION_WARN;
    pol->actions[tg_rule_index("efa.no-hugepages")] = TG_ACTION_OFF;
    run_with(pol, "team", "CREATE", false, &rv, &res);
    ck_assert(res.allowed);
    ck_assert_uint_eq(res.findings.n, 2);
    ck_assert_uint_eq(json_array_size(res.warnings), 2);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(warnings_are_capped_with_a_line_that_counts_the_rest)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_review rv;
    struct tg_result res;
    struct tg_pipeline_opts opts = {0};
    char err[256];
    opts.validators = many_validators;
    opts.nvalidators = 1;
    ck_assert_int_eq(
        tg_review_from_json(review_json("team", "CREATE", POD_C), &rv, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_pipeline_run(pol, &rv, &opts, &res), 0);
    size_t n = json_array_size(res.warnings), total = 0;
    char more[64];
    ck_assert_uint_gt(n, 5);
    ck_assert_uint_lt(n, 30);
    for (size_t i = 0; i < n; i++)
        total += strlen(json_string_value(json_array_get(res.warnings, i)));
    /* the API server keeps 4096 runes in total (ASCII here: bytes are runes) */
    ck_assert_uint_le(total, 4096);
    snprintf(more, sizeof(more), "%zu more warnings", 30 - (n - 1));
    ck_assert(strstr(json_string_value(json_array_get(res.warnings, n - 1)), more));
    ck_assert_uint_eq(res.findings.n, 30);
    tg_result_release(&res);
    tg_review_release(&rv);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(mutate_records_no_verdict_annotations_for_decoder_findings)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_admission_out out;
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
        "\"operation\":\"CREATE\",\"namespace\":\"ml\",\"object\":{\"apiVersion\":\"v1\","
        "\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"},\"spec\":{\"containers\":\"bad\"}}}}";
    tg_admission_handle(pol, NULL, true, body, strlen(body), &out);
    ck_assert_int_eq(out.http_status, 200);
    ck_assert_str_eq(out.verdict, "allowed");
    ck_assert_ptr_null(strstr(out.body, "would-deny"));
    tg_admission_out_release(&out);
    tg_admission_handle(pol, NULL, false, body, strlen(body), &out);
    ck_assert_str_eq(out.verdict, "denied");
    ck_assert_ptr_nonnull(strstr(out.body, "\"would-deny\":\"true\""));
    tg_admission_out_release(&out);
    tg_policy_unref(pol);
}
END_TEST

/* The first row whose group, kind and (when it names one) version are the ones asked, as a plain
 * loop finds it: the catalogue lookup gives the same row for every group, version and kind of
 * the table, crossed, and for NULL and unknown ones. */
static const struct tg_api_def *api_lookup_ref(const char *g, const char *v, const char *k)
{
    for (size_t i = 0; i < tg_api_count; i++) {
        const struct tg_api_def *a = &tg_api_defs[i];
        if (!strcmp(a->group, g ? g : "") && !strcmp(a->kind_name, k ? k : "") &&
            (!a->version || !strcmp(a->version, v ? v : "")))
            return a;
    }
    return NULL;
}

START_TEST(api_lookup_finds_the_first_matching_row)
{
    const char *groups[64], *versions[64], *kinds[64];
    size_t n = 0;
    for (size_t i = 0; i < tg_api_count && n + 1 < 64; i++, n++) {
        groups[n] = tg_api_defs[i].group;
        versions[n] = tg_api_defs[i].version;
        kinds[n] = tg_api_defs[i].kind_name;
    }
    groups[n] = "example.com";
    versions[n] = "v9";
    kinds[n] = "";
    n++;
    for (size_t g = 0; g <= n; g++) {
        for (size_t v = 0; v <= n; v++) {
            for (size_t k = 0; k <= n; k++) {
                const char *gs = g < n ? groups[g] : NULL, *vs = v < n ? versions[v] : NULL;
                const char *ks = k < n ? kinds[k] : NULL;
                ck_assert_ptr_eq(tg_api_lookup(gs, vs, ks), api_lookup_ref(gs, vs, ks));
            }
        }
    }
    ck_assert_ptr_nonnull(tg_api_lookup("", "v1", "Pod"));
    ck_assert_ptr_null(tg_api_lookup("", "v1", "pod"));
}
END_TEST

START_TEST(rule_ids_are_unique_and_well_formed)
{
    for (size_t i = 0; i < tg_rule_count; i++) {
        ck_assert_int_eq(tg_rule_index(tg_rule_defs[i].id), (int)i);
        ck_assert(strchr(tg_rule_defs[i].id, '.') != NULL);
    }
    ck_assert_int_eq(tg_rule_index("no.such-rule"), -1);
}
END_TEST

/* ---- the compact writer matches json_dumps byte for byte ------------------------------------ */

static const char *const writer_inputs[] = {
    "{}",
    "[]",
    "{\"a\":1,\"b\":[true,false,null],\"c\":{\"d\":\"e\"}}",
    "[\"quote\\\" backslash\\\\ slash/ ctrl\\u0001\\u001f del\\u007f tab\\t nl\\n\"]",
    "[\"\\u00e9\\u20ac\\ud83d\\ude00\", -9223372036854775808, 9223372036854775807, 0]",
    "[1.5, 1e300, -0.25, 0.1]",
    "{\"z\":1,\"a\":2,\"m\":[{\"k\":\"v\"}]}",
    "{\"\":\"\",\"plain\":\"ends in a quote\\\"\",\"x\":\"\\\\starts with a backslash\"}",
    /* members: empty objects, keys that need an escape first, in the middle and last */
    "{}",
    "[{},{\"a\":{}},{\"b\":[{}]}]",
    "{\"q\\\"\":1,\"plain\":{\"tab\\t\":{},\"k\":2},\"\\u0001\":3}",
};

/* tg_buf_json writes v (released here) as json_dumps(v, JSON_COMPACT) does, length included;
 * what names the case in a failure. */
static void expect_writer_dump(json_t *v, const char *what)
{
    struct tg_buf b;
    size_t len;
    tg_buf_init(&b);
    tg_buf_json(&b, v);
    char *got = tg_buf_steal(&b, &len);
    char *want = json_dumps(v, JSON_COMPACT);
    ck_assert_msg(!strcmp(got, want), "%s: %s, expected %s", what, got, want);
    ck_assert_uint_eq(len, strlen(want));
    free(got);
    free(want);
    json_decref(v);
}

START_TEST(writer_output_equals_json_dumps_compact)
{
    expect_writer_dump(parse(writer_inputs[_i]), writer_inputs[_i]);
}
END_TEST

/* A member's key is written with its separator and colon in one piece: long keys that make the
 * buffer grow, with and without an escape. */
START_TEST(writer_writes_long_keys)
{
    char k[1500];
    for (size_t n = 400; n < sizeof(k); n += 377) {
        memset(k, 'k', n);
        k[n] = '\0';
        json_t *v = json_pack("{s:i, s:{s:s}}", "a", 1, k, k, "v");
        k[n / 2] = '"';
        json_object_set_new(v, k, json_integer(2));
        expect_writer_dump(v, "long keys");
    }
}
END_TEST

/* Plain strings (no escape) are copied in one piece, also when the buffer must grow for them. */
START_TEST(writer_copies_long_plain_strings)
{
    char s[1500];
    for (size_t n = 500; n < sizeof(s); n += 333) {
        memset(s, 'a', n);
        s[n] = '\0';
        s[n / 2] = n % 2 ? '"' : 'b'; /* every other length needs an escape */
        expect_writer_dump(json_pack("[s, s]", "x", s), "long plain string");
    }
}
END_TEST

/* The plain-string scan reads eight bytes at a time: each byte that needs an escape (and the
 * nearest ones that do not) is found at every position of a word and of the tail. */
START_TEST(writer_finds_an_escape_at_every_position)
{
    static const char *const bytes[] = {"\"", "\\", "\x01", "\x1f", "\n",   " ",
                                        "!",  "#",  "[",    "]",    "\x7f", "\xc3\xa9"};
    for (size_t k = 0; k < sizeof(bytes) / sizeof(bytes[0]); k++) {
        for (size_t at = 0; at < 20; at++) {
            char s[64];
            memset(s, 'a', 20);
            s[20] = '\0';
            snprintf(s + at, sizeof(s) - at, "%s%.*s", bytes[k], (int)(19 - at),
                     "bbbbbbbbbbbbbbbbbbb");
            json_t *v = json_pack("[s]", s);
            ck_assert_ptr_nonnull(v);
            char what[64];
            snprintf(what, sizeof(what), "byte %zu at %zu", k, at);
            expect_writer_dump(v, what);
        }
    }
}
END_TEST

/* ---- the handler: HTTP status and bodies --------------------------------------------------- */

START_TEST(handler_answers_bad_bodies_with_a_status_object)
{
    struct tg_policy *pol = tg_policy_new_default();
    struct tg_admission_out out;
    tg_admission_handle(pol, NULL, false, "{nope", 5, &out);
    ck_assert_int_eq(out.http_status, 400);
    json_t *st = parse(out.body);
    ck_assert_str_eq(json_string_value(json_object_get(st, "kind")), "Status");
    ck_assert_int_eq(json_integer_value(json_object_get(st, "code")), 400);
    ck_assert_str_eq(json_string_value(json_object_get(st, "reason")), "BadRequest");
    ck_assert(strstr(json_string_value(json_object_get(st, "message")), "malformed JSON"));
    json_decref(st);
    tg_admission_out_release(&out);
    static const char ok[] = REQ("");
    tg_admission_handle(pol, NULL, true, ok, strlen(ok), &out);
    ck_assert_int_eq(out.http_status, 200);
    ck_assert_str_eq(out.verdict, "allowed");
    ck_assert_str_eq(out.review.uid, "u1");
    tg_admission_out_release(&out);
    tg_policy_unref(pol);
}
END_TEST

Suite *tg_test_engine_suite(void);
Suite *tg_test_engine_suite(void)
{
    Suite *s = suite_create("engine");
    TCase *tc = tcase_create("engine");
    tcase_add_test(tc, findings_drop_duplicates_and_sort_by_rule_table_order);
    tcase_add_test(tc, sanitize_replaces_control_characters_and_cuts_at_rune_limit);
    tcase_add_test(tc, paths_escape_keys_for_people_and_for_json_pointers);
    tcase_add_test(tc, paths_at_the_root_and_at_the_last_byte);
    tcase_add_test(tc, paths_keep_their_lengths_through_every_append);
    tcase_add_test(tc, paths_print_plain_keys_after_a_dot_and_others_in_brackets);
    tcase_add_test(tc, paths_classify_every_byte);
    tcase_add_test(tc, paths_index_at_the_last_byte);
    tcase_add_test(tc, base64_round_trips_and_rejects_bad_input);
    tcase_add_test(tc, append_items_creates_a_missing_array_in_one_add);
    tcase_add_loop_test(tc, apply_follows_apiserver_json_patch_semantics, 0,
                        sizeof(apply_cases) / sizeof(apply_cases[0]));
    tcase_add_loop_test(tc, bad_reviews_are_refused_with_a_reason, 0,
                        sizeof(bad_reviews) / sizeof(bad_reviews[0]));
    tcase_add_test(tc, review_fields_are_decoded);
    tcase_add_test(tc, enforce_denies_with_one_line_per_finding_and_keeps_warnings);
    tcase_add_test(tc, warn_mode_turns_denials_into_would_deny_warnings);
    tcase_add_test(tc, audit_mode_allows_silently_and_records_annotations);
    tcase_add_test(tc, mutate_returns_a_base64_patch_with_patch_type);
    tcase_add_test(tc, exempt_namespaces_delete_and_unknown_kinds_are_not_evaluated);
    tcase_add_test(tc, a_rule_that_cannot_decide_is_an_error_not_an_allow);
    tcase_add_test(tc, policy_rule_actions_and_namespace_modes_apply);
    tcase_add_test(tc, rule_ids_are_unique_and_well_formed);
    tcase_add_test(tc, api_lookup_finds_the_first_matching_row);
    tcase_add_test(tc, warnings_are_capped_with_a_line_that_counts_the_rest);
    tcase_add_test(tc, mutate_records_no_verdict_annotations_for_decoder_findings);
    tcase_add_test(tc, handler_answers_bad_bodies_with_a_status_object);
    tcase_add_test(tc, writer_writes_long_keys);
    tcase_add_test(tc, writer_copies_long_plain_strings);
    tcase_add_test(tc, patch_base64_appends_the_same_text);
    tcase_add_test(tc, writer_finds_an_escape_at_every_position);
    tcase_add_test(tc, no_plan_view_keeps_the_findings_and_drops_only_the_plan_view);
    tcase_add_loop_test(tc, writer_output_equals_json_dumps_compact, 0,
                        sizeof(writer_inputs) / sizeof(writer_inputs[0]));
    suite_add_tcase(s, tc);
    return s;
}
