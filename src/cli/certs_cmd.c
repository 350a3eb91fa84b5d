/* certs_cmd.c -- placeholder until the `certs` command lands (replaced by its owner). */
#include <stdio.h>

#include "tg/cli.h"

int tg_cmd_certs(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "trainguard certs: not built yet\n");
    return 2;
}
