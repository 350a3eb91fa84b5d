/* test_policy.c -- the policy loader (every key; every error with its line, column and key path),
 * the embedded default, `trainguard policy`, the reloader (ConfigMap symlink swaps) and snapshots.
 */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tg/catalogue.h"
#include "tg/digest.h"
#include "tg/policy.h"
#include "tg/policy_cmd.h"
#include "tg/policy_yaml.h"
#include "tg/reload.h"

#define FIX "fixtures/policy/"
#define ERRLEN 8192

/* ---- helpers ------------------------------------------------------------------------------ */

static struct tg_policy *load_fixture(const char *name)
{
    char path[256], err[ERRLEN];
    snprintf(path, sizeof path, FIX "%s", name);
    struct tg_policy *p = tg_policy_load_file(path, err, sizeof err);
    ck_assert_msg(p != NULL, "%s: %s", name, err);
    return p;
}

static struct tg_policy *load_default(void)
{
    char err[ERRLEN];
    size_t len;
    const char *y = tg_policy_default_yaml(&len);
    struct tg_policy *p = tg_policy_load_yaml(y, len, "<embedded>", err, sizeof err);
    ck_assert_msg(p != NULL, "embedded default: %s", err);
    return p;
}

static enum tg_action action_of(const struct tg_policy *p, const char *id)
{
    int i = tg_rule_index(id);
    ck_assert_msg(i >= 0, "rule %s is not in tg_rule_defs[]", id);
    return tg_policy_action(p, i);
}

static bool strv_eq(char **v, size_t n, const char *const *want, size_t nwant)
{
    if (n != nwant)
        return false;
    for (size_t i = 0; i < n; i++)
        if (strcmp(v[i], want[i]))
            return false;
    return true;
}

static const struct tg_env_entry *env_named(const struct tg_policy *p, const char *name)
{
    for (size_t i = 0; i < p->ninject; i++)
        if (!strcmp(p->inject_env[i].name, name))
            return &p->inject_env[i];
    return NULL;
}

/* Deep equality of everything but source and refcount. */
static bool policy_eq(const struct tg_policy *a, const struct tg_policy *b)
{
    if (a->mode != b->mode || a->nactions != b->nactions || a->nns_modes != b->nns_modes ||
        a->nsingle_zone != b->nsingle_zone || a->ninstances != b->ninstances ||
        a->ninject != b->ninject || a->inject_with_env_from != b->inject_with_env_from)
        return false;
    if (memcmp(a->actions, b->actions, a->nactions * sizeof *a->actions))
        return false;
    if (!strv_eq(a->exempt_namespaces, a->nexempt, (const char *const *)b->exempt_namespaces,
                 b->nexempt) ||
        !strv_eq(a->zone_labels, a->nzone_labels, (const char *const *)b->zone_labels,
                 b->nzone_labels) ||
        !strv_eq(a->narrow_topology_keys, a->nnarrow, (const char *const *)b->narrow_topology_keys,
                 b->nnarrow) ||
        !strv_eq(a->volcano_schedulers, a->nvolcano, (const char *const *)b->volcano_schedulers,
                 b->nvolcano))
        return false;
    for (size_t i = 0; i < a->nns_modes; i++)
        if (strcmp(a->ns_modes[i].ns, b->ns_modes[i].ns) ||
            a->ns_modes[i].mode != b->ns_modes[i].mode)
            return false;
    for (size_t i = 0; i < a->nsingle_zone; i++) {
        const struct tg_zone_label *x = &a->single_zone_labels[i], *y = &b->single_zone_labels[i];
        if (strcmp(x->key, y->key) || !x->zone != !y->zone ||
            (x->zone && strcmp(x->zone, y->zone)) ||
            !strv_eq(x->values, x->nvalues, (const char *const *)y->values, y->nvalues))
            return false;
    }
    for (size_t i = 0; i < a->ninstances; i++) {
        const struct tg_instance *x = &a->instances[i], *y = &b->instances[i];
        if (strcmp(x->name, y->name) || x->efa != y->efa || x->gpus != y->gpus ||
            x->neuron != y->neuron || x->neuron_cores != y->neuron_cores || x->gdr != y->gdr ||
            x->lnc != y->lnc || x->rdma_read != y->rdma_read)
            return false;
    }
    for (size_t i = 0; i < a->ninject; i++) {
        const struct tg_env_entry *x = &a->inject_env[i], *y = &b->inject_env[i];
        if (strcmp(x->name, y->name) || strcmp(x->value, y->value) || x->gdr_only != y->gdr_only ||
            x->rdma_read_only != y->rdma_read_only ||
            x->host_network_only != y->host_network_only ||
            !strv_eq(x->families, x->nfamilies, (const char *const *)y->families, y->nfamilies))
            return false;
    }
    return true;
}

/* Lines of s, a last line without '\n' included. */
static size_t count_lines(const char *s)
{
    size_t n = 0;
    for (; *s; s++)
        n += *s == '\n' || s[1] == '\0';
    return n;
}

/* ---- the embedded default ----------------------------------------------------------------- */

/* The embedded policy's rules block is generated from the catalogue (make catalogue-check keeps it
 * so); loading it must give every rule its catalogue default. */
START_TEST(default_has_catalogue_rule_actions)
{
    struct tg_policy *p = tg_policy_new_default();
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(p->mode, TG_MODE_ENFORCE);
    ck_assert_uint_eq(p->nactions, tg_rule_count);
    for (size_t i = 0; i < tg_rule_count; i++)
        ck_assert_msg(p->actions[i] == tg_rule_defs[i].default_action, "%s: %s, catalogue says %s",
                      tg_rule_defs[i].id, tg_action_name(p->actions[i]),
                      tg_action_name(tg_rule_defs[i].default_action));
    tg_policy_unref(p);
}
END_TEST

/* Every catalogue row is complete: a unique id "family.name" of a declared family, a default
 * action, kinds, a release, and the texts that the docs, SARIF and the README show. */
START_TEST(catalogue_rows_are_complete)
{
    for (size_t i = 0; i < tg_rule_count; i++) {
        const struct tg_rule_def *r = &tg_rule_defs[i];
        const char *dot = strchr(r->id, '.');
        bool family = false;
        ck_assert_msg(dot && dot > r->id && dot[1], "%s: id is not family.name", r->id);
        for (size_t f = 0; f < tg_rule_family_count; f++)
            family |= strlen(tg_rule_families[f].prefix) == (size_t)(dot - r->id) &&
                      !strncmp(r->id, tg_rule_families[f].prefix, (size_t)(dot - r->id));
        ck_assert_msg(family, "%s: no TG_FAMILY row for its prefix", r->id);
        ck_assert_int_eq(tg_rule_index(r->id), (int)i);
        ck_assert_msg(r->default_action != TG_ACTION_OFF, "%s: no default action", r->id);
        ck_assert_msg(r->kinds != 0, "%s: no kinds", r->id);
        ck_assert_msg(tg_release_cmp(r->since, "0.1") >= 0, "%s: since %s", r->id, r->since);
        ck_assert_msg(r->summary[0] && r->example[0] && strlen(r->help) > 40, "%s: texts", r->id);
    }
    ck_assert_int_eq(tg_rule_index("efa.no-such-rule"), -1);
    ck_assert_int_lt(tg_release_cmp("0.1", "0.2"), 0);
    ck_assert_int_lt(tg_release_cmp("0.9", "0.10"), 0);
    ck_assert_int_eq(tg_release_cmp("1.2", "1.2"), 0);
    ck_assert_int_gt(tg_release_cmp("1.0", "0.99"), 0);
}
END_TEST

START_TEST(default_has_spec_namespaces_zones_and_env)
{
    static const char *const zones[] = {"topology.kubernetes.io/zone",
                                        "failure-domain.beta.kubernetes.io/zone"};
    static const char *const narrow[] = {
        "kubernetes.io/hostname", "nvidia.com/gpu.clique", "topology.k8s.aws/network-node-layer-1",
        "topology.k8s.aws/network-node-layer-2", "topology.k8s.aws/network-node-layer-3"};
    static const char *const volcano[] = {"volcano"};
    static const char *const exempt[] = {"kube-system"};
    struct tg_policy *p = tg_policy_new_default();
    const struct tg_env_entry *e;

    ck_assert_ptr_nonnull(p);
    ck_assert(strv_eq(p->exempt_namespaces, p->nexempt, exempt, 1));
    ck_assert(tg_policy_is_exempt(p, "kube-system"));
    ck_assert(!tg_policy_is_exempt(p, "default"));
    ck_assert(strv_eq(p->zone_labels, p->nzone_labels, zones, 2));
    ck_assert(tg_policy_is_zone_label(p, "failure-domain.beta.kubernetes.io/zone"));
    ck_assert(strv_eq(p->narrow_topology_keys, p->nnarrow, narrow, 5));
    ck_assert(strv_eq(p->volcano_schedulers, p->nvolcano, volcano, 1));
    ck_assert_uint_eq(p->nsingle_zone, 0); /* SPEC 9: karpenter.sh/nodepool alone pins nothing */
    ck_assert_uint_eq(p->nns_modes, 0);
    ck_assert(!p->inject_with_env_from);
    ck_assert_uint_eq(p->ninject, 3);
    /* SPEC 10: FI_PROVIDER always; FI_EFA_USE_DEVICE_RDMA only where every possible type has RDMA
     * read (not GPUDirect RDMA); NCCL_SOCKET_IFNAME only on hostNetwork pods, excluding the CNIs'
     * host-side interfaces (SPEC 13). */
    e = &p->inject_env[0];
    ck_assert_str_eq(e->name, "FI_PROVIDER");
    ck_assert_str_eq(e->value, "efa");
    ck_assert(!e->gdr_only && !e->rdma_read_only && !e->host_network_only);
    ck_assert_uint_eq(e->nfamilies, 0);
    e = &p->inject_env[1];
    ck_assert_str_eq(e->name, "FI_EFA_USE_DEVICE_RDMA");
    ck_assert_str_eq(e->value, "1");
    ck_assert(e->rdma_read_only);
    ck_assert(!e->gdr_only && !e->host_network_only);
    ck_assert_uint_eq(e->nfamilies, 0);
    e = env_named(p, "NCCL_SOCKET_IFNAME");
    ck_assert_ptr_nonnull(e);
    ck_assert_ptr_eq(e, &p->inject_env[2]);
    ck_assert_str_eq(e->value, "^lo,docker,veth,eni,lxc,cali,pod-id-link0");
    ck_assert(e->host_network_only);
    ck_assert(!e->gdr_only && !e->rdma_read_only);
    ck_assert_uint_eq(e->nfamilies, 0);
    ck_assert_str_eq(p->source, "<embedded>");
    tg_policy_unref(p);
}
END_TEST

START_TEST(default_has_instance_table)
{
    struct tg_policy *p = tg_policy_new_default();
    const struct tg_instance *in;

    ck_assert_ptr_nonnull(p);
    in = tg_policy_instance(p, "p5.48xlarge");
    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(in->efa, 32);
    ck_assert_int_eq(in->gpus, 8);
    ck_assert(in->gdr);
    in = tg_policy_instance(p, "trn1.32xlarge");
    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(in->efa, 8);
    ck_assert_int_eq(in->neuron, 16);
    ck_assert(in->gdr);
    in = tg_policy_instance(p, "p5.4xlarge");
    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(in->efa, 1);
    ck_assert(!in->gdr);
    ck_assert_ptr_null(tg_policy_instance(p, "p5.48XLARGE"));
    /* every row by its name; prefixes, extensions and the empty name find none */
    for (size_t i = 0; i < p->ninstances; i++) {
        char longer[80];
        const char *name = p->instances[i].name;
        ck_assert_ptr_eq(tg_policy_instance(p, name), &p->instances[i]);
        snprintf(longer, sizeof(longer), "%sx", name);
        ck_assert_ptr_null(tg_policy_instance(p, longer));
    }
    static const char *const none[] = {"", "p", "p5", "p5.", "p5.48xlarg", "q", "5"};
    for (size_t i = 0; i < sizeof(none) / sizeof(none[0]); i++)
        ck_assert_ptr_null(tg_policy_instance(p, none[i]));
    tg_policy_unref(p);
}
END_TEST

/* The embedded YAML is the default: loading it as a user file over the default changes nothing. */
START_TEST(embedded_default_round_trips)
{
    char err[ERRLEN];
    size_t len;
    const char *y = tg_policy_default_yaml(&len);
    struct tg_policy *d = tg_policy_new_default(), *a = load_default(), *b;
    char *copy = strndup(y, len);

    ck_assert_uint_eq(strlen(y), len);
    b = tg_policy_load_yaml(copy, len, "copy", err, sizeof err); /* not the embedded pointer */
    ck_assert_msg(b != NULL, "%s", err);
    ck_assert(policy_eq(d, a));
    ck_assert(policy_eq(d, b));
    ck_assert_str_eq(b->source, "copy");
    tg_policy_unref(b);
    tg_policy_unref(a);
    tg_policy_unref(d);
    free(copy);
}
END_TEST

/* `policy default` is where users start: it lists every rule with its default. */
START_TEST(embedded_default_lists_every_rule)
{
    const char *y = tg_policy_default_yaml(NULL);
    char line[128];
    for (size_t i = 0; i < tg_rule_count; i++) {
        snprintf(line, sizeof line, "\n  %s: %s\n", tg_rule_defs[i].id,
                 tg_action_name(tg_rule_defs[i].default_action));
        ck_assert_msg(strstr(y, line) != NULL, "embedded default lacks '%s'", tg_rule_defs[i].id);
    }
}
END_TEST

/* ---- each key ----------------------------------------------------------------------------- */

START_TEST(each_key_applies)
{
    static const char *const exempt[] = {"kube-system", "trainguard"};
    static const char *const zones[] = {"topology.kubernetes.io/zone"};
    static const char *const narrow[] = {"kubernetes.io/hostname", "example.com/rack"};
    static const char *const volcano[] = {"volcano", "kai-scheduler"};
    static const char *const values[] = {"p5-use1a", "p5-use1a-spot"};
    static const char *const families[] = {"p5", "p5e"};
    struct tg_policy *p = load_fixture("full.yaml");
    const struct tg_env_entry *e;

    ck_assert_str_eq(p->source, FIX "full.yaml");
    ck_assert_int_eq(p->mode, TG_MODE_WARN);
    ck_assert_int_eq(action_of(p, "efa.no-hugepages"), TG_ACTION_DENY);
    ck_assert_int_eq(action_of(p, "zone.missing"), TG_ACTION_WARN);
    ck_assert_int_eq(action_of(p, "mpi.np-below-slots"), TG_ACTION_OFF);
    ck_assert_int_eq(action_of(p, "zone.multiple"), TG_ACTION_DENY); /* not named: default */
    ck_assert(strv_eq(p->exempt_namespaces, p->nexempt, exempt, 2));
    ck_assert_uint_eq(p->nns_modes, 2);
    ck_assert_int_eq(tg_policy_mode_for(p, "team-a"), TG_MODE_ENFORCE);
    ck_assert_int_eq(tg_policy_mode_for(p, "research"), TG_MODE_AUDIT);
    ck_assert_int_eq(tg_policy_mode_for(p, "other"), TG_MODE_WARN);
    ck_assert(strv_eq(p->zone_labels, p->nzone_labels, zones, 1));
    ck_assert(strv_eq(p->narrow_topology_keys, p->nnarrow, narrow, 2));
    ck_assert_uint_eq(p->nsingle_zone, 2);
    ck_assert_str_eq(p->single_zone_labels[0].key, "karpenter.sh/nodepool");
    ck_assert(
        strv_eq(p->single_zone_labels[0].values, p->single_zone_labels[0].nvalues, values, 2));
    ck_assert_str_eq(p->single_zone_labels[0].zone, "us-east-1a");
    ck_assert_str_eq(p->single_zone_labels[1].key, "eks.amazonaws.com/nodegroup");
    ck_assert_uint_eq(p->single_zone_labels[1].nvalues, 0); /* any value */
    ck_assert_ptr_null(p->single_zone_labels[1].zone);
    ck_assert(strv_eq(p->volcano_schedulers, p->nvolcano, volcano, 2));
    ck_assert_uint_eq(p->ninject, 5);
    e = env_named(p, "FOO");
    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(e->value, "bar");
    ck_assert(strv_eq(e->families, e->nfamilies, families, 2));
    ck_assert(!e->gdr_only);
    ck_assert(env_named(p, "FI_EFA_USE_DEVICE_RDMA")->gdr_only);
    ck_assert_str_eq(env_named(p, "NCCL_DEBUG")->value, "1");
    ck_assert(p->inject_with_env_from);
    tg_policy_unref(p);
}
END_TEST

/* instanceTypes merges field by field: named fields change, the others keep the built-in value. */
START_TEST(instance_types_merge_per_field)
{
    struct tg_policy *d = tg_policy_new_default(), *p = load_fixture("full.yaml");
    const struct tg_instance *in;

    ck_assert_uint_eq(p->ninstances, d->ninstances + 1);
    in = tg_policy_instance(p, "p5.48xlarge");
    ck_assert_int_eq(in->efa, 16);
    ck_assert_int_eq(in->gpus, 8);
    ck_assert(in->gdr);
    in = tg_policy_instance(p, "trn2.48xlarge");
    ck_assert_int_eq(in->neuron_cores, 4);
    ck_assert_int_eq(in->efa, tg_policy_instance(d, "trn2.48xlarge")->efa);
    ck_assert_int_eq(in->neuron, tg_policy_instance(d, "trn2.48xlarge")->neuron);
    in = tg_policy_instance(p, "p6e-gb200.36xlarge"); /* a new type: absent fields are 0 */
    ck_assert_ptr_nonnull(in);
    ck_assert_int_eq(in->efa, 8);
    ck_assert_int_eq(in->gpus, 4);
    ck_assert_int_eq(in->neuron, 0);
    ck_assert(in->gdr);
    ck_assert_int_eq(tg_policy_instance(p, "p4d.24xlarge")->efa, 4); /* untouched */
    tg_policy_unref(p);
    tg_policy_unref(d);
}
END_TEST

START_TEST(missing_keys_keep_defaults)
{
    struct tg_policy *d = tg_policy_new_default(), *p = load_fixture("minimal.yaml");
    ck_assert_int_eq(p->mode, TG_MODE_AUDIT);
    p->mode = d->mode;
    ck_assert(policy_eq(p, d));
    tg_policy_unref(p);
    p = load_fixture("empty-map.yaml");
    ck_assert(policy_eq(p, d));
    tg_policy_unref(p);
    tg_policy_unref(d);
}
END_TEST

/* Lists replace the default as a whole; an empty exempt list exempts nothing. */
START_TEST(lists_replace_defaults)
{
    char err[ERRLEN];
    const char *y = "exemptNamespaces: []\nnarrowTopologyKeys: []\ninjectEnv: []\n";
    struct tg_policy *p = tg_policy_load_yaml(y, strlen(y), NULL, err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_uint_eq(p->nexempt, 0);
    ck_assert(!tg_policy_is_exempt(p, "kube-system"));
    ck_assert_uint_eq(p->nnarrow, 0);
    ck_assert_uint_eq(p->ninject, 0);
    ck_assert_uint_eq(p->nzone_labels, 2);
    ck_assert_str_eq(p->source, "<memory>");
    tg_policy_unref(p);
}
END_TEST

/* Schema typing, not YAML 1.1: `off` is an action, `on` a namespace name, True a boolean. */
START_TEST(scalars_are_typed_by_the_schema)
{
    char err[ERRLEN];
    const char *y = "rules: {zone.missing: off, efa.no-hugepages: 'deny'}\n"
                    "exemptNamespaces: [on, 'no']\ninjectWithEnvFrom: True\n"
                    "instanceTypes: {p5.48xlarge: {efa: 016, gpuDirectRDMA: FALSE}}\n";
    struct tg_policy *p = tg_policy_load_yaml(y, strlen(y), "t", err, sizeof err);
    ck_assert_msg(p != NULL, "%s", err);
    ck_assert_int_eq(action_of(p, "zone.missing"), TG_ACTION_OFF);
    ck_assert_int_eq(action_of(p, "efa.no-hugepages"), TG_ACTION_DENY);
    ck_assert(tg_policy_is_exempt(p, "on") && tg_policy_is_exempt(p, "no"));
    ck_assert(p->inject_with_env_from);
    ck_assert_int_eq(tg_policy_instance(p, "p5.48xlarge")->efa, 16); /* decimal, not octal */
    ck_assert(!tg_policy_instance(p, "p5.48xlarge")->gdr);
    tg_policy_unref(p);
}
END_TEST

/* ---- errors ------------------------------------------------------------------------------- */

/* tests/fixtures/policy/bad/<case>.yaml: first line "# expect: <the first error line>". */
#define MAX_BAD 128
static char bad_names[MAX_BAD][64];
static int nbad;

static int cmp_names(const void *a, const void *b)
{
    return strcmp(a, b);
}

static void scan_bad_fixtures(void)
{
    DIR *d = opendir(FIX "bad");
    struct dirent *de;
    nbad = 0;
    if (!d)
        return;
    while ((de = readdir(d)) && nbad < MAX_BAD) {
        size_t n = strlen(de->d_name);
        if (n > 5 && n < sizeof bad_names[0] && !strcmp(de->d_name + n - 5, ".yaml"))
            memcpy(bad_names[nbad++], de->d_name, n + 1);
    }
    closedir(d);
    qsort(bad_names, (size_t)nbad, sizeof bad_names[0], cmp_names);
}

START_TEST(bad_fixtures_are_found)
{
    ck_assert_int_ge(nbad, 60);
}
END_TEST

START_TEST(bad_fixture_reports_line_column_and_path)
{
    char path[128], err[ERRLEN], want[600], *text, *nl;
    size_t len;
    struct tg_policy *p;

    snprintf(path, sizeof path, FIX "bad/%s", bad_names[_i]);
    text = tg_policy_read_file(path, &len, err, sizeof err);
    ck_assert_msg(text != NULL, "%s", err);
    ck_assert_msg(!strncmp(text, "# expect: ", 10), "%s: no '# expect: ' line", path);
    nl = strchr(text, '\n');
    ck_assert_ptr_nonnull(nl);
    snprintf(want, sizeof want, "%.*s", (int)(nl - text - 10), text + 10);

    /* From text: the first line of err is exactly the expected line. */
    p = tg_policy_load_yaml(text, len, "t", err, sizeof err);
    ck_assert_msg(p == NULL, "%s: loaded", path);
    if ((nl = strchr(err, '\n')))
        *nl = '\0';
    ck_assert_msg(!strcmp(err, want), "%s:\n got: %s\nwant: %s", path, err, want);

    /* From the file: the same, with the file name in front. */
    p = tg_policy_load_file(path, err, sizeof err);
    ck_assert_ptr_null(p);
    if ((nl = strchr(err, '\n')))
        *nl = '\0';
    ck_assert_msg(!strncmp(err, path, strlen(path)) && !strncmp(err + strlen(path), ": ", 2) &&
                      !strcmp(err + strlen(path) + 2, want),
                  "%s: got %s", path, err);
    free(text);
}
END_TEST

START_TEST(reports_every_error_in_order)
{
    char err[ERRLEN];
    struct tg_policy *p = tg_policy_load_file(FIX "many-errors.yaml", err, sizeof err);
    ck_assert_ptr_null(p);
    ck_assert_str_eq(
        err, FIX
        "many-errors.yaml: line 2, column 7: mode: unknown mode \"enforcing\" (enforce, warn or "
        "audit)\n" FIX "many-errors.yaml: line 4, column 21: rules.efa.no-hugepages: unknown "
        "action \"block\" (deny, warn or off)\n" FIX "many-errors.yaml: line 5, column 19: "
        "exemptNamespaces: expected a list, got \"kube-system\"\n" FIX "many-errors.yaml: line "
        "7, column 22: instanceTypes.p5.48xlarge.efa: must not be negative, got -1\n" FIX
        "many-errors.yaml: line 8, column 1: injectWithEnvfrom: unknown key (did you mean "
        "injectWithEnvFrom?)");
}
END_TEST

START_TEST(errors_are_capped)
{
    char y[4096], err[ERRLEN], *last;
    size_t n = 0;
    struct tg_policy *p;

    for (int i = 0; i < 30; i++)
        n += (size_t)snprintf(y + n, sizeof y - n, "bogus%d: 1\n", i);
    p = tg_policy_load_yaml(y, n, "t", err, sizeof err);
    ck_assert_ptr_null(p);
    ck_assert_uint_eq(count_lines(err), 21);
    last = strrchr(err, '\n');
    ck_assert_str_eq(last + 1, "(more errors not shown)");
    ck_assert(!strncmp(err, "line 1, column 1: bogus0: unknown key", 37));
}
END_TEST

START_TEST(small_or_null_error_buffer_is_safe)
{
    char err[16];
    const char *y = "mode: nope\n";
    ck_assert_ptr_null(tg_policy_load_yaml(y, strlen(y), "t", NULL, 0));
    memset(err, 'x', sizeof err);
    ck_assert_ptr_null(tg_policy_load_yaml(y, strlen(y), "t", err, sizeof err));
    ck_assert_uint_eq(strlen(err), sizeof err - 1);
    ck_assert(!strncmp(err, "line 1, column ", 15));
}
END_TEST

START_TEST(invalid_utf8_names_its_position)
{
    char err[ERRLEN];
    const char y[] = "kind: Policy\nmode: \"w\xff\"\n";
    ck_assert_ptr_null(tg_policy_load_yaml(y, sizeof y - 1, "t", err, sizeof err));
    ck_assert_str_eq(err, "line 2, column 9: invalid YAML: invalid leading UTF-8 octet");
}
END_TEST

/* Text with a NUL byte in it: libyaml rejects it as a control character, we never truncate. */
START_TEST(nul_byte_in_text_is_an_error)
{
    char err[ERRLEN];
    const char y[] = "mode: warn\n\0mode: audit\n";
    ck_assert_ptr_null(tg_policy_load_yaml(y, sizeof y - 1, "t", err, sizeof err));
    ck_assert(
        !strncmp(err, "line 2, column 1: invalid YAML: control characters are not allowed", 66));
}
END_TEST

/* Long keys and values are cut in messages without splitting a UTF-8 character. */
START_TEST(messages_cut_long_text_on_utf8_boundaries)
{
    char y[1024], err[ERRLEN];
    size_t n = 0;
    json_t *s;

    n += (size_t)snprintf(y + n, sizeof y - n, "x");
    for (int i = 0; i < 60; i++)
        n += (size_t)snprintf(y + n, sizeof y - n, "\xc3\xa9"); /* é: two bytes */
    n += (size_t)snprintf(y + n, sizeof y - n, ": 1\nmode: \"");
    for (int i = 0; i < 60; i++)
        n += (size_t)snprintf(y + n, sizeof y - n, "\xc3\xa9");
    n += (size_t)snprintf(y + n, sizeof y - n, "\"\n");
    ck_assert_ptr_null(tg_policy_load_yaml(y, n, "t", err, sizeof err));
    ck_assert_uint_eq(count_lines(err), 2);
    ck_assert_ptr_nonnull(strstr(err, "...: unknown key"));
    ck_assert_ptr_nonnull(strstr(err, "...\" (enforce, warn or audit)"));
    s = json_string(err); /* NULL when err is not valid UTF-8 */
    ck_assert_ptr_nonnull(s);
    json_decref(s);
}
END_TEST

START_TEST(file_errors_name_the_file)
{
    char err[ERRLEN], dir[] = "/tmp/tg-policy-test-XXXXXX", path[128];
    FILE *f;

    ck_assert_ptr_null(tg_policy_load_file(FIX "no-such-file.yaml", err, sizeof err));
    ck_assert_str_eq(err, FIX "no-such-file.yaml: cannot open: No such file or directory");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    ck_assert_ptr_null(tg_policy_load_file(dir, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, ": not a regular file"));
    snprintf(path, sizeof path, "%s/big.yaml", dir);
    f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    for (int i = 0; i <= TG_POLICY_MAX_BYTES / 16; i++)
        fputs("# padding.......\n", f);
    fclose(f);
    ck_assert_ptr_null(tg_policy_load_file(path, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, ": larger than 1048576 bytes"));
    unlink(path);
    rmdir(dir);
}
END_TEST

/* ---- trainguard policy -------------------------------------------------------------------- */

/* Runs the command with stdout and stderr sent to a file; returns its exit code, output in out. */
static int run_policy_cmd(char **argv, int argc, char *out, size_t outlen)
{
    char tmp[] = "/tmp/tg-policy-out-XXXXXX";
    int fd = mkstemp(tmp), so, se, rc;
    ssize_t n;

    ck_assert_int_ge(fd, 0);
    fflush(stdout);
    fflush(stderr);
    so = dup(1);
    se = dup(2);
    dup2(fd, 1);
    dup2(fd, 2);
    rc = tg_cmd_policy(argc, argv);
    fflush(stdout);
    fflush(stderr);
    dup2(so, 1);
    dup2(se, 2);
    close(so);
    close(se);
    lseek(fd, 0, SEEK_SET);
    n = read(fd, out, outlen - 1);
    out[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(tmp);
    return rc;
}

START_TEST(policy_command_exit_codes)
{
    static char out[1 << 16];
    char *def[] = {"policy", "default"};
    char *good[] = {"policy", "check", FIX "full.yaml", FIX "minimal.yaml"};
    char *bad[] = {"policy", "check", FIX "full.yaml", FIX "bad/rules-bad-action.yaml"};
    char *missing[] = {"policy", "check", FIX "bad/rules-bad-action.yaml", FIX "nope.yaml"};
    char *none[] = {"policy", "check"};
    char *opt[] = {"policy", "check", "--strict", FIX "full.yaml"};
    char *sub[] = {"policy", "show"};
    char *help[] = {"policy", "--help"};
    char *chelp[] = {"policy", "check", "--help"};
    char *bare[] = {"policy"};
    size_t len;

    ck_assert_int_eq(run_policy_cmd(def, 2, out, sizeof out), 0);
    ck_assert_str_eq(out, tg_policy_default_yaml(&len));
    ck_assert_int_eq(run_policy_cmd(good, 4, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, FIX "full.yaml: valid (mode warn)\n"));
    ck_assert_int_eq(run_policy_cmd(bad, 4, out, sizeof out), 1);
    ck_assert_ptr_nonnull(strstr(out, FIX "bad/rules-bad-action.yaml: line 3, column 21: "
                                          "rules.efa.no-hugepages: unknown action \"block\""));
    ck_assert_int_eq(run_policy_cmd(missing, 4, out, sizeof out), 2);
    ck_assert_int_eq(run_policy_cmd(none, 2, out, sizeof out), 2);
    ck_assert_int_eq(run_policy_cmd(opt, 4, out, sizeof out), 2);
    ck_assert_int_eq(run_policy_cmd(sub, 2, out, sizeof out), 2);
    ck_assert_int_eq(run_policy_cmd(bare, 1, out, sizeof out), 2);
    ck_assert_int_eq(run_policy_cmd(help, 2, out, sizeof out), 0);
    ck_assert_ptr_nonnull(strstr(out, "usage: trainguard policy"));
    ck_assert_int_eq(run_policy_cmd(chelp, 3, out, sizeof out), 0);
}
END_TEST

/* ---- reload ------------------------------------------------------------------------------- */

/* A directory laid out like a ConfigMap volume: policy.yaml -> ..data/policy.yaml,
 * ..data -> ..<generation>/, and an update swaps ..data with one rename. */
struct cm {
    char dir[64];
    char file[128];
    int gen;
};

static void cm_put(struct cm *c, const char *text)
{
    char gdir[128], gfile[160], tmp[128], data[128], target[32];
    FILE *f;

    c->gen++;
    snprintf(gdir, sizeof gdir, "%s/..gen%d", c->dir, c->gen);
    snprintf(gfile, sizeof gfile, "%s/policy.yaml", gdir);
    snprintf(tmp, sizeof tmp, "%s/..data_tmp", c->dir);
    snprintf(data, sizeof data, "%s/..data", c->dir);
    snprintf(target, sizeof target, "..gen%d", c->gen);
    ck_assert_int_eq(mkdir(gdir, 0755), 0);
    f = fopen(gfile, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
    ck_assert_int_eq(symlink(target, tmp), 0);
    ck_assert_int_eq(rename(tmp, data), 0);
}

static void cm_put_fixture(struct cm *c, const char *name)
{
    char path[128], err[256];
    size_t len;
    snprintf(path, sizeof path, FIX "%s", name);
    char *text = tg_policy_read_file(path, &len, err, sizeof err);
    ck_assert_msg(text != NULL, "%s", err);
    cm_put(c, text);
    free(text);
}

static void cm_init(struct cm *c, const char *first_fixture)
{
    snprintf(c->dir, sizeof c->dir, "/tmp/tg-policy-cm-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(c->dir));
    c->gen = 0;
    snprintf(c->file, sizeof c->file, "%s/policy.yaml", c->dir);
    cm_put_fixture(c, first_fixture);
    ck_assert_int_eq(symlink("..data/policy.yaml", c->file), 0);
}

static void cm_remove(struct cm *c)
{
    char p[192];
    for (int g = 1; g <= c->gen; g++) {
        snprintf(p, sizeof p, "%s/..gen%d/policy.yaml", c->dir, g);
        unlink(p);
        snprintf(p, sizeof p, "%s/..gen%d", c->dir, g);
        rmdir(p);
    }
    snprintf(p, sizeof p, "%s/..data", c->dir);
    unlink(p);
    unlink(c->file);
    rmdir(c->dir);
}

/* The published policy of the process is shared with other suites (CK_FORK=no): each reload
 * test puts back a fresh default when done. */
static void restore_published(void)
{
    tg_policy_reloader_stop();
    tg_policy_publish(tg_policy_new_default());
}

static enum tg_mode published_mode(void)
{
    struct tg_policy *p = tg_policy_acquire();
    enum tg_mode m;
    ck_assert_ptr_nonnull(p);
    m = p->mode;
    tg_policy_release(p);
    return m;
}

/* Runs fn with stderr captured into buf. */
static int with_stderr(int (*fn)(void), char *buf, size_t len)
{
    char tmp[] = "/tmp/tg-policy-err-XXXXXX";
    int fd = mkstemp(tmp), se, rc;
    ssize_t n;
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    se = dup(2);
    dup2(fd, 2);
    rc = fn();
    fflush(stderr);
    dup2(se, 2);
    close(se);
    lseek(fd, 0, SEEK_SET);
    n = read(fd, buf, len - 1);
    buf[n > 0 ? n : 0] = '\0';
    close(fd);
    unlink(tmp);
    return rc;
}

START_TEST(reload_takes_good_and_keeps_old_on_bad)
{
    struct cm c;
    char err[ERRLEN], log[ERRLEN];
    unsigned long long ok0, failed0, ok, failed;
    double t0, t;
    json_t *line;
    json_error_t je;

    cm_init(&c, "reload-warn.yaml");
    tg_policy_reload_counts(&ok0, &failed0, NULL);
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, NULL, err, sizeof err), 0);
    ck_assert_int_eq(published_mode(), TG_MODE_WARN);
    ck_assert(tg_policy_reload_ok());
    tg_policy_reload_counts(NULL, NULL, &t0);
    ck_assert(t0 > 1.7e9);

    /* A good new generation is taken. */
    cm_put_fixture(&c, "reload-audit.yaml");
    ck_assert_int_eq(tg_policy_reload_now(), 0);
    ck_assert_int_eq(published_mode(), TG_MODE_AUDIT);
    tg_policy_reload_counts(&ok, &failed, &t);
    ck_assert_uint_eq(ok, ok0 + 1);
    ck_assert_uint_eq(failed, failed0);
    ck_assert(t >= t0);

    /* A bad one keeps the old policy, counts a failure, and logs one JSON line with the error. */
    cm_put_fixture(&c, "bad/rules-bad-action.yaml");
    ck_assert_int_eq(with_stderr(tg_policy_reload_now, log, sizeof log), -EINVAL);
    ck_assert_int_eq(published_mode(), TG_MODE_AUDIT);
    tg_policy_reload_counts(&ok, &failed, NULL);
    ck_assert_uint_eq(ok, ok0 + 1);
    ck_assert_uint_eq(failed, failed0 + 1);
    ck_assert_uint_eq(count_lines(log), 1);
    ck_assert(!tg_policy_reload_ok());
    line = json_loads(log, 0, &je);
    ck_assert_msg(line != NULL, "log line is not JSON: %s", log);
    ck_assert_str_eq(json_string_value(json_object_get(line, "level")), "error");
    ck_assert_str_eq(json_string_value(json_object_get(line, "path")), c.file);
    ck_assert_ptr_nonnull(strstr(json_string_value(json_object_get(line, "error")),
                                 "policy.yaml: line 3, column 21: rules.efa.no-hugepages: unknown "
                                 "action \"block\""));
    json_decref(line);

    /* Fixed again: taken. */
    cm_put_fixture(&c, "reload-warn.yaml");
    ck_assert_int_eq(tg_policy_reload_now(), 0);
    ck_assert_int_eq(published_mode(), TG_MODE_WARN);
    ck_assert(tg_policy_reload_ok());

    /* The file disappears: old policy kept, -ENOENT. */
    unlink(c.file);
    ck_assert_int_eq(tg_policy_reload_now(), -ENOENT);
    ck_assert_int_eq(published_mode(), TG_MODE_WARN);
    ck_assert(!tg_policy_reload_ok());
    ck_assert_int_eq(symlink("..data/policy.yaml", c.file), 0);
    ck_assert_int_eq(tg_policy_reload_now(), 0);
    ck_assert(tg_policy_reload_ok());

    restore_published();
    ck_assert(tg_policy_reload_ok()); /* no reloader: the embedded default is fine */
    ck_assert_int_eq(tg_policy_reload_now(), -ESRCH);
    cm_remove(&c);
}
END_TEST

static void published_sha(char out[65])
{
    struct tg_policy *p = tg_policy_acquire();
    ck_assert_ptr_nonnull(p);
    snprintf(out, 65, "%s", p->sha256);
    tg_policy_release(p);
}

/* The SHA-256 of a policy is that of the bytes it was loaded from: the embedded default's, then
 * each reloaded file's; a refused file does not change it. */
START_TEST(policy_sha256_follows_the_bytes_in_force)
{
    static const char *const two[] = {"mode: warn\n", "mode: audit\n"};
    struct cm c;
    char err[ERRLEN], want[65], got[65];
    size_t len;
    const char *def = tg_policy_default_yaml(&len);
    struct tg_policy *p = tg_policy_new_default();

    ck_assert_int_eq(tg_sha256_hex(def, len, want), 0);
    ck_assert_str_eq(p->sha256, want);
    tg_policy_unref(p);

    cm_init(&c, "reload-warn.yaml");
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, NULL, err, sizeof err), 0);
    for (int i = 0; i < 2; i++) {
        cm_put(&c, two[i]);
        ck_assert_int_eq(tg_policy_reload_now(), 0);
        ck_assert_int_eq(tg_sha256_hex(two[i], strlen(two[i]), want), 0);
        published_sha(got);
        ck_assert_str_eq(got, want);
    }
    cm_put(&c, "mode: [oops\n");
    ck_assert_int_eq(tg_policy_reload_now(), -EINVAL);
    published_sha(got);
    ck_assert_str_eq(got, want); /* still audit's */
    restore_published();
    cm_remove(&c);
}
END_TEST

/* Known answers (FIPS 180-2 examples, and the empty string). */
START_TEST(sha256_hex_known_answers)
{
    char out[65];

    ck_assert_int_eq(tg_sha256_hex("abc", 3, out), 0);
    ck_assert_str_eq(out, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    ck_assert_int_eq(tg_sha256_hex(NULL, 0, out), 0);
    ck_assert_str_eq(out, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}
END_TEST

static bool wait_counts(unsigned long long want_ok, unsigned long long want_failed)
{
    unsigned long long ok, failed;
    struct timespec ts = {0, 10 * 1000 * 1000};
    for (int i = 0; i < 500; i++) {
        tg_policy_reload_counts(&ok, &failed, NULL);
        if (ok >= want_ok && failed >= want_failed)
            return true;
        nanosleep(&ts, NULL);
    }
    return false;
}

/* The poller sees a ConfigMap swap by itself; the same bad bytes again are not a new failure. */
START_TEST(poller_follows_configmap_swaps)
{
    struct cm c;
    char err[ERRLEN];
    unsigned long long ok0, failed0, ok, failed;
    struct timespec ts = {0, 150 * 1000 * 1000};

    cm_init(&c, "reload-warn.yaml");
    tg_policy_reload_counts(&ok0, &failed0, NULL);
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 10, NULL, err, sizeof err), 0);
    cm_put_fixture(&c, "reload-audit.yaml");
    ck_assert(wait_counts(ok0 + 1, failed0));
    ck_assert_int_eq(published_mode(), TG_MODE_AUDIT);

    fflush(stderr);
    cm_put_fixture(&c, "bad/instance-efa-negative.yaml");
    ck_assert(wait_counts(ok0 + 1, failed0 + 1));
    ck_assert_int_eq(published_mode(), TG_MODE_AUDIT);
    cm_put_fixture(&c, "bad/instance-efa-negative.yaml"); /* same bytes, new generation */
    nanosleep(&ts, NULL);
    tg_policy_reload_counts(&ok, &failed, NULL);
    ck_assert_uint_eq(failed, failed0 + 1);

    /* Unchanged bytes are not reloaded either: ok stays. */
    cm_put_fixture(&c, "reload-warn.yaml");
    ck_assert(wait_counts(ok0 + 2, failed0 + 1));
    nanosleep(&ts, NULL);
    tg_policy_reload_counts(&ok, &failed, NULL);
    ck_assert_uint_eq(ok, ok0 + 2);
    ck_assert_int_eq(published_mode(), TG_MODE_WARN);

    restore_published();
    cm_remove(&c);
}
END_TEST

/* SIGHUP path: the async-signal-safe request makes the thread reload even unchanged bytes. */
START_TEST(reload_request_wakes_the_thread)
{
    struct cm c;
    char err[ERRLEN];
    unsigned long long ok0;

    cm_init(&c, "reload-warn.yaml");
    tg_policy_reload_counts(&ok0, NULL, NULL);
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, NULL, err, sizeof err), 0);
    tg_policy_reload_request();
    ck_assert(wait_counts(ok0 + 1, 0));
    restore_published();
    cm_remove(&c);
}
END_TEST

START_TEST(mode_override_survives_reloads)
{
    struct cm c;
    char err[ERRLEN];
    enum tg_mode audit = TG_MODE_AUDIT;

    cm_init(&c, "reload-warn.yaml");
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, &audit, err, sizeof err), 0);
    ck_assert_int_eq(published_mode(), TG_MODE_AUDIT);
    cm_put(&c, "mode: enforce\n");
    ck_assert_int_eq(tg_policy_reload_now(), 0);
    ck_assert_int_eq(published_mode(), TG_MODE_AUDIT);
    restore_published();
    cm_remove(&c);
}
END_TEST

START_TEST(reloader_start_errors)
{
    struct cm c;
    char err[ERRLEN];
    struct tg_policy *before;

    restore_published();
    before = tg_policy_acquire();
    cm_init(&c, "bad/mode-unknown.yaml");
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, NULL, err, sizeof err), -EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "policy.yaml: line 2, column 7: mode: unknown mode"));
    ck_assert_int_eq(tg_policy_reloader_start(FIX "nope.yaml", 0, NULL, err, sizeof err), -ENOENT);
    ck_assert_int_eq(tg_policy_reload_now(), -ESRCH);
    {
        struct tg_policy *now = tg_policy_acquire();
        ck_assert_ptr_eq(now, before); /* nothing was published */
        tg_policy_release(now);
    }
    cm_put_fixture(&c, "reload-warn.yaml");
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, NULL, err, sizeof err), 0);
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, NULL, err, sizeof err), -EALREADY);
    tg_policy_reloader_stop();
    tg_policy_reloader_stop(); /* twice is harmless */
    tg_policy_release(before);
    restore_published();
    cm_remove(&c);
}
END_TEST

/* ---- snapshots ---------------------------------------------------------------------------- */

/* A reader that holds the old snapshot across a swap still reads it whole (ASan/valgrind would
 * flag a use after free); it is freed when the reader releases it. */
START_TEST(reader_keeps_old_snapshot_across_swap)
{
    struct cm c;
    char err[ERRLEN];
    struct tg_policy *old, *cur;

    cm_init(&c, "reload-warn.yaml");
    ck_assert_int_eq(tg_policy_reloader_start(c.file, 0, NULL, err, sizeof err), 0);
    old = tg_policy_acquire();
    ck_assert_int_eq(old->refcount, 2); /* published + this reader */
    cm_put_fixture(&c, "full.yaml");
    ck_assert_int_eq(tg_policy_reload_now(), 0);
    ck_assert_int_eq(old->refcount, 1); /* only this reader */
    ck_assert_int_eq(old->mode, TG_MODE_WARN);
    ck_assert_int_eq(tg_policy_instance(old, "p5.48xlarge")->efa, 32);
    ck_assert_str_eq(old->exempt_namespaces[0], "kube-system");
    cur = tg_policy_acquire();
    ck_assert_ptr_ne(cur, old);
    ck_assert_int_eq(tg_policy_instance(cur, "p5.48xlarge")->efa, 16);
    tg_policy_release(cur);
    tg_policy_release(old);
    restore_published();
    cm_remove(&c);
}
END_TEST

static int stop_readers; /* atomic */

static void *reader(void *arg)
{
    unsigned long sum = 0;
    (void)arg;
    while (!__atomic_load_n(&stop_readers, __ATOMIC_RELAXED)) {
        struct tg_policy *p = tg_policy_acquire();
        sum += (unsigned long)p->mode + p->nactions + strlen(p->instances[0].name) +
               strlen(p->inject_env[0].name);
        tg_policy_release(p);
    }
    return (void *)sum;
}

START_TEST(concurrent_readers_and_publishes)
{
    pthread_t t[4];
    char err[ERRLEN];
    const char *full = "mode: warn\ninstanceTypes: {p5.48xlarge: {efa: 16}}\n";

    restore_published();
    __atomic_store_n(&stop_readers, 0, __ATOMIC_RELAXED);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, reader, NULL), 0);
    for (int i = 0; i < 60; i++) {
        struct tg_policy *p = i % 2 ? tg_policy_new_default()
                                    : tg_policy_load_yaml(full, strlen(full), "t", err, sizeof err);
        ck_assert_ptr_nonnull(p);
        tg_policy_publish(p);
    }
    __atomic_store_n(&stop_readers, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    restore_published();
}
END_TEST

Suite *tg_test_policy_suite(void);
/* Without rulesVersion the effective actions are the policy's as written, and the catalogue's
 * defaults for the rules past its list. */
START_TEST(effective_actions_without_rules_version)
{
    struct tg_policy *p = tg_policy_new_default();
    enum tg_action out[TG_RULE_COUNT];
    ck_assert_ptr_null(p->rules_version);
    for (size_t n = 0; n <= 3; n++) {
        size_t keep = p->nactions;
        p->nactions = n == 3 ? keep : n;
        for (size_t i = 0; i < TG_RULE_COUNT; i++)
            p->actions[i] = i % 2 ? TG_ACTION_OFF : TG_ACTION_WARN; /* unlike the defaults */
        tg_policy_effective_actions(p, out);
        for (size_t i = 0; i < TG_RULE_COUNT; i++)
            ck_assert_int_eq(out[i],
                             i < p->nactions ? p->actions[i] : tg_rule_defs[i].default_action);
        p->nactions = keep;
    }
    tg_policy_unref(p);
}
END_TEST

Suite *tg_test_policy_suite(void)
{
    Suite *s = suite_create("policy");
    TCase *tc = tcase_create("default");
    tcase_add_test(tc, default_has_catalogue_rule_actions);
    tcase_add_test(tc, catalogue_rows_are_complete);
    tcase_add_test(tc, default_has_spec_namespaces_zones_and_env);
    tcase_add_test(tc, default_has_instance_table);
    tcase_add_test(tc, embedded_default_round_trips);
    tcase_add_test(tc, embedded_default_lists_every_rule);
    suite_add_tcase(s, tc);

    tc = tcase_create("keys");
    tcase_add_test(tc, each_key_applies);
    tcase_add_test(tc, instance_types_merge_per_field);
    tcase_add_test(tc, missing_keys_keep_defaults);
    tcase_add_test(tc, lists_replace_defaults);
    tcase_add_test(tc, scalars_are_typed_by_the_schema);
    suite_add_tcase(s, tc);

    tc = tcase_create("errors");
    scan_bad_fixtures();
    tcase_add_test(tc, bad_fixtures_are_found);
    tcase_add_loop_test(tc, bad_fixture_reports_line_column_and_path, 0, nbad);
    tcase_add_test(tc, reports_every_error_in_order);
    tcase_add_test(tc, errors_are_capped);
    tcase_add_test(tc, small_or_null_error_buffer_is_safe);
    tcase_add_test(tc, invalid_utf8_names_its_position);
    tcase_add_test(tc, nul_byte_in_text_is_an_error);
    tcase_add_test(tc, messages_cut_long_text_on_utf8_boundaries);
    tcase_add_test(tc, file_errors_name_the_file);
    tcase_add_test(tc, policy_command_exit_codes);
    suite_add_tcase(s, tc);

    tc = tcase_create("reload");
    tcase_add_test(tc, reload_takes_good_and_keeps_old_on_bad);
    tcase_add_test(tc, poller_follows_configmap_swaps);
    tcase_add_test(tc, reload_request_wakes_the_thread);
    tcase_add_test(tc, policy_sha256_follows_the_bytes_in_force);
    tcase_add_test(tc, sha256_hex_known_answers);
    tcase_add_test(tc, mode_override_survives_reloads);
    tcase_add_test(tc, reloader_start_errors);
    tcase_add_test(tc, reader_keeps_old_snapshot_across_swap);
    tcase_add_test(tc, concurrent_readers_and_publishes);
    tcase_add_test(tc, effective_actions_without_rules_version);
    suite_add_tcase(s, tc);
    return s;
}
