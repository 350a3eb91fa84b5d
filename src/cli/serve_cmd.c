/* serve_cmd.c -- placeholder until the `serve` command lands (replaced by its owner). */
#include <stdio.h>

#include "tg/cli.h"

int tg_cmd_serve(int argc, char **argv)
{
    (void)argc;
    (void)argv;
    fprintf(stderr, "trainguard serve: not built yet\n");
    return 2;
}
