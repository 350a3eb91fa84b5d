#!/usr/bin/env bash
# test_monitoring.sh -- the day-2 files (issue 21): the alert rules under promtool (check and unit
# tests), their one source and its copies, the Grafana dashboard's metric names against a running
# server's /metrics, the optional kustomize components (monitoring, networkpolicy, autoscaling),
# and the chart rendered with each new value on, with `global` set, and its values checked
# against values.schema.json. Needs $TG_BIN, promtool (Debian prometheus), kubectl (the kustomize checks skip without it), python3 with
# PyYAML and jsonschema, go with Debian's sprig and yaml.v3 (tests/integration/helm_render).
# Prints "N passed, M failed" last; exits 1 on any failure or missing tool.
set -u

cd "$(dirname "$0")/../.." || exit 1
ROOT=$PWD
BIN=${TG_BIN:-build/trainguard}
CHART=charts/trainguard
RULES=$CHART/files/trainguard.rules.yaml
DASH=$CHART/files/grafana-dashboard.json
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { # check NAME COMMAND...
    local name=$1
    shift
    if "$@" >"$tmp/check.out" 2>&1; then ok "$name"; else bad "$name: $(head -c 400 "$tmp/check.out")"; fi
}
# py NAME SCRIPT ARGS...: runs a python check script that prints ok/FAIL lines
py() {
    local name=$1
    shift
    python3 - "$@" >"$tmp/py.out" 2>&1
    cat "$tmp/py.out"
    pass=$((pass + $(grep -c '^ok ' "$tmp/py.out")))
    fail=$((fail + $(grep -c '^FAIL ' "$tmp/py.out")))
    if grep -q '^Traceback' "$tmp/py.out" || ! grep -q '^ok ' "$tmp/py.out"; then bad "$name: python checks crashed"; fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-monitoring-it.XXXXXX")
SPID=""
cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

for tool in promtool python3 go; do
    command -v $tool >/dev/null 2>&1 || bad "$tool is not installed (make deps)"
done
python3 -c 'import yaml, jsonschema' 2>/dev/null || bad "python3 yaml and jsonschema (make deps)"
[ -x "$BIN" ] || bad "no server binary at $BIN (make)"
[ "$fail" -eq 0 ] || { echo "$pass passed, $fail failed"; exit 1; }

# ---- the rules: promtool --------------------------------------------------------------------
check "promtool check rules $RULES" promtool check rules "$RULES"
check "promtool test rules tests/monitoring/rules.test.yaml" \
    promtool test rules tests/monitoring/rules.test.yaml
# The unit test must cover every alert of the file.
alerts=$(sed -n 's/^ *- alert: *//p' "$RULES" | sort -u)
untested=""
for a in $alerts; do grep -q "alertname: $a\$" tests/monitoring/rules.test.yaml || untested="$untested $a"; done
check "every alert ($(wc -w <<<"$alerts")) has a promtool unit test${untested:+: missing$untested}" test -z "$untested"
# A broken copy of the rules fails the unit test (the test can fail).
sed 's/> 0.25$/> 25/' "$RULES" >"$tmp/broken.rules.yaml"
sed "s#../../charts/trainguard/files/trainguard.rules.yaml#$tmp/broken.rules.yaml#" \
    tests/monitoring/rules.test.yaml >"$tmp/broken.test.yaml"
if promtool test rules "$tmp/broken.test.yaml" >/dev/null 2>&1; then
    bad "promtool test rules fails on rules with a changed threshold"
else
    ok "promtool test rules fails on rules with a changed threshold"
fi

# ---- one source: deploy/monitoring copies -----------------------------------------------------
check "deploy/monitoring copies match charts/trainguard/files (tests/monitoring/sync.sh check)" \
    bash tests/monitoring/sync.sh check

# The operator's objects use only fields of its API types (prometheus-operator
# pkg/apis/monitoring/v1: docs/references.md#ref-ops-prometheus-operator-types): a misspelt field
# would be dropped by the API server's pruning and the scrape or rule silently change.
cat >"$tmp/crdcheck.py" <<'PY'
import re
SM_SPEC = {"jobLabel", "targetLabels", "podTargetLabels", "endpoints", "selector",
           "namespaceSelector", "sampleLimit", "targetLimit", "labelLimit", "attachMetadata"}
ENDPOINT = {"port", "targetPort", "path", "scheme", "params", "interval", "scrapeTimeout",
            "tlsConfig", "honorLabels", "honorTimestamps", "relabelings", "metricRelabelings"}
GROUP = {"name", "interval", "rules", "partial_response_strategy", "limit"}
RULE = {"record", "alert", "expr", "for", "labels", "annotations"}
DUR = re.compile(r"^(0|(([0-9]+)y)?(([0-9]+)w)?(([0-9]+)d)?(([0-9]+)h)?(([0-9]+)m)?(([0-9]+)s)?(([0-9]+)ms)?)$")
def seconds(d):
    m = DUR.match(d)
    f = [int(m.group(i) or 0) for i in (3, 5, 7, 9, 11, 13, 15)]
    return f[0] * 31536000 + f[1] * 604800 + f[2] * 86400 + f[3] * 3600 + f[4] * 60 + f[5] + f[6] / 1000
def problems(obj):
    out = []
    spec = obj.get("spec") or {}
    if obj["kind"] == "ServiceMonitor":
        out += ["spec.%s" % k for k in set(spec) - SM_SPEC]
        for e in spec.get("endpoints") or []:
            out += ["endpoints[].%s" % k for k in set(e) - ENDPOINT]
            if e.get("scheme") not in (None, "http", "https"):
                out.append("scheme %s" % e["scheme"])
            for k in ("interval", "scrapeTimeout"):
                if k in e and not DUR.match(str(e[k])):
                    out.append("%s %s is not a Duration" % (k, e[k]))
            if DUR.match(str(e.get("interval", ""))) and DUR.match(str(e.get("scrapeTimeout", ""))) \
                    and seconds(e["scrapeTimeout"]) > seconds(e["interval"]):
                out.append("scrapeTimeout above interval (the operator rejects it)")
        if set(spec.get("namespaceSelector") or {}) - {"any", "matchNames"}:
            out.append("namespaceSelector keys")
    elif obj["kind"] == "PrometheusRule":
        for g in spec.get("groups") or []:
            out += ["groups[].%s" % k for k in set(g) - GROUP]
            for r in g.get("rules") or []:
                out += ["rules[].%s" % k for k in set(r) - RULE]
                if "for" in r and not DUR.match(str(r["for"])):
                    out.append("for %s is not a Duration" % r["for"])
                for k in ("labels", "annotations"):
                    if any(not isinstance(v, str) for v in (r.get(k) or {}).values()):
                        out.append("%s of %s: values must be strings" % (k, r.get("alert")))
    return out
PY

# ---- deploy/: the default install has none of the optional objects; the components render --
if ! command -v kubectl >/dev/null 2>&1; then
    echo "skip deploy/ components: kubectl is not installed (kustomize renders them; the chart checks below still run)"
else
kubectl kustomize deploy >"$tmp/default.yaml" 2>"$tmp/k.err" || bad "kubectl kustomize deploy: $(head -c 300 "$tmp/k.err")"
mkdir -p "$tmp/overlay"
rel=$(realpath --relative-to="$tmp/overlay" "$ROOT")
cat >"$tmp/overlay/kustomization.yaml" <<EOF
apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
resources: [$rel/deploy]
components: [$rel/deploy/monitoring, $rel/deploy/networkpolicy, $rel/deploy/autoscaling]
EOF
if kubectl kustomize "$tmp/overlay" >"$tmp/full.yaml" 2>"$tmp/k.err"; then
    ok "deploy/ with the monitoring, networkpolicy and autoscaling components renders"
else
    bad "deploy/ with components renders: $(head -c 300 "$tmp/k.err")"
fi
py "deploy components" "$tmp/default.yaml" "$tmp/full.yaml" "$RULES" "$DASH" "$tmp" <<'PY'
import json, sys, yaml
default_path, full_path, rules_path, dash_path, crd_dir = sys.argv[1:6]
def say(c, name):
    print(("ok   " if c else "FAIL ") + "deploy: " + name)
default = [d for d in yaml.safe_load_all(open(default_path)) if d]
full = [d for d in yaml.safe_load_all(open(full_path)) if d]
optional = {"ServiceMonitor", "PrometheusRule", "NetworkPolicy", "HorizontalPodAutoscaler"}
say(not optional & {d["kind"] for d in default}, "the default kustomization has no %s" % sorted(optional))
say(not any(d["kind"] == "ConfigMap" and "grafana_dashboard" in d["metadata"].get("labels", {})
            for d in default), "the default kustomization has no dashboard ConfigMap")
k = {}
for d in full:
    k.setdefault(d["kind"], []).append(d)
for kind in sorted(optional):
    say(len(k.get(kind, [])) == 1, "the components add one %s" % kind)
say(all(d["metadata"].get("namespace") == "trainguard" for d in full if d["kind"] in optional),
    "the optional objects are in namespace trainguard")
svc = k["Service"][0]
dep = k["Deployment"][0]
pod = dep["spec"]["template"]
cports = {p["name"]: p["containerPort"] for p in pod["spec"]["containers"][0]["ports"]}
sm = k["ServiceMonitor"][0]["spec"]
say(all(svc["metadata"]["labels"].get(a) == b for a, b in sm["selector"]["matchLabels"].items()),
    "ServiceMonitor selects the Service")
ep = sm["endpoints"][0]
sport = {p["name"]: p for p in svc["spec"]["ports"]}
say(ep["port"] in sport and sport[ep["port"]]["targetPort"] == "probes" and ep["path"] == "/metrics",
    "ServiceMonitor scrapes /metrics on the Service port that targets the probe port")
say(svc["metadata"]["labels"].get(sm["jobLabel"]) == "trainguard",
    "ServiceMonitor jobLabel gives job=\"trainguard\", the job the alerts select")
sys.path.insert(0, crd_dir)
import crdcheck
for kind in ("ServiceMonitor", "PrometheusRule"):
    p = crdcheck.problems(k[kind][0])
    say(not p, "%s uses only fields of the operator's API types%s" % (kind, "" if not p else ": " + ", ".join(p)))
bad_sm = {"kind": "ServiceMonitor", "spec": {"endpoint": [], "endpoints": [{"port": "x", "scrapeTimout": "5s", "interval": "30"}]}}
say(len(crdcheck.problems(bad_sm)) == 3, "the field check finds a misspelt field, a misspelt endpoint field and a bad Duration")
say(crdcheck.problems({"kind": "ServiceMonitor", "spec": {"endpoints": [{"interval": "10s", "scrapeTimeout": "1m"}]}}),
    "the field check refuses a scrapeTimeout above the interval")
rules = yaml.safe_load(open(rules_path))
pr = k["PrometheusRule"][0]
say(pr["spec"] == rules, "PrometheusRule spec is the rule file (%d groups, %d rules)"
    % (len(rules["groups"]), sum(len(g["rules"]) for g in rules["groups"])))
cms = [d for d in k["ConfigMap"] if d["metadata"].get("labels", {}).get("grafana_dashboard") == "1"]
say(len(cms) == 1 and json.loads(cms[0]["data"]["trainguard.json"]) == json.load(open(dash_path)),
    "dashboard ConfigMap (label grafana_dashboard) holds the dashboard")
hpa = k["HorizontalPodAutoscaler"][0]["spec"]
say(hpa["scaleTargetRef"] == {"apiVersion": "apps/v1", "kind": "Deployment",
                              "name": dep["metadata"]["name"]}, "HPA scales the Deployment")
say(hpa["minReplicas"] >= 2 and hpa["maxReplicas"] >= hpa["minReplicas"], "HPA minReplicas >= 2")
say(hpa["metrics"][0]["resource"]["name"] == "cpu", "HPA on CPU")
say("replicas" not in dep["spec"], "with the HPA the Deployment leaves replicas to it")
say(len(k.get("PodDisruptionBudget", [])) == 1, "the PodDisruptionBudget stays (2+ replicas)")
np = k["NetworkPolicy"][0]["spec"]
labels = pod["metadata"]["labels"]
say(all(labels.get(a) == b for a, b in np["podSelector"]["matchLabels"].items()),
    "NetworkPolicy selects the pods")
ing = {r["ports"][0]["port"]: r for r in np["ingress"]}
say(set(ing) == {cports["webhook"], cports["probes"]} and np["policyTypes"] == ["Ingress"],
    "NetworkPolicy opens the webhook and probe ports only")
say("from" not in ing[cports["webhook"]], "webhook port open to any source (EKS control plane ENIs)")
say(ing[cports["probes"]]["from"][0]["namespaceSelector"]["matchLabels"] ==
    {"kubernetes.io/metadata.name": "monitoring"}, "probe port open to the monitoring namespace")
PY

fi
# ---- the dashboard and the alerts against a real /metrics ---------------------------------------
bash tests/integration/server_certs.sh "$tmp/certs" || bad "cannot make certificates"
"$BIN" serve --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --tls-cert-file "$tmp/certs/tls.crt" \
    --tls-private-key-file "$tmp/certs/tls.key" 2>"$tmp/serve.log" &
SPID=$!
for _ in $(seq 1 50); do
    grep -qs 'probes listening' "$tmp/serve.log" && break
    kill -0 "$SPID" 2>/dev/null || break
    sleep 0.1
done
PPORT=$(grep -o 'probes listening on [^ ]* port [0-9]*' "$tmp/serve.log" | awk '{print $NF}')
if [ -n "$PPORT" ] && curl -sS --max-time 5 "http://127.0.0.1:$PPORT/metrics" >"$tmp/metrics.txt"; then
    ok "scraped /metrics of a running trainguard serve"
    check "promtool check metrics accepts /metrics" bash -c "promtool check metrics <'$tmp/metrics.txt' 2>&1 | grep -v 'counter metrics should have \"_total\" suffix' | (! grep -q .)"
else
    bad "no /metrics from trainguard serve: $(head -c 300 "$tmp/serve.log")"
    : >"$tmp/metrics.txt"
fi
py "metric names" "$DASH" "$RULES" "$tmp/metrics.txt" <<'PY'
import json, re, sys, yaml
dash_path, rules_path, metrics_path = sys.argv[1:4]
def say(c, name):
    print(("ok   " if c else "FAIL ") + name)
# Names the server exports: every family of a "# TYPE" line, with _bucket/_sum/_count for histograms.
exported = set()
for line in open(metrics_path):
    m = re.match(r"# TYPE (\S+) (\S+)", line)
    if m:
        exported.add(m.group(1))
        if m.group(2) == "histogram":
            exported |= {m.group(1) + s for s in ("_bucket", "_sum", "_count")}
say(len(exported) >= 10, "the scrape has %d metric names" % len(exported))
FUNCS = {"sum", "min", "max", "avg", "count", "rate", "irate", "increase", "histogram_quantile",
         "label_values", "time", "absent", "topk", "bottomk", "delta", "deriv", "vector", "scalar",
         "clamp_min", "clamp_max", "abs", "round", "humanizeDuration"}
KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "and", "or", "unless",
            "bool", "offset"}
def names(expr):
    e = re.sub(r'"(?:[^"\\]|\\.)*"', '""', expr)                       # strings
    e = re.sub(r"\{[^}]*\}", "", e)                                     # label matchers
    e = re.sub(r"label_values\(([^,()]*),[^)]*\)", r"(\1)", e)          # label_values(metric, label)
    e = re.sub(r"\b(by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", e)
    e = re.sub(r"\[[^\]]*\]", "", e)                                    # ranges
    e = re.sub(r"\$\w+", "", e)                                         # Grafana variables
    out = set()
    for m in re.finditer(r"[A-Za-z_:][A-Za-z0-9_:]*", e):
        w = m.group(0)
        rest = e[m.end():].lstrip()
        if w in KEYWORDS or rest.startswith("(") or re.fullmatch(r"\d.*", w):
            continue
        if re.fullmatch(r"[0-9]*[smhdwy]", w) or w in ("e",):
            continue
        out.add(w)
    return out
d = json.load(open(dash_path))
exprs = []
def walk(o):
    if isinstance(o, dict):
        for k, v in o.items():
            if k in ("expr", "definition") and isinstance(v, str):
                exprs.append(v)
            elif k == "query" and isinstance(v, str) and "(" in v:
                exprs.append(v)
            else:
                walk(v)
    elif isinstance(o, list):
        for v in o:
            walk(v)
walk(d)
used = set().union(*(names(x) for x in exprs)) if exprs else set()
say(len(exprs) >= 15, "the dashboard has %d query expressions" % len(exprs))
say(len(used) >= 10, "they use %d metric names" % len(used))
missing = sorted(used - exported)
say(not missing, "every metric the dashboard queries is on /metrics" +
    ("" if not missing else ": not exported: " + ", ".join(missing)))
# Self-test of the name extractor on a known expression.
say(names('histogram_quantile(0.99, sum by (le, endpoint) (rate(a_b_bucket{job="x", n=~"$ns"}[5m]))) - time() > 3 * 86400') == {"a_b_bucket"}
    and names('label_values(c_d{job="x"}, namespace)') == {"c_d"},
    "the extractor finds exactly the metric of sample expressions")
# The alerts: our own metrics must be exported too (apiserver_* and up come from elsewhere).
rules = yaml.safe_load(open(rules_path))
rnames = set()
for g in rules["groups"]:
    for r in g["rules"]:
        rnames |= names(r["expr"])
ours = {n for n in rnames if n.startswith(("trainguard_", "process_"))}
say(rnames - ours <= {"up", "apiserver_admission_webhook_rejection_count",
                      "apiserver_admission_webhook_fail_open_count"},
    "the alerts use only our metrics, up and the API server's webhook counters")
missing = sorted(ours - exported)
say(not missing, "every trainguard metric the alerts use is on /metrics" +
    ("" if not missing else ": not exported: " + ", ".join(missing)))
PY

# ---- the chart -------------------------------------------------------------------------------
gocode=/usr/share/gocode/src
mkdir -p "$tmp/go/src/hr"
cp tests/integration/helm_render/main.go "$tmp/go/src/hr/main.go"
[ -n "${HOME:-}" ] || export GOCACHE=$tmp/gocache
if ! (cd "$tmp/go/src/hr" && GO111MODULE=off GOPATH="$tmp/go:/usr/share/gocode" \
    go build -o "$tmp/hr" . >"$tmp/go.err" 2>&1); then
    bad "building the template renderer (needs $gocode sprig and yaml.v3): $(head -c 300 "$tmp/go.err")"
    echo "$pass passed, $fail failed"
    exit 1
fi
# Values files: each new value on alone, all of them, `global` alone.
V=$tmp/values
mkdir -p "$V"
printf 'global: {imageRegistry: registry.example.com, parent: {any: [1, 2]}}\n' >"$V/global.yaml"
printf 'hostNetwork: true\nports: {webhook: 9443, probes: 9080}\n' >"$V/hostnetwork.yaml"
printf 'monitoring:\n  serviceMonitor: {enabled: true, labels: {release: kps}, interval: 15s}\n' >"$V/servicemonitor.yaml"
printf 'monitoring:\n  prometheusRule: {enabled: true, labels: {release: kps}}\n' >"$V/prometheusrule.yaml"
printf 'monitoring:\n  dashboard: {enabled: true, namespace: grafana}\n' >"$V/dashboard.yaml"
printf 'networkPolicy: {enabled: true, webhookCIDRs: [10.0.0.0/16, 100.64.0.0/16]}\n' >"$V/networkpolicy.yaml"
printf 'autoscaling: {enabled: true, minReplicas: 3, maxReplicas: 9, targetCPUUtilizationPercentage: 60}\nreplicaCount: 1\n' >"$V/autoscaling.yaml"
cat "$V"/global.yaml "$V"/hostnetwork.yaml "$V"/networkpolicy.yaml "$V"/autoscaling.yaml >"$V/all.yaml"
printf 'monitoring:\n  scrapeAnnotations: false\n  serviceMonitor: {enabled: true}\n  prometheusRule: {enabled: true}\n  dashboard: {enabled: true}\n' >>"$V/all.yaml"
: >"$V/defaults.yaml"
for f in defaults global hostnetwork servicemonitor prometheusrule dashboard networkpolicy autoscaling all; do
    if "$tmp/hr" "$CHART" ml-guard tg "$V/$f.yaml" >"$tmp/chart-$f.yaml" 2>"$tmp/chart.err"; then
        ok "chart renders with $f.yaml"
    else
        bad "chart renders with $f.yaml: $(head -c 300 "$tmp/chart.err")"
    fi
done
printf 'autoscaling: {enabled: true, minReplicas: 1}\n' >"$V/hpa-one.yaml"
"$tmp/hr" "$CHART" ml-guard tg "$V/hpa-one.yaml" >/dev/null 2>"$tmp/hpa-one.err"
rc=$?
check "chart refuses autoscaling with minReplicas 1" \
    bash -c "test $rc -ne 0 && grep -q 'minReplicas must be 2 or more' '$tmp/hpa-one.err'"
py "chart" "$CHART" "$tmp" "$V" "$RULES" "$DASH" <<'PY'
import copy, json, os, sys, yaml, jsonschema
chart, tmp, vdir, rules_path, dash_path = sys.argv[1:6]
def say(c, name):
    print(("ok   " if c else "FAIL ") + "chart: " + name)
schema = json.load(open(os.path.join(chart, "values.schema.json")))
defaults = yaml.safe_load(open(os.path.join(chart, "values.yaml")))
validator = jsonschema.Draft7Validator(schema)
def merge(a, b):
    out = copy.deepcopy(a)
    for k, v in (b or {}).items():
        out[k] = merge(out[k], v) if isinstance(v, dict) and isinstance(out.get(k), dict) else v
    return out
def errors(over):
    return [e.message for e in validator.iter_errors(merge(defaults, over))]
variants = ["defaults", "global", "hostnetwork", "servicemonitor", "prometheusrule", "dashboard",
            "networkpolicy", "autoscaling", "all"]
for f in variants:
    e = errors(yaml.safe_load(open(os.path.join(vdir, f + ".yaml"))))
    say(not e, "values with %s.yaml validate against values.schema.json%s" % (f, "" if not e else ": " + e[0]))
for name, over in [("autoscaling.enabled with minReplicas 1", {"autoscaling": {"enabled": True, "minReplicas": 1}}),
                   ("a port 70000", {"ports": {"webhook": 70000}}),
                   ("an unknown key under ports", {"ports": {"metrics": 9090}}),
                   ("hostNetwork 'yes'", {"hostNetwork": "yes"}),
                   ("global as a string", {"global": "x"}),
                   ("a CIDR without a prefix length", {"networkPolicy": {"webhookCIDRs": ["10.0.0.0"]}}),
                   ("an unknown key under monitoring", {"monitoring": {"alerts": True}}),
                   ("a scrape interval '30'", {"monitoring": {"serviceMonitor": {"interval": "30"}}}),
                   ("targetCPUUtilizationPercentage 0", {"autoscaling": {"targetCPUUtilizationPercentage": 0}})]:
    say(bool(errors(over)), "schema rejects " + name)
say(not errors({"autoscaling": {"enabled": False, "minReplicas": 1}}),
    "schema accepts minReplicas 1 while autoscaling is off")

def load(f):
    docs = [d for d in yaml.safe_load_all(open(os.path.join(tmp, "chart-%s.yaml" % f))) if d]
    k = {}
    for d in docs:
        k.setdefault(d["kind"], []).append(d)
    return docs, k
rules = yaml.safe_load(open(rules_path))
dash = json.load(open(dash_path))
optional = {"ServiceMonitor", "PrometheusRule", "NetworkPolicy", "HorizontalPodAutoscaler"}
docs, k = load("defaults")
say(not optional & set(k), "defaults render none of %s" % sorted(optional))
say(not any("grafana_dashboard" in (d["metadata"].get("labels") or {}) for d in docs),
    "defaults render no dashboard ConfigMap")
dep = k["Deployment"][0]
pod = dep["spec"]["template"]["spec"]
c = pod["containers"][0]
say("hostNetwork" not in pod and dep["spec"]["replicas"] == 2, "defaults: pod network, 2 replicas")
say({"--listen=[::]:8443", "--probe-listen=[::]:8080"} <= set(c["args"]), "defaults: listen on 8443 and 8080")
ann = dep["spec"]["template"]["metadata"].get("annotations") or {}
say(ann.get("prometheus.io/port") == "8080" and ann.get("prometheus.io/scrape") == "true",
    "defaults: scrape annotations name the probe port")
d_global = load("global")[0]
say(d_global == docs, "global changes nothing the chart renders")

def common(f, k, ns="ml-guard"):
    svc = k["Service"][0]
    dep = k["Deployment"][0]
    pod = dep["spec"]["template"]
    c = pod["spec"]["containers"][0]
    return svc, dep, pod, c

docs, k = load("hostnetwork")
svc, dep, pod, c = common("hostnetwork", k)
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
say(pod["spec"].get("hostNetwork") is True and pod["spec"].get("dnsPolicy") == "ClusterFirstWithHostNet",
    "hostNetwork: the pods use the node's network (dnsPolicy ClusterFirstWithHostNet)")
say(ports == {"webhook": 9443, "probes": 9080}, "ports: the containerPorts are the values")
say({"--listen=[::]:9443", "--probe-listen=[::]:9080"} <= set(c["args"]), "ports: the server listens on them")
say(c["readinessProbe"]["httpGet"]["port"] == "probes" and c["livenessProbe"]["httpGet"]["port"] == "probes",
    "ports: probes follow the probe port by name")
sp = {p["name"]: p for p in svc["spec"]["ports"]}
say(sp["https"]["targetPort"] == "webhook" and sp["http-metrics"]["targetPort"] == "probes",
    "ports: the Service targets them by name")
for kind in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
    cc = k[kind][0]["webhooks"][0]["clientConfig"]["service"]
    say(cc["port"] == sp["https"]["port"] and cc["name"] == svc["metadata"]["name"],
        "ports: %s clientConfig dials the Service's https port" % kind)
say((pod["metadata"].get("annotations") or {}).get("prometheus.io/port") == "9080",
    "ports: the scrape annotation follows the probe port")

docs, k = load("servicemonitor")
svc = k["Service"][0]
sm = k.get("ServiceMonitor", [{}])[0]
say(bool(sm) and sm["metadata"]["namespace"] == "ml-guard" and sm["metadata"]["labels"].get("release") == "kps",
    "serviceMonitor: one ServiceMonitor in the release namespace with the extra labels")
spec = sm.get("spec", {})
say(spec.get("namespaceSelector") == {"matchNames": ["ml-guard"]} and
    all(svc["metadata"]["labels"].get(a) == b for a, b in spec["selector"]["matchLabels"].items()),
    "serviceMonitor: selects the Service")
ep = (spec.get("endpoints") or [{}])[0]
say(ep.get("port") == "http-metrics" and ep.get("path") == "/metrics" and ep.get("interval") == "15s",
    "serviceMonitor: /metrics on port http-metrics every 15s")
say(svc["metadata"]["labels"].get(spec.get("jobLabel")) == "trainguard",
    "serviceMonitor: job=\"trainguard\" for release tg (the job the alerts select)")
sys.path.insert(0, tmp)
import crdcheck
say(bool(sm) and not crdcheck.problems(sm), "serviceMonitor: only fields of the operator's API types")

docs, k = load("prometheusrule")
pr = k.get("PrometheusRule", [{}])[0]
say(pr.get("spec") == rules, "prometheusRule: spec is files/trainguard.rules.yaml")
sys.path.insert(0, tmp)
import crdcheck
say(bool(pr) and not crdcheck.problems(pr), "prometheusRule: only fields of the operator's API types")
say((pr.get("metadata") or {}).get("labels", {}).get("release") == "kps", "prometheusRule: extra labels")
open(os.path.join(tmp, "chart-rules.yaml"), "w").write(yaml.safe_dump(pr.get("spec") or {}))

docs, k = load("dashboard")
cms = [d for d in k["ConfigMap"] if (d["metadata"].get("labels") or {}).get("grafana_dashboard") == "1"]
say(len(cms) == 1 and cms[0]["metadata"]["namespace"] == "grafana",
    "dashboard: a ConfigMap labelled grafana_dashboard in the namespace given")
say(bool(cms) and json.loads(cms[0]["data"]["trainguard.json"]) == dash, "dashboard: it holds files/grafana-dashboard.json")

docs, k = load("networkpolicy")
np = k.get("NetworkPolicy", [{}])[0].get("spec", {})
pod = k["Deployment"][0]["spec"]["template"]
say(all(pod["metadata"]["labels"].get(a) == b for a, b in np.get("podSelector", {}).get("matchLabels", {}).items())
    and np.get("podSelector"), "networkPolicy: selects the pods")
ing = {r["ports"][0]["port"]: r for r in np.get("ingress", [])}
say(set(ing) == {8443, 8080}, "networkPolicy: only the webhook and probe ports")
say([p["ipBlock"]["cidr"] for p in ing.get(8443, {}).get("from", [])] == ["10.0.0.0/16", "100.64.0.0/16"],
    "networkPolicy: webhook port from webhookCIDRs")
say(ing.get(8080, {}).get("from", [{}])[0].get("namespaceSelector") ==
    {"matchLabels": {"kubernetes.io/metadata.name": "monitoring"}}, "networkPolicy: probe port from the monitoring namespace")

docs, k = load("autoscaling")
hpa = k.get("HorizontalPodAutoscaler", [{}])[0]
dep = k["Deployment"][0]
say(hpa.get("apiVersion") == "autoscaling/v2" and hpa["spec"]["scaleTargetRef"]["name"] == dep["metadata"]["name"]
    and hpa["spec"]["scaleTargetRef"]["kind"] == "Deployment", "autoscaling: an autoscaling/v2 HPA of the Deployment")
say(hpa["spec"]["minReplicas"] == 3 and hpa["spec"]["maxReplicas"] == 9 and
    hpa["spec"]["metrics"][0]["resource"]["target"] == {"type": "Utilization", "averageUtilization": 60},
    "autoscaling: min, max and target CPU from values")
say("replicas" not in dep["spec"], "autoscaling: the Deployment leaves replicas to the HPA")
say(len(k.get("PodDisruptionBudget", [])) == 1, "autoscaling: a PDB although replicaCount is 1")

docs, k = load("all")
say(optional <= set(k), "all on: every optional object")
pod = k["Deployment"][0]["spec"]["template"]
say(not (pod["metadata"].get("annotations") or {}), "scrapeAnnotations false: no prometheus.io annotations")
np = k["NetworkPolicy"][0]["spec"]
say({r["ports"][0]["port"] for r in np["ingress"]} == {9443, 9080}, "all on: the NetworkPolicy follows the ports")
say(all(d.get("apiVersion") and d.get("kind") and (d.get("metadata") or {}).get("name") for d in docs),
    "all on: every document has apiVersion, kind, metadata.name")
PY
check "promtool check rules on the chart's rendered PrometheusRule spec" promtool check rules "$tmp/chart-rules.yaml"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
