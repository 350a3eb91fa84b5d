/* catalogue_gen.c -- prints the tables generated from the rule and kind catalogue (make catalogue):
 *
 *   catalogue_gen policy-rules          the `rules:` block of the default policy
 *   catalogue_gen rule-table [PREFIX..] a markdown rule table (all rules, or those of the prefixes)
 *   catalogue_gen kind-table            the markdown table of kinds and API versions
 *   catalogue_gen webhook-rules validate|mutate [chart]
 *                                       the `rules:` of a webhook (chart: operations from values)
 *   catalogue_gen match-conditions validate|mutate [json]
 *                                       the webhook's `matchConditions` prefilter (CEL), as YAML
 *                                       list items or (json) the registered resources and an
 *                                       array of {name, expression}
 *
 * scripts/catalogue.sh splices the output between BEGIN/END GENERATED markers in the checked-in
 * files, and `make check` fails when a checked-in copy differs from it. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
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

/* ---- webhook registration ------------------------------------------------------------------ */

/* The generator runs once and exits: the strings built below are never freed. */
static char *xfmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xfmt(const char *fmt, ...)
{
    char *out;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&out, fmt, ap) < 0) {
        fputs("catalogue_gen: out of memory\n", stderr);
        exit(1);
    }
    va_end(ap);
    return out;
}

enum hook { HOOK_VALIDATE, HOOK_MUTATE };

/* The triggers that make an object of kind k interesting to webhook h: the rules (and the
 * prefilter rows) of k for /validate, its mutators for /mutate. 0 when nothing acts on k. */
static unsigned kind_triggers(enum hook h, enum tg_kind k, bool *any)
{
    unsigned bit = TG_KIND_BIT(k), t = 0;
    *any = false;
    if (h == HOOK_MUTATE) {
        for (size_t i = 0; i < tg_mutator_def_count; i++) {
            if (tg_mutator_defs[i].kinds & bit) {
                t |= tg_mutator_defs[i].triggers;
                *any = true;
            }
        }
        return t;
    }
    for (size_t i = 0; i < tg_rule_count; i++) {
        if (tg_rule_defs[i].kinds & bit) {
            t |= tg_rule_defs[i].triggers;
            *any = true;
        }
    }
    for (size_t i = 0; *any && i < tg_prefilter_def_count; i++) {
        if (tg_prefilter_defs[i].kinds & bit)
            t |= tg_prefilter_defs[i].triggers;
    }
    return t;
}

/* The first API row of each (group, resource) a webhook registers, in kinds.def order; `versions`
 * lists every version registered under it. */
static bool first_of_resource(size_t i)
{
    const struct tg_api_def *a = &tg_api_defs[i];
    for (size_t j = 0; j < i; j++) {
        if (!strcmp(tg_api_defs[j].group, a->group) &&
            !strcmp(tg_api_defs[j].resource, a->resource))
            return false;
    }
    return true;
}

static void api_versions(size_t i, char *buf, size_t len)
{
    const struct tg_api_def *a = &tg_api_defs[i];
    size_t at = 0;
    buf[0] = '\0';
    for (size_t j = i; j < tg_api_count && at < len; j++) {
        const struct tg_api_def *b = &tg_api_defs[j];
        if (strcmp(b->group, a->group) || strcmp(b->resource, a->resource))
            continue;
        at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "",
                               b->version ? b->version : "\"*\"");
    }
}

/* Is the API row i registered in webhook h? */
static bool registered(enum hook h, size_t i)
{
    bool any;
    if (!tg_api_defs[i].resource[0] || !first_of_resource(i))
        return false;
    kind_triggers(h, tg_api_defs[i].kind, &any);
    return any;
}

static void webhook_rules(enum hook h, bool chart)
{
    char versions[256];
    for (size_t i = 0; i < tg_api_count; i++) {
        const struct tg_api_def *a = &tg_api_defs[i];
        const char *ops;
        if (!registered(h, i))
            continue;
        api_versions(i, versions, sizeof(versions));
        if (h == HOOK_MUTATE)
            ops = chart ? "{{ toJson $.Values.webhook.mutateOperations }}" : "[CREATE]";
        else if (tg_kind_update_immutable(a->kind))
            ops = chart ? "{{ toJson $.Values.webhook.podOperations }}" : "[CREATE]";
        else if (tg_kind_create_only(a->kind))
            ops = "[CREATE]";
        else
            ops = chart ? "{{ toJson $.Values.webhook.crdOperations }}" : "[CREATE, UPDATE]";
        printf("      - apiGroups: [\"%s\"]\n", a->group);
        printf("        apiVersions: [%s]\n", versions);
        printf("        resources: [%s]\n", a->resource);
        printf("        operations: %s\n", ops);
        printf("        scope: %s\n", a->scope == TG_SCOPE_CLUSTER ? "Cluster" : "Namespaced");
    }
}

/* ---- the matchConditions prefilter (CEL) ----------------------------------------------------
 * Each condition is an implication for one kind: "not this resource, or something a rule acts
 * on". The API server calls the webhook only when every condition is true, so the conditions
 * together let through exactly the objects of each kind that one of its rules can act on; kinds
 * with a T(ALWAYS) rule, and kinds with no TG_TEMPLATE row, get no condition (they always pass). Nothing may error (an error falls under the
 * failurePolicy, which for Ignore skips the webhook): every field is read behind has(), and a
 * value of the wrong JSON type (which a rule would report as object.invalid-field) lets the
 * object through, while null counts as absent. The API server hands `object` to CEL untyped (dyn,
 * the unstructured form: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/
 * cel/compile.go createEnvForOpts), so `type(x) == map` tells a JSON object from the rest; when a
 * condition fails or errors the matcher skips the webhook under Ignore and fails the request
 * under Fail (.../plugin/webhook/matchconditions/matcher.go). */

/* e is a map: body; null: false; any other type: true. */
static char *cel_map(const char *e, const char *body)
{
    return xfmt("(type(%s) == map ? (%s) : type(%s) != null_type)", e, body, e);
}

/* e is a list: body holds for one element v; null: false; any other type: true. */
static char *cel_list(const char *e, const char *v, const char *body)
{
    return xfmt("(type(%s) == list ? %s.exists(%s, %s) : type(%s) != null_type)", e, e, v, body,
                e);
}

static char *cel_str(const char *e, const char *body)
{
    return xfmt("(type(%s) == string ? (%s) : type(%s) != null_type)", e, body, e);
}

/* m (a map) has field f, and make(m.f) holds for it. */
static char *cel_field(const char *m, const char *f, char *(*make)(const char *e, unsigned t),
                       unsigned t)
{
    char *e = xfmt("%s.%s", m, f);
    char *body = make(e, t);
    return body ? xfmt("(has(%s) && %s)", e, body) : NULL;
}

/* Joins the non-NULL alternatives with ||; NULL when there are none. */
static char *cel_any(char **alt, size_t n, const char *sep)
{
    char *out = NULL;
    for (size_t i = 0; i < n; i++) {
        if (alt[i])
            out = out ? xfmt("%s%s%s", out, sep, alt[i]) : alt[i];
    }
    return out;
}

/* `x == 'a' || x == 'b'` (or startsWith / contains) over a NULL-terminated word list. */
static char *cel_words(const char *x, const char *op, const char *const *words)
{
    char *out = NULL;
    for (size_t i = 0; words[i]; i++) {
        char *one = !strcmp(op, "==") ? xfmt("%s == '%s'", x, words[i])
                                      : xfmt("%s.%s('%s')", x, op, words[i]);
        out = out ? xfmt("%s || %s", out, one) : one;
    }
    return out;
}

/* Resource names a container requests for the resource triggers in t (keys of limits/requests). */
static char *resource_key_pred(const char *r, unsigned t)
{
    char *alt[4] = {NULL};
    if (t & TG_TRIGGER_EFA)
        alt[0] = xfmt("%s == 'vpc.amazonaws.com/efa'", r);
    if (t & TG_TRIGGER_GPU)
        alt[1] = xfmt("%s == 'nvidia.com/gpu'", r);
    if (t & TG_TRIGGER_NEURON) /* neuron, neuroncore, neurondevice */
        alt[2] = xfmt("%s.startsWith('aws.amazon.com/neuron')", r);
    if (t & TG_TRIGGER_HUGEPAGES)
        alt[3] = xfmt("%s.startsWith('hugepages-')", r);
    return cel_any(alt, 4, " || ");
}

static char *resource_map(const char *e, unsigned t)
{
    char *keys = resource_key_pred("r", t);
    return keys ? cel_map(e, xfmt("%s.exists(r, %s)", e, keys)) : NULL;
}

static char *nonempty_list(const char *e, unsigned t)
{
    (void)t;
    return xfmt("(type(%s) == list ? size(%s) > 0 : type(%s) != null_type)", e, e, e);
}

static char *resources_pred(const char *e, unsigned t)
{
    char *alt[3] = {cel_field(e, "limits", resource_map, t),
                    cel_field(e, "requests", resource_map, t),
                    t & TG_TRIGGER_DRA ? cel_field(e, "claims", nonempty_list, t) : NULL};
    char *any = cel_any(alt, 3, " || ");
    return any ? cel_map(e, any) : NULL;
}

static char *env_pred(const char *e, unsigned t)
{
    if (!(t & TG_TRIGGER_FABRIC_ENV))
        return NULL;
    char *name = cel_str("e.name", cel_words("e.name", "startsWith", tg_fabric_env_prefixes));
    return cel_list(e, "e", cel_map("e", xfmt("has(e.name) && %s", name)));
}

/* A command or args list: a launcher word, or (T(FABRIC_ENV)) FI_ / NCCL_ set on the line. */
static char *words_pred(const char *e, unsigned t)
{
    char *alt[2] = {NULL};
    if (t & TG_TRIGGER_LAUNCH)
        alt[0] = cel_words("w", "contains", tg_launch_words);
    if (t & TG_TRIGGER_FABRIC_ENV)
        alt[1] = cel_words("w", "contains", tg_fabric_env_prefixes);
    char *any = cel_any(alt, 2, " || ");
    return any ? cel_list(e, "w", cel_str("w", any)) : NULL;
}

/* A container. A CONTAINER-shaped template (NodeSet's slurmd, a TrainJob's trainer) may state its
 * resources per node (Kubeflow Trainer: trainer.resourcesPerNode) instead of `resources`. */
static char *container_like(const char *c, unsigned t, bool per_node)
{
    char *alt[5] = {cel_field(c, "resources", resources_pred, t), cel_field(c, "env", env_pred, t),
                    cel_field(c, "command", words_pred, t), cel_field(c, "args", words_pred, t),
                    per_node ? cel_field(c, "resourcesPerNode", resources_pred, t) : NULL};
    char *any = cel_any(alt, 5, " || ");
    return any ? cel_map(c, any) : NULL;
}

static char *container_pred(const char *c, unsigned t)
{
    return container_like(c, t, false);
}

static char *containers_pred(const char *e, unsigned t)
{
    char *c = container_pred("c", t);
    return c ? cel_list(e, "c", c) : NULL;
}

static char *hostpath_pred(const char *e, unsigned t)
{
    (void)t;
    char *path = xfmt("%s.path", e);
    return cel_map(e, xfmt("has(%s) && %s", path, cel_str(path, xfmt("%s.contains('infiniband')",
                                                                       path))));
}

static char *volume_pred(const char *v, unsigned t)
{
    return cel_map(v, cel_field(v, "hostPath", hostpath_pred, t));
}

static char *volumes_pred(const char *e, unsigned t)
{
    return t & TG_TRIGGER_INFINIBAND ? cel_list(e, "v", volume_pred("v", t)) : NULL;
}

static char *podspec_pred(const char *s, unsigned t)
{
    char *alt[4] = {cel_field(s, "containers", containers_pred, t),
                    cel_field(s, "initContainers", containers_pred, t),
                    cel_field(s, "volumes", volumes_pred, t),
                    t & TG_TRIGGER_DRA ? cel_field(s, "resourceClaims", nonempty_list, t) : NULL};
    char *any = cel_any(alt, 4, " ||\n          ");
    return any ? cel_map(s, any) : NULL;
}

/* Label or annotation keys of one metadata map (e: its labels or annotations). */
static char *meta_keys(const char *e, unsigned t)
{
    char *alt[3] = {NULL};
    if (t & TG_TRIGGER_GANG)
        alt[0] = cel_words("k", "==", tg_gang_keys);
    if (t & TG_TRIGGER_QUEUE)
        alt[1] = cel_words("k", "==", tg_queue_keys);
    if (t & TG_TRIGGER_EXEMPT)
        alt[2] = xfmt("k == '%s'", TG_EXEMPT_ANNOTATION);
    char *any = cel_any(alt, 3, " || ");
    return any ? cel_map(e, xfmt("%s.exists(k, %s)", e, any)) : NULL;
}

/* T(EXEMPT) is read on the object's own metadata only (SPEC 12). */
static char *meta_pred(const char *m, unsigned t)
{
    char *alt[2] = {cel_field(m, "annotations", meta_keys, t),
                    cel_field(m, "labels", meta_keys, t & ~TG_TRIGGER_EXEMPT)};
    char *any = cel_any(alt, 2, " || ");
    return any ? cel_map(m, any) : NULL;
}

static char *template_pred(const char *e, enum tg_template_shape shape, unsigned t)
{
    if (shape == TG_SHAPE_PODSPEC)
        return podspec_pred(e, t);
    if (shape == TG_SHAPE_CONTAINER)
        return container_like(e, t, true);
    char *alt[2] = {cel_field(e, "metadata", meta_pred, t & ~TG_TRIGGER_EXEMPT),
                    cel_field(e, "spec", podspec_pred, t)};
    char *any = cel_any(alt, 2, " || ");
    return any ? cel_map(e, any) : NULL;
}

/* Walks a kinds.def template path from e ("spec.tasks[*].template"): a name selects a field, `*`
 * every value of a map, `[*]` every element of a list. */
static char *walk(const char *e, const char *path, enum tg_template_shape shape, unsigned t,
                  int depth)
{
    char seg[64];
    size_t n = strcspn(path, ".[");
    const char *rest = path + n;
    if (!*path)
        return template_pred(e, shape, t);
    if (!strncmp(path, "[*]", 3)) {
        char *v = xfmt("t%d", depth);
        char *body = walk(v, path[3] == '.' ? path + 4 : path + 3, shape, t, depth + 1);
        return body ? cel_list(e, v, body) : NULL;
    }
    if (*rest == '.')
        rest++;
    if (n == 1 && *path == '*') {
        char *k = xfmt("t%d", depth);
        char *body = walk(xfmt("%s[%s]", e, k), rest, shape, t, depth + 1);
        return body ? cel_map(e, xfmt("%s.exists(%s, %s)", e, k, body)) : NULL;
    }
    if (n == 0 || n >= sizeof(seg)) {
        fprintf(stderr, "catalogue_gen: bad template path \"%s\"\n", path);
        exit(1);
    }
    memcpy(seg, path, n);
    seg[n] = '\0';
    char *f = xfmt("%s.%s", e, seg);
    char *body = walk(f, rest, shape, t, depth);
    return body ? cel_map(e, xfmt("has(%s) && %s", f, body)) : NULL;
}

static void trigger_names(unsigned t, char *buf, size_t len)
{
    static const char *const names[] = {"always", "EFA", "GPU", "Neuron", "DRA claims",
                                        "FI_*/NCCL_* env", "a launcher in command/args",
                                        "gang keys", "/dev/infiniband hostPath",
                                        "Kueue queue", "hugepages", "exempt-rules annotation"};
    size_t at = 0;
    buf[0] = '\0';
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && at < len; i++) {
        if (t & (1u << i))
            at += (size_t)snprintf(buf + at, len - at, "%s%s", at ? ", " : "", names[i]);
    }
}

/* The API server's limits on matchConditions (kubernetes/kubernetes:
 * pkg/apis/admissionregistration/validation/validation.go validateMatchConditions): at most 64
 * per webhook, each name a qualified name. The validation sets no length of its own; the CEL
 * parser's default limit is 100,000 code points (cel-go parser ExpressionSizeCodePointLimit), and
 * 32 KiB is the margin checked here (a JobSet's nested template path is the longest today). */
#define MAX_CONDITIONS 64
#define MAX_EXPRESSION 32768

static void json_string_out(const char *s)
{
    putchar('"');
    for (; *s; s++) {
        if (*s == '"' || *s == '\\')
            printf("\\%c", *s);
        else if (*s == '\n')
            fputs("\\n", stdout);
        else
            putchar(*s);
    }
    putchar('"');
}

static void print_condition(const struct tg_api_def *a, unsigned t, bool json, size_t nth)
{
    char names[256];
    char *alt[16] = {NULL};
    size_t n = 0;
    char *name = xfmt("%s%s%s", a->resource, a->group[0] ? "." : "", a->group);
    char *meta = cel_field("object", "metadata", meta_pred, t);
    alt[n++] = meta ? cel_map("object", meta) : NULL;
    for (size_t i = 0; i < tg_template_def_count && n < 16; i++) {
        if (tg_template_defs[i].kind == a->kind)
            alt[n++] = walk("object", tg_template_defs[i].path, tg_template_defs[i].shape, t, 0);
    }
    char *any = cel_any(alt, n, " ||\n          ");
    char *expr = xfmt("!(request.resource.group == '%s' && request.resource.resource == '%s') ||\n"
                      "          %s",
                      a->group, a->resource, any ? any : "false");
    if (strlen(name) > 63 || strlen(expr) > MAX_EXPRESSION) {
        fprintf(stderr, "catalogue_gen: matchCondition %s is too long\n", name);
        exit(1);
    }
    if (json) {
        printf("%s{\"name\": \"%s\", \"expression\": ", nth ? ",\n " : "", name);
        json_string_out(expr);
        printf("}");
        return;
    }
    trigger_names(t, names, sizeof(names));
    printf("      # %s: only objects with %s\n", tg_kind_defs[a->kind].display, names);
    printf("      - name: %s\n        expression: |-\n          %s\n", name, expr);
}

/* json: {"resources": {"<resource>[.<group>]": [operations]}, "conditions": [...]}, for the tests
 * that evaluate the conditions (tests/cel). */
static void json_resources(enum hook h)
{
    size_t n = 0;
    printf("{\"resources\": {");
    for (size_t i = 0; i < tg_api_count; i++) {
        const struct tg_api_def *a = &tg_api_defs[i];
        if (!registered(h, i))
            continue;
        printf("%s\"%s%s%s\": %s", n++ ? ", " : "", a->resource, a->group[0] ? "." : "", a->group,
               h == HOOK_VALIDATE && !tg_kind_update_immutable(a->kind) &&
                       !tg_kind_create_only(a->kind)
                   ? "[\"CREATE\", \"UPDATE\"]"
                   : "[\"CREATE\"]");
    }
    printf("},\n \"conditions\": [");
}

/* Does kind k say where its pod templates are? A kind without any (NodePool, a Slurm Controller)
 * offers nothing to filter on but its metadata, so it gets no condition: every object passes. */
static bool has_templates(enum tg_kind k)
{
    for (size_t i = 0; i < tg_template_def_count; i++) {
        if (tg_template_defs[i].kind == k)
            return true;
    }
    return false;
}

static int match_conditions(enum hook h, bool json)
{
    size_t count = 0;
    if (json)
        json_resources(h);
    for (size_t i = 0; i < tg_api_count; i++) {
        bool any;
        unsigned t = kind_triggers(h, tg_api_defs[i].kind, &any);
        if (!registered(h, i) || (t & TG_TRIGGER_ALWAYS) || !has_templates(tg_api_defs[i].kind))
            continue;
        if (++count > MAX_CONDITIONS) {
            fprintf(stderr, "catalogue_gen: more than %d matchConditions\n", MAX_CONDITIONS);
            return 1;
        }
        print_condition(&tg_api_defs[i], t, json, count - 1);
    }
    if (json)
        puts("]}");
    return 0;
}

static int parse_hook(const char *s, enum hook *h)
{
    if (s && !strcmp(s, "validate"))
        *h = HOOK_VALIDATE;
    else if (s && !strcmp(s, "mutate"))
        *h = HOOK_MUTATE;
    else
        return -1;
    return 0;
}

int main(int argc, char **argv)
{
    enum hook h;
    if (argc >= 2 && !strcmp(argv[1], "policy-rules"))
        policy_rules();
    else if (argc >= 2 && !strcmp(argv[1], "rule-table"))
        rule_table(argc - 2, argv + 2);
    else if (argc == 2 && !strcmp(argv[1], "kind-table"))
        kind_table();
    else if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "webhook-rules") &&
             !parse_hook(argv[2], &h) && (argc == 3 || !strcmp(argv[3], "chart")))
        webhook_rules(h, argc == 4);
    else if (argc >= 3 && argc <= 4 && !strcmp(argv[1], "match-conditions") &&
             !parse_hook(argv[2], &h) && (argc == 3 || !strcmp(argv[3], "json"))) {
        if (match_conditions(h, argc == 4))
            return 1;
    } else {
        fprintf(stderr, "usage: catalogue_gen policy-rules | rule-table [PREFIX...] | kind-table |\n"
                        "       webhook-rules validate|mutate [chart] |\n"
                        "       match-conditions validate|mutate [json]\n");
        return 2;
    }
    return ferror(stdout) ? 1 : 0;
}
