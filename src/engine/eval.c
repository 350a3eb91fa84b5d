/* eval.c -- files findings into the evaluation's sink under each rule's effective action. */
#include <stdarg.h>

#include "tg/eval.h"

enum tg_action tg_eval_action(const struct tg_eval *ev, enum tg_rule_id id)
{
    if ((unsigned)id >= TG_RULE_COUNT)
        return TG_ACTION_OFF;
    return ev && ev->actions ? ev->actions[id] : tg_rule_defs[id].default_action;
}

static void report(struct tg_eval *ev, enum tg_rule_id id, enum tg_action cap, const char *field,
                   const char *fmt, va_list ap) __attribute__((format(printf, 5, 0)));

static void report(struct tg_eval *ev, enum tg_rule_id id, enum tg_action cap, const char *field,
                   const char *fmt, va_list ap)
{
    enum tg_action action = tg_eval_action(ev, id);
    if (!ev || !ev->findings)
        return;
    if (action > cap)
        action = cap;
    if (action == TG_ACTION_OFF)
        return;
    int rc = tg_findings_vadd(ev->findings, tg_rule_defs[id].id, (int)id, action, field, fmt, ap);
    if (rc < 0 && !ev->error)
        ev->error = rc;
}

void tg_report(struct tg_eval *ev, enum tg_rule_id id, const char *field, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(ev, id, TG_ACTION_DENY, field, fmt, ap);
    va_end(ap);
}

void tg_report_capped(struct tg_eval *ev, enum tg_rule_id id, enum tg_action cap, const char *field,
                      const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    report(ev, id, cap, field, fmt, ap);
    va_end(ap);
}
