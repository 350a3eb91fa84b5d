/* test_reader.c -- the request reader accepts and rejects what jansson does, and builds jansson's
 * tree minus the members the rules never read (differential, over crafted inputs and fixtures). */
#include <check.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "support/cases.h"
#include "tg/reader.h"
#include "tg/review.h"
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
    "{\"request\":{\"resource\":{\"x\":[1e400]}}}",
    "{\"request\":{\"requestKind\":{\"kind\":\"\\ud800\"}}}",
    "{\"request\":{\"userInfo\":{\"groups\":[\"a\" \"b\"]}}}",
    "{\"request\":{\"userInfo\":{\"username\":\"u\",\"username\":\"v\",\"extra\":{}}}}",
    "{\"request\":{\"userInfo\":[{\"groups\":1}],\"subResource\":\"status\"}}",
};

START_TEST(reader_matches_jansson_on_crafted_inputs)
{
    differential(inputs[_i], strlen(inputs[_i]));
}
END_TEST

/* The string scanner reads sixteen bytes at a time (SSE2), then eight, then one: every byte
 * that needs attention (quote, backslash escapes, control characters, valid and invalid UTF-8, a
 * premature end) and the plain bytes next to them is put at every offset of a long string (in
 * the first and second block of sixteen and in the tail), in a built member and in a skipped one
 * (managedFields). */
START_TEST(reader_matches_jansson_at_every_string_offset)
{
    static const char *const specials[] = {
        "\\\"",
        "\\\\",
        "\\n",
        "\\u00e9",
        "\\ud83d\\ude00",
        "\t",
        "\x01",
        "\x1f",
        "\x7f",
        "\xc3\xa9",
        "\xe2\x82\xac",
        "\xf0\x9f\x98\x80",
        "\xff",
        "\xc3",
        "\\x",
        "\"",
        /* plain bytes next to the special ones ('"' is found as ' ' with bit 1 flipped) */
        " ",
        "!",
        "#",
        "[",
        "]",
        "\x7e",
        "\x80",
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
 * escape), at the lengths around 128 (an escaped key once went to a 128-byte buffer), empty
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

/* Built members: nested arrays at depths 2047 to 2050, empty at the bottom or holding one value
 * of each kind. jansson counts every value towards its depth, so a scalar (or an empty object)
 * inside the 2048th array is refused at its first byte, as an array there is. */
START_TEST(reader_matches_jansson_on_depth_limits)
{
    static const char *const bottoms[] = {"", "1", "-2.5", "\"x\"", "true", "false", "null", "{}"};
    char *deep = malloc(8200), err[256], want[256];
    for (size_t b = 0; b < sizeof(bottoms) / sizeof(bottoms[0]); b++) {
        size_t m = strlen(bottoms[b]);
        for (int depth = 2047; depth <= 2050; depth++) {
            for (int i = 0; i < depth; i++) {
                deep[i] = '[';
                deep[depth + m + i] = ']';
            }
            memcpy(deep + depth, bottoms[b], m);
            size_t n = 2 * (size_t)depth + m;
            int levels = depth + (m > 0);
            ck_assert_int_eq(differential(deep, n), levels <= 2048);
            if (levels > 2048) {
                ck_assert_ptr_null(tg_reader_load(deep, n, err, sizeof(err)));
                snprintf(want, sizeof(want),
                         "malformed JSON at line 1, column 2049: maximum parsing depth reached");
                ck_assert_str_eq(err, want);
            }
        }
    }
    free(deep);
}
END_TEST

/* The one documented difference (include/tg/reader.h): jansson 2.14 drops a NUL byte right after
 * a number or a literal; the reader refuses a NUL outside a string wherever it is. */
START_TEST(reader_refuses_a_nul_byte_that_jansson_drops_after_a_number_or_literal)
{
    static const struct {
        const char *text;
        size_t len;
        const char *err;
    } cases[] = {
        {"[1\0]", 4, "malformed JSON at line 1, column 3: "},
        {"{\"a\":null\0}", 11, "malformed JSON at line 1, column 10: "},
        {"[true\0,false]", 13, "malformed JSON at line 1, column 6: "},
    };
    char err[256];
    json_error_t jerr;

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        json_t *j = json_loadb(cases[i].text, cases[i].len, 0, &jerr);
        ck_assert_msg(j != NULL, "jansson now refuses case %zu: drop the exception", i);
        json_decref(j);
        ck_assert_ptr_null(tg_reader_load(cases[i].text, cases[i].len, err, sizeof(err)));
        ck_assert_msg(!strncmp(err, cases[i].err, strlen(cases[i].err)), "case %zu: %s", i, err);
    }
}
END_TEST

/* The error text (line, column, reason) goes back to the client in the 400: pinned for every
 * kind of error in a built member (request.uid, frame 0) and a skipped one (an element of
 * managedFields, frame 1; frame -1 is the whole input), including long strings whose error lies
 * past the 64-byte chunks the skipped-string scanner reads (value = rep times `times`, then
 * tail). Every one is also rejected by jansson. */
static const char *const error_frames[][2] = {
    {"{\"request\":{\"uid\":", "}}"},
    {"{\"request\":{\"object\":{\"metadata\":{\"managedFields\":[", "]}}}}"},
};

static const struct {
    int frame;
    const char *value, *want;
} error_cases[] = {
    {0, "\"abc", "line 1, column 19: premature end of input"},
    {0, "\"a\\", "line 1, column 21: invalid escape"},
    {0, "\"a\\x\"", "line 1, column 21: invalid escape"},
    {0, "\"a\\u12\"", "line 1, column 21: invalid escape"},
    {0, "\"a\\u12g4\"", "line 1, column 21: invalid escape"},
    {0, "\"a\\ud800\"", "line 1, column 27: invalid Unicode surrogate"},
    {0, "\"a\\ud800\\u0041\"", "line 1, column 27: invalid Unicode surrogate"},
    {0, "\"a\\udc00b\"", "line 1, column 27: invalid Unicode surrogate"},
    {0, "\"a\\u0000\"", "line 1, column 27: \\u0000 is not allowed"},
    {0, "\"a\tb\"", "line 1, column 21: control character in string"},
    {0,
     "\"a\xff"
     "b\"",
     "line 1, column 21: invalid UTF-8 in string"},
    {0,
     "\"a\xc3"
     "\"",
     "line 1, column 21: invalid UTF-8 in string"},
    {0,
     "\"\xe0"
     "\x80"
     "\x80"
     "\"",
     "line 1, column 20: invalid UTF-8 in string"},
    {0, "[1,]", "line 1, column 22: invalid token"},
    {0, "[1 2]", "line 1, column 22: ']' expected"},
    {0, "{\"a\" 1}", "line 1, column 24: ':' expected"},
    {0, "{\"a\":1,}", "line 1, column 26: string or '}' expected"},
    {0, "{1:2}", "line 1, column 20: string or '}' expected"},
    {0, "{\"a\":1 \"b\":2}", "line 1, column 26: '}' expected"},
    {0, "{\"a\":1", "line 1, column 27: '}' expected"},
    {0, "tru", "line 1, column 19: invalid token"},
    {0, "nul", "line 1, column 19: invalid token"},
    {0, "fals", "line 1, column 19: invalid token"},
    {0, "-", "line 1, column 19: invalid token"},
    {0, "01", "line 1, column 19: invalid token"},
    {0, "1.", "line 1, column 19: invalid token"},
    {0, "1e", "line 1, column 19: invalid token"},
    {0, "1e+", "line 1, column 19: invalid token"},
    {0, ".5", "line 1, column 19: invalid token"},
    {0, "x", "line 1, column 19: invalid token"},
    {0, "-a", "line 1, column 19: invalid token"},
    {0, "9223372036854775808", "line 1, column 19: too big integer"},
    {0, "-9223372036854775809", "line 1, column 19: too big integer"},
    {0, "1e400", "line 1, column 19: real number overflow"},
    {0, "-1e400", "line 1, column 19: real number overflow"},
    {0, "[", "line 1, column 20: invalid token"},
    {0, "{\"a\":", "line 1, column 24: invalid token"},
    {0, "", "line 1, column 19: invalid token"},
    {0, "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,]",
     "line 1, column 100: invalid token"},
    {1, "\"abc", "line 1, column 52: premature end of input"},
    {1, "\"a\\", "line 1, column 54: invalid escape"},
    {1, "\"a\\x\"", "line 1, column 54: invalid escape"},
    {1, "\"a\\u12\"", "line 1, column 54: invalid escape"},
    {1, "\"a\\u12g4\"", "line 1, column 54: invalid escape"},
    {1, "\"a\\ud800\"", "line 1, column 60: invalid Unicode surrogate"},
    {1, "\"a\\ud800\\u0041\"", "line 1, column 60: invalid Unicode surrogate"},
    {1, "\"a\\udc00b\"", "line 1, column 60: invalid Unicode surrogate"},
    {1, "\"a\\u0000\"", "line 1, column 60: \\u0000 is not allowed"},
    {1, "\"a\tb\"", "line 1, column 54: control character in string"},
    {1,
     "\"a\xff"
     "b\"",
     "line 1, column 54: invalid UTF-8 in string"},
    {1,
     "\"a\xc3"
     "\"",
     "line 1, column 54: invalid UTF-8 in string"},
    {1,
     "\"\xe0"
     "\x80"
     "\x80"
     "\"",
     "line 1, column 53: invalid UTF-8 in string"},
    {1, "[1,]", "line 1, column 55: invalid token"},
    {1, "[1 2]", "line 1, column 55: ']' expected"},
    {1, "{\"a\" 1}", "line 1, column 57: ':' expected"},
    {1, "{\"a\":1,}", "line 1, column 59: string or '}' expected"},
    {1, "{1:2}", "line 1, column 53: string or '}' expected"},
    {1, "{\"a\":1 \"b\":2}", "line 1, column 59: '}' expected"},
    {1, "{\"a\":1", "line 1, column 58: '}' expected"},
    {1, "tru", "line 1, column 52: invalid token"},
    {1, "nul", "line 1, column 52: invalid token"},
    {1, "fals", "line 1, column 52: invalid token"},
    {1, "-", "line 1, column 52: invalid token"},
    {1, "01", "line 1, column 52: invalid token"},
    {1, "1.", "line 1, column 52: invalid token"},
    {1, "1e", "line 1, column 52: invalid token"},
    {1, "1e+", "line 1, column 52: invalid token"},
    {1, ".5", "line 1, column 52: invalid token"},
    {1, "x", "line 1, column 52: invalid token"},
    {1, "-a", "line 1, column 52: invalid token"},
    {1, "9223372036854775808", "line 1, column 52: too big integer"},
    {1, "-9223372036854775809", "line 1, column 52: too big integer"},
    {1, "1e400", "line 1, column 52: real number overflow"},
    {1, "-1e400", "line 1, column 52: real number overflow"},
    {1, "[", "line 1, column 54: ']' expected"},
    {1, "{\"a\":", "line 1, column 57: invalid token"},
    {1, "[1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,]",
     "line 1, column 133: invalid token"},
    {-1, "{\n \"request\": {\n  \"options\": [1,\n  2 x]}}", "line 4, column 5: ']' expected"},
    {-1, "{\r\n\t\"request\" : {\"object\" : {\"status\" :\n\n {\"a\" ; 1}}}}",
     "line 4, column 7: ':' expected"},
    {-1,
     "{\"request\":{\"object\":{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
     "last-applied-configuration\":\"{\\\"a\\\":\\\"b\\\"}{\\\"a\\\":\\\"b\\\"}{\\\"a\\\":"
     "\\\"b\\\"}{\\\"a\\\":\\\"b\\\"}{\\\"a\\\":\\\"b\\\"}{\\\"a\\\":\\\"b\\\"}{\\\"a\\\":"
     "\\\"b\\\"}{\\\"a\\\":\\\"b\\\"}{\\\"a\\\":\\\"b\\\"}{\\\"a\\\":\\\"b\\\"}\\u00zz\"}}}}}",
     "line 1, column 232: invalid escape"},
    {-1, "{\"request\":{}} x", "line 1, column 16: end of file expected"},
    {-1,
     "{\"request\":{\"options\":"
     "\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\"
     "\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\",
     "line 1, column 23: premature end of input"},
    {-1, "{\"request\":{\"uid\":\"a\\", "line 1, column 19: premature end of input"},
    {-1,
     "{\"request\":{\"options\":"
     "\"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
     "aaaaaaaaa",
     "line 1, column 23: premature end of input"},
    {-1,
     "{\"request\":{\"options\":"
     "\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a"
     "\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"a\\\"\\\"",
     "line 1, column 23: premature end of input"},
    {-1,
     "{\"request\":{\"object\":{\"metadata\":{\"managedFields\":[{\"f:x\":{}},{\"f:y\":{}} {}]}}}}",
     "line 1, column 74: ']' expected"},
    {-1, "  ", "line 1, column 3: '[' or '{' expected"},
    {-1, "\"s\"", "line 1, column 1: '[' or '{' expected"},
    {-1, "{\"request\":{\"uid\":\"u\"},}", "line 1, column 24: string or '}' expected"},
    {-1,
     "\xef"
     "\xbb"
     "\xbf"
     "{}",
     "line 1, column 1: '[' or '{' expected"},
};

static const struct {
    int frame;
    const char *rep;
    int times;
    const char *tail, *want;
} long_error_cases[] = {
    {0, "a", 70, "\\x\"", "line 1, column 90: invalid escape"},
    {0, "\\\"", 40,
     "\x01"
     "\"",
     "line 1, column 100: control character in string"},
    {0, "ab\\\"", 30,
     "\xff"
     "\"",
     "line 1, column 140: invalid UTF-8 in string"},
    {0, "ab\\\\", 30, "\\u00\"", "line 1, column 140: invalid escape"},
    {0, "abcd", 20, "", "line 1, column 19: premature end of input"},
    {0, "\\\"", 40, "\\", "line 1, column 100: invalid escape"},
    {0, "x", 63, "\\ud800\"", "line 1, column 89: invalid Unicode surrogate"},
    {0, "x", 62, "\\\"\\q\"", "line 1, column 84: invalid escape"},
    {0, "\\\"", 31,
     "\\\x1f"
     "\"",
     "line 1, column 82: invalid escape"},
    {0, "\\\\", 32, "\\\"\\\"\\a\"", "line 1, column 88: invalid escape"},
    {0, "\\/", 33,
     "\xc3"
     "(\"",
     "line 1, column 86: invalid UTF-8 in string"},
    {1, "a", 70, "\\x\"", "line 1, column 123: invalid escape"},
    {1, "\\\"", 40,
     "\x01"
     "\"",
     "line 1, column 133: control character in string"},
    {1, "ab\\\"", 30,
     "\xff"
     "\"",
     "line 1, column 173: invalid UTF-8 in string"},
    {1, "ab\\\\", 30, "\\u00\"", "line 1, column 173: invalid escape"},
    {1, "abcd", 20, "", "line 1, column 52: premature end of input"},
    {1, "\\\"", 40, "\\", "line 1, column 133: invalid escape"},
    {1, "x", 63, "\\ud800\"", "line 1, column 122: invalid Unicode surrogate"},
    {1, "x", 62, "\\\"\\q\"", "line 1, column 117: invalid escape"},
    {1, "\\\"", 31,
     "\\\x1f"
     "\"",
     "line 1, column 115: invalid escape"},
    {1, "\\\\", 32, "\\\"\\\"\\a\"", "line 1, column 121: invalid escape"},
    {1, "\\/", 33,
     "\xc3"
     "(\"",
     "line 1, column 119: invalid UTF-8 in string"},
};

static void expect_error(const char *buf, size_t len, const char *want)
{
    char err[256], full[256];
    json_t *got = tg_reader_load(buf, len, err, sizeof(err));
    json_t *jansson = json_loadb(buf, len, 0, NULL);

    ck_assert_msg(!got && !jansson, "[%.*s] accepted", (int)(len > 200 ? 200 : len), buf);
    snprintf(full, sizeof(full), "malformed JSON at %s", want);
    ck_assert_str_eq(err, full);
}

START_TEST(reader_reports_each_error_at_its_byte)
{
    char buf[512];
    int n;

    if (error_cases[_i].frame < 0)
        n = snprintf(buf, sizeof(buf), "%s", error_cases[_i].value);
    else
        n = snprintf(buf, sizeof(buf), "%s%s%s", error_frames[error_cases[_i].frame][0],
                     error_cases[_i].value, error_frames[error_cases[_i].frame][1]);
    ck_assert_int_lt(n, (int)sizeof(buf));
    expect_error(buf, (size_t)n, error_cases[_i].want);
}
END_TEST

START_TEST(reader_reports_each_error_in_a_long_string_at_its_byte)
{
    char buf[512];
    size_t n = 0;

    n += (size_t)snprintf(buf, sizeof(buf), "%s\"", error_frames[long_error_cases[_i].frame][0]);
    for (int k = 0; k < long_error_cases[_i].times; k++)
        n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s", long_error_cases[_i].rep);
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "%s%s", long_error_cases[_i].tail,
                          error_frames[long_error_cases[_i].frame][1]);
    ck_assert_uint_lt(n, sizeof(buf));
    expect_error(buf, n, long_error_cases[_i].want);
}
END_TEST

/* A skipped string of 64 bytes or more is read in 64-byte chunks, its escapes resolved from the
 * chunk's backslash mask (one by one when two backslashes are adjacent; a chunk that ends on an
 * escape's backslash hands it to the next). Every kind of byte is put at every offset through
 * the first two chunks, after plain text, after dense \" escapes and after runs of escaped
 * backslashes, in two skipped members and a built one, and the input is also cut just after it. */
START_TEST(reader_matches_jansson_around_64_byte_chunks)
{
    static const char *const specials[] = {
        "\\\"", "\\\\",  "\\\\\\\"", "\\\\\\\\", "\\n",  "\\/",  "\\u00e9",  "\\ud83d\\ude00",
        "\\x",  "\\u12", "\\ud800",  "\x01",     "\x1f", "\x7f", "\xc3\xa9", "\xf0\x9f\x98\x80",
        "\xff", "\xc3",  "\"",       "\\",
    };
    static const char *const fillers[] = {"abcdefgh", "a\\\"b\\\"cd", "\\\\\\\\x\\\\"};
    static const char *const frames[][2] = {
        {"{\"request\":{\"object\":{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
         "last-applied-configuration\":\"",
         "\"}}}}}"},
        {"{\"request\":{\"options\":[\"", "\"]}}"},
        {"{\"request\":{\"uid\":\"", "\"}}"},
    };
    char str[256], buf[512];
    int accepted = 0, total = 0;

    for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
        for (size_t k = 0; k < sizeof(specials) / sizeof(specials[0]); k++) {
            for (size_t fi = 0; fi < sizeof(fillers) / sizeof(fillers[0]); fi++) {
                size_t flen = strlen(fillers[fi]);
                for (size_t at = 0; at <= 140; at++) {
                    size_t n = 0, plen = strlen(frames[f][0]);
                    for (; n < at; n++)
                        str[n] = fillers[fi][n % flen];
                    n += (size_t)snprintf(str + n, sizeof(str) - n, "%s", specials[k]);
                    for (; n < 160; n++)
                        str[n] = fillers[fi][n % flen];
                    str[n] = '\0';
                    int len = snprintf(buf, sizeof(buf), "%s%s%s", frames[f][0], str, frames[f][1]);
                    ck_assert_int_lt(len, (int)sizeof(buf));
                    accepted += differential(buf, (size_t)len);
                    differential(buf, plen + at + 1);
                    total++;
                }
            }
        }
    }
    ck_assert_int_gt(accepted, total / 4);
    ck_assert_int_lt(accepted, total);
}
END_TEST

/* TG_READER_MAX_VALUES values are built, one more is refused as too large (a top-level array
 * counts as one value, each element as one more); values in a skipped member do not count. */
START_TEST(reader_builds_exactly_the_maximum_number_of_values)
{
    const size_t n = TG_READER_MAX_VALUES - 1; /* elements beside the array itself */
    char *buf = malloc(2 * n + 64), err[256];
    size_t len = 0;

    ck_assert_ptr_nonnull(buf);
    buf[len++] = '[';
    for (size_t i = 0; i < n; i++) {
        buf[len++] = '0';
        buf[len++] = ',';
    }
    buf[len - 1] = ']';
    json_t *got = tg_reader_load(buf, len, err, sizeof(err));
    ck_assert_msg(got != NULL, "%s", err);
    ck_assert_uint_eq(json_array_size(got), n);
    json_decref(got);

    buf[len - 1] = ',';
    buf[len++] = '0';
    buf[len++] = ']';
    ck_assert_ptr_null(tg_reader_load(buf, len, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "review too large"));

    /* the same elements inside a skipped member cost nothing */
    static const char head[] = "{\"request\":{\"options\":";
    char *wrapped = malloc(len + sizeof(head) + 8);
    ck_assert_ptr_nonnull(wrapped);
    memcpy(wrapped, head, sizeof(head) - 1);
    memcpy(wrapped + sizeof(head) - 1, buf, len);
    memcpy(wrapped + sizeof(head) - 1 + len, "}}", 2);
    got = tg_reader_load(wrapped, sizeof(head) - 1 + len + 2, err, sizeof(err));
    ck_assert_msg(got != NULL, "%s", err);
    json_decref(got);
    free(wrapped);
    free(buf);
}
END_TEST

/* Short plain keys are read sixteen bytes at a time and handed to jansson from an aligned copy
 * (short_key): keys of every length around its 16- and 31-byte limits, each at every distance
 * from the end of the body (fewer than 16 or 32 bytes left after its quote), duplicated (the
 * last value wins, in the first one's place) and with an escape; the same tree in the same
 * member order as jansson's. */
START_TEST(reader_matches_jansson_on_short_keys_near_the_end)
{
    static const char *const tails[] = {"", " ", "               ",
                                        "                               "};
    char key[64], buf[256];
    int accepted = 0;

    for (size_t klen = 0; klen <= 34; klen++) {
        for (int esc = 0; esc < 2; esc++) {
            size_t n = 0;
            for (size_t k = 0; k < klen; k++)
                key[n++] = (char)('a' + k % 26);
            if (esc && n >= 1) { /* the last letter written as \u0041 ("A") */
                n--;
                n += (size_t)snprintf(key + n, sizeof(key) - n, "\\u0041");
            }
            key[n] = '\0';
            for (size_t t = 0; t < sizeof(tails) / sizeof(tails[0]); t++) {
                for (size_t pad = 0; pad <= 33; pad++) {
                    int len = snprintf(buf, sizeof(buf),
                                       "{\"z\":0,\"%s\":1,\"y\":[],\"%s\":\"%.*s\"}%s", key, key,
                                       (int)pad, "0123456789012345678901234567890123", tails[t]);
                    ck_assert_int_lt(len, (int)sizeof(buf));
                    accepted += differential(buf, (size_t)len);
                    /* and the key last in the body, with pad bytes of its value after it */
                    len = snprintf(buf, sizeof(buf), "{\"%s\":\"%.*s\"}%s", key, (int)pad,
                                   "1234567890123456789012345678901234", tails[t]);
                    accepted += differential(buf, (size_t)len);

                    char err[256];
                    json_error_t jerr;
                    json_t *want = json_loadb(buf, (size_t)len, 0, &jerr);
                    json_t *got = tg_reader_load(buf, (size_t)len, err, sizeof(err));
                    ck_assert_ptr_nonnull(want);
                    ck_assert_ptr_nonnull(got);
                    char *a = json_dumps(want, JSON_COMPACT), *b = json_dumps(got, JSON_COMPACT);
                    ck_assert_str_eq(a, b);
                    free(a);
                    free(b);
                    json_decref(want);
                    json_decref(got);
                }
            }
        }
    }
    ck_assert_int_eq(accepted, 35 * 2 * 4 * 34 * 2);
}
END_TEST

/* Members keep the body's order, a duplicate key its first place: the trees jansson and the
 * reader build for keys around short_key's limits dump the same, unsorted. */
START_TEST(reader_keeps_member_order_for_short_and_long_keys)
{
    static const size_t lens[] = {1, 2, 3, 4, 5, 15, 16, 17, 31, 32, 33};
    char buf[1024];
    size_t n = 0;

    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "{\"request\":{\"object\":{\"spec\":{");
    for (int round = 0; round < 2; round++) {
        for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
            buf[n++] = '"';
            for (size_t k = 0; k < lens[i]; k++)
                buf[n++] = (char)('a' + (k + i) % 26);
            n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\":%d,", round * 100 + (int)i);
        }
    }
    n += (size_t)snprintf(buf + n, sizeof(buf) - n, "\"end\":true}}}}");
    ck_assert_uint_lt(n, sizeof(buf));

    char err[256];
    json_error_t jerr;
    json_t *want = json_loadb(buf, n, 0, &jerr);
    json_t *got = tg_reader_load(buf, n, err, sizeof(err));
    ck_assert_ptr_nonnull(want);
    ck_assert_ptr_nonnull(got);
    char *a = json_dumps(want, JSON_COMPACT), *b = json_dumps(got, JSON_COMPACT);
    ck_assert_str_eq(a, b);
    /* the second round's values replaced the first's */
    ck_assert_ptr_nonnull(strstr(b, "\"a\":100,"));
    free(a);
    free(b);
    json_decref(want);
    json_decref(got);
}
END_TEST

/* Integers of up to 18 digits and reals without an exponent of up to 300 integer digits cannot
 * overflow and are not handed to strtoll/strtod; both sides of both thresholds, the int64 and
 * double limits and underflow, in built members (the values compared) and skipped ones. */
START_TEST(reader_matches_jansson_on_number_limits)
{
    static const char *const numbers[] = {
        "0",
        "-0",
        "7",
        "-7",
        "999999999999999999",
        "-999999999999999999",
        "1000000000000000000",
        "-1000000000000000000",
        "9223372036854775807",
        "-9223372036854775807",
        "9223372036854775808",
        "-9223372036854775808",
        "-9223372036854775809",
        "18446744073709551616",
        "99999999999999999999",
        "0.5",
        "-0.0",
        "1e2",
        "1E+2",
        "1e-2",
        "123456789012345678.5",
        "1.7976931348623157e308",
        "1.7976931348623158e308",
        "1.7976931348623159e308",
        "-1.7976931348623159e308",
        "1e308",
        "1e309",
        "-1e309",
        "4.9e-324",
        "2e-324",
        "1e-400",
        "-1e-400",
    };
    static const char *const frames[][2] = {
        {"{\"request\":{\"uid\":", "}}"},
        {"{\"request\":{\"object\":{\"spec\":{\"n\":[", ",1]}}}}"},
        {"{\"request\":{\"options\":", "}}"},
        {"{\"request\":{\"object\":{\"status\":{\"n\":[", ",1]}}}}"},
    };
    /* long reals without an exponent: 300 and 301 integer digits, and around DBL_MAX */
    static const struct {
        char lead;
        int digits;
        const char *tail;
    } longs[] = {{'9', 300, ".5"}, {'9', 301, ".5"}, {'9', 308, ".0"}, {'9', 309, ".0"},
                 {'1', 301, ".0"}, {'1', 309, ".0"}, {'1', 310, ".0"}};
    char num[400], buf[600];
    int accepted = 0, total = 0;

    for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
        for (size_t i = 0;
             i < sizeof(numbers) / sizeof(numbers[0]) + 2 * (sizeof(longs) / sizeof(longs[0]));
             i++) {
            if (i < sizeof(numbers) / sizeof(numbers[0])) {
                snprintf(num, sizeof(num), "%s", numbers[i]);
            } else {
                size_t l = (i - sizeof(numbers) / sizeof(numbers[0])) / 2, n = 0;
                if ((i - sizeof(numbers) / sizeof(numbers[0])) % 2)
                    num[n++] = '-';
                num[n++] = longs[l].lead;
                for (int d = 1; d < longs[l].digits; d++)
                    num[n++] = longs[l].lead == '1' ? '0' : '9';
                snprintf(num + n, sizeof(num) - n, "%s", longs[l].tail);
            }
            int len = snprintf(buf, sizeof(buf), "%s%s%s", frames[f][0], num, frames[f][1]);
            ck_assert_int_lt(len, (int)sizeof(buf));
            accepted += differential(buf, (size_t)len);
            total++;
        }
    }
    ck_assert_int_gt(accepted, 0);
    ck_assert_int_lt(accepted, total);
}
END_TEST

/* Skipped values are validated without recursion but count towards the same depth limit (2048
 * levels from the root): nested arrays, objects and both, empty or not at the bottom, in each
 * skipped member, at total depths 2046 to 2049; the deepest is refused at its opening bracket,
 * and a 1 inside the 2048th container at the 1. */
START_TEST(reader_matches_jansson_on_depth_limits_in_skipped_members)
{
    static const struct {
        const char *pre, *post;
        int base; /* containers open around the skipped value */
    } frames[] = {
        {"{\"request\":{\"options\":", "}}", 2},
        {"{\"request\":{\"object\":{\"status\":", "}}}", 3},
        {"{\"request\":{\"oldObject\":{\"metadata\":{\"managedFields\":", "}}}}", 4},
        {"{\"request\":{\"object\":{\"metadata\":{\"annotations\":{\"kubectl.kubernetes.io/"
         "last-applied-configuration\":",
         "}}}}}", 5},
    };
    size_t cap = 16 * 2100 + 256;
    char *buf = malloc(cap), *close = malloc(2100);
    char err[256], want[256];

    for (size_t f = 0; f < sizeof(frames) / sizeof(frames[0]); f++) {
        for (int shape = 0; shape < 3; shape++) {        /* arrays, objects, alternating */
            for (int bottom = 0; bottom < 2; bottom++) { /* empty, or a 1 inside */
                for (int total = 2046; total <= 2049; total++) {
                    /* jansson counts every value towards its depth, a scalar too: the 1 inside
                     * the 2048th container is refused, at its own byte */
                    int levels = total - frames[f].base;
                    size_t n = (size_t)snprintf(buf, cap, "%s", frames[f].pre), refused_at = 0;
                    for (int k = 0; k < levels; k++) {
                        bool object = shape == 1 || (shape == 2 && k % 2);
                        if (k == 2048 - frames[f].base)
                            refused_at = n;
                        n += (size_t)snprintf(buf + n, cap - n, "%s", object ? "{\"a\":" : "[");
                        close[k] = object ? '}' : ']';
                    }
                    /* the innermost container: drop its "a": when it is empty */
                    if (!bottom && buf[n - 1] == ':')
                        n -= 4;
                    if (bottom) {
                        if (total == 2048)
                            refused_at = n;
                        buf[n++] = '1';
                    }
                    for (int k = levels - 1; k >= 0; k--)
                        buf[n++] = close[k];
                    n += (size_t)snprintf(buf + n, cap - n, "%s", frames[f].post);
                    bool accepted = bottom ? total < 2048 : total <= 2048;
                    ck_assert_int_eq(differential(buf, n), accepted);
                    if (!accepted) {
                        ck_assert_ptr_null(tg_reader_load(buf, n, err, sizeof(err)));
                        snprintf(want, sizeof(want),
                                 "malformed JSON at line 1, column %zu: maximum parsing depth "
                                 "reached",
                                 refused_at + 1);
                        ck_assert_str_eq(err, want);
                    }
                }
            }
        }
    }
    free(buf);
    free(close);
}
END_TEST

/* tg_reader_load_review notes the review's members as it builds them; each must be what
 * json_object_get finds on the tree it returns (the last of duplicate keys, none from a request
 * that a later non-object replaced, none from objects named request deeper down). */
static void expect_members(const char *buf, size_t len)
{
    char all[160] = "";
    for (int i = 0; i < TG_RM_COUNT; i++)
        snprintf(all + strlen(all), sizeof(all) - strlen(all), "%s%s", i ? " " : "",
                 tg_review_member_name(i));
    ck_assert_str_eq(all, "apiVersion kind request uid kind operation namespace name dryRun "
                          "userInfo object oldObject");
    ck_assert_ptr_null(tg_review_member_name(TG_RM_COUNT));
    char err[256];
    json_t *m[TG_RM_COUNT];
    json_t *root = tg_reader_load_review(buf, len, m, err, sizeof(err));

    for (int i = 0; i < TG_RM_COUNT; i++) {
        json_t *in = i < TG_RM_UID ? root : json_object_get(root, "request");
        ck_assert_msg(
            m[i] == (json_is_object(in) ? json_object_get(in, tg_review_member_name(i)) : NULL),
            "member %s of [%.*s]", tg_review_member_name(i), (int)(len > 200 ? 200 : len), buf);
    }
    json_decref(root);
}

/* tg_review_parse reads those members; tg_review_from_json looks them up on a tree. Both must
 * give the same answer and the same message. */
static void expect_same_review(const char *buf, size_t len)
{
    char err1[256] = "", err2[256] = "";
    struct tg_review a, b;
    int rc1 = tg_review_parse(buf, len, &a, err1, sizeof(err1)), rc2;
    json_t *root = tg_reader_load(buf, len, err2, sizeof(err2));

    if (!len) { /* refused before reading */
        ck_assert_int_ne(rc1, 0);
        ck_assert_str_eq(err1, "empty body: expected an AdmissionReview");
        return;
    }
    if (!root) {
        ck_assert_int_ne(rc1, 0);
        ck_assert_str_eq(err1, err2);
        return;
    }
    rc2 = tg_review_from_json(root, &b, err2, sizeof(err2));
    ck_assert_int_eq(rc1, rc2);
    if (rc1) {
        ck_assert_str_eq(err1, err2);
        return;
    }
    ck_assert_str_eq(a.api_version, b.api_version);
    ck_assert_str_eq(a.uid, b.uid);
    ck_assert_str_eq(a.group, b.group);
    ck_assert_str_eq(a.version, b.version);
    ck_assert_str_eq(a.kind, b.kind);
    ck_assert_str_eq(a.namespace, b.namespace);
    ck_assert_str_eq(a.name, b.name);
    ck_assert_str_eq(a.operation, b.operation);
    ck_assert_int_eq(a.op, b.op);
    ck_assert_int_eq(a.dry_run, b.dry_run);
    ck_assert_str_eq(a.username, b.username);
    ck_assert_int_eq(!a.object, !b.object);
    ck_assert_int_eq(!a.old_object, !b.old_object);
    ck_assert(json_equal(a.object, b.object) || !a.object);
    ck_assert(json_equal(a.old_object, b.old_object) || !a.old_object);
    tg_review_release(&a);
    tg_review_release(&b);
}

static void members_and_review(const char *body, size_t len, void *arg)
{
    (void)arg;
    expect_members(body, len);
    expect_same_review(body, len);
}

START_TEST(reader_notes_the_review_members_json_object_get_finds)
{
    static const char *const fixed[] = {
        "{\"request\":{\"uid\":\"a\",\"uid\":\"b\"},\"request\":{\"uid\":\"c\"}}",
        "{\"request\":{\"uid\":\"a\",\"name\":\"n\"},\"request\":{\"uid\":\"c\"}}",
        "{\"request\":{\"uid\":\"a\",\"name\":\"n\"},\"request\":5}",
        "{\"request\":{\"uid\":\"a\",\"name\":\"n\"},\"request\":null}",
        "{\"request\":5,\"request\":{\"uid\":\"c\"}}",
        "{\"apiVersion\":\"x\",\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":"
        "\"AdmissionReview\",\"request\":{\"uid\":\"u\",\"kind\":{\"group\":\"\",\"version\":"
        "\"v1\",\"kind\":\"Pod\"},\"operation\":\"CREATE\",\"object\":{},\"object\":null}}",
        "[{\"request\":{\"uid\":\"x\"}}]",
        "{\"request\":{\"options\":{\"uid\":\"no\"},\"object\":{\"request\":{\"uid\":\"deep\"}}}}",
        "{\"kind\":{\"request\":{\"uid\":\"deep\"}},\"request\":[{\"uid\":\"x\"}]}",
        "{\"request\":{\"userInfo\":{\"username\":\"u\"},\"dryRun\":true,\"oldObject\":{},"
        "\"namespace\":\"ns\",\"n\\u0061me\":\"escaped\"}}",
        "{\"request\":{\"uid\":\"a\"}",
        "{\"request\":{\"uid\":\"a\"}} x",
    };
    /* every member of a valid review replaced by each kind of value, or dropped */
    static const char *const members[] = {"apiVersion", "kind",      "uid",      "kind",
                                          "operation",  "namespace", "name",     "dryRun",
                                          "userInfo",   "object",    "oldObject"};
    static const char *const values[] = {
        NULL, "null", "\"\"", "\"x\"", "1", "true", "{}", "[]", "{\"group\":1,\"kind\":\"\"}"};
    int n = 0;
    char buf[1024];

    for (size_t i = 0; i < sizeof(fixed) / sizeof(fixed[0]); i++) {
        expect_members(fixed[i], strlen(fixed[i]));
        expect_same_review(fixed[i], strlen(fixed[i]));
    }
    for (size_t i = 0; i < sizeof(members) / sizeof(members[0]); i++) {
        for (size_t v = 0; v < sizeof(values) / sizeof(values[0]); v++) {
            const char *fields[11] = {
                "\"admission.k8s.io/v1\"",
                "\"AdmissionReview\"",
                "\"u-1\"",
                "{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"}",
                "\"UPDATE\"",
                "\"ml\"",
                "\"p\"",
                "false",
                "{\"username\":\"me\"}",
                "{\"kind\":\"Pod\"}",
                "{\"kind\":\"Pod\"}",
            };
            size_t len = 0;
            fields[i] = values[v];
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "{");
            for (size_t k = 0; k < 2; k++)
                if (fields[k])
                    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"%s\":%s,", members[k],
                                            fields[k]);
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"request\":{");
            for (size_t k = 2; k < 11; k++)
                if (fields[k])
                    len += (size_t)snprintf(buf + len, sizeof(buf) - len, "\"%s\":%s,", members[k],
                                            fields[k]);
            buf[len - 1] = '}'; /* the last comma */
            len += (size_t)snprintf(buf + len, sizeof(buf) - len, "}");
            ck_assert_uint_lt(len, sizeof(buf));
            expect_members(buf, len);
            expect_same_review(buf, len);
            n++;
        }
    }
    ck_assert_int_gt(tg_each_golden_request(members_and_review, NULL), 5);
    ck_assert_int_eq(n, 99);
}
END_TEST

/* Of the request, only what tg_review_parse reads is built: request.resource, requestKind,
 * requestResource, subResource and options, and userInfo's groups, uid and extra never are; the
 * members it reads are, and a review from the reader decodes as one from jansson. */
START_TEST(reader_builds_only_the_request_members_the_review_reads)
{
    static const char body[] =
        "{\"apiVersion\":\"admission.k8s.io/v1\",\"kind\":\"AdmissionReview\",\"request\":{"
        "\"uid\":\"u-1\",\"kind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
        "\"resource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
        "\"requestKind\":{\"group\":\"\",\"version\":\"v1\",\"kind\":\"Pod\"},"
        "\"requestResource\":{\"group\":\"\",\"version\":\"v1\",\"resource\":\"pods\"},"
        "\"subResource\":\"\",\"name\":\"p\",\"namespace\":\"ml\",\"operation\":\"CREATE\","
        "\"userInfo\":{\"username\":\"alice\",\"uid\":\"9\",\"groups\":[\"system:"
        "authenticated\"],\"extra\":{\"k\":[\"v\"]}},\"object\":{\"apiVersion\":\"v1\","
        "\"kind\":\"Pod\",\"metadata\":{\"name\":\"p\"}},\"oldObject\":null,\"dryRun\":true,"
        "\"options\":{\"kind\":\"CreateOptions\"}}}";
    char err[256];
    json_t *root = tg_reader_load(body, strlen(body), err, sizeof(err));
    ck_assert_msg(root != NULL, "%s", err);
    json_t *req = json_object_get(root, "request");
    static const char *const gone[] = {"resource", "requestKind", "requestResource", "subResource",
                                       "options"};
    for (size_t i = 0; i < sizeof(gone) / sizeof(gone[0]); i++)
        ck_assert_msg(!json_object_get(req, gone[i]), "request.%s was built", gone[i]);
    ck_assert_int_eq(json_object_size(req), 9);
    json_t *user = json_object_get(req, "userInfo");
    ck_assert_int_eq(json_object_size(user), 1);
    ck_assert_str_eq(json_string_value(json_object_get(user, "username")), "alice");
    json_decref(root);

    struct tg_review rv;
    ck_assert_int_eq(tg_review_parse(body, strlen(body), &rv, err, sizeof(err)), 0);
    ck_assert_str_eq(rv.uid, "u-1");
    ck_assert_str_eq(rv.kind, "Pod");
    ck_assert_str_eq(rv.version, "v1");
    ck_assert_str_eq(rv.namespace, "ml");
    ck_assert_str_eq(rv.name, "p");
    ck_assert_str_eq(rv.username, "alice");
    ck_assert(rv.dry_run);
    ck_assert_ptr_nonnull(rv.object);
    ck_assert_ptr_null(rv.old_object);
    tg_review_release(&rv);
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
    tcase_add_test(tc, reader_matches_jansson_on_short_keys_near_the_end);
    tcase_add_test(tc, reader_builds_exactly_the_maximum_number_of_values);
    tcase_add_test(tc, reader_keeps_member_order_for_short_and_long_keys);
    tcase_add_test(tc, reader_matches_jansson_on_depth_limits);
    tcase_add_test(tc, reader_refuses_a_nul_byte_that_jansson_drops_after_a_number_or_literal);
    tcase_add_test(tc, reader_matches_jansson_on_every_golden_request);
    tcase_add_loop_test(tc, reader_reports_each_error_at_its_byte, 0,
                        sizeof(error_cases) / sizeof(error_cases[0]));
    tcase_add_loop_test(tc, reader_reports_each_error_in_a_long_string_at_its_byte, 0,
                        sizeof(long_error_cases) / sizeof(long_error_cases[0]));
    tcase_add_test(tc, reader_matches_jansson_around_64_byte_chunks);
    tcase_add_test(tc, reader_matches_jansson_on_number_limits);
    tcase_add_test(tc, reader_matches_jansson_on_depth_limits_in_skipped_members);
    tcase_add_test(tc, reader_notes_the_review_members_json_object_get_finds);
    tcase_add_test(tc, reader_builds_only_the_request_members_the_review_reads);
    suite_add_tcase(s, tc);
    return s;
}
