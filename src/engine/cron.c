/* cron.c -- the longest gap between activations of a standard cron schedule (include/tg/cron.h).
 * Field syntax and the day-of-month/day-of-week rule: robfig/cron v3 parser.go (getRange,
 * parseDescriptor) and spec.go (dayMatches). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "tg/cron.h"

#define STAR_BIT (UINT64_C(1) << 63)
#define WINDOW_DAYS 2922 /* 2024-01-01 .. 2031-12-31: two leap-year cycles */

struct bounds {
    unsigned min, max;
    const char *const *names; /* index = value - min, or NULL */
};

static const char *const month_names[] = {"jan", "feb", "mar", "apr", "may", "jun", "jul",
                                          "aug", "sep", "oct", "nov", "dec", NULL};
static const char *const dow_names[] = {"sun", "mon", "tue", "wed", "thu", "fri", "sat", NULL};
static const struct bounds B_MIN = {0, 59, NULL}, B_HOUR = {0, 23, NULL}, B_DOM = {1, 31, NULL},
                           B_MONTH = {1, 12, month_names}, B_DOW = {0, 6, dow_names};

/* A number or a name of b; -1 when it is neither. */
static long parse_value(const char *s, size_t n, const struct bounds *b)
{
    char buf[16];
    char *end;
    if (n == 0 || n >= sizeof(buf))
        return -1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    for (size_t i = 0; b->names && b->names[i]; i++) {
        if (!strcasecmp(buf, b->names[i]))
            return (long)(b->min + i);
    }
    if (!isdigit((unsigned char)buf[0]))
        return -1;
    long v = strtol(buf, &end, 10);
    return *end ? -1 : v;
}

/* One range of a field: "*", "?", "N", "N-M", each with an optional "/step". */
static int parse_range(const char *s, size_t n, const struct bounds *b, uint64_t *bits)
{
    const char *slash = memchr(s, '/', n);
    size_t head = slash ? (size_t)(slash - s) : n;
    const char *dash = memchr(s, '-', head);
    long lo, hi, step = 1;
    uint64_t extra = 0;
    if (head == 1 && (s[0] == '*' || s[0] == '?')) {
        lo = b->min;
        hi = b->max;
        extra = STAR_BIT;
    } else {
        lo = parse_value(s, dash ? (size_t)(dash - s) : head, b);
        hi = dash ? parse_value(dash + 1, head - (size_t)(dash - s) - 1, b) : lo;
        if (slash && !dash)
            hi = b->max; /* "N/step" means N-max/step */
    }
    if (slash && (step = parse_value(slash + 1, n - head - 1, &(struct bounds){0, 0, NULL})) < 1)
        return -EINVAL;
    if (lo < (long)b->min || hi > (long)b->max || lo > hi)
        return -EINVAL;
    for (long v = lo; v <= hi; v += step)
        *bits |= UINT64_C(1) << v;
    *bits |= extra;
    return 0;
}

/* A comma-separated list of ranges. */
static int parse_field(const char *s, size_t n, const struct bounds *b, uint64_t *bits)
{
    *bits = 0;
    while (n > 0) {
        const char *comma = memchr(s, ',', n);
        size_t len = comma ? (size_t)(comma - s) : n;
        if (len > 0 && parse_range(s, len, b, bits) < 0)
            return -EINVAL;
        s += len + (comma ? 1 : 0);
        n -= len + (comma ? 1 : 0);
    }
    return *bits & ~STAR_BIT ? 0 : -EINVAL;
}

struct schedule {
    uint64_t minute, hour, dom, month, dow;
};

static const char *descriptor(const char *spec)
{
    static const char *const map[][2] = {
        {"@yearly", "0 0 1 1 *"}, {"@annually", "0 0 1 1 *"}, {"@monthly", "0 0 1 * *"},
        {"@weekly", "0 0 * * 0"}, {"@daily", "0 0 * * *"},    {"@midnight", "0 0 * * *"},
        {"@hourly", "0 * * * *"},
    };
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++) {
        if (!strcmp(spec, map[i][0]))
            return map[i][1];
    }
    return NULL;
}

static int parse_schedule(const char *spec, struct schedule *out)
{
    static const struct bounds *const bounds[] = {&B_MIN, &B_HOUR, &B_DOM, &B_MONTH, &B_DOW};
    uint64_t *fields[] = {&out->minute, &out->hour, &out->dom, &out->month, &out->dow};
    const char *p = spec;
    size_t i = 0;
    if (*spec == '@' && !(p = descriptor(spec)))
        return -EINVAL;
    for (; *p && i < 5; i++) {
        while (isspace((unsigned char)*p))
            p++;
        size_t n = strcspn(p, " \t\n\r\f\v");
        if (n == 0 || parse_field(p, n, bounds[i], fields[i]) < 0)
            return -EINVAL;
        p += n;
        while (isspace((unsigned char)*p))
            p++;
    }
    return i == 5 && !*p ? 0 : -EINVAL;
}

static bool day_matches(const struct schedule *s, int dom, int month, int dow)
{
    bool dom_hit = s->dom >> dom & 1, dow_hit = s->dow >> dow & 1;
    if (!(s->month >> month & 1))
        return false;
    if ((s->dom | s->dow) & STAR_BIT)
        return dom_hit && dow_hit;
    return dom_hit || dow_hit;
}

static int days_in_month(int year, int month)
{
    static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
    bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
    return month == 2 && leap ? 29 : days[month - 1];
}

/* Minutes of the day at which s fires: first, last and the longest gap between two of them. */
static int day_hits(const struct schedule *s, long *first, long *last, long *gap)
{
    long prev = -1;
    *gap = 0;
    for (long m = 0; m < 1440; m++) {
        if (!(s->hour >> (m / 60) & 1) || !(s->minute >> (m % 60) & 1))
            continue;
        if (prev < 0)
            *first = m;
        else if (m - prev > *gap)
            *gap = m - prev;
        prev = m;
    }
    *last = prev;
    return prev < 0 ? -ENOENT : 0;
}

int tg_cron_max_gap(const char *spec, long *minutes)
{
    struct schedule s;
    long first = 0, last = 0, gap = 0, prev_day = -1, matched = 0;
    int year = 2024, month = 1, dom = 1, dow = 1; /* 2024-01-01 was a Monday */
    if (!spec || parse_schedule(spec, &s) < 0)
        return -EINVAL;
    if (day_hits(&s, &first, &last, &gap) < 0)
        return -ENOENT;
    for (long day = 0; day < WINDOW_DAYS; day++) {
        if (day_matches(&s, dom, month, dow)) {
            if (prev_day >= 0 && (day - prev_day) * 1440 - last + first > gap)
                gap = (day - prev_day) * 1440 - last + first;
            prev_day = day;
            matched++;
        }
        dow = (dow + 1) % 7;
        if (++dom > days_in_month(year, month)) {
            dom = 1;
            if (++month > 12) {
                month = 1;
                year++;
            }
        }
    }
    if (matched == 0)
        return -ENOENT;
    *minutes = matched == 1 ? WINDOW_DAYS * 1440L : gap;
    return 0;
}
