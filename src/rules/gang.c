/* gang.c -- the gang.* rules (placeholder: its owner replaces this file). */
#include "tg/rules.h"

int tg_rules_gang(struct tg_eval *ev)
{
    (void)ev;
    return 0;
}
