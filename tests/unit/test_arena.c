/* test_arena.c -- the request arena changes no answer, keeps one block between requests, and
 * leaves values made outside a request to malloc and free. */
#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "support/cases.h"
#include "tg/arena.h"
#include "tg/handler.h"
#include "tg/yaml_json.h"

static char *answer(struct tg_policy *pol, const char *body, size_t len, bool mutating, int *status)
{
    struct tg_admission_out out;
    tg_admission_handle(pol, NULL, mutating, body, len, &out);
    char *copy = strndup(out.body, out.len);
    *status = out.http_status;
    tg_admission_out_release(&out);
    return copy;
}

/* One golden request answered without and with the arena, on both endpoints: same bytes. */
static void same_with_arena(const char *body, size_t len, void *arg)
{
    struct tg_policy *pol = arg;

    for (int m = 0; m < 2; m++) {
        int s1, s2;
        char *plain = answer(pol, body, len, m, &s1);
        tg_arena_install();
        char *arena = answer(pol, body, len, m, &s2);
        json_set_alloc_funcs(malloc, free);
        ck_assert_int_eq(s1, s2);
        ck_assert_str_eq(plain, arena);
        free(plain);
        free(arena);
    }
}

START_TEST(arena_gives_the_same_answers_on_every_golden_request)
{
    struct tg_policy *pol = tg_policy_new_default();
    json_t *before = json_pack("{s:[s, i]}", "made", "before the arena", 1);
    int n = tg_each_golden_request(same_with_arena, pol);
    ck_assert_int_gt(n, 10);
    /* One block is kept for the next request, whatever the largest request needed. */
    ck_assert_uint_le(tg_arena_retained(), 256 * 1024);
    tg_arena_install();
    json_decref(before); /* made with malloc: freed by free, not dropped */
    json_set_alloc_funcs(malloc, free);
    tg_policy_unref(pol);
}
END_TEST

START_TEST(arena_serves_large_requests_and_drops_the_overflow)
{
    tg_arena_install();
    tg_arena_begin();
    json_t *big = json_array();
    for (int i = 0; i < 20000; i++)
        json_array_append_new(big, json_string("a string long enough to fill the first block"));
    ck_assert_uint_gt(tg_arena_retained(), 128 * 1024);
    json_decref(big);
    tg_arena_end();
    ck_assert_uint_le(tg_arena_retained(), 256 * 1024);
    json_set_alloc_funcs(malloc, free);
}
END_TEST

/* arena_free walks the block chain on every free: the chain must grow geometrically, or
 * releasing a large tree is quadratic (a 7 MB review of tiny values took 9.5 s to release). */
START_TEST(arena_chain_stays_short_for_a_large_request)
{
    tg_arena_install();
    tg_arena_begin();
    json_t *big = json_array();
    for (int i = 0; i < 300000; i++)
        json_array_append_new(big, json_integer(i));
    ck_assert_uint_gt(tg_arena_retained(), 8u * 1024 * 1024);
    ck_assert_uint_le(tg_arena_blocks(), 12);
    json_decref(big);
    tg_arena_end();
    ck_assert_uint_eq(tg_arena_blocks(), 1);
    ck_assert_uint_le(tg_arena_retained(), 256 * 1024);
    json_set_alloc_funcs(malloc, free);
}
END_TEST

/* The bump and its edges: an allocation that fills the block exactly stays in it, the next
 * one starts a new block, and sizes so large that rounding them up would wrap are refused
 * instead of handing out a short area. */
START_TEST(arena_bump_fills_a_block_exactly_and_refuses_wrapping_sizes)
{
    json_malloc_t jmalloc;
    json_free_t jfree;
    tg_arena_install();
    json_get_alloc_funcs(&jmalloc, &jfree);
    tg_arena_begin();
    unsigned char *a = jmalloc(16);
    ck_assert_ptr_nonnull(a);
    ck_assert(tg_arena_holds(a));
    size_t left = tg_arena_retained() - 16;
    unsigned char *b = jmalloc(left - 15); /* rounds up to exactly what is left */
    ck_assert_ptr_eq(b, a + 16);
    ck_assert_uint_eq(tg_arena_blocks(), 1);
    memset(b, 0xab, left - 15);
    unsigned char *z = jmalloc(0); /* nothing left: not the block's end, an area of a new block */
    ck_assert_ptr_nonnull(z);
    ck_assert_uint_eq(tg_arena_blocks(), 2);
    ck_assert(tg_arena_holds(z));
    jfree(z); /* the arena's: left alone (ASan would tell a free of a non-heap pointer) */
    unsigned char *c = jmalloc(1);
    ck_assert_ptr_nonnull(c);
    ck_assert_uint_eq(tg_arena_blocks(), 2);
    ck_assert(tg_arena_holds(c));
    ck_assert_ptr_null(jmalloc(SIZE_MAX));
    ck_assert_ptr_null(jmalloc(SIZE_MAX - 8));
    ck_assert_ptr_null(jmalloc(SIZE_MAX - 40)); /* no wrap, but no block header fits: no malloc */
    ck_assert_uint_eq(tg_arena_blocks(), 2);
    jfree(a);
    jfree(b);
    jfree(c);
    tg_arena_end();
    ck_assert_uint_eq(tg_arena_blocks(), 1);
    json_set_alloc_funcs(malloc, free);
}
END_TEST

/* The edges of the bump's one compare: a size of 0 (which wraps in it) still gets an area of the
 * active arena, outside the arena allocations go to malloc, and a second tg_arena_begin keeps
 * what the first one's allocations hold. */
START_TEST(arena_bump_edges_zero_inactive_and_begin_again)
{
    json_malloc_t jmalloc;
    json_free_t jfree;
    tg_arena_install();
    json_get_alloc_funcs(&jmalloc, &jfree);
    unsigned char *outside = jmalloc(24);
    ck_assert_ptr_nonnull(outside);
    tg_arena_begin();
    ck_assert(!tg_arena_holds(outside));
    unsigned char *a = jmalloc(0);
    ck_assert_ptr_nonnull(a);
    ck_assert(tg_arena_holds(a));
    unsigned char *b = jmalloc(1);
    ck_assert(tg_arena_holds(b));
    ck_assert_ptr_eq(b, a + 16); /* the 0 bytes took ALIGN, so that they are the arena's */
    memset(b, 0xcd, 1);
    tg_arena_begin();
    unsigned char *c = jmalloc(17);
    ck_assert_ptr_eq(c, b + 16);
    ck_assert_uint_eq(b[0], 0xcd);
    tg_arena_end();
    ck_assert(!tg_arena_holds(c));
    unsigned char *after = jmalloc(8);
    ck_assert_ptr_nonnull(after);
    jfree(after);
    jfree(outside);
    tg_arena_begin(); /* the kept block starts empty again */
    ck_assert_ptr_eq(jmalloc(32), a);
    tg_arena_end();
    json_set_alloc_funcs(malloc, free);
}
END_TEST

/* The request path's own allocations: outside a request tg_arena_malloc and tg_arena_realloc
 * are malloc and realloc, and tg_arena_free frees; inside one they come from the arena (and keep
 * their bytes when grown or shrunk), tg_arena_free lets them be, and memory malloc'd before the
 * request stays malloc'd when grown and is freed by tg_arena_free. */
START_TEST(arena_malloc_realloc_and_free_inside_and_outside_a_request)
{
    unsigned char *out = tg_arena_malloc(24);
    ck_assert_ptr_nonnull(out);
    ck_assert(!tg_arena_holds(out));
    memset(out, 0x5a, 24);
    out = tg_arena_realloc(out, 24, 4096);
    ck_assert_ptr_nonnull(out);
    for (int i = 0; i < 24; i++)
        ck_assert_int_eq(out[i], 0x5a);
    unsigned char *fresh = tg_arena_realloc(NULL, 0, 8); /* outside: malloc'd */
    ck_assert_ptr_nonnull(fresh);
    ck_assert(!tg_arena_holds(fresh));
    tg_arena_free(fresh);
    tg_arena_free(NULL);

    tg_arena_begin();
    unsigned char *a = tg_arena_malloc(40);
    ck_assert(tg_arena_holds(a));
    memset(a, 0x33, 40);
    unsigned char *b = tg_arena_realloc(a, 40, 100); /* grown: moved within the arena */
    ck_assert(tg_arena_holds(b));
    ck_assert_ptr_ne(a, b);
    for (int i = 0; i < 40; i++)
        ck_assert_int_eq(b[i], 0x33);
    memset(b + 40, 0x44, 60);
    unsigned char *c = tg_arena_realloc(b, 100, 50); /* shrunk: the first 50 bytes */
    ck_assert(tg_arena_holds(c));
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(c[i], i < 40 ? 0x33 : 0x44);
    unsigned char *d = tg_arena_realloc(NULL, 0, 16); /* inside: the arena's */
    ck_assert(tg_arena_holds(d));
    out = tg_arena_realloc(out, 4096, 8192); /* malloc'd before: still malloc'd */
    ck_assert_ptr_nonnull(out);
    ck_assert(!tg_arena_holds(out));
    for (int i = 0; i < 24; i++)
        ck_assert_int_eq(out[i], 0x5a);
    tg_arena_free(a); /* the arena's: nothing to do, and no error */
    tg_arena_free(c);
    tg_arena_free(d);
    tg_arena_free(out); /* malloc'd: freed (valgrind and ASan would tell a leak) */
    tg_arena_end();
    ck_assert_uint_eq(tg_arena_blocks(), 1);
}
END_TEST

Suite *tg_test_arena_suite(void);
Suite *tg_test_arena_suite(void)
{
    Suite *s = suite_create("arena");
    TCase *tc = tcase_create("arena");
    tcase_add_test(tc, arena_gives_the_same_answers_on_every_golden_request);
    tcase_add_test(tc, arena_serves_large_requests_and_drops_the_overflow);
    tcase_add_test(tc, arena_chain_stays_short_for_a_large_request);
    tcase_add_test(tc, arena_bump_fills_a_block_exactly_and_refuses_wrapping_sizes);
    tcase_add_test(tc, arena_bump_edges_zero_inactive_and_begin_again);
    tcase_add_test(tc, arena_malloc_realloc_and_free_inside_and_outside_a_request);
    suite_add_tcase(s, tc);
    return s;
}
