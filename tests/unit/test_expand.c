/* test_expand.c -- a container's env as the kubelet builds it, and Kubernetes $(VAR) expansion. */
#include <check.h>
#include <jansson.h>
#include <stdlib.h>

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
    char *s = tg_k8s_expand("x$(A)y$$(A)$(B)$(C)$(", &env, unk, sizeof(unk));
    ck_assert_str_eq(s, "x2y$(A)$(B)$(C)$(");
    ck_assert_str_eq(unk, "$(B)");
    free(s);
    s = tg_k8s_expand("$$$(A) $A ${A} $() a$", &env, NULL, 0);
    ck_assert_str_eq(s, "$2 $A ${A} $() a$");
    free(s);
    s = tg_k8s_expand("", &env, unk, sizeof(unk));
    ck_assert_str_eq(s, "");
    ck_assert_str_eq(unk, "");
    free(s);
    tg_k8s_env_release(&env);
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

Suite *tg_test_expand_suite(void);
Suite *tg_test_expand_suite(void)
{
    Suite *s = suite_create("expand");
    TCase *tc = tcase_create("kubelet");
    tcase_add_test(tc, expand_k8s_references);
    tcase_add_test(tc, expand_env_list_as_the_kubelet_builds_it);
    suite_add_tcase(s, tc);
    return s;
}
