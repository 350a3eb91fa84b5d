/* check_cmd.c -- placeholder until the `check` command lands (replaced by its owner). */
#include <stdio.h>

#include "tg/cli.h"

int tg_cmd_check(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "trainguard check: not built yet\n");
    return 2;
}
