/* catalogue_gen.c -- prints the tables generated from the rule and kind catalogue (make catalogue):
 *
 *   catalogue_gen policy-rules          the `rules:` block of the default policy
 *   catalogue_gen rule-table [PREFIX..] a markdown rule table (all rules, or those of the prefixes)
 *   catalogue_gen kind-table            the markdown table of kinds and API versions
 *
 * scripts/catalogue.sh splices the output between BEGIN/END GENERATED markers in the checked-in
 * files, and `make check` fails when a checked-in copy differs from it. */
#include <stdio.h>
#include <string.h>

#include "tg/catalogue.h"

static const char *action_name(enum tg_action a)
{
    return a == TG_ACTION_DENY ? "deny" : a == TG_ACTION_WARN ? "warn" : "off";
}

static int in_family(const char *id, const char *prefix)
{
    size_t n = strlen(prefix);
    return !strncmp(id, prefix, n) && id[n] == '.';
}

static void policy_rules(void)
{
    for (size_t f = 0; f < tg_rule_family_count; f++) {
        printf("  # %s\n", tg_rule_families[f].heading);
        for (size_t i = 0; i < tg_rule_count; i++) {
            if (in_family(tg_rule_defs[i].id, tg_rule_families[f].prefix))
                printf("  %s: %s\n", tg_rule_defs[i].id,
                       action_name(tg_rule_defs[i].default_action));
        }
    }
}

static void kinds_of(unsigned mask, char *buf, size_t len)
{
    size_t at = 0;
    buf[0] = '\0';
    for (int k = 1; k < TG_KIND_COUNT && at < len; k++) {
        if (mask & TG_KIND_BIT(k))
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
                                   tg_kind_defs[k].display);
    }
}

/* A markdown table cell: '|' escaped, backticks around code. */
static void cell_code(const char *s)
{
    putchar('`');
    for (; *s; s++) {
        if (*s == '|')
            fputs("\\|", stdout);
        else
            putchar(*s);
    }
    putchar('`');
}

static void rule_table(int nprefix, char **prefixes)
{
    char kinds[512];
    printf("| id | kinds | default | since | example |\n|---|---|---|---|---|\n");
    for (size_t i = 0; i < tg_rule_count; i++) {
        const struct tg_rule_def *r = &tg_rule_defs[i];
        int keep = nprefix == 0;
        for (int p = 0; p < nprefix; p++)
            keep |= in_family(r->id, prefixes[p]);
        if (!keep)
            continue;
        kinds_of(r->kinds, kinds, sizeof(kinds));
        printf("| `%s` | %s | %s | %s | ", r->id, kinds, action_name(r->default_action), r->since);
        char example[1024];
        snprintf(example, sizeof(example), "[%s] %s", r->id, r->example);
        cell_code(example);
        printf(" |\n");
    }
}

static void kind_table(void)
{
    printf("| kind | apiVersion | scope | pod templates |\n|---|---|---|---|\n");
    for (size_t i = 0; i < tg_api_count; i++) {
        const struct tg_api_def *a = &tg_api_defs[i];
        if (!a->resource[0])
            continue;
        printf("| %s | %s%s%s | %s | %s |\n", a->kind_name, a->group, a->group[0] ? "/" : "",
               a->version ? a->version : "*",
               a->scope == TG_SCOPE_CLUSTER ? "Cluster" : "Namespaced",
               tg_kind_defs[a->kind].templates);
    }
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "policy-rules"))
        policy_rules();
    else if (argc >= 2 && !strcmp(argv[1], "rule-table"))
        rule_table(argc - 2, argv + 2);
    else if (argc == 2 && !strcmp(argv[1], "kind-table"))
        kind_table();
    else {
        fprintf(stderr, "usage: catalogue_gen policy-rules | rule-table [PREFIX...] | kind-table\n");
        return 2;
    }
    return ferror(stdout) ? 1 : 0;
}
