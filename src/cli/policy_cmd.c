/* policy_cmd.c -- placeholder until the `policy` command lands (replaced by its owner). */
#include <stdio.h>

#include "tg/cli.h"

int tg_cmd_policy(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "trainguard policy: not built yet\n");
    return 2;
}
