/* version_cmd.h -- `trainguard version`: the version and the library versions
 * (src/cli/version_cmd.c). Takes argv after the subcommand name (argv[0] is the subcommand) and
 * returns the process exit code. */
#ifndef TG_VERSION_CMD_H
#define TG_VERSION_CMD_H

int tg_cmd_version(int argc, char **argv);

#endif
