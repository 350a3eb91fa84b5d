/* main.c -- trainguard: picks the subcommand from a static table (git's commands[] idea). */
#include <stdio.h>
#include <string.h>

#include "tg/certs_cmd.h"
#include "tg/check_cmd.h"
#include "tg/policy_cmd.h"
#include "tg/serve_cmd.h"
#include "tg/tls.h"
#include "tg/version.h"
#include "tg/version_cmd.h"

struct tg_command {
    const char *name;
    int (*fn)(int argc, char **argv);
    const char *help;
};

/* Alphabetical; `grep` finds every command here. */
static const struct tg_command commands[] = {
    {"certs", tg_cmd_certs, "make a CA and a serving certificate (OpenSSL)"},
    {"check", tg_cmd_check, "run the rules offline on YAML or JSON manifests"},
    {"policy", tg_cmd_policy, "print the default policy or validate a policy file"},
    {"serve", tg_cmd_serve, "run the admission webhook server"},
    {"version", tg_cmd_version, "print the version"},
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: trainguard COMMAND [OPTIONS]\n\n"
            "Admission webhook for distributed ML training on EKS (EFA, MPI, gang, Slinky).\n\n"
            "Commands:\n");
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
        fprintf(out, "  %-8s %s\n", commands[i].name, commands[i].help);
    fprintf(out, "\nRun 'trainguard COMMAND --help' for the options of a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], TG_TLS_CHECK_COMMAND)) /* internal: the server's certificate check */
        return tg_tls_check_main(argc, argv);
    if (!strcmp(argv[1], "--version"))
        return tg_cmd_version(1, argv + 1);
    for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++) {
        if (!strcmp(argv[1], commands[i].name))
            return commands[i].fn(argc - 1, argv + 1);
    }
    fprintf(stderr, "trainguard: unknown command '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
