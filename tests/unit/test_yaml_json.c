/* test_yaml_json.c -- YAML to JSON conversion as kubectl does it, and tg_read_file. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/yaml_emit.h"
#include "tg/yaml_json.h"

/* Converts text (one document) and compares with the expected JSON text; expect NULL means an
 * error whose message must contain err_sub. */
static void expect_conv(const char *yaml, const char *expect_json, const char *err_sub)
{
    char err[256] = "";
    json_t *got = tg_yaml_parse_one(yaml, strlen(yaml), err, sizeof(err));

    if (!expect_json) {
        ck_assert_msg(got == NULL, "expected an error for %s", yaml);
        ck_assert_msg(strstr(err, err_sub) != NULL, "error for %s: '%s' lacks '%s'", yaml, err,
                      err_sub);
        return;
    }
    ck_assert_msg(got != NULL, "error for %s: %s", yaml, err);
    {
        json_error_t jerr;
        json_t *want = json_loads(expect_json, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
        char *g = json_dumps(got, JSON_ENCODE_ANY | JSON_SORT_KEYS);

        ck_assert_msg(want != NULL, "bad expectation %s", expect_json);
        ck_assert_msg(json_equal(got, want) && json_typeof(got) == json_typeof(want),
                      "%s -> %s, want %s", yaml, g, expect_json);
        /* json_equal says 1 == 1.0 is false already; also check nested number types by text. */
        free(g);
        json_decref(want);
    }
    json_decref(got);
}

/* The value of key v in {v: X}. */
static void expect_value(const char *scalar, const char *expect_json)
{
    char yaml[256], want[300];

    snprintf(yaml, sizeof(yaml), "v: %s\n", scalar);
    snprintf(want, sizeof(want), "{\"v\": %s}", expect_json);
    expect_conv(yaml, want, NULL);
}

START_TEST(bools_yaml11)
{
    static const char *const t[] = {"y",    "Y",    "yes", "Yes", "YES", "true",
                                    "True", "TRUE", "on",  "On",  "ON"};
    static const char *const f[] = {"n",     "N",     "no",  "No",  "NO", "false",
                                    "False", "FALSE", "off", "Off", "OFF"};

    for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
        expect_value(t[i], "true");
    for (size_t i = 0; i < sizeof(f) / sizeof(f[0]); i++)
        expect_value(f[i], "false");
    /* Not in go-yaml v2's table: strings. */
    expect_value("yEs", "\"yEs\"");
    expect_value("oN", "\"oN\"");
    expect_value("TRue", "\"TRue\"");
    expect_value("\"yes\"", "\"yes\"");
    expect_value("'on'", "\"on\"");
    expect_value("!!str true", "\"true\"");
    expect_value("!!bool yes", "true");
}
END_TEST

START_TEST(nulls)
{
    expect_value("~", "null");
    expect_value("null", "null");
    expect_value("Null", "null");
    expect_value("NULL", "null");
    expect_value("", "null");
    expect_value("nULL", "\"nULL\"");
    expect_value("'null'", "\"null\"");
    expect_value("!!null ''", "null");
}
END_TEST

START_TEST(integers)
{
    expect_value("0", "0");
    expect_value("42", "42");
    expect_value("+42", "42");
    expect_value("-42", "-42");
    expect_value("1_000", "1000");
    expect_value("0x1F", "31");
    expect_value("0X1f", "31");
    expect_value("0o17", "15");
    expect_value("017", "15");
    expect_value("0b101", "5");
    expect_value("-0b101", "-5");
    expect_value("9223372036854775807", "9223372036854775807");
    expect_value("-9223372036854775808", "-9223372036854775808");
    /* 08 is not octal: the float regex takes it, and 8.0 reaches the server as 8. */
    expect_value("08", "8");
    expect_value("0x", "\"0x\"");
    expect_value("0xG", "\"0xG\"");
    expect_value("1_", "1");
    expect_value("_1", "\"_1\"");
    expect_value("1.2.3", "\"1.2.3\"");
    expect_value("12abc", "\"12abc\"");
    expect_value("\"42\"", "\"42\"");
    expect_value("'0x1F'", "\"0x1F\"");
    expect_value("!!int \"42\"", "42");
    expect_value("2024-01-02", "\"2024-01-02\"");
    expect_value("1:30", "\"1:30\"");
    expect_value("8Gi", "\"8Gi\"");
    expect_value("$EFA_PER_NODE", "\"$EFA_PER_NODE\"");
}
END_TEST

START_TEST(big_integers)
{
    char err[256];
    json_t *v = tg_yaml_parse_one("v: 18446744073709551615\n", 24, err, sizeof(err));

    ck_assert_ptr_nonnull(v);
    ck_assert(json_is_real(json_object_get(v, "v")));
    json_decref(v);
    v = tg_yaml_parse_one("v: 99999999999999999999999\n", 27, err, sizeof(err));
    ck_assert_ptr_nonnull(v);
    ck_assert(json_is_real(json_object_get(v, "v")));
    ck_assert(json_real_value(json_object_get(v, "v")) > 9.9e22);
    json_decref(v);
    /* Overflowing float: Go's ParseFloat fails, the scalar stays a string. */
    expect_value("1e400", "\"1e400\"");
}
END_TEST

START_TEST(floats)
{
    expect_value("1.5", "1.5");
    expect_value("-1.5", "-1.5");
    expect_value(".5", "0.5");
    expect_value("1.", "1");
    expect_value("1e3", "1000");
    expect_value("1E3", "1000");
    expect_value("2.5e-1", "0.25");
    expect_value("+.5", "0.5");
    expect_value("1e", "\"1e\"");
    expect_value("1e+", "\"1e+\"");
    expect_value("!!float 1", "1");
    expect_value(".", "\".\"");
    expect_value("..5", "\"..5\"");
    expect_conv("v: .inf\n", NULL, "cannot be represented in JSON");
    expect_conv("v: -.Inf\n", NULL, "line 1, column 4");
    expect_conv("v: .NaN\n", NULL, "JSON");
}
END_TEST

START_TEST(tags)
{
    expect_value("!!str 1", "\"1\"");
    expect_value("!custom 1", "\"1\"");
    expect_value("! 1", "\"1\"");
    expect_value("!!timestamp 2024-01-01", "\"2024-01-01\"");
    expect_conv("v: !!int abc\n", NULL, "cannot decode !!str `abc` as a !!int");
    expect_conv("v: !!int 1.5\n", NULL, "!!float");
    expect_conv("v: !!bool 1\n", NULL, "line 1, column 4");
    expect_conv("v: !!null x\n", NULL, "as a !!null");
    expect_conv("v: !!binary aGVsbG8=\n", NULL, "!!binary");
}
END_TEST

START_TEST(block_and_quoted)
{
    expect_conv("v: |\n  a\n  b\n", "{\"v\": \"a\\nb\\n\"}", NULL);
    expect_conv("v: >-\n  a\n  b\n", "{\"v\": \"a b\"}", NULL);
    expect_conv("v: |\n  123\n", "{\"v\": \"123\\n\"}", NULL);
    expect_conv("v: \"a\\tb\\u00e9\"\n", "{\"v\": \"a\\tb\\u00e9\"}", NULL);
    expect_conv("v: 'it''s'\n", "{\"v\": \"it's\"}", NULL);
    expect_conv("- 1\n- two\n- [3, {a: b}]\n", "[1, \"two\", [3, {\"a\": \"b\"}]]", NULL);
}
END_TEST

START_TEST(keys)
{
    expect_conv("1: a\n", "{\"1\": \"a\"}", NULL);
    expect_conv("true: x\nno: n\n", "{\"true\": \"x\", \"false\": false}", NULL);
    expect_conv("y: 1\n", "{\"true\": 1}", NULL);
    expect_conv("0x10: a\n", "{\"16\": \"a\"}", NULL);
    expect_conv("1.5: a\n", "{\"1.5\": \"a\"}", NULL);
    expect_conv("1e3: a\n", "{\"1000\": \"a\"}", NULL);
    expect_conv("0.1: a\n", "{\"0.1\": \"a\"}", NULL);
    expect_conv("1e7: a\n10000000: b\n", "{\"1e+07\": \"a\", \"10000000\": \"b\"}", NULL);
    expect_conv("1.0: a\n", "{\"1\": \"a\"}", NULL);
    expect_conv("123456.7: a\n", "{\"123456.7\": \"a\"}", NULL);
    expect_conv("1234567.0: a\n", "{\"1.234567e+06\": \"a\"}", NULL);
    expect_conv("0.00001: a\n", "{\"1e-05\": \"a\"}", NULL);
    expect_conv("0.0001: a\n", "{\"0.0001\": \"a\"}", NULL);
    expect_conv("\"1\": a\n", "{\"1\": \"a\"}", NULL);
    expect_conv("~: a\n", NULL, "null mapping key");
    expect_conv("? [a, b]\n: c\n", NULL, "mapping key is itself a list");
    expect_conv("{{ .Values.x }}: 1\n", NULL, "mapping key is itself a mapping");
}
END_TEST

START_TEST(duplicates)
{
    expect_conv("a: 1\nb: 2\na: 3\n", NULL, "line 3, column 1: duplicate mapping key \"a\"");
    expect_conv("m:\n  x: 1\n  x: 2\n", NULL, "line 3, column 3");
    /* Keys that convert to the same string collide too. */
    expect_conv("1: a\n\"1\": b\n", NULL, "duplicate");
    expect_conv("yes: a\ntrue: b\n", NULL, "duplicate mapping key \"true\"");
    /* Same key in sibling mappings is fine. */
    expect_conv("- a: 1\n- a: 2\n", "[{\"a\": 1}, {\"a\": 2}]", NULL);
}
END_TEST

START_TEST(anchors_and_merges)
{
    expect_conv("a: &x {p: 1}\nb: *x\n", "{\"a\": {\"p\": 1}, \"b\": {\"p\": 1}}", NULL);
    expect_conv("a: &s hello\nb: *s\n", "{\"a\": \"hello\", \"b\": \"hello\"}", NULL);
    expect_conv("base: &b {x: 1, w: 2}\nm:\n  <<: *b\n  w: 3\n",
                "{\"base\": {\"x\": 1, \"w\": 2}, \"m\": {\"w\": 3, \"x\": 1}}", NULL);
    /* go-yaml v2 (kubectl) applies << where it stands: it overwrites keys written before it. */
    expect_conv("b: &b {x: 1}\nm:\n  x: 2\n  <<: *b\n", "{\"b\": {\"x\": 1}, \"m\": {\"x\": 1}}",
                NULL);
    /* Two merges and explicit keys around them; a key merged twice is no duplicate. */
    expect_conv("p: &p {a: 1, b: 1}\nq: &q {b: 2, c: 2}\nm:\n  <<: *p\n  <<: *q\n  c: 3\n",
                "{\"p\": {\"a\": 1, \"b\": 1}, \"q\": {\"b\": 2, \"c\": 2}, "
                "\"m\": {\"a\": 1, \"b\": 2, \"c\": 3}}",
                NULL);
    /* A written key twice is still a duplicate after a merge. */
    expect_conv("p: &p {x: 1}\nm:\n  a: 1\n  <<: *p\n  a: 2\n", NULL,
                "duplicate mapping key \"a\"");
    expect_conv("p: &p {x: 1}\nm:\n  <<: *p\n  b: 1\n  b: 2\n", NULL,
                "line 5, column 3: duplicate");
    /* A list: earlier sources win. */
    expect_conv("p: &p {x: 1}\nq: &q {x: 2, z: 3}\nm:\n  <<: [*p, *q]\n",
                "{\"p\": {\"x\": 1}, \"q\": {\"x\": 2, \"z\": 3}, \"m\": {\"x\": 1, \"z\": 3}}",
                NULL);
    expect_conv("m:\n  <<: {a: 1}\n  b: 2\n", "{\"m\": {\"a\": 1, \"b\": 2}}", NULL);
    expect_conv("m:\n  <<: 1\n", NULL, "merge key");
    expect_conv("m:\n  <<: [1]\n", NULL, "not a mapping");
    expect_conv("a: *nope\n", NULL, "unknown anchor");
    expect_conv("a: &r [*r]\n", NULL, "line 1, column 8: unknown anchor");
    /* "<<" as a value or quoted key is a plain string. */
    expect_conv("a: <<\n'<<': b\n", "{\"a\": \"<<\", \"<<\": \"b\"}", NULL);
}
END_TEST

START_TEST(alias_bomb)
{
    const char *bomb = "a: &a [x, x, x, x, x, x, x, x, x, x]\n"
                       "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\n"
                       "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n"
                       "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]\n"
                       "e: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]\n"
                       "f: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e, *e]\n"
                       "g: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f, *f]\n";

    expect_conv(bomb, NULL, "more than 1000000 nodes");
}
END_TEST

START_TEST(deep_nesting)
{
    size_t n = 5000;
    char *s = malloc(2 * n + 1);
    char err[256];
    json_t *v;

    memset(s, '[', n);
    memset(s + n, ']', n);
    s[2 * n] = '\0';
    v = tg_yaml_parse_one(s, 2 * n, err, sizeof(err));
    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err, "nesting deeper than 1000") != NULL, "%s", err);
    free(s);
}
END_TEST

START_TEST(json_input)
{
    expect_conv("{\"kind\": \"Pod\", \"spec\": {\"n\": 1, \"f\": 1.5, \"b\": true}}",
                "{\"kind\": \"Pod\", \"spec\": {\"n\": 1, \"f\": 1.5, \"b\": true}}", NULL);
    expect_conv("\t{\n\t\"a\": [1,\n\t2]\n}\n", "{\"a\": [1, 2]}", NULL);
    expect_conv("{\"a\": 1, \"a\": 2}", NULL, "duplicate");
    /* JSON strings stay strings even when YAML would resolve them. */
    expect_conv("{\"a\": \"yes\"}", "{\"a\": \"yes\"}", NULL);
    /* 2.0 reaches the webhook as 2 after the API server's round trip. */
    expect_conv("{\"a\": 2.0, \"b\": [1.5, 3.0, {\"c\": -0.0}]}",
                "{\"a\": 2, \"b\": [1.5, 3, {\"c\": 0}]}", NULL);
    {
        char err[256];
        const char *big = "{\"big\": 123456789012345678901234567890}";
        json_t *v = tg_yaml_parse_one(big, strlen(big), err, sizeof(err));

        /* Too big for jansson's integers: the YAML path reads it as a float, like go-yaml. */
        ck_assert_ptr_nonnull(v);
        ck_assert(json_is_real(json_object_get(v, "big")));
        json_decref(v);
    }
}
END_TEST

START_TEST(syntax_errors)
{
    expect_conv("a: b: c\n", NULL, "line 1, column 5: mapping values are not allowed");
    expect_conv("a:\n  - b\n c: d\n", NULL, "line 3");
    expect_conv("name: {{ .Release.Name }}-x\n", NULL, "helm template");
    expect_conv("", NULL, "empty document");
    expect_conv("# only a comment\n", NULL, "empty document");
    expect_conv("a: 1\n---\nb: 2\n", NULL, "line 3, column 1: expected one document");
    expect_conv("a: \"\\xff\"\n", "{\"a\": \"\\u00ff\"}", NULL);
    expect_conv("a: \"\\x00\"\n", "{\"a\": \"\\u0000\"}", NULL);
}
END_TEST

START_TEST(invalid_utf8)
{
    const char bad[] = "a: \xff\xfe\n";
    char err[256];
    json_t *v = tg_yaml_parse_one(bad, sizeof(bad) - 1, err, sizeof(err));

    ck_assert_ptr_null(v);
    ck_assert_msg(strstr(err, "line 1, column") != NULL, "%s", err);
}
END_TEST

START_TEST(stream_documents)
{
    const char *s = "# leading comment\n"
                    "---\n"
                    "a: 1\n"
                    "---\n"
                    "# only comments\n"
                    "---\n"
                    "b: c: d\n"
                    "---\n"
                    "c: 3\n"
                    "--- \n"
                    "--- # comment\n"
                    "~\n"
                    "---\n"
                    "- list\n"
                    "...\n"
                    "---\n"
                    "name: {{ .Values.name }}\n"
                    "---\n"
                    "last: true\n";
    struct tg_yaml_docs d;

    ck_assert_int_eq(tg_yaml_parse_stream(s, strlen(s), &d), 0);
    ck_assert_uint_eq(d.n, 9);
    ck_assert_int_eq(d.v[0].line, 3);
    ck_assert_int_eq(json_integer_value(json_object_get(d.v[0].value, "a")), 1);
    ck_assert(d.v[1].empty);
    ck_assert_ptr_null(d.v[1].value);
    ck_assert_ptr_null(d.v[2].value);
    ck_assert(!d.v[2].empty);
    ck_assert_msg(strncmp(d.v[2].error, "line 7, column 5: ", 18) == 0, "%s", d.v[2].error);
    ck_assert_int_eq(json_integer_value(json_object_get(d.v[3].value, "c")), 3);
    ck_assert(d.v[4].empty);
    ck_assert(d.v[5].empty); /* explicit null */
    ck_assert(json_is_array(d.v[6].value));
    ck_assert_ptr_null(d.v[7].value);
    ck_assert_msg(strstr(d.v[7].error, "template") != NULL, "%s", d.v[7].error);
    ck_assert_msg(strncmp(d.v[7].error, "line 17, ", 9) == 0, "%s", d.v[7].error);
    ck_assert(json_is_true(json_object_get(d.v[8].value, "last")));
    for (size_t i = 0; i < d.n; i++)
        ck_assert_uint_eq(d.v[i].index, i);
    tg_yaml_docs_release(&d);
    tg_yaml_docs_release(&d); /* idempotent */
}
END_TEST

START_TEST(stream_edge_cases)
{
    struct tg_yaml_docs d;
    const char *dots = "a: 1\n...\nb: 2\n";
    const char *dir = "%YAML 1.1\n---\na: 1\n";
    const char *inner = "a: |\n  ---\n  x\n";

    ck_assert_int_eq(tg_yaml_parse_stream("", 0, &d), 0);
    ck_assert_uint_eq(d.n, 0);
    tg_yaml_docs_release(&d);

    ck_assert_int_eq(tg_yaml_parse_stream(dots, strlen(dots), &d), 0);
    /* libyaml wants --- after "..." (kubectl would read only the first document). */
    ck_assert_uint_eq(d.n, 2);
    ck_assert_int_eq(json_integer_value(json_object_get(d.v[0].value, "a")), 1);
    ck_assert_ptr_null(d.v[1].value);
    ck_assert_msg(
        strstr(d.v[1].error, "line 3, column 1: did not find expected <document start>") != NULL,
        "%s", d.v[1].error);
    tg_yaml_docs_release(&d);

    ck_assert_int_eq(tg_yaml_parse_stream(dir, strlen(dir), &d), 0);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_ptr_nonnull(d.v[0].value);
    tg_yaml_docs_release(&d);

    /* "  ---" indented inside a block scalar is text, not a marker. */
    ck_assert_int_eq(tg_yaml_parse_stream(inner, strlen(inner), &d), 0);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_str_eq(json_string_value(json_object_get(d.v[0].value, "a")), "---\nx\n");
    tg_yaml_docs_release(&d);

    /* A scalar document is a value, not an error (the caller decides). */
    ck_assert_int_eq(tg_yaml_parse_stream("hello\n", 6, &d), 0);
    ck_assert_uint_eq(d.n, 1);
    ck_assert_str_eq(json_string_value(d.v[0].value), "hello");
    tg_yaml_docs_release(&d);

    /* No trailing newline, CRLF line ends. */
    ck_assert_int_eq(tg_yaml_parse_stream("a: 1\r\n---\r\nb: 2", 15, &d), 0);
    ck_assert_uint_eq(d.n, 2);
    ck_assert_int_eq(json_integer_value(json_object_get(d.v[1].value, "b")), 2);
    tg_yaml_docs_release(&d);
}
END_TEST

START_TEST(error_then_more_in_chunk)
{
    /* A conversion error (not a syntax error) loses only its own document. */
    const char *s = "a: 1\na: 2\n---\nb: 3\n";
    struct tg_yaml_docs d;

    ck_assert_int_eq(tg_yaml_parse_stream(s, strlen(s), &d), 0);
    ck_assert_uint_eq(d.n, 2);
    ck_assert_ptr_null(d.v[0].value);
    ck_assert_msg(strstr(d.v[0].error, "duplicate") != NULL, "%s", d.v[0].error);
    ck_assert_int_eq(json_integer_value(json_object_get(d.v[1].value, "b")), 3);
    tg_yaml_docs_release(&d);
}
END_TEST

START_TEST(read_file)
{
    char err[256];
    size_t len = 0;
    char *buf;
    FILE *f = fopen("yaml_json_tmp.yaml", "w");

    ck_assert_ptr_nonnull(f);
    fputs("a: 1\n", f);
    fclose(f);
    buf = tg_read_file("yaml_json_tmp.yaml", 1024, &len, err, sizeof(err));
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(len, 5);
    ck_assert_str_eq(buf, "a: 1\n");
    free(buf);
    buf = tg_read_file("yaml_json_tmp.yaml", 4, &len, err, sizeof(err));
    ck_assert_ptr_null(buf);
    ck_assert_msg(strstr(err, "larger than 4 bytes") != NULL, "%s", err);
    remove("yaml_json_tmp.yaml");
    buf = tg_read_file("no/such/file.yaml", 1024, &len, err, sizeof(err));
    ck_assert_ptr_null(buf);
    ck_assert_str_eq(err, strerror(ENOENT));
    /* A directory opens but cannot be read. */
    buf = tg_read_file(".", 1024, &len, err, sizeof(err));
    ck_assert_ptr_null(buf);
}
END_TEST

START_TEST(read_empty_file)
{
    char err[256];
    size_t len = 99;
    char *buf;
    FILE *f = fopen("yaml_json_empty.yaml", "w");

    ck_assert_ptr_nonnull(f);
    fclose(f);
    buf = tg_read_file("yaml_json_empty.yaml", 1024, &len, err, sizeof(err));
    ck_assert_ptr_nonnull(buf);
    ck_assert_uint_eq(len, 0);
    ck_assert_str_eq(buf, "");
    free(buf);
    remove("yaml_json_empty.yaml");
}
END_TEST

/* Emits v, checks the text when want is set, and parses it back to an equal value. */
static void round_trip(const char *json_text, const char *want_yaml)
{
    json_error_t jerr;
    json_t *v = json_loads(json_text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &jerr);
    char *buf = NULL, err[256];
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    json_t *back;

    ck_assert_msg(v != NULL, "bad JSON %s", json_text);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(tg_yaml_emit(v, f), 0);
    fclose(f);
    if (want_yaml)
        ck_assert_msg(strcmp(buf, want_yaml) == 0, "%s emitted as:\n%s", json_text, buf);
    back = tg_yaml_parse_one(buf, len, err, sizeof(err));
    ck_assert_msg(back != NULL, "%s -> %s does not parse back: %s", json_text, buf, err);
    ck_assert_msg(json_equal(v, back), "%s -> %s reads back differently", json_text, buf);
    json_decref(back);
    json_decref(v);
    free(buf);
}

START_TEST(emit_round_trip)
{
    round_trip("{\"apiVersion\": \"v1\", \"kind\": \"Pod\", \"metadata\": {\"name\": \"p\"}}",
               "apiVersion: v1\nkind: Pod\nmetadata:\n  name: p\n");
    round_trip("{\"b\": 1, \"a\": [1, \"x\", null, true, false, 1.5]}",
               "b: 1\na:\n- 1\n- x\n- null\n- true\n- false\n- 1.5\n");
    /* Strings that plain YAML 1.1 would read as something else are quoted. */
    round_trip("{\"v\": [\"yes\", \"y\", \"on\", \"NO\", \"true\", \"null\", \"~\", \"\", \"1\", "
               "\"0x1F\", \"1e3\", \"1_000\", \".inf\", \"-.5\", \"08\", \"2024-01-01\"]}",
               NULL);
    round_trip("{\"v\": \"yes\"}", "v: \"yes\"\n");
    round_trip("{\"v\": \"8Gi\"}", "v: 8Gi\n");
    round_trip("{\"<<\": \"a\", \"k\": \"<<\"}", NULL);
    round_trip(
        "{\"v\": [\"a: b\", \"#c\", \"- d\", \"*e\", \"&f g\", \"!h\", \" lead\", \"trail \", "
        "\"{{ .Values.x }}\", \"[x]\", \"---\", \"a # b\", \"%x\", \"@x\", \"`x\"]}",
        NULL);
    /* Multi-line strings: literal blocks where possible. */
    round_trip("{\"script\": \"set -e\\nmpirun -np 16 \\\\\\n  hostname\\n\"}",
               "script: |\n  set -e\n  mpirun -np 16 \\\n    hostname\n");
    round_trip("{\"s\": \"a\\nb\", \"t\": \"x \\ny\", \"u\": \"\\n\\nlead\\n\\n\"}", NULL);
    round_trip("{\"nul\": \"a\\u0000b\", \"tab\": \"a\\tb\", \"uni\": \"\\u00e9\\u4e2d\"}", NULL);
    round_trip("{\"e\": {}, \"l\": [], \"n\": [[1, 2], {\"a\": {}}]}", NULL);
    round_trip("{\"big\": 9223372036854775807, \"neg\": -9223372036854775808, \"f\": 0.1, "
               "\"g\": 1e300, \"h\": -2.5e-10}",
               NULL);
    round_trip("[1, 2]", "- 1\n- 2\n");
    round_trip("\"just a string\"", NULL);
    round_trip("{\"1\": \"a\", \"true\": \"b\"}", "\"1\": a\n\"true\": b\n");
}
END_TEST

START_TEST(emit_errors)
{
    json_t *v = json_object();
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);

    ck_assert_int_eq(tg_yaml_emit(NULL, f), -EINVAL);
    ck_assert_int_eq(tg_yaml_emit(v, NULL), -EINVAL);
    ck_assert_int_eq(tg_yaml_emit(v, f), 0);
    fclose(f);
    ck_assert_str_eq(buf, "{}\n");
    free(buf);
    json_decref(v);
}
END_TEST

/* Out of memory in jansson at every allocation in turn: no crash, no leak, and either a result
 * or -ENOMEM / a failed document (jansson test_chaos.c does the same walk). */
static int chaos_left;

static void *chaos_malloc(size_t n)
{
    if (chaos_left-- <= 0)
        return NULL;
    return malloc(n);
}

START_TEST(out_of_memory_walk)
{
    const char *s = "a: &x {p: [1, 2.5, yes, ~, \"s\"]}\n"
                    "b:\n  <<: *x\n  q: *x\n"
                    "---\n"
                    "{\"j\": [1.0, {\"k\": 2}]}\n"
                    "---\n"
                    "c: d: e\n";
    int completed = 0;

    for (int n = 0; n < 400 && !completed; n++) {
        struct tg_yaml_docs d;
        int rc;

        chaos_left = n;
        json_set_alloc_funcs(chaos_malloc, free);
        rc = tg_yaml_parse_stream(s, strlen(s), &d);
        json_set_alloc_funcs(malloc, free);
        ck_assert(rc == 0 || rc == -ENOMEM);
        if (rc == 0) {
            completed = d.n == 3 && d.v[0].value && d.v[1].value && !d.v[2].value;
            tg_yaml_docs_release(&d);
        }
    }
    ck_assert_msg(completed, "never completed with enough memory");
}
END_TEST

/* Random values built from pieces that YAML 1.1 likes to retype survive emit + parse. */
static unsigned rnd_state = 12345;

static unsigned rnd(unsigned n)
{
    rnd_state = rnd_state * 1103515245u + 12345u;
    return (rnd_state >> 16) % n;
}

static json_t *random_value(int depth)
{
    static const char *const words[] = {
        "yes",        "No",      "on",
        "y",          "~",       "null",
        "",           " ",       "1",
        "-1.5",       "0x1F",    "0o7",
        "1e3",        ".inf",    "<<",
        "a: b",       "- x",     "#c",
        "&a",         "*a",      "!t",
        "%d",         "@x",      "`x",
        "{x}",        "[x]",     "'q'",
        "\"q\"",      "\n",      "\r\n",
        "\t",         "tr ",     " le",
        "2024-01-01", "8Gi",     "---",
        "...",        "a\u00e9", "\xe4\xb8\xad",
        "x\\y",       "1_000",   "+1",
        ".5",         "08",      "true",
        "FALSE",      "=",       "?",
        "|",          ">",
    };
    size_t nw = sizeof(words) / sizeof(words[0]);
    unsigned kind = depth > 4 ? rnd(4) : rnd(7);
    char buf[128];
    json_t *v;

    switch (kind) {
    case 0:
        return json_integer((json_int_t)rnd(100000) - 50000);
    case 1:
        return json_real((double)rnd(100000) / 64.0 + 1.0 / 128); /* never integral */
    case 2:
        return rnd(3) == 0 ? json_null() : json_boolean(rnd(2));
    case 3:
        snprintf(buf, sizeof(buf), "%s%s%s", words[rnd((unsigned)nw)],
                 rnd(2) ? words[rnd((unsigned)nw)] : "", rnd(3) ? "" : words[rnd((unsigned)nw)]);
        return json_string(buf);
    case 4:
    case 5:
        v = json_object();
        for (unsigned i = rnd(4); i > 0; i--) {
            snprintf(buf, sizeof(buf), "%s%u", words[rnd((unsigned)nw)], rnd(3));
            json_object_set_new(v, buf, random_value(depth + 1));
        }
        return v;
    default:
        v = json_array();
        for (unsigned i = rnd(4); i > 0; i--)
            json_array_append_new(v, random_value(depth + 1));
        return v;
    }
}

START_TEST(emit_random_round_trip)
{
    for (int i = 0; i < 500; i++) {
        json_t *v = json_object();
        char *buf = NULL, err[256];
        size_t len = 0;
        FILE *f;
        json_t *back;

        json_object_set_new(v, "v", random_value(0));
        f = open_memstream(&buf, &len);
        ck_assert_int_eq(tg_yaml_emit(v, f), 0);
        fclose(f);
        back = tg_yaml_parse_one(buf, len, err, sizeof(err));
        ck_assert_msg(back != NULL, "case %d: %s does not parse back: %s", i, buf, err);
        ck_assert_msg(json_equal(v, back), "case %d reads back differently:\n%s", i, buf);
        json_decref(back);
        json_decref(v);
        free(buf);
    }
}
END_TEST

/* Every document of the corpus (tests/corpus) survives emit + parse unchanged; no corpus fails. */
static void round_trip_file(const char *path)
{
    char err[256];
    size_t len;
    char *text = tg_read_file(path, 1 << 24, &len, err, sizeof(err));
    struct tg_yaml_docs docs;

    ck_assert_msg(text != NULL, "%s: %s", path, err);
    ck_assert_int_eq(tg_yaml_parse_stream(text, len, &docs), 0);
    for (size_t i = 0; i < docs.n; i++) {
        char *buf = NULL;
        size_t blen = 0;
        FILE *f;
        json_t *back;

        if (!docs.v[i].value)
            continue;
        f = open_memstream(&buf, &blen);
        ck_assert_int_eq(tg_yaml_emit(docs.v[i].value, f), 0);
        fclose(f);
        back = tg_yaml_parse_one(buf, blen, err, sizeof(err));
        ck_assert_msg(back != NULL, "%s doc %zu: emitted YAML does not parse: %s", path, i, err);
        ck_assert_msg(json_equal(back, docs.v[i].value), "%s doc %zu changed in a round trip", path,
                      i);
        json_decref(back);
        free(buf);
    }
    tg_yaml_docs_release(&docs);
    free(text);
}

START_TEST(corpus_round_trip)
{
    /* The copies in tests/corpus/<owner>__<repo>/ (tests/corpus/SOURCES.md); run from tests/. */
    FILE *p = popen("find corpus -mindepth 2 -type f \\( -name '*.yaml' -o -name '*.yml' \\) "
                    "-not -path 'corpus/LICENSES/*' | LC_ALL=C sort",
                    "r");
    char line[1024];
    int n = 0;

    ck_assert_ptr_nonnull(p);
    while (fgets(line, sizeof(line), p)) {
        line[strcspn(line, "\n")] = '\0';
        round_trip_file(line);
        n++;
    }
    ck_assert_int_eq(pclose(p), 0);
    ck_assert_msg(n > 0, "no manifest under tests/corpus/<owner>__<repo>/ (run from tests/)");
}
END_TEST

Suite *tg_test_yaml_json_suite(void);
Suite *tg_test_yaml_json_suite(void)
{
    Suite *s = suite_create("yaml_json");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, bools_yaml11);
    tcase_add_test(tc, nulls);
    tcase_add_test(tc, integers);
    tcase_add_test(tc, big_integers);
    tcase_add_test(tc, floats);
    tcase_add_test(tc, tags);
    tcase_add_test(tc, block_and_quoted);
    tcase_add_test(tc, keys);
    tcase_add_test(tc, duplicates);
    tcase_add_test(tc, anchors_and_merges);
    tcase_add_test(tc, alias_bomb);
    tcase_add_test(tc, deep_nesting);
    tcase_add_test(tc, json_input);
    tcase_add_test(tc, syntax_errors);
    tcase_add_test(tc, invalid_utf8);
    tcase_add_test(tc, stream_documents);
    tcase_add_test(tc, stream_edge_cases);
    tcase_add_test(tc, error_then_more_in_chunk);
    tcase_add_test(tc, read_file);
    tcase_add_test(tc, read_empty_file);
    tcase_add_test(tc, emit_round_trip);
    tcase_add_test(tc, emit_errors);
    tcase_add_test(tc, out_of_memory_walk);
    tcase_add_test(tc, emit_random_round_trip);
    tcase_add_test(tc, corpus_round_trip);
    suite_add_tcase(s, tc);
    return s;
}
