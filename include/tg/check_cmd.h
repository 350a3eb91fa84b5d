/* check_cmd.h -- `trainguard check`: the engine offline, on manifest files (src/cli/check_cmd.c).
 * Takes argv after the subcommand name (argv[0] is the subcommand) and returns the process exit
 * code. */
#ifndef TG_CHECK_CMD_H
#define TG_CHECK_CMD_H

int tg_cmd_check(int argc, char **argv);

#endif
