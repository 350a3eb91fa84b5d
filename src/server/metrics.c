/* metrics.c -- fixed-size atomic counters for the server and their Prometheus text exposition. */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tg/dnsname.h"
#include "tg/metrics.h"
#include "tg/procstat.h"

/* Kinds of SPEC sections 3 and 11 plus the misspelt kind nodeset.kind reports. A fixed list keeps
 * the label set bounded whatever the API server sends. */
static const char *const kind_names[] = {"Pod",   "MPIJob",       "NodeSet",  "PodGroup",
                                         "Job",   "SlurmNodeSet", "NodePool", "Controller",
                                         "other", "unknown"};
#define NKINDS (sizeof(kind_names) / sizeof(kind_names[0]))
#define KIND_OTHER 8
#define KIND_UNKNOWN 9

static const char *const op_names[] = {"CREATE", "UPDATE", "DELETE", "CONNECT", "unknown"};
#define NOPS (sizeof(op_names) / sizeof(op_names[0]))
#define OP_UNKNOWN 4

static const char *const ep_names[TG_EP_COUNT] = {"validate", "mutate"};
static const char *const verdict_names[TG_VERDICT_COUNT] = {"allowed", "denied", "error"};
static const char *const action_names[TG_MACTION_COUNT] = {"deny", "warn", "audit"};
static const char *const result_names[TG_RESULT_COUNT] = {"success", "failure"};

/* Latency buckets from 100us to 1s: the pipeline alone takes tens of microseconds, and the API
 * server's default webhook timeout is 10s, so anything near 1s is already an incident. */
static const double bucket_bounds[] = {0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01,
                                       0.025,  0.05,    0.1,    0.25,  0.5,    1.0};
static const char *const bucket_labels[] = {"0.0001", "0.00025", "0.0005", "0.001", "0.0025",
                                            "0.005",  "0.01",    "0.025",  "0.05",  "0.1",
                                            "0.25",   "0.5",     "1"};
#define NBUCKETS (sizeof(bucket_bounds) / sizeof(bucket_bounds[0]))

static const int error_codes[] = {400, 401, 403, 404, 405, 408, 413, 415, 500, 503};
#define NCODES (sizeof(error_codes) / sizeof(error_codes[0]))

struct histogram {
    atomic_ullong buckets[NBUCKETS]; /* non-cumulative; summed when rendered */
    atomic_ullong count;
    atomic_ullong sum_ns;
};

static struct {
    atomic_ullong requests[TG_EP_COUNT][NKINDS][NOPS][TG_VERDICT_COUNT];
    struct histogram duration[TG_EP_COUNT];
    atomic_ullong patches[NKINDS];
    atomic_ullong policy_reloads[TG_RESULT_COUNT];
    atomic_ullong cert_reloads[TG_RESULT_COUNT];
    atomic_llong cert_expiry;
    atomic_ullong http_errors[NCODES + 1]; /* last: other */
    atomic_long inflight;
    atomic_ullong ratcheted;
    atomic_bool policy_ok, cert_ok;
} m;

/* trainguard_policy_info: copied in at scrape time, read by the renderer, under info_lock. */
static pthread_mutex_t info_lock = PTHREAD_MUTEX_INITIALIZER;
static char info_mode[16], info_sha[72];

/* Findings by namespace (--metrics-namespace-label): an open-addressing table of namespaces, each
 * with its own [rule][action] counters. Entries are only added (under ns_lock) and live until
 * tg_metrics_release; counting is an atomic add after the lookup. */
#define NS_SLOTS 4096 /* a power of two, over twice TG_METRICS_MAX_NAMESPACES + 1 */
#define NS_OTHER "_other"
struct ns_entry {
    char name[64];         /* a namespace name is at most 63 characters */
    atomic_ullong *counts; /* [nrule_defs][TG_MACTION_COUNT]; NULL: free slot */
};
static pthread_mutex_t ns_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ns_entry *ns_table;
static unsigned short ns_order[TG_METRICS_MAX_NAMESPACES + 1]; /* slots, in insertion order */
static size_t ns_used;

static const struct tg_rule_def *rule_defs;
static size_t nrule_defs;
static atomic_ullong *findings;   /* [nrule_defs][TG_MACTION_COUNT] */
static atomic_ullong *exemptions; /* [nrule_defs] */
static char build_version[64];

int tg_metrics_init(const struct tg_rule_def *rules, size_t nrules, const char *version)
{
    atomic_ullong *f = NULL, *x = NULL;

    if (nrules > 0) {
        f = calloc(nrules * TG_MACTION_COUNT, sizeof(*f));
        x = calloc(nrules, sizeof(*x));
        if (!f || !x) {
            free(f);
            free(x);
            return -ENOMEM;
        }
    }
    tg_metrics_release();
    memset(&m, 0, sizeof(m));
    atomic_store(&m.policy_ok, true);
    atomic_store(&m.cert_ok, true);
    findings = f;
    exemptions = x;
    rule_defs = rules;
    nrule_defs = nrules;
    snprintf(build_version, sizeof(build_version), "%s", version ? version : "unknown");
    return 0;
}

static void ns_release(void)
{
    pthread_mutex_lock(&ns_lock);
    for (size_t i = 0; ns_table && i < NS_SLOTS; i++)
        free(ns_table[i].counts);
    free(ns_table);
    ns_table = NULL;
    ns_used = 0;
    pthread_mutex_unlock(&ns_lock);
}

void tg_metrics_release(void)
{
    ns_release();
    tg_metrics_policy_info(NULL, NULL);
    free(findings);
    findings = NULL;
    free(exemptions);
    exemptions = NULL;
    rule_defs = NULL;
    nrule_defs = 0;
}

int tg_metrics_kind_index(const char *kind)
{
    if (!kind)
        return KIND_UNKNOWN;
    for (int i = 0; i < KIND_OTHER; i++) {
        if (!strcmp(kind, kind_names[i]))
            return i;
    }
    return KIND_OTHER;
}

int tg_metrics_op_index(const char *op)
{
    if (!op)
        return OP_UNKNOWN;
    for (int i = 0; i < OP_UNKNOWN; i++) {
        if (!strcmp(op, op_names[i]))
            return i;
    }
    return OP_UNKNOWN;
}

static bool in_range(int i, size_t n)
{
    return i >= 0 && (size_t)i < n;
}

void tg_metrics_admission(enum tg_metric_endpoint ep, int kind_index, int op_index,
                          enum tg_metric_verdict v, double seconds)
{
    if (!in_range((int)ep, TG_EP_COUNT) || !in_range(kind_index, NKINDS) ||
        !in_range(op_index, NOPS) || !in_range((int)v, TG_VERDICT_COUNT))
        return;
    atomic_fetch_add_explicit(&m.requests[ep][kind_index][op_index][v], 1, memory_order_relaxed);

    struct histogram *h = &m.duration[ep];
    size_t b = 0;
    while (b < NBUCKETS && seconds > bucket_bounds[b])
        b++;
    if (b < NBUCKETS)
        atomic_fetch_add_explicit(&h->buckets[b], 1, memory_order_relaxed);
    if (seconds < 0)
        seconds = 0;
    atomic_fetch_add_explicit(&h->sum_ns, (unsigned long long)(seconds * 1e9),
                              memory_order_relaxed);
    atomic_fetch_add_explicit(&h->count, 1, memory_order_relaxed);
}

enum tg_metric_action tg_metrics_action_for(enum tg_mode mode, enum tg_action action)
{
    if (mode == TG_MODE_AUDIT)
        return TG_MACTION_AUDIT;
    if (mode == TG_MODE_ENFORCE && action == TG_ACTION_DENY)
        return TG_MACTION_DENY;
    return TG_MACTION_WARN;
}

int tg_metrics_namespace_label(void)
{
    struct ns_entry *t = calloc(NS_SLOTS, sizeof(*t));

    if (!t)
        return -ENOMEM;
    ns_release();
    pthread_mutex_lock(&ns_lock);
    ns_table = t;
    pthread_mutex_unlock(&ns_lock);
    return 0;
}

/* A Kubernetes namespace name (a DNS-1123 label), or "" for cluster-scoped objects: only such
 * names become label values, so no value needs escaping and a forged review cannot make one. */
static bool ns_name_ok(const char *ns)
{
    return !*ns || tg_dns1123_label(ns);
}

/* The counters of namespace ns; when it is new and room is left (add), added. Caller holds
 * ns_lock. NULL when absent (or on ENOMEM). */
static atomic_ullong *ns_counts_locked(const char *ns, bool add)
{
    unsigned long long h = 14695981039346656037ULL;
    size_t slot;

    for (const char *p = ns; *p; p++)
        h = (h ^ (unsigned char)*p) * 1099511628211ULL;
    slot = (size_t)h & (NS_SLOTS - 1);
    while (ns_table[slot].counts) {
        if (!strcmp(ns_table[slot].name, ns))
            return ns_table[slot].counts;
        slot = (slot + 1) & (NS_SLOTS - 1);
    }
    if (!add)
        return NULL;
    ns_table[slot].counts = calloc(nrule_defs * TG_MACTION_COUNT, sizeof(atomic_ullong));
    if (!ns_table[slot].counts)
        return NULL;
    snprintf(ns_table[slot].name, sizeof(ns_table[slot].name), "%s", ns);
    ns_order[ns_used++] = (unsigned short)slot;
    return ns_table[slot].counts;
}

static atomic_ullong *ns_counts(const char *ns)
{
    atomic_ullong *c = NULL;

    if (!ns)
        ns = "";
    pthread_mutex_lock(&ns_lock);
    if (ns_table) {
        if (ns_name_ok(ns))
            c = ns_counts_locked(ns, ns_used < TG_METRICS_MAX_NAMESPACES);
        /* _other takes what is no namespace name or does not fit (the last place is its) */
        if (!c)
            c = ns_counts_locked(NS_OTHER, true);
    }
    pthread_mutex_unlock(&ns_lock);
    return c;
}

void tg_metrics_finding(int rule_index, enum tg_metric_action a, const char *ns)
{
    atomic_ullong *c = findings;

    if (!findings || !in_range(rule_index, nrule_defs) || !in_range((int)a, TG_MACTION_COUNT))
        return;
    if (ns_table && !(c = ns_counts(ns)))
        return;
    atomic_fetch_add_explicit(&c[(size_t)rule_index * TG_MACTION_COUNT + a], 1,
                              memory_order_relaxed);
}

void tg_metrics_exemption(int rule_index)
{
    if (exemptions && in_range(rule_index, nrule_defs))
        atomic_fetch_add_explicit(&exemptions[rule_index], 1, memory_order_relaxed);
}

void tg_metrics_ratcheted(size_t n)
{
    atomic_fetch_add_explicit(&m.ratcheted, n, memory_order_relaxed);
}

void tg_metrics_patch(int kind_index)
{
    if (in_range(kind_index, NKINDS))
        atomic_fetch_add_explicit(&m.patches[kind_index], 1, memory_order_relaxed);
}

void tg_metrics_policy_reloads(unsigned long long ok, unsigned long long failed)
{
    atomic_store(&m.policy_reloads[TG_RESULT_SUCCESS], ok);
    atomic_store(&m.policy_reloads[TG_RESULT_FAILURE], failed);
}

void tg_metrics_cert_reload(enum tg_metric_result r)
{
    if (in_range((int)r, TG_RESULT_COUNT))
        atomic_fetch_add(&m.cert_reloads[r], 1);
}

void tg_metrics_reload_state(bool policy_ok, bool certificate_ok)
{
    atomic_store(&m.policy_ok, policy_ok);
    atomic_store(&m.cert_ok, certificate_ok);
}

/* Label values of policy_info: a mode name and hex digits; anything else is dropped. */
static bool info_value_ok(const char *v)
{
    for (; *v; v++)
        if (!((*v >= 'a' && *v <= 'z') || (*v >= '0' && *v <= '9')))
            return false;
    return true;
}

void tg_metrics_policy_info(const char *mode, const char *sha256)
{
    pthread_mutex_lock(&info_lock);
    info_mode[0] = info_sha[0] = '\0';
    if (mode && sha256 && info_value_ok(mode) && info_value_ok(sha256)) {
        snprintf(info_mode, sizeof(info_mode), "%s", mode);
        snprintf(info_sha, sizeof(info_sha), "%s", sha256);
    }
    pthread_mutex_unlock(&info_lock);
}

void tg_metrics_cert_expiry(long long unix_seconds)
{
    atomic_store(&m.cert_expiry, unix_seconds);
}

void tg_metrics_http_error(int code)
{
    size_t i = 0;
    while (i < NCODES && error_codes[i] != code)
        i++;
    atomic_fetch_add_explicit(&m.http_errors[i], 1, memory_order_relaxed);
}

void tg_metrics_inflight_add(int delta)
{
    atomic_fetch_add(&m.inflight, delta);
}

long tg_metrics_inflight(void)
{
    return atomic_load(&m.inflight);
}

/* ---- exposition ------------------------------------------------------------------------ */

/* A growable string; on allocation failure it turns failed and stops growing. */
struct sbuf {
    char *s;
    size_t len, cap;
    bool failed;
};

static void sb_printf(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_printf(struct sbuf *b, const char *fmt, ...)
{
    va_list ap;

    if (b->failed)
        return;
    for (;;) {
        size_t room = b->cap - b->len;
        va_start(ap, fmt);
        int n = vsnprintf(b->s + b->len, room, fmt, ap);
        va_end(ap);
        if (n < 0) {
            b->failed = true;
            return;
        }
        if ((size_t)n < room) {
            b->len += (size_t)n;
            return;
        }
        size_t ncap = b->cap * 2 + (size_t)n;
        char *ns = realloc(b->s, ncap);
        if (!ns) {
            b->failed = true;
            return;
        }
        b->s = ns;
        b->cap = ncap;
    }
}

static void family(struct sbuf *b, const char *name, const char *type, const char *help)
{
    sb_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static unsigned long long load(atomic_ullong *a)
{
    return atomic_load_explicit(a, memory_order_relaxed);
}

static void render_requests(struct sbuf *b)
{
    family(b, "trainguard_admission_requests_total", "counter",
           "Admission reviews answered, by endpoint, object kind, operation and verdict.");
    for (size_t e = 0; e < TG_EP_COUNT; e++)
        for (size_t k = 0; k < NKINDS; k++)
            for (size_t o = 0; o < NOPS; o++)
                for (size_t v = 0; v < TG_VERDICT_COUNT; v++) {
                    unsigned long long n = load(&m.requests[e][k][o][v]);
                    /* Only series that happened: 240 zero lines would drown the page. */
                    if (n == 0)
                        continue;
                    sb_printf(b,
                              "trainguard_admission_requests_total{endpoint=\"%s\",kind=\"%s\","
                              "operation=\"%s\",verdict=\"%s\"} %llu\n",
                              ep_names[e], kind_names[k], op_names[o], verdict_names[v], n);
                }
}

static void render_duration(struct sbuf *b)
{
    family(b, "trainguard_admission_duration_seconds", "histogram",
           "Time from the first byte of an admission request to the queued response.");
    for (size_t e = 0; e < TG_EP_COUNT; e++) {
        struct histogram *h = &m.duration[e];
        unsigned long long cum = 0;
        /* Read count first: buckets only grow, so +Inf never undercuts the last bucket. */
        unsigned long long count = load(&h->count);
        for (size_t i = 0; i < NBUCKETS; i++) {
            cum += load(&h->buckets[i]);
            sb_printf(b,
                      "trainguard_admission_duration_seconds_bucket{endpoint=\"%s\",le=\"%s\"} "
                      "%llu\n",
                      ep_names[e], bucket_labels[i], cum);
        }
        if (count < cum)
            count = cum;
        sb_printf(b,
                  "trainguard_admission_duration_seconds_bucket{endpoint=\"%s\",le=\"+Inf\"} "
                  "%llu\n",
                  ep_names[e], count);
        sb_printf(b, "trainguard_admission_duration_seconds_sum{endpoint=\"%s\"} %.9f\n",
                  ep_names[e], (double)load(&h->sum_ns) / 1e9);
        sb_printf(b, "trainguard_admission_duration_seconds_count{endpoint=\"%s\"} %llu\n",
                  ep_names[e], count);
    }
}

static void render_findings_by_ns(struct sbuf *b)
{
    pthread_mutex_lock(&ns_lock);
    for (size_t i = 0; ns_table && i < ns_used; i++) {
        const struct ns_entry *e = &ns_table[ns_order[i]];
        for (size_t r = 0; r < nrule_defs; r++)
            for (size_t a = 0; a < TG_MACTION_COUNT; a++) {
                unsigned long long n = load(&e->counts[r * TG_MACTION_COUNT + a]);
                if (n)
                    sb_printf(b,
                              "trainguard_findings_total{rule=\"%s\",action=\"%s\","
                              "namespace=\"%s\"} %llu\n",
                              rule_defs[r].id, action_names[a], e->name, n);
            }
    }
    pthread_mutex_unlock(&ns_lock);
}

static void render_findings(struct sbuf *b)
{
    family(b, "trainguard_findings_total", "counter",
           "Rule findings, by rule id and the action taken after the mode (deny, warn, audit).");
    if (ns_table) {
        render_findings_by_ns(b);
        return;
    }
    for (size_t r = 0; findings && r < nrule_defs; r++)
        for (size_t a = 0; a < TG_MACTION_COUNT; a++) {
            unsigned long long n = load(&findings[r * TG_MACTION_COUNT + a]);
            if (n)
                sb_printf(b, "trainguard_findings_total{rule=\"%s\",action=\"%s\"} %llu\n",
                          rule_defs[r].id, action_names[a], n);
        }
}

static void render_exemptions(struct sbuf *b)
{
    family(b, "trainguard_exemptions_total", "counter",
           "Rules an object turned off for itself with trainguard.dev/exempt-rules, by rule id.");
    for (size_t r = 0; exemptions && r < nrule_defs; r++) {
        unsigned long long n = load(&exemptions[r]);
        if (n)
            sb_printf(b, "trainguard_exemptions_total{rule=\"%s\"} %llu\n", rule_defs[r].id, n);
    }
    family(b, "trainguard_ratcheted_findings_total", "counter",
           "Deny findings reported as warnings on UPDATE because the old object had them too.");
    sb_printf(b, "trainguard_ratcheted_findings_total %llu\n", load(&m.ratcheted));
}

static void render_small(struct sbuf *b)
{
    family(b, "trainguard_patches_total", "counter",
           "Mutate responses that returned a JSON patch, by object kind.");
    for (size_t k = 0; k < NKINDS; k++) {
        unsigned long long n = load(&m.patches[k]);
        if (n)
            sb_printf(b, "trainguard_patches_total{kind=\"%s\"} %llu\n", kind_names[k], n);
    }
    family(b, "trainguard_policy_reloads_total", "counter",
           "Policy reload attempts, by result (a failed reload keeps the old policy).");
    for (size_t r = 0; r < TG_RESULT_COUNT; r++)
        sb_printf(b, "trainguard_policy_reloads_total{result=\"%s\"} %llu\n", result_names[r],
                  load(&m.policy_reloads[r]));
    family(b, "trainguard_certificate_reloads_total", "counter",
           "Serving certificate reload attempts, by result (a failed reload keeps the old pair).");
    for (size_t r = 0; r < TG_RESULT_COUNT; r++)
        sb_printf(b, "trainguard_certificate_reloads_total{result=\"%s\"} %llu\n", result_names[r],
                  load(&m.cert_reloads[r]));
    family(b, "trainguard_certificate_expiry_timestamp_seconds", "gauge",
           "notAfter of the serving certificate in use, in seconds since the Unix epoch.");
    sb_printf(b, "trainguard_certificate_expiry_timestamp_seconds %lld\n",
              (long long)atomic_load(&m.cert_expiry));
    family(b, "trainguard_http_errors_total", "counter",
           "HTTP error responses on the webhook port, by status code.");
    for (size_t i = 0; i <= NCODES; i++) {
        unsigned long long n = load(&m.http_errors[i]);
        if (!n)
            continue;
        if (i < NCODES)
            sb_printf(b, "trainguard_http_errors_total{code=\"%d\"} %llu\n", error_codes[i], n);
        else
            sb_printf(b, "trainguard_http_errors_total{code=\"other\"} %llu\n", n);
    }
    family(b, "trainguard_inflight_requests", "gauge",
           "Admission requests being received or evaluated right now.");
    sb_printf(b, "trainguard_inflight_requests %ld\n", atomic_load(&m.inflight));
    family(b, "trainguard_build_info", "gauge", "Always 1; the version label names the build.");
    sb_printf(b, "trainguard_build_info{version=\"%s\"} 1\n", build_version);
}

static void render_reload_state(struct sbuf *b)
{
    family(b, "trainguard_policy_last_reload_successful", "gauge",
           "1 when the last policy load or reload succeeded, 0 from a failed one until one "
           "succeeds.");
    sb_printf(b, "trainguard_policy_last_reload_successful %d\n",
              atomic_load(&m.policy_ok) ? 1 : 0);
    family(b, "trainguard_certificate_last_reload_successful", "gauge",
           "1 when the last serving certificate reload succeeded, 0 from a failed one until one "
           "succeeds.");
    sb_printf(b, "trainguard_certificate_last_reload_successful %d\n",
              atomic_load(&m.cert_ok) ? 1 : 0);
    pthread_mutex_lock(&info_lock);
    if (info_sha[0]) {
        family(b, "trainguard_policy_info", "gauge",
               "Always 1; the labels name the mode and the SHA-256 of the policy in force.");
        sb_printf(b, "trainguard_policy_info{mode=\"%s\",sha256=\"%s\"} 1\n", info_mode, info_sha);
    }
    pthread_mutex_unlock(&info_lock);
}

/* The process_* metrics of Prometheus' client libraries, read from /proc now. */
static void render_process(struct sbuf *b)
{
    static const struct {
        const char *name, *type, *help;
        size_t off;
    } rows[] = {
        {"process_cpu_seconds_total", "counter", "Total user and system CPU time spent in seconds.",
         offsetof(struct tg_procstat, cpu_seconds)},
        {"process_resident_memory_bytes", "gauge", "Resident memory size in bytes.",
         offsetof(struct tg_procstat, resident_bytes)},
        {"process_virtual_memory_bytes", "gauge", "Virtual memory size in bytes.",
         offsetof(struct tg_procstat, virtual_bytes)},
        {"process_open_fds", "gauge", "Number of open file descriptors.",
         offsetof(struct tg_procstat, open_fds)},
        {"process_max_fds", "gauge", "Maximum number of open file descriptors.",
         offsetof(struct tg_procstat, max_fds)},
        {"process_start_time_seconds", "gauge",
         "Start time of the process since unix epoch in seconds.",
         offsetof(struct tg_procstat, start_time)},
    };
    struct tg_procstat ps;

    tg_procstat_read(&ps);
    for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
        double v = *(const double *)((const char *)&ps + rows[i].off);
        if (v < 0) /* could not be read: no sample rather than a wrong one */
            continue;
        family(b, rows[i].name, rows[i].type, rows[i].help);
        sb_printf(b, "%s %.15g\n", rows[i].name, v);
    }
}

char *tg_metrics_render(size_t *len)
{
    struct sbuf b = {.cap = 8192};

    b.s = malloc(b.cap);
    if (!b.s)
        return NULL;
    render_requests(&b);
    render_duration(&b);
    render_findings(&b);
    render_exemptions(&b);
    render_small(&b);
    render_reload_state(&b);
    render_process(&b);
    if (b.failed) {
        free(b.s);
        return NULL;
    }
    if (len)
        *len = b.len;
    return b.s;
}
