/* cron.h -- how far apart the activations of a standard cron schedule can be, read as
 * robfig/cron v3 ParseStandard reads it (the parser Karpenter uses for the `schedule` of a
 * NodePool disruption budget, core pkg/apis/v1/nodepool.go Budget.IsActive).
 *
 * Accepted: five fields (minute hour day-of-month month day-of-week) of `*`, `?`, numbers, month
 * and weekday names (jan, mon), ranges `a-b`, steps `/n` and comma lists; and the descriptors
 * @yearly, @annually, @monthly, @weekly, @daily, @midnight, @hourly. Day-of-month and
 * day-of-week combine as robfig does: both must match when either field starts with `*` or `?`,
 * otherwise either one. No time zone prefix, no @every (a budget's schedule cannot have them). */
#ifndef TG_CRON_H
#define TG_CRON_H

/* Sets *minutes to the longest time between two consecutive activations of spec, measured over
 * eight calendar years (two leap-year cycles); schedules that fire at most once in that window
 * get the window's length. Returns 0, -EINVAL when spec does not parse, or -ENOENT when it never
 * fires (February 30). A budget with this schedule is active at every moment exactly when its
 * duration is at least the longest gap. */
int tg_cron_max_gap(const char *spec, long *minutes);

#endif
