/* launch_value.c -- counts on a launcher's command line (include/tg/launch_value.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/launch_value.h"

void tg_launch_value_read(struct tg_launch_value *v, const struct tg_sh_word *w, const char *opt)
{
    v->set = true;
    v->resolved = false;
    tg_launch_puts(v->text, sizeof(v->text), 0, w->text);
    v->reason[0] = '\0';
    if (!w->resolved) {
        snprintf(v->reason, sizeof(v->reason), "%s", w->reason ? w->reason : "unknown value");
        return;
    }
    const char *s = w->text;
    long long n;
    if (!tg_launch_count(s, &n)) {
        snprintf(v->reason, sizeof(v->reason), "%s '%.40s' is not a process count", opt, s);
        return;
    }
    v->resolved = true;
    v->value = n;
}
