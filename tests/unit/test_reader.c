/* test_reader.c -- the request reader accepts and rejects what jansson does, and builds jansson's
 * tree minus the members the rules never read (differential, over crafted inputs and fixtures). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "support/cases.h"
#include "tg/reader.h"
#include "tg/yaml_json.h"

/* Compares reader and jansson on one input; returns 1 when both accept. */
static int differential(const char *buf, size_t len)
{
    char err[256];
    json_error_t jerr;
    json_t *want = json_loadb(buf, len, 0, &jerr);
    json_t *got = tg_reader_load(buf, len, err, sizeof(err));
    ck_assert_msg(
        (want == NULL) == (got == NULL), "accept/reject differs on [%.*s]: jansson %s, reader %s",
        (int)(len > 200 ? 200 : len), buf, want ? "accepts" : jerr.text, got ? "accepts" : err);
    if (!want)
        return 0;
    tg_reader_prune(want);
    if (!json_equal(want, got)) {
        char *a = json_dumps(want, JSON_COMPACT | JSON_SORT_KEYS);
        char *b = json_dumps(got, JSON_COMPACT | JSON_SORT_KEYS);
        ck_abort_msg("trees differ:\n jansson %.300s\n reader  %.300s", a, b);
    }
    json_decref(want);
    json_decref(got);
    return 1;
}

static const char *const inputs[] = {
    "{}",
    "[]",
    " {} ",
    "{} x",
    "",
    "1",
    "\"s\"",
    "{\"a\":1,\"a\":2}",
    "[1,]",
    "{\"a\":1,}",
    "[01]",
    "[-0]",
    "[-]",
    "[1.]",
    "[.5]",
    "[1e]",
    "[1E+2]",
    "[1e-400]",
    "[1e400]",
    "[-1e400]",
    "[9223372036854775807]",
    "[9223372036854775808]",
    "[-9223372036854775808]",
    "[-9223372036854775809]",
    "[100000000000000000000000]",
    "[0.1]",
    "[123456789012345678901234567890.0]",
    "[\"a\\u0000b\"]",
    "{\"a\\u0000\":1}",
    "[\"\\ud800\"]",
    "[\"\\udc00\"]",
    "[\"\\ud83d\\ude00\"]",
    "[\"\\ud83d\\u0041\"]",
    "[\"a\tb\"]",
    "[\"\xff\"]",
    "[\"\xc0\xaf\"]",
    "[\"\xed\xa0\x80\"]",
    "[\"\xf4\x90\x80\x80\"]",
    "[\"\xe2\x82\"]",
    "[\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"]",
    "[\"\\/\\b\\f\\n\\r\\t\\\"\\\\\"]",
    "[\"\\x\"]",
    "[\"\\u00E9\\u00e9\"]",
    "[\"\\u12\"]",
    "[true,false,null]",
    "[tru]",
    "[nul]",
    "[\v1]",
    "\xef\xbb\xbf{}",
    "{\"a\" 1}",
    "{1:2}",
    "[\"unterminated",
    "{\"a\":",
    "[[[[",
    "]",
    "}",
    "[1 2]",
    "{\"a\":1 \"b\":2}",
    "{\"request\":{\"options\":{\"x\":[1,2,{\"y\":\"\\ud800\"}]}}}",
    "{\"request\":{\"options\":{\"x\":[1e400]}}}",
    "{\"request\":{\"options\":{\"x\":[\"ok\"]},\"uid\":\"u\"}}",
    "{\"request\":{\"kind\":{\"kind\":\"Pod\"},\"oldObject\":{\"a\":1},\"object\":{\"status\":{},"
    "\"metadata\":{\"managedFields\":[{}],\"annotations\":{\"kubectl.kubernetes.io/"
    "last-applied-configuration\":\"{}\",\"keep\":\"me\"}}}}}",
    "{\"request\":{\"oldObject\":{\"spec\":{\"scalingMode\":\"DaemonSet\"},\"status\":{}},"
    "\"kind\":{\"kind\":\"NodeSet\"}}}",
    "{\"request\":{\"oldObject\":{},\"kind\":{\"kind\":\"NodeSet\"},\"kind\":{\"kind\":\"Pod\"}}}",
    "{\"request\":\"string\",\"request\":{\"object\":[1,{\"status\":1}]}}",
    "{\"request\":{\"object\":{\"metadata\":{\"annotations\":[1,2]}}}}",
    "{\"request\":{\"object\":{\"metadata\":{\"managedFields\":[\"\xff\"]}}}}",
};

START_TEST(reader_matches_jansson_on_crafted_inputs)
{
    differential(inputs[_i], strlen(inputs[_i]));
}
END_TEST

/* The string scanner reads sixteen bytes at a time (SSE2), then eight, then one: every byte
 * that needs attention (quote, backslash escapes, control characters, valid and invalid UTF-8, a
 * premature end) is put at every offset of a long string (in the first and second block of
 * sixteen and in the tail), in a built member and in a skipped one (managedFields). */
START_TEST(reader_matches_jansson_at_every_string_offset)
{
    static const char *const specials[] = {
        "\\\"", "\\\\", "\\n",  "\\u00e9",  "\\ud83d\\ude00", "\t",
        "\x01", "\x1f", "\x7f", "\xc3\xa9", "\xe2\x82\xac",   "\xf0\x9f\x98\x80",
        "\xff", "\xc3", "\\x",  "\"",
    };
    static const char *const frames[][2] = {
        {"{\"request\":{\"uid\":\"", "\"}}"},
        {"{\"request\":{\"object\":{\"metadata\":{\"managedFields\":[{\"k\":\"", "\"}]}}}}"},
        {"{\"request\":{\"", "\":1}}"},
    };
    char str[64], buf[256];
    int accepted = 0, total = 0;

    for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
        for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
            for (int at = 0; at <= 40; at++) {
                int n = snprintf(str, sizeof(str), "%.*s%s%.*s", at,
                                 "abcdefghijklmnopqrstuvwxyz0123456789abcd", specials[k], 40 - at,
                                 "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789ABCD");
                ck_assert_int_lt(n, (int)sizeof(str));
                n = snprintf(buf, sizeof(buf), "%s%s%s", frames[f][0], str, frames[f][1]);
                accepted += differential(buf, (size_t)n);
                total++;
            }
        }
    }
    /* both outcomes were exercised */
    ck_assert_int_gt(accepted, 0);
    ck_assert_int_lt(accepted, total);
}
END_TEST

/* Keys and values read straight from the input (one plain run) and through the decoder (an
 * escape), at the lengths around the reader's key buffer (127 bytes fit, 128 do not), empty
 * ones, and context keys spelled with an escape (the skip decision reads the decoded key). */
START_TEST(reader_matches_jansson_on_key_lengths_and_escapes)
{
    static const size_t lens[] = {0, 1, 15, 16, 17, 126, 127, 128, 129, 200};
    static const char *const fixed[] = {
        "{\"\":\"\",\"request\":{\"\":{\"\":\"\"}}}",
        "{\"request\":{\"object\":{\"meta\\u0064ata\":{\"managed\\u0046ields\":[1],"
        "\"annotations\":{\"kubectl.kubernetes.io\\/last-applied-configuration\":\"x\"}}}}}",
        "{\"request\":{\"\\u006fptions\":{\"a\":1},\"obj\\u0065ct\":{\"st\\u0061tus\":2}}}",
    };
    char key[256], buf[1536];

    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++)
        ck_assert_int_eq(differential(fixed[i], strlen(fixed[i])), 1);
    for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
        for (int esc = 0; esc < 2; esc++) {
            size_t n = 0;
            for (size_t k = 0; k < lens[i]; k++)
                key[n++] = (char)('a' + k % 26);
            if (esc && n >= 2) { /* the last letter written as \u0041 ("A") */
                n--;
                n += (size_t)snprintf(key + n, sizeof(key) - n, "\\u0041");
            }
            key[n] = '\0';
            int len = snprintf(buf, sizeof(buf),
                               "{\"request\":{\"object\":{\"metadata\":{\"%s\":\"%s\"},\"%s\":"
                               "{\"%s\":[\"%s\"]}}}}",
                               key, key, key, key, key);
            ck_assert_int_lt(len, (int)sizeof(buf));
            ck_assert_int_eq(differential(buf, (size_t)len), 1);
        }
    }
}
END_TEST

START_TEST(reader_matches_jansson_on_depth_limits)
{
    char *deep = malloc(8200);
    for (int depth = 2047; depth <= 2050; depth++) {
        for (int i = 0; i < depth; i++) {
            deep[i] = '[';
            deep[2 * depth - 1 - i] = ']';
        }
        differential(deep, (size_t)(2 * depth));
    }
    free(deep);
}
END_TEST

/* A golden request and every prefix of it (all invalid) against jansson. */
static void differential_with_prefixes(const char *body, size_t len, void *arg)
{
    int *accepted = arg;

    *accepted += differential(body, len);
    for (size_t cut = 0; cut < len; cut += 1 + len / 50)
        differential(body, cut);
}

START_TEST(reader_matches_jansson_on_every_golden_request)
{
    int accepted = 0;

    ck_assert_int_gt(tg_each_golden_request(differential_with_prefixes, &accepted), 5);
    ck_assert_int_gt(accepted, 5);
}
END_TEST

Suite *tg_test_reader_suite(void);
Suite *tg_test_reader_suite(void)
{
    Suite *s = suite_create("reader");
    TCase *tc = tcase_create("differential");
    tcase_add_loop_test(tc, reader_matches_jansson_on_crafted_inputs, 0,
                        sizeof(inputs) / sizeof(inputs[0]));
    tcase_add_test(tc, reader_matches_jansson_at_every_string_offset);
    tcase_add_test(tc, reader_matches_jansson_on_key_lengths_and_escapes);
    tcase_add_test(tc, reader_matches_jansson_on_depth_limits);
    tcase_add_test(tc, reader_matches_jansson_on_every_golden_request);
    suite_add_tcase(s, tc);
    return s;
}
