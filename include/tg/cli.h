/* cli.h -- the subcommands of the trainguard binary (one file each under src/cli/). Each takes
 * argv after the subcommand name (argv[0] is the subcommand) and returns the process exit code. */
#ifndef TG_CLI_H
#define TG_CLI_H

int tg_cmd_serve(int argc, char **argv);
int tg_cmd_check(int argc, char **argv);
int tg_cmd_certs(int argc, char **argv);
int tg_cmd_policy(int argc, char **argv);
int tg_cmd_version(int argc, char **argv);

#define TG_VERSION "0.1.0"

#endif
