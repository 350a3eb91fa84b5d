/* test_body_budget.c -- all request bodies together stay within one budget; freeing one makes room
 * for the next. */
#include <check.h>
#include <errno.h>
#include <string.h>

#include "tg/server.h"

START_TEST(bodies_share_one_budget_and_give_it_back)
{
    struct tg_body a, b;
    char chunk[3000];
    memset(chunk, 'x', sizeof(chunk));
    tg_body_budget_set(15000);
    tg_body_init(&a, 1 << 20);
    tg_body_init(&b, 1 << 20);
    ck_assert_int_eq(tg_body_reserve(&a, 12000), 0);
    ck_assert_uint_ge(tg_body_buffered(), 12000);
    /* b needs 4 KiB for its first bytes: over the budget while a holds 12000. */
    ck_assert_int_eq(tg_body_append(&b, chunk, sizeof(chunk)), -ENOSPC);
    ck_assert_uint_eq(b.len, 0);
    tg_body_release(&a);
    ck_assert_uint_eq(tg_body_buffered(), 0);
    ck_assert_int_eq(tg_body_append(&b, chunk, sizeof(chunk)), 0);
    ck_assert_uint_eq(b.len, sizeof(chunk));
    tg_body_release(&b);
    ck_assert_uint_eq(tg_body_buffered(), 0);
    /* 0 lifts the budget. */
    tg_body_budget_set(0);
    ck_assert_int_eq(tg_body_reserve(&a, 1 << 20), 0);
    tg_body_release(&a);
    tg_body_budget_set((size_t)64 << 20);
}
END_TEST

Suite *tg_test_body_budget_suite(void);
Suite *tg_test_body_budget_suite(void)
{
    Suite *s = suite_create("body_budget");
    TCase *tc = tcase_create("budget");
    tcase_add_test(tc, bodies_share_one_budget_and_give_it_back);
    suite_add_tcase(s, tc);
    return s;
}
