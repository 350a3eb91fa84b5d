/* policy_cmd.h -- `trainguard policy`: print and check policy files (src/cli/policy_cmd.c). Takes
 * argv after the subcommand name (argv[0] is the subcommand) and returns the process exit code. */
#ifndef TG_POLICY_CMD_H
#define TG_POLICY_CMD_H

int tg_cmd_policy(int argc, char **argv);

#endif
