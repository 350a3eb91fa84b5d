/* serve_cmd.h -- `trainguard serve`: the webhook server (src/cli/serve_cmd.c). Takes argv after the
 * subcommand name (argv[0] is the subcommand) and returns the process exit code. */
#ifndef TG_SERVE_CMD_H
#define TG_SERVE_CMD_H

int tg_cmd_serve(int argc, char **argv);

#endif
