/* test_quantity.c -- the Kubernetes quantity parser: every suffix, edge values, garbage. */
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "tg/quantity.h"

/* Parses s and compares the canonical text of the value (tg_quantity_format). */
static void expect_q(const char *s, const char *want)
{
    struct tg_quantity q;
    char buf[64];
    int rc = tg_quantity_parse(s, &q);

    ck_assert_msg(rc == 0, "parse(\"%s\") = %d", s, rc);
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_msg(strcmp(buf, want) == 0, "parse(\"%s\") = %s, want %s", s, buf, want);
}

static void expect_rc(const char *s, int want)
{
    struct tg_quantity q = {.nano = 12345};
    int rc = tg_quantity_parse(s, &q);

    ck_assert_msg(rc == want, "parse(\"%s\") = %d, want %d", s, rc, want);
    ck_assert_msg(q.nano == 12345, "parse(\"%s\") wrote a value on error", s);
}

START_TEST(plain_numbers)
{
    expect_q("0", "0");
    expect_q("8", "8");
    expect_q("32", "32");
    expect_q("-0", "0");
    expect_q("+1", "1");
    expect_q("-4", "-4");
    expect_q("007", "7");
    expect_q("1.5", "1.5");
    expect_q("1.", "1");
    expect_q(".5", "0.5");
    expect_q("0.000000001", "0.000000001");
    expect_q("99999999999999999999", "99999999999999999999");
}
END_TEST

START_TEST(decimal_suffixes)
{
    expect_q("1n", "0.000000001");
    expect_q("1u", "0.000001");
    expect_q("500m", "0.5");
    expect_q("1500m", "1.5");
    expect_q("8k", "8000");
    expect_q("1M", "1000000");
    expect_q("2G", "2000000000");
    expect_q("1T", "1000000000000");
    expect_q("1P", "1000000000000000");
    expect_q("1E", "1000000000000000000");
    expect_q("1.5k", "1500");
    expect_q("-2M", "-2000000");
}
END_TEST

START_TEST(binary_suffixes)
{
    expect_q("1Ki", "1024");
    expect_q("1Mi", "1048576");
    expect_q("1Gi", "1073741824");
    expect_q("1Ti", "1099511627776");
    expect_q("1Pi", "1125899906842624");
    expect_q("1Ei", "1152921504606846976");
    expect_q("0.5Ei", "576460752303423488");
    expect_q("0.5Ki", "512");
    expect_q("1.5Gi", "1610612736");
    expect_q("5120Mi", "5368709120");
    expect_q("0.001Ki", "1.024");
    expect_q("0.0000000001Ki", "0.000000103"); /* 1.024e-7 rounds up to 103n */
}
END_TEST

START_TEST(exponents)
{
    expect_q("1e3", "1000");
    expect_q("1E3", "1000");
    expect_q("1e+3", "1000");
    expect_q("1e-3", "0.001");
    expect_q("1.5e2", "150");
    expect_q("12e-1", "1.2");
    expect_q("1e0", "1");
    expect_q("1e-9", "0.000000001");
    expect_q("1e19", "10000000000000000000");
    expect_q("0e999", "0");
    expect_q("1e-300", "0.000000001"); /* rounds up to the smallest unit */
    expect_q("-1e-300", "-0.000000001");
}
END_TEST

START_TEST(round_up)
{
    expect_q("0.1n", "0.000000001");
    expect_q("1.0000000001", "1.000000001");
    expect_q("1.0000000000", "1");
    expect_q("-1.0000000001", "-1.000000001");
    expect_q("0.0000000000000000000000000000000000000000000000001", "0.000000001");
    /* the digits of a long quantity are kept on the heap, of a short one on the stack */
    char longer[160];
    memset(longer, '0', sizeof(longer) - 1);
    longer[sizeof(longer) - 2] = '7';
    longer[sizeof(longer) - 1] = '\0';
    expect_q(longer, "7");
    longer[1] = '.';
    expect_q(longer, "0.000000001");
    /* 76 digits fit the stack buffer, 77 take the heap: "0." and 75 or 76 more */
    for (size_t n = 75; n <= 76; n++) {
        memset(longer, '0', n + 2);
        longer[1] = '.';
        longer[n + 1] = '3';
        longer[n + 2] = '\0';
        expect_q(longer, "0.000000001");
        memmove(longer, longer + 2, n + 1); /* 75 or 76 digits of an integer ending in 3 */
        expect_q(longer, "3");
    }
}
END_TEST

START_TEST(equivalences)
{
    struct tg_quantity a, b;

    ck_assert_int_eq(tg_quantity_parse("5120Mi", &a), 0);
    ck_assert_int_eq(tg_quantity_parse("5Gi", &b), 0);
    ck_assert_int_eq(tg_quantity_cmp(&a, &b), 0);
    ck_assert_int_eq(tg_quantity_parse("500m", &a), 0);
    ck_assert_int_eq(tg_quantity_parse("0.5", &b), 0);
    ck_assert_int_eq(tg_quantity_cmp(&a, &b), 0);
    ck_assert_int_eq(tg_quantity_parse("1k", &a), 0);
    ck_assert_int_eq(tg_quantity_parse("1e3", &b), 0);
    ck_assert_int_eq(tg_quantity_cmp(&a, &b), 0);
    ck_assert_int_eq(tg_quantity_parse("1Ki", &b), 0);
    ck_assert_int_lt(tg_quantity_cmp(&a, &b), 0);
    ck_assert_int_gt(tg_quantity_cmp(&b, &a), 0);
    ck_assert_int_eq(tg_quantity_parse("-1", &a), 0);
    ck_assert_int_lt(tg_quantity_cmp(&a, &b), 0);
}
END_TEST

START_TEST(garbage)
{
    static const char *const bad[] = {
        "",
        " 1",
        "1 ",
        "4 ",
        "1e",
        "1e+",
        "1e-",
        "1Ki5",
        "$EFA_PER_NODE",
        "1.5.2",
        "Gi",
        "-",
        "+",
        ".",
        "-.",
        "1K",
        "1ki",
        "1mi",
        "1kk",
        "1Kib",
        "1e3.5",
        "1e3k",
        "1E+",
        "0x10",
        "1,5",
        "--1",
        "+-1",
        "1_000",
        "one",
        "1i",
        "1 Gi",
        "\t8",
        "8\n",
        "1e99999999999",
        "NaN",
        "inf",
        "1.5e",
        "e3",
        "1ee3",
    };

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        expect_rc(bad[i], -EINVAL);
    ck_assert_int_eq(tg_quantity_parse(NULL, &(struct tg_quantity){0}), -EINVAL);
}
END_TEST

START_TEST(too_large)
{
    static const char *const big[] = {
        "100000000000000000000",
        "999999999999999999999",
        "1e20",
        "1e300",
        "-1e300",
        "1e21",
        "100Ei",
        "-100Ei",
        "1e2147483647",
        "100000P",
        "123456789012345678901234567890",
    };

    for (size_t i = 0; i < sizeof(big) / sizeof(big[0]); i++)
        expect_rc(big[i], -ERANGE);
    expect_q("86Ei", "99151249396188839936"); /* just under 1e20 */
    expect_rc("87Ei", -ERANGE);
    expect_q("-99999999999999999999.999999999", "-99999999999999999999.999999999");
}
END_TEST

/* Integer digits (up to 18) with a named suffix or a small exponent take a shortcut; the same
 * text with ".0" before the suffix takes the digit-string path: both give the same result, on
 * both sides of the 1e20 bound and of the shortcut's limits (18 digits, exponents -9 and 18). */
START_TEST(shortcut_agrees_with_the_digit_string)
{
    static const char *const cases[][2] = {
        {"0", ""},
        {"32", ""},
        {"-4", ""},
        {"007", ""},
        {"5120", "Mi"},
        {"1", "Ki"},
        {"86", "Ei"},
        {"87", "Ei"},
        {"-86", "Ei"},
        {"-87", "Ei"},
        {"99999", "P"},
        {"100000", "P"},
        {"500", "m"},
        {"1", "n"},
        {"3", "u"},
        {"8", "k"},
        {"1", "e-9"},
        {"1", "e-10"},
        {"1", "e18"},
        {"1", "e19"},
        {"99", "E"},
        {"100", "E"},
        {"0", "e999"},
        {"0", "Ei"},
        {"999999999999999999", ""},
        {"999999999999999999", "Ei"},
        {"1000000000000000000", ""},
        {"99999999999999999999", ""},
        {"123456789012345678", "e1"},
        {"576460752303423488", "Ki"},
        {"99999999999", "G"},
        {"100000000000", "G"},
        {"1", "E"},
        {"99999999999999999", "e2"},
        {"100000000000000000", "e2"},
        {"99999999999999999", "m"},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        char a[64], b[64];
        struct tg_quantity qa = {.nano = 7}, qb = {.nano = 7};
        snprintf(a, sizeof(a), "%s%s", cases[i][0], cases[i][1]);
        snprintf(b, sizeof(b), "%s.0%s", cases[i][0], cases[i][1]);
        int ra = tg_quantity_parse(a, &qa), rb = tg_quantity_parse(b, &qb);
        ck_assert_msg(ra == rb, "%s: %d, %s: %d", a, ra, b, rb);
        ck_assert_msg(qa.nano == qb.nano, "%s and %s differ", a, b);
    }
    expect_rc("87Ei", -ERANGE);
    expect_rc("100000P", -ERANGE);
    expect_q("99999P", "99999000000000000000");
}
END_TEST

START_TEST(integers)
{
    struct tg_quantity q;
    long long v = 0;

    ck_assert_int_eq(tg_quantity_parse("32", &q), 0);
    ck_assert(tg_quantity_is_integer(&q));
    ck_assert(!tg_quantity_is_negative(&q));
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), 0);
    ck_assert_int_eq(v, 32);
    ck_assert_int_eq(tg_quantity_parse("1.5", &q), 0);
    ck_assert(!tg_quantity_is_integer(&q));
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), -EINVAL);
    ck_assert_int_eq(tg_quantity_parse("500m", &q), 0);
    ck_assert(!tg_quantity_is_integer(&q));
    ck_assert_int_eq(tg_quantity_parse("2000m", &q), 0);
    ck_assert(tg_quantity_is_integer(&q));
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), 0);
    ck_assert_int_eq(v, 2);
    ck_assert_int_eq(tg_quantity_parse("-1", &q), 0);
    ck_assert(tg_quantity_is_negative(&q));
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), 0);
    ck_assert_int_eq(v, -1);
    ck_assert_int_eq(tg_quantity_parse("-0", &q), 0);
    ck_assert(!tg_quantity_is_negative(&q));
    ck_assert_int_eq(tg_quantity_parse("9223372036854775807", &q), 0);
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), 0);
    ck_assert_int_eq(v, LLONG_MAX);
    ck_assert_int_eq(tg_quantity_parse("9223372036854775808", &q), 0);
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), -ERANGE);
    ck_assert_int_eq(tg_quantity_parse("-9223372036854775808", &q), 0);
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), 0);
    ck_assert_int_eq(v, LLONG_MIN);
    ck_assert_int_eq(tg_quantity_parse("-9223372036854775809", &q), 0);
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), -ERANGE);
    ck_assert_int_eq(tg_quantity_parse("16Ei", &q), 0);
    ck_assert_int_eq(tg_quantity_to_int(&q, &v), -ERANGE);
}
END_TEST

static int from_json_text(const char *text, struct tg_quantity *q)
{
    json_error_t err;
    json_t *v = json_loads(text, JSON_DECODE_ANY | JSON_ALLOW_NUL, &err);
    int rc;

    ck_assert_msg(v != NULL, "bad JSON %s", text);
    rc = tg_quantity_from_json(v, q);
    json_decref(v);
    return rc;
}

START_TEST(from_json)
{
    struct tg_quantity q;
    char buf[64];

    ck_assert_int_eq(from_json_text("4", &q), 0);
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "4");
    ck_assert_int_eq(from_json_text("4.0", &q), 0);
    ck_assert(tg_quantity_is_integer(&q));
    ck_assert_int_eq(from_json_text("1e3", &q), 0);
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "1000");
    ck_assert_int_eq(from_json_text("0.1", &q), 0);
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "0.1");
    ck_assert_int_eq(from_json_text("-2", &q), 0);
    ck_assert(tg_quantity_is_negative(&q));
    ck_assert_int_eq(from_json_text("9223372036854775807", &q), 0);
    ck_assert_int_eq(from_json_text("1e300", &q), -ERANGE);
    ck_assert_int_eq(from_json_text("\"5Gi\"", &q), 0);
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "5368709120");
    /* The API server trims white space inside the JSON string. */
    ck_assert_int_eq(from_json_text("\" 8 \"", &q), 0);
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "8");
    /* Strings shorter than 64 bytes are parsed from a stack copy, longer ones from the heap:
     * both sides give the same answers (leading zeros keep the value 32). */
    for (int zeros = 55; zeros <= 75; zeros++) {
        char text[128];
        snprintf(text, sizeof(text), "\" %.*s32 \"", zeros,
                 "0000000000000000000000000000000000000000000000000000000000000000000000000000");
        ck_assert_int_eq(from_json_text(text, &q), 0);
        tg_quantity_format(&q, buf, sizeof(buf));
        ck_assert_str_eq(buf, "32");
    }
    ck_assert_int_eq(from_json_text("\"$EFA_PER_NODE\"", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("\"\"", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("\"   \"", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("\"1\\u00002\"", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("null", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("true", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("false", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("{}", &q), -EINVAL);
    ck_assert_int_eq(from_json_text("[4]", &q), -EINVAL);
    ck_assert_int_eq(tg_quantity_from_json(NULL, &q), -EINVAL);
}
END_TEST

START_TEST(format)
{
    struct tg_quantity q = {.nano = 0};
    char buf[64], small[4];

    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "0");
    q.nano = -1;
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "-0.000000001");
    q.nano = (__int128)1234567 * 1000000000 + 500000000;
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "1234567.5");
    tg_quantity_format(&q, small, sizeof(small));
    ck_assert_str_eq(small, "123");
    ck_assert_int_eq(tg_quantity_parse("-99999999999999999999.999999999", &q), 0);
    tg_quantity_format(&q, buf, sizeof(buf));
    ck_assert_str_eq(buf, "-99999999999999999999.999999999");
}
END_TEST

Suite *tg_test_quantity_suite(void);
Suite *tg_test_quantity_suite(void)
{
    Suite *s = suite_create("quantity");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, plain_numbers);
    tcase_add_test(tc, decimal_suffixes);
    tcase_add_test(tc, binary_suffixes);
    tcase_add_test(tc, exponents);
    tcase_add_test(tc, round_up);
    tcase_add_test(tc, equivalences);
    tcase_add_test(tc, garbage);
    tcase_add_test(tc, too_large);
    tcase_add_test(tc, shortcut_agrees_with_the_digit_string);
    tcase_add_test(tc, integers);
    tcase_add_test(tc, from_json);
    tcase_add_test(tc, format);
    suite_add_tcase(s, tc);
    return s;
}
