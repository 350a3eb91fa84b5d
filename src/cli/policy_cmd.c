/* policy_cmd.c -- `trainguard policy`: print the embedded default policy, or check policy files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/policy.h"
#include "tg/policy_cmd.h"
#include "tg/policy_yaml.h"

/* Room for the 20 error lines a load reports, each with the file name in front. */
#define ERR_LEN 8192

static void usage(FILE *out)
{
    fprintf(
        out,
        "usage: trainguard policy default\n"
        "       trainguard policy check FILE...\n\n"
        "  default      print the built-in default policy (commented YAML) to start a policy "
        "file from\n"
        "  check FILE   validate policy files ('-' reads stdin); errors name line and column\n\n"
        "Exit status of check: 0 every file is valid, 1 a file is invalid, 2 usage error or "
        "unreadable file.\nReference of every key: docs/policy.md.\n");
}

static bool is_help(const char *s)
{
    return !strcmp(s, "--help") || !strcmp(s, "-h") || !strcmp(s, "help");
}

static int cmd_default(int argc, char **argv)
{
    size_t len;
    const char *yaml = tg_policy_default_yaml(&len);

    if (argc > 1 && is_help(argv[1])) {
        printf("usage: trainguard policy default\n\nPrints the built-in default policy (the one "
               "`serve` and `check` use without --config) as commented YAML.\n");
        return 0;
    }
    if (argc > 1) {
        fprintf(stderr, "trainguard policy default: unexpected argument '%s'\n", argv[1]);
        return 2;
    }
    if (fwrite(yaml, 1, len, stdout) != len || fflush(stdout) != 0) {
        perror("trainguard policy default: stdout");
        return 2;
    }
    return 0;
}

/* Reads stdin (at most TG_POLICY_MAX_BYTES) into a malloc'd buffer; NULL when too large or on
 * a read error. */
static char *read_stdin(size_t *len)
{
    char *buf = malloc(TG_POLICY_MAX_BYTES + 1);
    size_t n = 0, r;
    if (!buf)
        return NULL;
    while (n <= TG_POLICY_MAX_BYTES && (r = fread(buf + n, 1, TG_POLICY_MAX_BYTES + 1 - n, stdin)))
        n += r;
    if (ferror(stdin) || n > TG_POLICY_MAX_BYTES) {
        free(buf);
        return NULL;
    }
    buf[n] = '\0';
    *len = n;
    return buf;
}

/* Checks one file: 0 valid, 1 invalid, 2 unreadable. */
static int check_one(const char *path)
{
    char *err = malloc(ERR_LEN), *text;
    struct tg_policy *p;
    size_t len = 0;
    int rc = 2;

    if (!err) {
        fprintf(stderr, "trainguard policy check: out of memory\n");
        return 2;
    }
    if (!strcmp(path, "-"))
        text = read_stdin(&len);
    else
        text = tg_policy_read_file(path, &len, err, ERR_LEN);
    if (!text) {
        if (!strcmp(path, "-"))
            fprintf(stderr, "-: cannot read stdin (or larger than %d bytes)\n",
                    TG_POLICY_MAX_BYTES);
        else
            fprintf(stderr, "%s\n", err);
        goto out;
    }
    p = tg_policy_load_bytes(text, len, strcmp(path, "-") ? path : "<stdin>", err, ERR_LEN);
    if (p) {
        printf("%s: valid (mode %s)\n", strcmp(path, "-") ? path : "<stdin>",
               tg_mode_name(p->mode));
        if (p->warnings)
            fprintf(stderr, "%s: warning: %s\n", strcmp(path, "-") ? path : "<stdin>", p->warnings);
        tg_policy_unref(p);
        rc = 0;
    } else {
        fprintf(stderr, "%s\n", err);
        rc = 1;
    }
    free(text);
out:
    free(err);
    return rc;
}

static int cmd_check(int argc, char **argv)
{
    int worst = 0, nfiles = 0;

    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1] && !is_help(argv[i])) {
            fprintf(stderr, "trainguard policy check: unknown option '%s'\n", argv[i]);
            return 2;
        }
        if (is_help(argv[i])) {
            printf("usage: trainguard policy check FILE...\n\nValidates policy files ('-' for "
                   "stdin) and prints each error as FILE: line L, column C: key.path: reason.\n"
                   "Exit status: 0 valid, 1 invalid, 2 usage error or unreadable file.\n");
            return 0;
        }
    }
    for (int i = 1; i < argc; i++) {
        int rc = check_one(argv[i]);
        nfiles++;
        if (rc > worst)
            worst = rc;
    }
    if (nfiles == 0) {
        fprintf(stderr, "trainguard policy check: no FILE given\n\n");
        usage(stderr);
        return 2;
    }
    return worst;
}

int tg_cmd_policy(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (is_help(argv[1])) {
        usage(stdout);
        return 0;
    }
    if (!strcmp(argv[1], "default"))
        return cmd_default(argc - 1, argv + 1);
    if (!strcmp(argv[1], "check"))
        return cmd_check(argc - 1, argv + 1);
    fprintf(stderr, "trainguard policy: unknown subcommand '%s'\n\n", argv[1]);
    usage(stderr);
    return 2;
}
