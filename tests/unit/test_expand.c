/* test_expand.c -- a container's env as the kubelet builds it, and Kubernetes $(VAR) expansion. */
#include <check.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/expand.h"

START_TEST(expand_k8s_references)
{
    struct tg_k8s_env env;
    tg_k8s_env_init(&env);
    ck_assert_int_eq(tg_k8s_env_set(&env, "A", "1"), 0);
    ck_assert_int_eq(tg_k8s_env_set(&env, "B", NULL), 0);
    ck_assert_int_eq(tg_k8s_env_set(&env, "A", "2"), 0);
    ck_assert_uint_eq(env.n, 2);
    ck_assert_str_eq(tg_k8s_env_get(&env, "A")->value, "2");
    ck_assert_ptr_null(tg_k8s_env_get(&env, "C"));
    char unk[32];
    char *s = tg_k8s_expand("x$(A)y$$(A)$(B)$(C)$(", &env, unk, sizeof(unk), NULL);
    ck_assert_str_eq(s, "x2y$(A)$(B)$(C)$(");
    ck_assert_str_eq(unk, "$(B)");
    free(s);
    s = tg_k8s_expand("$$$(A) $A ${A} $() a$", &env, NULL, 0, NULL);
    ck_assert_str_eq(s, "$2 $A ${A} $() a$");
    free(s);
    s = tg_k8s_expand("", &env, unk, sizeof(unk), NULL);
    ck_assert_str_eq(s, "");
    ck_assert_str_eq(unk, "");
    free(s);
    tg_k8s_env_release(&env);
}
END_TEST

/* An expansion longer than TG_K8S_VALUE_MAX is not built: the item stays as written with
 * too_long set, and an env value that would be is unknown, marked too_long. Env values doubling
 * down a list of 40 entries (64 bytes * 2^39) stay bounded. */
START_TEST(expand_is_bounded)
{
    struct tg_k8s_env env;
    char *v = malloc(TG_K8S_VALUE_MAX / 2 + 1);
    bool too_long;

    tg_k8s_env_init(&env);
    memset(v, 'v', TG_K8S_VALUE_MAX / 2);
    v[TG_K8S_VALUE_MAX / 2] = '\0';
    ck_assert_int_eq(tg_k8s_env_set(&env, "H", v), 0);
    char *s = tg_k8s_expand("$(H)$(H)", &env, NULL, 0, &too_long); /* exactly the bound */
    ck_assert(!too_long);
    ck_assert_uint_eq(strlen(s), TG_K8S_VALUE_MAX);
    free(s);
    s = tg_k8s_expand("$(H)$(H)x", &env, NULL, 0, &too_long); /* one past */
    ck_assert(too_long);
    ck_assert_str_eq(s, "$(H)$(H)x");
    free(s);
    tg_k8s_env_release(&env);
    free(v);

    json_t *list = json_array();
    json_array_append_new(
        list, json_pack("{s:s, s:s}", "name", "V0", "value",
                        "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
    for (int i = 1; i < 40; i++) {
        char name[16], value[64];
        snprintf(name, sizeof(name), "V%d", i);
        snprintf(value, sizeof(value), "$(V%d)$(V%d)", i - 1, i - 1);
        json_array_append_new(list, json_pack("{s:s, s:s}", "name", name, "value", value));
    }
    json_t *ct = json_pack("{s:o}", "env", list);
    tg_k8s_env_init(&env);
    ck_assert_int_eq(tg_k8s_env_read(ct, &env), 0);
    ck_assert_uint_eq(env.n, 40);
    /* 64 * 2^11 = 131072 is held; V12 would be twice that */
    ck_assert_uint_eq(strlen(tg_k8s_env_get(&env, "V11")->value), TG_K8S_VALUE_MAX);
    ck_assert(!tg_k8s_env_get(&env, "V11")->too_long);
    ck_assert_ptr_null(tg_k8s_env_get(&env, "V12")->value);
    ck_assert(tg_k8s_env_get(&env, "V12")->too_long);
    /* V13 refers to the unknown V12, which is left as written (as for a valueFrom variable);
     * that text doubles again down the list, and is cut again at the bound */
    ck_assert_str_eq(tg_k8s_env_get(&env, "V13")->value, "$(V12)$(V12)");
    ck_assert(!tg_k8s_env_get(&env, "V13")->too_long);
    size_t cut = 0;
    for (size_t i = 0; i < env.n; i++) {
        ck_assert(!env.v[i].value || strlen(env.v[i].value) <= TG_K8S_VALUE_MAX);
        cut += env.v[i].too_long;
    }
    ck_assert_uint_ge(cut, 2);
    tg_k8s_env_release(&env);
    json_decref(ct);
}
END_TEST

START_TEST(expand_env_list_as_the_kubelet_builds_it)
{
    json_t *ct = json_loads("{\"env\": ["
                            "{\"name\": \"A\", \"value\": \"a\"},"
                            "{\"name\": \"B\", \"value\": \"$(A)-$(C)\"},"
                            "{\"name\": \"C\", \"value\": \"c\"},"
                            "{\"name\": \"D\", \"valueFrom\": {\"fieldRef\": {\"fieldPath\": "
                            "\"metadata.name\"}}},"
                            "{\"name\": \"E\", \"value\": \"$(D)/$(B)\"},"
                            "{\"name\": \"A\", \"value\": \"z\"},"
                            "{\"name\": \"\", \"value\": \"x\"}, 3, {\"value\": \"y\"},"
                            "{\"name\": \"F\"}, {\"name\": \"G\", \"value\": 7}]}",
                            0, NULL);
    ck_assert_ptr_nonnull(ct);
    struct tg_k8s_env env;
    tg_k8s_env_init(&env);
    ck_assert_int_eq(tg_k8s_env_read(ct, &env), 0);
    static const char *const names[] = {"A", "B", "C", "D", "E", "F", "G"};
    static const char *const values[] = {"z", "a-$(C)", "c", NULL, "$(D)/a-$(C)", "", ""};
    ck_assert_uint_eq(env.n, 7);
    for (size_t i = 0; i < 7; i++) {
        ck_assert_str_eq(env.v[i].name, names[i]);
        if (values[i])
            ck_assert_str_eq(env.v[i].value, values[i]);
        else
            ck_assert_ptr_null(env.v[i].value);
    }
    tg_k8s_env_release(&env);
    json_decref(ct);

    ct = json_loads("{\"env\": {\"A\": \"1\"}}", 0, NULL);
    ck_assert_int_eq(tg_k8s_env_read(ct, &env), 0);
    ck_assert_uint_eq(env.n, 0);
    tg_k8s_env_release(&env);
    json_decref(ct);
}
END_TEST

/* The expansion as Kubernetes' Expand reads it, written plainly, for the test below. */
static void expand_by_hand(const char *s, const struct tg_k8s_env *env, char *out, char *unk)
{
    size_t at = 0;
    unk[0] = '\0';
    for (const char *p = s; *p;) {
        if (p[0] == '$' && p[1] == '$') {
            out[at++] = '$';
            p += 2;
            continue;
        }
        const char *close = p[0] == '$' && p[1] == '(' ? strchr(p + 2, ')') : NULL;
        if (close) {
            char name[64];
            snprintf(name, sizeof(name), "%.*s", (int)(close - p - 2), p + 2);
            const struct tg_k8s_env_var *v = close > p + 2 ? tg_k8s_env_get(env, name) : NULL;
            if (v && v->value) {
                memcpy(out + at, v->value, strlen(v->value));
                at += strlen(v->value);
            } else {
                if (!unk[0])
                    snprintf(unk, 64, "%.*s", (int)(close - p + 1), p);
                memcpy(out + at, p, (size_t)(close - p + 1));
                at += (size_t)(close - p + 1);
            }
            p = close + 1;
            continue;
        }
        out[at++] = *p++;
    }
    out[at] = '\0';
}

/* Random text over the bytes expansion reads, with and without a `$$` or `$(` (a string with
 * neither is copied as it is; one with either is counted, then written), short and long: the
 * expansion agrees with the plain reading, and its reason too. */
START_TEST(expand_agrees_with_a_plain_reading)
{
    struct tg_k8s_env env;
    tg_k8s_env_init(&env);
    ck_assert_int_eq(tg_k8s_env_set(&env, "A", "1"), 0);
    ck_assert_int_eq(tg_k8s_env_set(&env, "AB", "long value"), 0);
    ck_assert_int_eq(tg_k8s_env_set(&env, "E", ""), 0);
    ck_assert_int_eq(tg_k8s_env_set(&env, "B", NULL), 0);
    static const char alphabet[] = "$$$(()ABEx ";
    unsigned r = 7;
    size_t plain = 0, expanded = 0;
    for (int t = 0; t < 20000; t++) {
        size_t len = t % 50 == 0 ? 1500 + (size_t)t % 700 : (size_t)(t % 30);
        char *in = malloc(len + 1), *want = malloc(10 * len + 1);
        ck_assert(in && want);
        for (size_t k = 0; k < len; k++) {
            r = r * 1103515245u + 12345u;
            in[k] = alphabet[(r >> 16) % (sizeof(alphabet) - 1)];
        }
        in[len] = '\0';
        char unk[64], want_unk[64];
        expand_by_hand(in, &env, want, want_unk);
        char *got = tg_k8s_expand(in, &env, unk, sizeof(unk), NULL);
        ck_assert_ptr_nonnull(got);
        ck_assert_str_eq(got, want);
        ck_assert_str_eq(unk, want_unk);
        if (strstr(in, "$$") || strstr(in, "$("))
            expanded++;
        else
            plain++;
        free(got);
        free(in);
        free(want);
    }
    ck_assert(plain > 1000 && expanded > 1000);
    tg_k8s_env_release(&env);
}
END_TEST

/* The members of an env entry are told by their whole key: "name", "value" and "valueFrom"
 * followed by a NUL byte and more are other keys. */
START_TEST(expand_env_keys_are_whole_keys)
{
    json_t *ct = json_object(), *list = json_array(), *a = json_object(), *b = json_object();
    ck_assert(ct && list && a && b);
    ck_assert_int_eq(json_object_setn_new(a, "name\0x", 6, json_string("Q")), 0);
    ck_assert_int_eq(json_object_set_new(a, "name", json_string("H")), 0);
    ck_assert_int_eq(json_object_setn_new(a, "value\0", 6, json_string("no")), 0);
    ck_assert_int_eq(json_object_set_new(a, "value", json_string("h")), 0);
    ck_assert_int_eq(json_object_set_new(b, "name", json_string("I")), 0);
    ck_assert_int_eq(json_object_setn_new(b, "valueFrom\0", 10, json_object()), 0);
    ck_assert_int_eq(json_array_append_new(list, a), 0);
    ck_assert_int_eq(json_array_append_new(list, b), 0);
    ck_assert_int_eq(json_object_set_new(ct, "env", list), 0);
    struct tg_k8s_env env;
    tg_k8s_env_init(&env);
    ck_assert_int_eq(tg_k8s_env_read(ct, &env), 0);
    ck_assert_uint_eq(env.n, 2);
    ck_assert_str_eq(env.v[0].name, "H");
    ck_assert_str_eq(env.v[0].value, "h");
    ck_assert_str_eq(env.v[1].name, "I");
    ck_assert_str_eq(env.v[1].value, ""); /* no valueFrom: the API default */
    tg_k8s_env_release(&env);
    json_decref(ct);
}
END_TEST

Suite *tg_test_expand_suite(void);
Suite *tg_test_expand_suite(void)
{
    Suite *s = suite_create("expand");
    TCase *tc = tcase_create("kubelet");
    tcase_add_test(tc, expand_k8s_references);
    tcase_add_test(tc, expand_is_bounded);
    tcase_add_test(tc, expand_env_list_as_the_kubelet_builds_it);
    tcase_add_test(tc, expand_agrees_with_a_plain_reading);
    tcase_add_test(tc, expand_env_keys_are_whole_keys);
    suite_add_tcase(s, tc);
    return s;
}
