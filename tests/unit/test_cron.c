/* test_cron.c -- the longest gap of a budget schedule, read as robfig/cron v3 ParseStandard reads
 * it (src/engine/cron.c), which decides whether a scheduled Karpenter budget is always active. */
#include <check.h>
#include <errno.h>

#include "tg/cron.h"

struct gap_case {
    const char *spec;
    int rc;
    long minutes;
};

static const struct gap_case gap_cases[] = {
    {"@hourly", 0, 60},
    {"@daily", 0, 1440},
    {"@midnight", 0, 1440},
    {"@weekly", 0, 7 * 1440},
    {"@monthly", 0, 31 * 1440},
    {"@yearly", 0, 366 * 1440}, /* 2024-01-01 .. 2025-01-01 spans the leap day */
    {"*/15 * * * *", 0, 15},
    {"0,30 9-17 * * *", 0, 1440 - 17 * 60 - 30 + 9 * 60},
    {"0 9 * * mon-fri", 0, 72 * 60}, /* Friday 9:00 to Monday 9:00 */
    {"0 9 * * MON-FRI", 0, 72 * 60}, /* names in any case */
    {"0 0 * * 1,3", 0, 5 * 1440},    /* Wednesday to the next Monday */
    {"0 0 13 * 5", 0, 7 * 1440},     /* both restricted: the 13th or any Friday */
    {"0 0 29 2 *", 0, 1461 * 1440},  /* leap days only, four years apart */
    {"  0 12 * * *  ", 0, 1440},
    {"0 0 31 2 *", -ENOENT, 0},
    {"61 * * * *", -EINVAL, 0},
    {"0 0 * * 7", -EINVAL, 0}, /* robfig's day of week ends at 6 */
    {"0 0 * *", -EINVAL, 0},
    {"0 0 * * * *", -EINVAL, 0},
    {"@every 1h", -EINVAL, 0},
    {"*/0 * * * *", -EINVAL, 0},
    {"5-1 * * * *", -EINVAL, 0},
    {"", -EINVAL, 0},
};

START_TEST(max_gap_of_schedules)
{
    const struct gap_case *c = &gap_cases[_i];
    long minutes = -1;
    int rc = tg_cron_max_gap(c->spec, &minutes);
    ck_assert_msg(rc == c->rc, "%s: rc %d, expected %d", c->spec, rc, c->rc);
    if (rc == 0)
        ck_assert_msg(minutes == c->minutes, "%s: %ld minutes, expected %ld", c->spec, minutes,
                      c->minutes);
}
END_TEST

Suite *tg_test_cron_suite(void);
Suite *tg_test_cron_suite(void)
{
    Suite *s = suite_create("cron");
    TCase *tc = tcase_create("gaps");
    tcase_add_loop_test(tc, max_gap_of_schedules, 0,
                        (int)(sizeof(gap_cases) / sizeof(gap_cases[0])));
    suite_add_tcase(s, tc);
    return s;
}
