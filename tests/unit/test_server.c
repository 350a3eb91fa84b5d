/* test_server.c -- the server's pure pieces: route table, content type, Content-Length, the capped
 * body buffer, listen addresses and the decision log line. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tg/log.h"
#include "tg/server.h"

START_TEST(routes_find_post_validate_and_mutate)
{
    bool known;
    const struct tg_route *r;

    r = tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/validate", "POST", &known);
    ck_assert_ptr_nonnull(r);
    ck_assert(known);
    ck_assert_int_eq(r->handler, TG_HANDLER_VALIDATE);
    r = tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/mutate", "POST", &known);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->handler, TG_HANDLER_MUTATE);
}
END_TEST

START_TEST(routes_tell_wrong_method_from_unknown_path)
{
    bool known;

    ck_assert_ptr_null(
        tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/validate", "GET", &known));
    ck_assert(known); /* 405 */
    ck_assert_ptr_null(
        tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/validat", "POST", &known));
    ck_assert(!known); /* 404 */
    ck_assert_ptr_null(
        tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/validate/", "POST", &known));
    ck_assert(!known);
    ck_assert_ptr_null(
        tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/VALIDATE", "POST", &known));
    ck_assert(!known);
    ck_assert_ptr_null(
        tg_route_find(tg_webhook_routes, tg_webhook_route_count, NULL, "POST", &known));
    ck_assert(!known);
    ck_assert_ptr_null(
        tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/validate", "post", &known));
    ck_assert(known);
}
END_TEST

START_TEST(probe_routes_answer_get_and_head_only)
{
    bool known;
    const struct tg_route *r;

    r = tg_route_find(tg_probe_routes, tg_probe_route_count, "/readyz", "HEAD", &known);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->handler, TG_HANDLER_READYZ);
    r = tg_route_find(tg_probe_routes, tg_probe_route_count, "/metrics", "GET", &known);
    ck_assert_ptr_nonnull(r);
    ck_assert_int_eq(r->handler, TG_HANDLER_METRICS);
    ck_assert_ptr_null(
        tg_route_find(tg_probe_routes, tg_probe_route_count, "/healthz", "POST", &known));
    ck_assert(known);
    /* The webhook paths are not on the probe port and vice versa. */
    ck_assert_ptr_null(
        tg_route_find(tg_probe_routes, tg_probe_route_count, "/validate", "POST", &known));
    ck_assert(!known);
    ck_assert_ptr_null(
        tg_route_find(tg_webhook_routes, tg_webhook_route_count, "/healthz", "GET", &known));
    ck_assert(!known);
}
END_TEST

START_TEST(allow_header_lists_the_methods_of_a_path)
{
    char buf[64];

    ck_assert_uint_eq(
        tg_route_allow(tg_webhook_routes, tg_webhook_route_count, "/mutate", buf, sizeof(buf)), 4);
    ck_assert_str_eq(buf, "POST");
    tg_route_allow(tg_probe_routes, tg_probe_route_count, "/metrics", buf, sizeof(buf));
    ck_assert_str_eq(buf, "GET, HEAD");
    ck_assert_uint_eq(
        tg_route_allow(tg_webhook_routes, tg_webhook_route_count, "/x", buf, sizeof(buf)), 0);
    ck_assert_str_eq(buf, "");
    /* Too small a buffer never overflows. */
    tg_route_allow(tg_probe_routes, tg_probe_route_count, "/metrics", buf, 4);
    ck_assert_uint_lt(strlen(buf), 4);
}
END_TEST

START_TEST(route_paths_are_unique_per_method)
{
    const struct tg_route *tabs[] = {tg_webhook_routes, tg_probe_routes};
    size_t ns[] = {tg_webhook_route_count, tg_probe_route_count};

    for (size_t t = 0; t < 2; t++)
        for (size_t i = 0; i < ns[t]; i++)
            for (size_t j = i + 1; j < ns[t]; j++)
                ck_assert(strcmp(tabs[t][i].path, tabs[t][j].path) ||
                          strcmp(tabs[t][i].method, tabs[t][j].method));
}
END_TEST

static const struct {
    const char *ct;
    bool json;
} ct_cases[] = {
    {"application/json", true},
    {"application/json; charset=utf-8", true},
    {"application/json;charset=UTF-8", true},
    {"Application/JSON", true},
    {"  application/json  ", true},
    {"application/json ; charset=utf-8", true},
    {"application/jsonx", false},
    {"application/json-patch+json", false},
    {"application/merge-patch+json", false},
    {"text/json", false},
    {"text/plain", false},
    {"application/x-www-form-urlencoded", false},
    {"application", false},
    {"", false},
    {NULL, false},
};

START_TEST(content_type_matches_json_with_parameters)
{
    ck_assert_msg(tg_content_type_is_json(ct_cases[_i].ct) == ct_cases[_i].json, "case '%s'",
                  ct_cases[_i].ct ? ct_cases[_i].ct : "(null)");
}
END_TEST

START_TEST(content_length_is_digits_only)
{
    unsigned long long v = 0;

    ck_assert_int_eq(tg_content_length_parse("0", &v), 0);
    ck_assert_uint_eq(v, 0);
    ck_assert_int_eq(tg_content_length_parse("7340032", &v), 0);
    ck_assert_uint_eq(v, 7340032);
    ck_assert_int_eq(tg_content_length_parse("", &v), -EINVAL);
    ck_assert_int_eq(tg_content_length_parse(NULL, &v), -EINVAL);
    ck_assert_int_eq(tg_content_length_parse("-1", &v), -EINVAL);
    ck_assert_int_eq(tg_content_length_parse("+5", &v), -EINVAL);
    ck_assert_int_eq(tg_content_length_parse(" 5", &v), -EINVAL);
    ck_assert_int_eq(tg_content_length_parse("5 ", &v), -EINVAL);
    ck_assert_int_eq(tg_content_length_parse("12abc", &v), -EINVAL);
    ck_assert_int_eq(tg_content_length_parse("99999999999999999999999", &v), -EINVAL);
}
END_TEST

START_TEST(body_grows_up_to_the_cap_and_no_further)
{
    struct tg_body b;
    char chunk[1000];

    memset(chunk, 'x', sizeof(chunk));
    tg_body_init(&b, 2500);
    ck_assert_ptr_null(b.buf);
    ck_assert_int_eq(tg_body_append(&b, chunk, 1000), 0);
    ck_assert_int_eq(tg_body_append(&b, chunk, 1000), 0);
    ck_assert_uint_eq(b.len, 2000);
    ck_assert_uint_le(b.cap, 2500);
    ck_assert_int_eq(tg_body_append(&b, chunk, 501), -EFBIG);
    ck_assert_uint_eq(b.len, 2000); /* nothing appended */
    ck_assert_int_eq(tg_body_append(&b, chunk, 500), 0);
    ck_assert_uint_eq(b.len, 2500);
    ck_assert_int_eq(b.buf[2500], '\0');
    ck_assert_int_eq(tg_body_append(&b, chunk, 1), -EFBIG);
    ck_assert_int_eq(tg_body_append(&b, chunk, 0), 0);
    tg_body_release(&b);
    ck_assert_ptr_null(b.buf);
    ck_assert_uint_eq(b.len, 0);
}
END_TEST

START_TEST(body_starts_small)
{
    struct tg_body b;

    tg_body_init(&b, TG_BODY_MAX);
    ck_assert_int_eq(tg_body_append(&b, "{}", 2), 0);
    ck_assert_uint_le(b.cap, 4096);
    ck_assert_str_eq(b.buf, "{}");
    tg_body_release(&b);
}
END_TEST

START_TEST(body_reserve_refuses_more_than_the_cap)
{
    struct tg_body b;

    tg_body_init(&b, TG_BODY_MAX);
    ck_assert_int_eq(tg_body_reserve(&b, TG_BODY_MAX + 1), -EFBIG);
    ck_assert_ptr_null(b.buf);
    ck_assert_int_eq(tg_body_reserve(&b, 10000), 0);
    ck_assert_uint_eq(b.cap, 10000);
    ck_assert_int_eq(tg_body_append(&b, "abc", 3), 0);
    ck_assert_uint_eq(b.cap, 10000); /* no regrowth inside the reservation */
    tg_body_release(&b);
    ck_assert_uint_eq(TG_BODY_MAX, 7u * 1024 * 1024);
}
END_TEST

START_TEST(listen_accepts_host_port_and_bracketed_v6)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char err[256];
    char ip[INET6_ADDRSTRLEN];

    ck_assert_int_eq(tg_listen_parse("127.0.0.1:8443", &ss, &len, err, sizeof(err)), 0);
    ck_assert_int_eq(ss.ss_family, AF_INET);
    struct sockaddr_in *in = (struct sockaddr_in *)&ss;
    ck_assert_int_eq(ntohs(in->sin_port), 8443);
    inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
    ck_assert_str_eq(ip, "127.0.0.1");

    ck_assert_int_eq(tg_listen_parse("0.0.0.0:0", &ss, &len, err, sizeof(err)), 0);
    ck_assert_int_eq(tg_listen_parse(":8080", &ss, &len, err, sizeof(err)), 0);
    ck_assert_int_eq(ss.ss_family, AF_INET);
    ck_assert_int_eq(ntohs(((struct sockaddr_in *)&ss)->sin_port), 8080);

    ck_assert_int_eq(tg_listen_parse("[::1]:9443", &ss, &len, err, sizeof(err)), 0);
    ck_assert_int_eq(ss.ss_family, AF_INET6);
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)&ss;
    ck_assert_int_eq(ntohs(in6->sin6_port), 9443);
    inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
    ck_assert_str_eq(ip, "::1");
    ck_assert_int_eq(tg_listen_parse("[::]:8443", &ss, &len, err, sizeof(err)), 0);
    ck_assert_int_eq(ss.ss_family, AF_INET6);
}
END_TEST

static const char *const bad_listens[] = {
    "",
    "8443",
    "127.0.0.1",
    "127.0.0.1:",
    "127.0.0.1:65536",
    "127.0.0.1:-1",
    "127.0.0.1:84a3",
    "::1:8443",
    "[::1]8443",
    "[::1]",
    "[::1:8443",
    "127.0.0.1: 8443",
};

START_TEST(listen_refuses_malformed_addresses)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char err[256] = "";

    ck_assert_msg(tg_listen_parse(bad_listens[_i], &ss, &len, err, sizeof(err)) == -EINVAL,
                  "accepted '%s'", bad_listens[_i]);
    ck_assert_msg(strstr(err, bad_listens[_i]) != NULL, "error does not name the value: %s", err);
}
END_TEST

START_TEST(listen_refuses_null)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char err[256];

    ck_assert_int_eq(tg_listen_parse(NULL, &ss, &len, err, sizeof(err)), -EINVAL);
}
END_TEST

/* [::] becomes 0.0.0.0 on the same port only where the kernel has no IPv6; other addresses and
 * kernels with IPv6 keep what was asked. */
START_TEST(any_ipv6_address_falls_back_to_ipv4_without_ipv6)
{
    struct sockaddr_storage ss;
    socklen_t len;
    char err[256], text[INET6_ADDRSTRLEN];

    ck_assert_int_eq(tg_listen_parse("[::]:8443", &ss, &len, err, sizeof(err)), 0);
    ck_assert(!tg_listen_ipv4_fallback(&ss, true));
    ck_assert_int_eq(ss.ss_family, AF_INET6);
    ck_assert(tg_listen_ipv4_fallback(&ss, false));
    ck_assert_int_eq(ss.ss_family, AF_INET);
    const struct sockaddr_in *a4 = (const struct sockaddr_in *)&ss;
    ck_assert_uint_eq(ntohs(a4->sin_port), 8443);
    ck_assert_str_eq(inet_ntop(AF_INET, &a4->sin_addr, text, sizeof(text)), "0.0.0.0");
    ck_assert_int_eq(tg_listen_parse("[::1]:8443", &ss, &len, err, sizeof(err)), 0);
    ck_assert(!tg_listen_ipv4_fallback(&ss, false));
    ck_assert_int_eq(ss.ss_family, AF_INET6);
    ck_assert_int_eq(tg_listen_parse("127.0.0.1:8443", &ss, &len, err, sizeof(err)), 0);
    ck_assert(!tg_listen_ipv4_fallback(&ss, false));
    ck_assert_int_eq(ss.ss_family, AF_INET);
}
END_TEST

START_TEST(defaults_match_the_documentation)
{
    struct tg_server_config c;

    tg_server_config_defaults(&c);
    ck_assert_str_eq(c.listen, "[::]:8443"); /* SPEC 1: dual-stack by default */
    ck_assert_str_eq(c.probe_listen, "[::]:8080");
    ck_assert_uint_ge(c.threads, 1);
    ck_assert_uint_eq(c.shutdown_delay, 5);
    ck_assert_uint_eq(c.max_body, TG_BODY_MAX);
    ck_assert_uint_gt(c.max_connections, 0);
    ck_assert_uint_gt(c.connection_timeout, 0);
    ck_assert_ptr_null(c.client_ca_file);
    ck_assert_ptr_null(c.config_file);
}
END_TEST

START_TEST(log_levels_parse)
{
    enum tg_log_level l;

    ck_assert_int_eq(tg_log_level_parse("debug", &l), 0);
    ck_assert_int_eq(l, TG_LOG_DEBUG);
    ck_assert_int_eq(tg_log_level_parse("WARN", &l), 0);
    ck_assert_int_eq(l, TG_LOG_WARN);
    ck_assert_int_eq(tg_log_level_parse("warning", &l), 0);
    ck_assert_int_eq(l, TG_LOG_WARN);
    ck_assert_int_eq(tg_log_level_parse("error", &l), 0);
    ck_assert_int_eq(tg_log_level_parse("verbose", &l), -EINVAL);
    ck_assert_int_eq(tg_log_level_parse("", &l), -EINVAL);
    ck_assert_int_eq(tg_log_level_parse(NULL, &l), -EINVAL);
    tg_log_set_level(TG_LOG_WARN);
    ck_assert(!tg_log_enabled(TG_LOG_INFO));
    ck_assert(tg_log_enabled(TG_LOG_ERROR));
    tg_log_set_level(TG_LOG_INFO);
}
END_TEST

START_TEST(decision_line_has_every_field_and_no_object)
{
    const char *rules[] = {"efa.env-without-device", "zone.missing"};
    struct tg_decision d = {
        .endpoint = "validate",
        .uid = "u-1",
        .kind = "Pod",
        .namespace = "ml",
        .name = "p\"1\n",
        .operation = "CREATE",
        .user = "alice",
        .dry_run = true,
        .mode = "enforce",
        .verdict = "denied",
        .rules = rules,
        .nrules = 2,
        .latency_ms = 1.25,
    };
    char *s = tg_log_decision_format(&d);
    json_error_t e;
    json_t *j;

    ck_assert_ptr_nonnull(s);
    ck_assert_ptr_null(strchr(s, '\n')); /* one line, even with a newline in a name */
    j = json_loads(s, 0, &e);
    ck_assert_msg(j != NULL, "not JSON: %s", s);
    ck_assert_str_eq(json_string_value(json_object_get(j, "msg")), "admission");
    ck_assert_str_eq(json_string_value(json_object_get(j, "level")), "info");
    ck_assert_ptr_nonnull(json_object_get(j, "ts"));
    ck_assert_str_eq(json_string_value(json_object_get(j, "uid")), "u-1");
    ck_assert_str_eq(json_string_value(json_object_get(j, "name")), "p\"1\n");
    ck_assert_str_eq(json_string_value(json_object_get(j, "user")), "alice");
    ck_assert(json_is_true(json_object_get(j, "dryRun")));
    ck_assert_str_eq(json_string_value(json_object_get(j, "verdict")), "denied");
    ck_assert_str_eq(json_string_value(json_object_get(j, "mode")), "enforce");
    ck_assert_int_eq(json_array_size(json_object_get(j, "rules")), 2);
    ck_assert_str_eq(json_string_value(json_array_get(json_object_get(j, "rules"), 1)),
                     "zone.missing");
    ck_assert(json_real_value(json_object_get(j, "latency_ms")) > 1.2);
    ck_assert_ptr_null(json_object_get(j, "object"));
    json_decref(j);
    free(s);
}
END_TEST

START_TEST(decision_line_tolerates_missing_and_invalid_strings)
{
    struct tg_decision d = {.uid = "\xff\xfe", .kind = NULL};
    char *s = tg_log_decision_format(&d);
    json_t *j;

    ck_assert_ptr_nonnull(s);
    j = json_loads(s, 0, NULL);
    ck_assert_ptr_nonnull(j);
    ck_assert_str_eq(json_string_value(json_object_get(j, "kind")), "");
    ck_assert_str_eq(json_string_value(json_object_get(j, "uid")), "?");
    json_decref(j);
    free(s);
}
END_TEST

/* The line as the first version built it with jansson: the hand-written formatter must give the
 * same bytes (field order, escapes, invalid UTF-8 as "?", reals with 6 significant digits). */
static char *decision_by_jansson(const struct tg_decision *d, const char *ts)
{
    json_t *o = json_object(), *rules = json_array();
    const char *const strs[][2] = {{"endpoint", d->endpoint}, {"uid", d->uid},
                                   {"kind", d->kind},         {"namespace", d->namespace},
                                   {"name", d->name},         {"operation", d->operation},
                                   {"user", d->user}};
    json_t *j;

    json_object_set_new(o, "ts", json_string(ts));
    json_object_set_new(o, "level", json_string("info"));
    json_object_set_new(o, "msg", json_string("admission"));
    for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++) {
        j = json_string(strs[i][1] ? strs[i][1] : "");
        json_object_set_new(o, strs[i][0], j ? j : json_string("?"));
    }
    json_object_set_new(o, "dryRun", json_boolean(d->dry_run));
    json_object_set_new(o, "mode", json_string(d->mode ? d->mode : ""));
    json_object_set_new(o, "verdict", json_string(d->verdict ? d->verdict : ""));
    for (size_t i = 0; i < d->nrules; i++)
        json_array_append_new(rules, json_string(d->rules[i]));
    json_object_set_new(o, "rules", rules);
    if (d->nexempted) {
        json_t *ex = json_array();
        for (size_t i = 0; i < d->nexempted; i++)
            json_array_append_new(ex, json_string(d->exempted[i]));
        json_object_set_new(o, "exempted", ex);
    }
    if (d->nratcheted)
        json_object_set_new(o, "ratcheted", json_integer((json_int_t)d->nratcheted));
    json_object_set_new(o, "patched", json_boolean(d->patched));
    json_object_set_new(o, "latency_ms", json_real(d->latency_ms));
    char *s = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER | JSON_REAL_PRECISION(6));
    json_decref(o);
    return s;
}

static const double latencies[] = {1.25, 0.0215347, 3.0, 12345678.9, 0.000001, 250.0};

START_TEST(decision_line_is_what_jansson_writes)
{
    const char *rules[] = {"efa.env-without-device", "zone.missing"};
    const char *exempted[] = {"mpi.np-below-slots"};
    struct tg_decision d = {
        .endpoint = "mutate",
        .uid = "u-\x01\x1f\"\\/\t",
        .kind = "Pod",
        .namespace = NULL,
        .name = "caf\xc3\xa9-\xe2\x82\xac-\xf0\x9f\x98\x80",
        .operation = "UPDATE",
        .user = "\xed\xa0\x80", /* a surrogate: not valid UTF-8 for jansson */
        .dry_run = _i % 2 == 0,
        .mode = "warn",
        .verdict = "allowed",
        .rules = rules,
        .nrules = (size_t)(_i % 3),
        .exempted = exempted,
        .nexempted = (size_t)(_i % 2),
        .nratcheted = (size_t)_i,
        .patched = _i % 3 == 1,
        .latency_ms = latencies[_i],
    };
    char *mine = tg_log_decision_format(&d);
    json_t *j = json_loads(mine, 0, NULL);

    ck_assert_msg(j != NULL, "not JSON: %s", mine);
    char *ref = decision_by_jansson(&d, json_string_value(json_object_get(j, "ts")));
    ck_assert_str_eq(mine, ref);
    json_decref(j);
    free(ref);
    free(mine);
}
END_TEST

/* The decision line's number without printf agrees with jansson's JSON_REAL_PRECISION(6) on
 * every latency a clock gives (whole nanoseconds up to 10 s, and 1 s to 100 s by 1 us), on both
 * sides of each power of ten and of each rounding tie, and on values outside its range. */
static void real_matches_jansson(double v)
{
    char mine[40];
    size_t n = tg_log_real_text(v, mine);
    json_t *r = json_real(v);
    char *ref = json_dumps(r, JSON_ENCODE_ANY | JSON_REAL_PRECISION(6));
    ck_assert_msg(!strcmp(mine, ref), "%.17g: mine %s, jansson %s", v, mine, ref);
    ck_assert_uint_eq(n, strlen(ref));
    free(ref);
    json_decref(r);
}

START_TEST(decision_latency_is_what_jansson_writes)
{
    unsigned long long x = 88172645463325252ULL;
    for (int i = 0; i < 30000; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        real_matches_jansson((double)(x % 10000000000ULL) / 1e6);     /* ns -> ms */
        real_matches_jansson((double)(1000000 + x % 99000000) / 1e3); /* us -> ms */
    }
    for (int e = -6; e <= 7; e++) {
        double p = pow(10, e);
        real_matches_jansson(p);
        real_matches_jansson(nextafter(p, 0));
        real_matches_jansson(nextafter(p, 1e300));
        real_matches_jansson(p * 9.999995);
        real_matches_jansson(p * 9.9999949);
        real_matches_jansson(p * 1.0000005);
        real_matches_jansson(p * 1.2345650);
        real_matches_jansson(p * 1.2345750);
    }
    static const double odd[] = {0.0, -1.5, 1e-300, 1e300, 0.000099999, 999999.5, 999999.4, 5e-5};
    for (size_t i = 0; i < sizeof(odd) / sizeof(odd[0]); i++)
        real_matches_jansson(odd[i]);
}
END_TEST

START_TEST(log_decisions_setting_parses_and_filters)
{
    enum tg_log_decisions v;
    const char *rules[] = {"zone.missing"};
    struct tg_decision plain = {.verdict = "allowed"};
    struct tg_decision found = {.verdict = "allowed", .rules = rules, .nrules = 1};
    struct tg_decision failed = {.verdict = "error"};

    ck_assert_int_eq(tg_log_decisions_parse("all", &v), 0);
    ck_assert_int_eq(v, TG_LOG_DECISIONS_ALL);
    ck_assert_int_eq(tg_log_decisions_parse("findings", &v), 0);
    ck_assert_int_eq(v, TG_LOG_DECISIONS_FINDINGS);
    ck_assert_int_eq(tg_log_decisions_parse("none", &v), 0);
    ck_assert_int_eq(v, TG_LOG_DECISIONS_NONE);
    ck_assert_int_eq(tg_log_decisions_parse("All", &v), -EINVAL);
    ck_assert_int_eq(tg_log_decisions_parse("", &v), -EINVAL);
    ck_assert_int_eq(tg_log_decisions_parse(NULL, &v), -EINVAL);

    tg_log_set_decisions(TG_LOG_DECISIONS_ALL);
    ck_assert(tg_log_decision_wanted(&plain));
    tg_log_set_decisions(TG_LOG_DECISIONS_FINDINGS);
    ck_assert(!tg_log_decision_wanted(&plain));
    ck_assert(tg_log_decision_wanted(&found));
    ck_assert(tg_log_decision_wanted(&failed));
    tg_log_set_decisions(TG_LOG_DECISIONS_NONE);
    ck_assert(!tg_log_decision_wanted(&found));
    tg_log_set_decisions(TG_LOG_DECISIONS_ALL);
    tg_log_set_level(TG_LOG_WARN); /* decision lines are info */
    ck_assert(!tg_log_decision_wanted(&found));
    tg_log_set_level(TG_LOG_INFO);
}
END_TEST

static void *log_some(void *arg)
{
    struct tg_decision d = {.uid = arg, .verdict = "allowed"};
    for (int i = 0; i < 100; i++)
        tg_log_decision(&d);
    return NULL;
}

START_TEST(buffered_decision_lines_all_reach_stderr_once)
{
    char path[] = "/tmp/tg-log-test.XXXXXX";
    int fd = mkstemp(path), saved = dup(STDERR_FILENO);
    pthread_t t[3];
    char uids[3][16];
    char line[4096];
    int count[3] = {0, 0, 0}, other = 0;

    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    dup2(fd, STDERR_FILENO);
    ck_assert_int_eq(tg_log_buffering_start(), 0);
    for (int i = 0; i < 3; i++) {
        snprintf(uids[i], sizeof(uids[i]), "t%d", i);
        pthread_create(&t[i], NULL, log_some, uids[i]);
    }
    for (int i = 0; i < 3; i++)
        pthread_join(t[i], NULL);
    tg_log(TG_LOG_INFO, "after the decisions");
    tg_log_buffering_stop();
    fflush(stderr);
    dup2(saved, STDERR_FILENO);
    close(saved);

    FILE *f = fdopen(fd, "r");
    ck_assert_ptr_nonnull(f);
    rewind(f);
    while (fgets(line, sizeof(line), f)) {
        json_t *j = json_loads(line, 0, NULL);
        ck_assert_msg(j != NULL, "not a whole JSON line: %s", line);
        const char *uid = json_string_value(json_object_get(j, "uid"));
        if (uid && uid[0] == 't')
            count[uid[1] - '0']++;
        else
            other++;
        if (!uid) /* the event line comes after every decision logged before it */
            ck_assert_int_eq(count[0] + count[1] + count[2], 300);
        json_decref(j);
    }
    fclose(f);
    unlink(path);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(count[i], 100);
    ck_assert_int_eq(other, 1);
}
END_TEST

Suite *tg_test_server_suite(void);
Suite *tg_test_server_suite(void)
{
    Suite *s = suite_create("server");
    TCase *tc = tcase_create("routes");
    tcase_add_test(tc, routes_find_post_validate_and_mutate);
    tcase_add_test(tc, routes_tell_wrong_method_from_unknown_path);
    tcase_add_test(tc, probe_routes_answer_get_and_head_only);
    tcase_add_test(tc, allow_header_lists_the_methods_of_a_path);
    tcase_add_test(tc, route_paths_are_unique_per_method);
    suite_add_tcase(s, tc);

    tc = tcase_create("headers");
    tcase_add_loop_test(tc, content_type_matches_json_with_parameters, 0,
                        sizeof(ct_cases) / sizeof(ct_cases[0]));
    tcase_add_test(tc, content_length_is_digits_only);
    suite_add_tcase(s, tc);

    tc = tcase_create("body");
    tcase_add_test(tc, body_grows_up_to_the_cap_and_no_further);
    tcase_add_test(tc, body_starts_small);
    tcase_add_test(tc, body_reserve_refuses_more_than_the_cap);
    suite_add_tcase(s, tc);

    tc = tcase_create("config");
    tcase_add_test(tc, listen_accepts_host_port_and_bracketed_v6);
    tcase_add_loop_test(tc, listen_refuses_malformed_addresses, 0,
                        sizeof(bad_listens) / sizeof(bad_listens[0]));
    tcase_add_test(tc, listen_refuses_null);
    tcase_add_test(tc, defaults_match_the_documentation);
    tcase_add_test(tc, any_ipv6_address_falls_back_to_ipv4_without_ipv6);
    suite_add_tcase(s, tc);

    tc = tcase_create("log");
    tcase_add_test(tc, log_levels_parse);
    tcase_add_test(tc, decision_line_has_every_field_and_no_object);
    tcase_add_test(tc, decision_line_tolerates_missing_and_invalid_strings);
    tcase_add_test(tc, decision_latency_is_what_jansson_writes);
    tcase_add_loop_test(tc, decision_line_is_what_jansson_writes, 0,
                        sizeof(latencies) / sizeof(latencies[0]));
    tcase_add_test(tc, log_decisions_setting_parses_and_filters);
    tcase_add_test(tc, buffered_decision_lines_all_reach_stderr_once);
    suite_add_tcase(s, tc);
    return s;
}
