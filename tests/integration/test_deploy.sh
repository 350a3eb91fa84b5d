#!/usr/bin/env bash
# test_deploy.sh -- static checks of deploy/ (kustomize), charts/trainguard (Helm) and the Dockerfile.
# Helm is not installable here, so the chart is checked without rendering: YAML parses, template
# blocks balance, every .Values path a template reads exists in values.yaml. The manifests are
# rendered with `kubectl kustomize` when kubectl is present, and checked document by document with
# PyYAML when it is importable (else with awk). Needs $TG_BIN for the policy and certificate checks.
# Prints "N passed, M failed" last; exits 1 on any failure.
set -u

cd "$(dirname "$0")/../.." || exit 1
BIN=${TG_BIN:-build/trainguard}
DEPLOY=deploy
CHART=charts/trainguard
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { # check NAME COMMAND...
    local name=$1
    shift
    if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name"; fi
}

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-deploy-it.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

have_pyyaml=false
if [ -z "${TG_NO_PYYAML:-}" ] && command -v python3 >/dev/null 2>&1 &&
    python3 -c "import yaml" 2>/dev/null; then
    have_pyyaml=true
else
    echo "note: PyYAML not importable (apt-get install python3-yaml): using the awk checks"
fi

srcver=$(sed -n 's/^#define TG_VERSION "\(.*\)"/\1/p' include/tg/version.h)
rules_version=${srcver%.*}

# ---- deploy/: render ------------------------------------------------------------------------
rendered=$tmp/rendered.yaml
if command -v kubectl >/dev/null 2>&1; then
    if kubectl kustomize "$DEPLOY" >"$rendered" 2>"$tmp/kustomize.err"; then
        ok "kubectl kustomize $DEPLOY renders"
    else
        bad "kubectl kustomize $DEPLOY renders: $(head -c 300 "$tmp/kustomize.err")"
        : >"$rendered"
    fi
else
    echo "SKIP: kubectl not found: checking the files of $DEPLOY as they are, without kustomize"
    for f in $(awk '/^resources:/{r=1;next} r&&/^  - /{print $2;next} r&&/^[^ ]/{r=0}' \
        "$DEPLOY/base/kustomization.yaml"); do
        cat "$DEPLOY/base/$f"
        echo "---"
    done >"$rendered"
fi

# ---- deploy/: every document ----------------------------------------------------------------
if $have_pyyaml; then
    python3 - "$rendered" "$DEPLOY/cert-manager/certificates.yaml" "$rules_version" \
        >"$tmp/py.out" 2>&1 <<'PY'
import sys, yaml

def say(ok, name):
    print(("ok   " if ok else "FAIL ") + name)

docs = [d for d in yaml.safe_load_all(open(sys.argv[1])) if d is not None]
say(len(docs) >= 8, "deploy renders at least 8 objects (got %d)" % len(docs))
for i, d in enumerate(docs):
    meta = d.get("metadata") or {}
    say(bool(d.get("apiVersion")) and bool(d.get("kind")) and bool(meta.get("name")),
        "document %d (%s/%s) has apiVersion, kind, metadata.name" % (i, d.get("kind"), meta.get("name")))

by_kind = {}
for d in docs:
    by_kind.setdefault(d["kind"], []).append(d)
for k in ["Namespace", "ServiceAccount", "ConfigMap", "Deployment", "PodDisruptionBudget",
          "Service", "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]:
    say(k in by_kind, "deploy has a %s" % k)

ns = by_kind["Namespace"][0]["metadata"]["name"]
svc = by_kind["Service"][0]
svc_port = {p["name"]: p for p in svc["spec"]["ports"]}
for k in ["ServiceAccount", "ConfigMap", "Deployment", "PodDisruptionBudget", "Service"]:
    say(all(o["metadata"].get("namespace") == ns for o in by_kind.get(k, [])),
        "%s is in namespace %s" % (k, ns))

# webhooks
want_resources = {"pods", "mpijobs", "nodesets", "podgroups", "jobs", "jobsets",
                  "leaderworkersets", "pytorchjobs", "trainjobs", "trainingruntimes",
                  "clustertrainingruntimes", "rayclusters", "rayjobs"}
cluster_scoped = {"clustertrainingruntimes", "nodepools"}  # src/catalogue/kinds.def CLUSTER rows
for kind, path in [("ValidatingWebhookConfiguration", "/validate"),
                   ("MutatingWebhookConfiguration", "/mutate")]:
    for cfg in by_kind.get(kind, []):
        for w in cfg["webhooks"]:
            n = w["name"]
            say(len(n.split(".")) >= 3, "%s has three or more dot-separated segments" % n)
            say(w.get("sideEffects") == "None", "%s sideEffects None" % n)
            say(w.get("admissionReviewVersions") == ["v1"], "%s admissionReviewVersions [v1]" % n)
            say(w.get("failurePolicy") in ("Ignore", "Fail"), "%s failurePolicy set" % n)
            say(1 <= int(w.get("timeoutSeconds", 0)) <= 30, "%s timeoutSeconds within 1..30" % n)
            say(w.get("matchPolicy") == "Equivalent", "%s matchPolicy Equivalent" % n)
            s = (w.get("clientConfig") or {}).get("service") or {}
            say(s.get("name") == svc["metadata"]["name"] and s.get("namespace") == ns,
                "%s references Service %s/%s" % (n, ns, svc["metadata"]["name"]))
            say(s.get("path") == path, "%s path %s" % (n, path))
            want_timeout = 3 if path == "/validate" else 2
            say(w.get("timeoutSeconds") == want_timeout, "%s timeoutSeconds %d" % (n, want_timeout))
            mcs = w.get("matchConditions") or []
            say(len(mcs) >= 1 and len(mcs) <= 64 and len({m["name"] for m in mcs}) == len(mcs),
                "%s has 1..64 matchConditions with unique names" % n)
            say(all(m["expression"].strip().startswith("!(request.resource.group ==") for m in mcs),
                "%s matchConditions are the generated ones" % n)
            say(s.get("port", 443) == svc_port["https"]["port"], "%s port matches the Service" % n)
            excl = set()
            for e in (w.get("namespaceSelector") or {}).get("matchExpressions", []):
                if e["key"] == "kubernetes.io/metadata.name" and e["operator"] == "NotIn":
                    excl |= set(e["values"])
            say({"kube-system", ns} <= excl, "%s skips kube-system and %s" % (n, ns))
            res = set()
            for r in w["rules"]:
                res |= set(r["resources"])
                say(set(r["operations"]) <= {"CREATE", "UPDATE"}, "%s %s: CREATE/UPDATE only"
                    % (n, r["resources"]))
                want_scope = "Cluster" if set(r["resources"]) <= cluster_scoped else "Namespaced"
                say(r.get("scope") == want_scope, "%s %s: scope %s" % (n, r["resources"], want_scope))
            want = want_resources - ({"podgroups"} if kind.startswith("Mutating") else set())
            say(want <= res, "%s covers %s" % (n, sorted(want)))
            if kind.startswith("Mutating"):
                say(w.get("reinvocationPolicy") == "IfNeeded", "%s reinvocationPolicy IfNeeded" % n)
            vers = {(g, v) for r in w["rules"] for g in r["apiGroups"] for v in r["apiVersions"]}
            for gv in [("kubeflow.org", "v2beta1"), ("kubeflow.org", "v1"), ("", "v1"),
                       ("slinky.slurm.net", "v1beta1"), ("batch.volcano.sh", "v1alpha1"),
                       ("batch", "v1"), ("jobset.x-k8s.io", "v1alpha2"),
                       ("leaderworkerset.x-k8s.io", "v1"), ("trainer.kubeflow.org", "v1alpha1"),
                       ("ray.io", "v1")]:
                say(gv in vers, "%s registers %s/%s" % (n, gv[0] or "core", gv[1]))
            if kind.startswith("Validating"):
                by_res = {x: r for r in w["rules"] for x in r["resources"]}
                np_rule = by_res.get("nodepools") or {}
                say(np_rule.get("apiGroups") == ["karpenter.sh"] and "v1" in np_rule.get("apiVersions", [])
                    and np_rule.get("scope") == "Cluster", "%s registers karpenter.sh/v1 nodepools, scope Cluster" % n)
                ctl_rule = by_res.get("controllers") or {}
                say(ctl_rule.get("apiGroups") == ["slinky.slurm.net"] and "CREATE" in ctl_rule.get("operations", [])
                    and ctl_rule.get("scope") == "Namespaced", "%s registers slinky.slurm.net controllers" % n)

# deployment
dep = by_kind["Deployment"][0]
spec = dep["spec"]
pod = spec["template"]["spec"]
c = pod["containers"][0]
sc = c.get("securityContext") or {}
psc = pod.get("securityContext") or {}
say(spec.get("replicas") == 2, "Deployment has 2 replicas")
say("podAntiAffinity" in (pod.get("affinity") or {}), "Deployment has pod anti-affinity")
say(bool(pod.get("topologySpreadConstraints")), "Deployment has topology spread constraints")
say(psc.get("runAsNonRoot") is True and sc.get("runAsNonRoot") is True, "runAsNonRoot")
say(sc.get("readOnlyRootFilesystem") is True, "readOnlyRootFilesystem")
say(sc.get("allowPrivilegeEscalation") is False, "allowPrivilegeEscalation false")
say((sc.get("capabilities") or {}).get("drop") == ["ALL"], "capabilities drop ALL")
say((psc.get("seccompProfile") or {}).get("type") == "RuntimeDefault", "seccomp RuntimeDefault")
say(all(k in (c.get("resources") or {}).get(t, {}) for t in ("requests", "limits")
        for k in ("cpu", "memory")), "cpu and memory requests and limits")
ports = {p["name"]: p["containerPort"] for p in c["ports"]}
say(ports.get("probes") == 8080 and ports.get("webhook") == 8443, "ports 8443 webhook, 8080 probes")
say(c["readinessProbe"]["httpGet"]["path"] == "/readyz" and
    c["readinessProbe"]["httpGet"]["port"] in ("probes", 8080), "readiness probe /readyz on 8080")
say(c["livenessProbe"]["httpGet"]["path"] == "/healthz" and
    c["livenessProbe"]["httpGet"]["port"] in ("probes", 8080), "liveness probe /healthz on 8080")
say(svc_port["https"]["port"] == 443 and svc_port["https"]["targetPort"] in ("webhook", 8443),
    "Service 443 -> 8443")
mounts = {m["name"]: m for m in c["volumeMounts"]}
vols = {v["name"]: v for v in pod["volumes"]}
say(mounts["tls"]["mountPath"] == "/etc/trainguard/tls" and mounts["tls"].get("readOnly") is True,
    "TLS Secret mounted read-only at /etc/trainguard/tls")
say(mounts["policy"]["mountPath"] == "/etc/trainguard/policy", "policy mounted at /etc/trainguard/policy")
say(all("subPath" not in m for m in c["volumeMounts"]), "no subPath (updates reach the pod)")
secret = vols["tls"]["secret"]["secretName"]
cm = by_kind["ConfigMap"][0]
say(vols["policy"]["configMap"]["name"] == cm["metadata"]["name"], "policy volume is the ConfigMap")
pdb = by_kind["PodDisruptionBudget"][0]
labels = spec["template"]["metadata"]["labels"]
say(all(labels.get(k) == v for k, v in pdb["spec"]["selector"]["matchLabels"].items()),
    "PodDisruptionBudget selects the pods")
say(all(labels.get(k) == v for k, v in svc["spec"]["selector"].items()), "Service selects the pods")
say(pod.get("serviceAccountName") == by_kind["ServiceAccount"][0]["metadata"]["name"],
    "Deployment uses the ServiceAccount")
pol = yaml.safe_load(cm["data"]["policy.yaml"])
say(pol.get("mode") == "audit", "shipped policy is in audit mode")
say("kube-system" in set(pol.get("exemptNamespaces") or []), "policy exempts kube-system")
say(str(pol.get("rulesVersion")) == sys.argv[3], "policy pins rulesVersion %s" % sys.argv[3])
say(not pod.get("priorityClassName"), "no priorityClassName while both webhooks Ignore")
open(sys.argv[1] + ".policy", "w").write(cm["data"]["policy.yaml"])
open(sys.argv[1] + ".names", "w").write("%s %s %s\n" % (svc["metadata"]["name"], ns, secret))

# cert-manager manifests agree with the Service and the Deployment
cmdocs = [d for d in yaml.safe_load_all(open(sys.argv[2])) if d]
serving = [d for d in cmdocs if d["kind"] == "Certificate" and not d["spec"].get("isCA")]
say(len(serving) == 1, "cert-manager: one serving Certificate")
if serving:
    s = serving[0]["spec"]
    name = svc["metadata"]["name"]
    want = {name, "%s.%s" % (name, ns), "%s.%s.svc" % (name, ns), "%s.%s.svc.cluster.local" % (name, ns)}
    say(want <= set(s["dnsNames"]), "cert-manager: serving certificate names the Service")
    say(s["secretName"] == secret, "cert-manager: writes the Secret the Deployment mounts")
PY
    cat "$tmp/py.out"
    pass=$((pass + $(grep -c '^ok ' "$tmp/py.out")))
    fail=$((fail + $(grep -c '^FAIL ' "$tmp/py.out")))
    grep -q '^Traceback' "$tmp/py.out" && bad "python checks crashed"
else
    # awk: split on ---, each document needs apiVersion, kind and a name under metadata
    awk '
        function flush() { if (lines > 0) { n++; if (!(av && kd && nm)) bad++ } av = kd = nm = inmeta = lines = 0 }
        /^---/ { flush(); next }
        /^[^ #]/ { lines++; inmeta = ($0 ~ /^metadata:/) }
        /^apiVersion: ./ { av = 1 } /^kind: ./ { kd = 1 }
        inmeta && /^  name: ./ { nm = 1 }
        END { flush(); printf "%d %d\n", n, bad }' "$rendered" >"$tmp/awk.out"
    read -r ndocs nbad <"$tmp/awk.out"
    check "deploy renders at least 8 objects ($ndocs)" test "$ndocs" -ge 8
    check "every document has apiVersion, kind, metadata.name" test "$nbad" -eq 0
    check "webhooks: sideEffects None (2)" test "$(grep -c 'sideEffects: None' "$rendered")" -eq 2
    check "webhooks: admissionReviewVersions [v1]" test \
        "$(grep -A1 -E 'admissionReviewVersions:' "$rendered" | grep -cE '(\[v1\]|- v1$)')" -eq 2
    check "webhooks reference Service trainguard" test \
        "$(grep -A2 -E '^ +service:$' "$rendered" | grep -c 'name: trainguard$')" -eq 2
    check "mutating webhook reinvocationPolicy IfNeeded" grep -q 'reinvocationPolicy: IfNeeded' "$rendered"
    check "readOnlyRootFilesystem" grep -q 'readOnlyRootFilesystem: true' "$rendered"
    sed -n '/policy.yaml: |/,/^[^ ]/p' "$rendered" | sed '1d;/^[^ ]/d;s/^    //' >"$rendered.policy"
    echo "trainguard trainguard trainguard-tls" >"$rendered.names"
fi

# ---- the shipped policy passes the loader; the certificate names match the Service ----------
if [ -x "$BIN" ] && [ -s "$rendered.policy" ]; then
    check "ConfigMap policy passes 'trainguard policy check'" "$BIN" policy check "$rendered.policy"
    read -r svc_name svc_ns _ <"$rendered.names"
    if command -v openssl >/dev/null 2>&1; then
        "$BIN" certs --out-dir "$tmp/certs" --service "$svc_name" --namespace "$svc_ns" \
            >/dev/null 2>&1
        check "trainguard certs for the Service verifies as $svc_name.$svc_ns.svc" \
            openssl verify -CAfile "$tmp/certs/ca.crt" -purpose sslserver \
            -verify_hostname "$svc_name.$svc_ns.svc" "$tmp/certs/tls.crt"
    fi
else
    echo "SKIP: no \$TG_BIN or no policy extracted: policy and certificate cross-checks"
fi

# ---- deploy/: the cert-manager overlay, and both under another namespace ---------------------
# An overlay that sets its own namespace and lists deploy/namespace under transformers (the way
# docs/deploy.md says to install elsewhere) must move every namespace reference: the objects, the
# webhooks' service and namespaceSelector, the CA-injection annotation, the certificate names.
kz_version=$(sed -n 's/^#define TG_VERSION "\(.*\)"/\1/p' include/tg/version.h)
check "deploy/base pins the image tag to the release ($kz_version)" \
    grep -qE "^    newTag: \"?$kz_version\"?$" "$DEPLOY/base/kustomization.yaml"
if command -v kubectl >/dev/null 2>&1 && $have_pyyaml; then
    mkdir -p "$tmp/renamed"
    rel=$(realpath --relative-to="$tmp/renamed" "$DEPLOY")
    for base in base cert-manager; do
        printf 'resources: [%s/%s]\nnamespace: ml-guard\ntransformers: [%s/namespace]\n' \
            "$rel" "$base" "$rel" >"$tmp/renamed/kustomization.yaml"
        kubectl kustomize "$tmp/renamed" >"$tmp/renamed-$base.yaml" 2>"$tmp/renamed.err" ||
            bad "kubectl kustomize an overlay of deploy/$base in ml-guard: $(head -c 300 "$tmp/renamed.err")"
    done
    kubectl kustomize "$DEPLOY/cert-manager" >"$tmp/cert-manager.yaml" 2>"$tmp/cm.err" ||
        bad "kubectl kustomize deploy/cert-manager: $(head -c 300 "$tmp/cm.err")"
    python3 - "$tmp" >"$tmp/py3.out" 2>&1 <<'PY'
import sys, yaml
tmp = sys.argv[1]
def say(ok, name):
    print(("ok   " if ok else "FAIL ") + name)
def load(name):
    try:
        return [d for d in yaml.safe_load_all(open("%s/%s.yaml" % (tmp, name))) if d]
    except OSError:
        return []
for name, ns, cm in [("cert-manager", "trainguard", True), ("renamed-base", "ml-guard", False),
                     ("renamed-cert-manager", "ml-guard", True)]:
    docs = load(name)
    say(len(docs) >= 8, "%s: renders (%d objects)" % (name, len(docs)))
    if not docs:
        continue
    kinds = {}
    for d in docs:
        kinds.setdefault(d["kind"], []).append(d)
    say([d["metadata"]["name"] for d in kinds.get("Namespace", [])] == [ns],
        "%s: the Namespace is %s" % (name, ns))
    say(all(d["metadata"].get("namespace") == ns for d in docs
            if d["kind"] not in ("Namespace", "ValidatingWebhookConfiguration",
                                 "MutatingWebhookConfiguration")),
        "%s: every namespaced object is in %s" % (name, ns))
    for k in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
        cfg = kinds[k][0]
        w = cfg["webhooks"][0]
        excl = [e for e in w["namespaceSelector"]["matchExpressions"]
                if e["key"] == "kubernetes.io/metadata.name"][0]["values"]
        say(excl[:2] == ["kube-system", ns],
            "%s: %s skips kube-system and %s by kubernetes.io/metadata.name" % (name, k, ns))
        say(w["clientConfig"]["service"]["namespace"] == ns, "%s: %s calls the Service in %s" % (name, k, ns))
        ann = (cfg["metadata"].get("annotations") or {}).get("cert-manager.io/inject-ca-from")
        if cm:
            say(ann == ns + "/trainguard-serving", "%s: %s inject-ca-from %s/trainguard-serving (got %s)"
                % (name, k, ns, ann))
            say("cert-manager" in excl, "%s: %s skips cert-manager's namespace" % (name, k))
        else:
            say(ann is None and "cert-manager" not in excl, "%s: %s has no cert-manager settings" % (name, k))
    if cm:
        serving = [c for c in kinds["Certificate"] if c["metadata"]["name"] == "trainguard-serving"][0]
        dns = serving["spec"]["dnsNames"]
        say(serving["spec"]["commonName"] == "trainguard.%s.svc" % ns and
            dns == ["trainguard", "trainguard." + ns, "trainguard.%s.svc" % ns,
                    "trainguard.%s.svc.cluster.local" % ns],
            "%s: the serving Certificate names trainguard.%s.svc" % (name, ns))
PY
    cat "$tmp/py3.out"
    pass=$((pass + $(grep -c '^ok ' "$tmp/py3.out")))
    fail=$((fail + $(grep -c '^FAIL ' "$tmp/py3.out")))
    grep -q '^Traceback' "$tmp/py3.out" && bad "kustomize variant checks crashed"
else
    echo "SKIP: kubectl or PyYAML missing: the cert-manager overlay and a renamed namespace are not rendered"
fi

# ---- Dockerfile -----------------------------------------------------------------------------
df=$DEPLOY/Dockerfile
check "Dockerfile is multi-stage (2 FROM)" test "$(grep -c '^FROM ' "$df")" -eq 2
check "builder is debian:12.x" grep -qE '^FROM debian:12\.[0-9]+(@sha256:[0-9a-f]{64})? AS ' "$df"
check "runtime is debian:12.x-slim" bash -c "grep '^FROM ' '$df' | tail -1 | grep -qE 'debian:12\.[0-9]+-slim'"
check "runs as non-root USER 65532" bash -c "grep '^USER ' '$df' | tail -1 | grep -qE '^USER 65532'"
check "ENTRYPOINT runs trainguard serve" grep -qE 'ENTRYPOINT \[.*"serve"' "$df"
for p in /etc/trainguard/tls/tls.crt /etc/trainguard/tls/tls.key /etc/trainguard/policy/policy.yaml; do
    check "ENTRYPOINT reads $p" grep -qF "$p" "$df"
done
runtime=$(awk '/^FROM /{n++} n==2' "$df")
if [ -x "$BIN" ] && command -v readelf >/dev/null 2>&1; then
    # each shared library the binary needs must come from a package the runtime stage installs
    for so in $(readelf -d "$BIN" | sed -n 's/.*Shared library: \[\(.*\)\]/\1/p'); do
        case $so in
        libmicrohttpd.so.12) pkg=libmicrohttpd12 ;;
        libjansson.so.4) pkg=libjansson4 ;;
        libyaml-0.so.2) pkg=libyaml-0-2 ;;
        libssl.so.3 | libcrypto.so.3) pkg=libssl3 ;;
        libgnutls.so.30) pkg=libgnutls30 ;;
        libc.so.6 | libm.so.6 | libpthread.so.0 | libdl.so.2) pkg=base ;;
        libasan.so.* | libubsan.so.* | liblsan.so.* | libtsan.so.*)
            echo "note: $so comes from a sanitizer build (make check-asan), not from the image"
            continue
            ;;
        *) pkg="" ;;
        esac
        if [ "$pkg" = base ]; then
            ok "runtime has $so (base image)"
        elif [ -n "$pkg" ] && grep -qw "$pkg" <<<"$runtime"; then
            ok "runtime installs $pkg for $so"
        else
            bad "runtime stage installs no package for $so"
        fi
    done
fi

# ---- the chart ------------------------------------------------------------------------------
for f in Chart.yaml values.yaml; do
    if $have_pyyaml; then
        check "$CHART/$f parses" python3 -c 'import sys, yaml; d = yaml.safe_load(open(sys.argv[1])); assert isinstance(d, dict)' "$CHART/$f"
    else
        # no YAML parser: no tabs, every line a comment, "key:", "key: value" or "- item"
        check "$CHART/$f looks like YAML (no PyYAML)" awk '
            /\t/ { exit 1 }
            /^ *(#.*)?$/ { next }
            /^ *(- )?("[^"]*"|[A-Za-z0-9_.\/-]+):( .*)?$/ { next }
            /^ *- / { next }
            /^  +[^ ]/ { next }
            { exit 1 }' "$CHART/$f"
    fi
done
check "Chart.yaml apiVersion v2, name trainguard" bash -c \
    "grep -q '^apiVersion: v2' '$CHART/Chart.yaml' && grep -q '^name: trainguard$' '$CHART/Chart.yaml'"
appver=$(sed -n 's/^appVersion: *"\{0,1\}\([^"]*\)"\{0,1\}$/\1/p' "$CHART/Chart.yaml")
check "Chart appVersion ($appver) is the binary's version ($srcver)" test "$appver" = "$srcver"
check "values: mode audit by default" grep -q '^mode: audit$' "$CHART/values.yaml"
check "values: failurePolicy Ignore by default (both webhooks)" \
    test "$(grep -cE '^    failurePolicy: Ignore$' "$CHART/values.yaml")" -eq 2
check "values: 2 replicas by default" grep -q '^replicaCount: 2$' "$CHART/values.yaml"

# values.schema.json: Helm validates merged values against it
schema=$CHART/values.schema.json
if command -v python3 >/dev/null 2>&1; then
    check "values.schema.json is JSON" python3 -c 'import json, sys; json.load(open(sys.argv[1]))' "$schema"
fi
if $have_pyyaml && python3 -c 'import jsonschema' 2>/dev/null; then
    python3 - "$schema" "$CHART/values.yaml" >"$tmp/schema.out" 2>&1 <<'PY'
import copy, json, sys, yaml, jsonschema
schema = json.load(open(sys.argv[1]))
values = yaml.safe_load(open(sys.argv[2]))
v = jsonschema.Draft7Validator(schema)
def say(ok, name):
    print(("ok   " if ok else "FAIL ") + "schema: " + name)
errs = list(v.iter_errors(values))
say(not errs, "values.yaml validates" + ("" if not errs else ": " + errs[0].message))
def bad(name, change):
    d = copy.deepcopy(values)
    change(d)
    say(any(True for _ in v.iter_errors(d)), "rejects " + name)
def setp(path, val):
    def f(d):
        for k in path[:-1]:
            d = d[k]
        d[path[-1]] = val
    return f
bad("an unknown top-level key (replicas)", setp(["replicas"], 3))
bad("mode 'dry-run'", setp(["mode"], "dry-run"))
bad("failurePolicy 'Sometimes'", setp(["webhook", "validate", "failurePolicy"], "Sometimes"))
bad("timeoutSeconds 31", setp(["webhook", "mutate", "timeoutSeconds"], 31))
bad("the removed webhook.failurePolicy", setp(["webhook", "failurePolicy"], "Fail"))
bad("rulesVersion '0.2.0'", setp(["policy", "rulesVersion"], "0.2.0"))
bad("certificates.source 'vault'", setp(["certificates", "source"], "vault"))
bad("a DELETE operation", setp(["webhook", "podOperations"], ["DELETE"]))
bad("a namespace mode 'strict'", setp(["policy", "namespaceModes"], {"a": "strict"}))
bad("a rule action 'block'", setp(["policy", "rules"], {"efa.no-hugepages": "block"}))
bad("tls.minVersion VersionTLS11", setp(["tls", "minVersion"], "VersionTLS11"))
bad("a CBC suite in tls.cipherSuites", setp(["tls", "cipherSuites"], ["TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA"]))
bad("tls.cipherSuites as one string", setp(["tls", "cipherSuites"], "TLS_AES_128_GCM_SHA256"))
bad("metrics.namespaceLabel 'yes'", setp(["metrics", "namespaceLabel"], "yes"))
PY
    cat "$tmp/schema.out"
    pass=$((pass + $(grep -c '^ok ' "$tmp/schema.out")))
    fail=$((fail + $(grep -c '^FAIL ' "$tmp/schema.out")))
    grep -q '^Traceback' "$tmp/schema.out" && bad "schema checks crashed"
else
    echo "SKIP: values.schema.json validation (needs PyYAML and python3-jsonschema)"
fi

# every .Values path in the templates is a key path of values.yaml
if $have_pyyaml; then
    python3 - "$CHART/values.yaml" >"$tmp/keys" <<'PY'
import sys, yaml
def walk(d, pre):
    for k, v in d.items():
        print(pre + str(k))
        if isinstance(v, dict):
            walk(v, pre + str(k) + ".")
walk(yaml.safe_load(open(sys.argv[1])), "")
PY
else
    # indentation (2 spaces a level) gives the path of each "key:" line outside lists
    awk '
        /^ *#/ || /^ *$/ || /^ *- / { next }
        match($0, /^ */) {
            depth = RLENGTH / 2
            line = substr($0, RLENGTH + 1)
            if (line !~ /^[A-Za-z0-9_.\/"-]+:/) next
            key = line; sub(/:.*/, "", key); gsub(/"/, "", key)
            path[depth] = key
            p = ""; for (i = 0; i <= depth; i++) p = p (i ? "." : "") path[i]
            print p
        }' "$CHART/values.yaml" >"$tmp/keys"
fi
refs=$(grep -ohE '\.Values(\.[A-Za-z0-9_]+)+' "$CHART"/templates/* | sed 's/^\.Values\.//' | sort -u)
missing=""
for r in $refs; do
    grep -qxF "$r" "$tmp/keys" || missing="$missing $r"
done
if [ -z "$missing" ]; then
    ok "every .Values path in templates exists in values.yaml ($(wc -w <<<"$refs") paths)"
else
    bad "values.yaml lacks:$missing"
fi

# template actions balance: {{ }} pairs, and block openers against {{ end }}
for t in "$CHART"/templates/*; do
    case $t in *.yaml | *.tpl | *.txt) ;; *) continue ;; esac
    opens=$(grep -o '{{' "$t" | wc -l)
    closes=$(grep -o '}}' "$t" | wc -l)
    blocks=$(grep -oE '\{\{-? *(if|with|range|define) ' "$t" | wc -l)
    ends=$(grep -oE '\{\{-? *end *-?\}\}' "$t" | wc -l)
    check "$(basename "$t"): {{ }} balanced and $blocks blocks closed" \
        test "$opens" -eq "$closes" -a "$blocks" -eq "$ends"
done
for k in Deployment Service ServiceAccount ConfigMap PodDisruptionBudget \
    ValidatingWebhookConfiguration MutatingWebhookConfiguration Certificate Issuer; do
    check "chart has a $k template" grep -qx "kind: $k" $CHART/templates/*.yaml
done
check "chart injects the CA with cert-manager.io/inject-ca-from" \
    grep -q 'cert-manager.io/inject-ca-from' "$CHART/templates/_helpers.tpl"
check "chart requires caBundle with a user-provided secret" \
    grep -q 'required "certificates.caBundle' "$CHART/templates/_helpers.tpl"
for k in sideEffects: "admissionReviewVersions: \[v1\]" "reinvocationPolicy:"; do
    check "chart webhooks set $k" grep -q "$k" "$CHART/templates/webhooks.yaml"
done


# ---- the chart, rendered ---------------------------------------------------------------------
# Without helm, Go's text/template with sprig (the engine Helm uses) plus Helm's include, required,
# fail and toYaml renders the chart, when Debian's golang-go, golang-github-masterminds-sprig-dev
# and golang-gopkg-yaml.v3-dev are installed.
gocode=/usr/share/gocode/src
if command -v go >/dev/null 2>&1 && [ -d "$gocode/github.com/Masterminds/sprig" ] &&
    [ -d "$gocode/gopkg.in/yaml.v3" ] && $have_pyyaml; then
    mkdir -p "$tmp/go/src/hr"
    cp tests/integration/helm_render/main.go "$tmp/go/src/hr/main.go"
    [ -n "${HOME:-}" ] || export GOCACHE=$tmp/gocache
    if (cd "$tmp/go/src/hr" && GO111MODULE=off GOPATH="$tmp/go:/usr/share/gocode" \
        go build -o "$tmp/hr" . >"$tmp/go.err" 2>&1); then
        printf 'certificates:\n  source: secret\n  caBundle: Q0E=\nmode: warn\nreplicaCount: 1\nwebhook:\n  validate: {failurePolicy: Fail}\n  namespaceSelector:\n    matchLabels: {trainguard.dev/webhook: enabled}\npolicy:\n  namespaceModes: {ml-a: enforce}\n  rulesVersion: "0.1"\n  exceptionNamespaces: [ml-a]\ntls:\n  minVersion: VersionTLS13\n  cipherSuites: [TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256, TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384]\nmetrics:\n  namespaceLabel: true\n' >"$tmp/secret.yaml"
        for variant in "trainguard trainguard certManager v1.30.0" "ml-system tg secret v1.27.3"; do
            read -r ns rel src kv <<<"$variant"
            extra=""
            [ "$src" = secret ] && extra=$tmp/secret.yaml
            if KUBE_VERSION=$kv "$tmp/hr" "$CHART" "$ns" "$rel" $extra >"$tmp/chart.yaml" 2>"$tmp/chart.err"; then
                ok "chart renders ($src certificates, release $rel in $ns)"
            else
                bad "chart renders ($src): $(head -c 300 "$tmp/chart.err")"
                continue
            fi
            python3 - "$tmp/chart.yaml" "$ns" "$src" "$rendered" "$rules_version" >"$tmp/py2.out" 2>&1 <<'PY'
import sys, yaml
path, ns, src, deploy_path, rules_version = sys.argv[1:6]
try:
    deploy = [d for d in yaml.safe_load_all(open(deploy_path)) if d]
except Exception:
    deploy = []
def say(ok, name):
    print(("ok   " if ok else "FAIL ") + "chart (%s): %s" % (src, name))
docs = [d for d in yaml.safe_load_all(open(path)) if d]
kinds = {}
for d in docs:
    kinds.setdefault(d.get("kind"), []).append(d)
say(all(d.get("apiVersion") and d.get("kind") and (d.get("metadata") or {}).get("name")
        for d in docs), "every document has apiVersion, kind, metadata.name")
svc = kinds["Service"][0]
dep = kinds["Deployment"][0]
pod = dep["spec"]["template"]["spec"]
secret = [v for v in pod["volumes"] if v["name"] == "tls"][0]["secret"]["secretName"]
for k in ("ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"):
    cfg = kinds[k][0]
    w = cfg["webhooks"][0]
    s = w["clientConfig"]["service"]
    say(w["sideEffects"] == "None" and w["admissionReviewVersions"] == ["v1"],
        "%s sideEffects None, admissionReviewVersions [v1]" % k)
    say(s["name"] == svc["metadata"]["name"] and s["namespace"] == ns, "%s references the Service" % k)
    excl = [e for e in w["namespaceSelector"]["matchExpressions"]
            if e["key"] == "kubernetes.io/metadata.name"][0]["values"]
    say({"kube-system", ns} <= set(excl), "%s skips kube-system and %s" % (k, ns))
    say(("cert-manager" in excl) == (src == "certManager"),
        "%s skips cert-manager's namespace only when it issues the certificate" % k)
    want_timeout = 3 if k.startswith("Validating") else 2
    say(w["timeoutSeconds"] == want_timeout, "%s timeoutSeconds %d" % (k, want_timeout))
    same = [d for d in deploy if d["kind"] == k]
    if src == "certManager":
        want = same[0]["webhooks"][0] if same else {}
        say(w.get("matchConditions") and w.get("matchConditions") == want.get("matchConditions"),
            "%s: matchConditions on Kubernetes 1.30, the same as deploy/'s" % k)
        say(w["rules"] == want.get("rules"), "%s: rules the same as deploy/'s" % k)
    else:
        say("matchConditions" not in w, "%s: no matchConditions on Kubernetes 1.27" % k)
    if k.startswith("Validating"):
        by_res = {x: r for r in w["rules"] for x in r["resources"]}
        say((by_res.get("nodepools") or {}).get("scope") == "Cluster" and
            (by_res.get("nodepools") or {}).get("apiGroups") == ["karpenter.sh"],
            "%s registers karpenter.sh nodepools with scope Cluster" % k)
        say((by_res.get("controllers") or {}).get("operations") == ["CREATE"],
            "%s registers slinky.slurm.net controllers on CREATE" % k)
    ann = (cfg["metadata"].get("annotations") or {}).get("cert-manager.io/inject-ca-from")
    if src == "certManager":
        cert = [c for c in kinds["Certificate"] if c["metadata"]["name"] == ann.split("/")[1]]
        say(ann.startswith(ns + "/") and len(cert) == 1, "%s inject-ca-from names the Certificate" % k)
        say(cert and cert[0]["spec"]["secretName"] == secret, "the Certificate writes the mounted Secret")
        say(w["failurePolicy"] == "Ignore", "%s failurePolicy Ignore by default" % k)
        say(not pod.get("priorityClassName"), "no priorityClassName while both webhooks Ignore")
    else:
        say(ann is None and w["clientConfig"].get("caBundle") == "Q0E=", "%s caBundle from values" % k)
        say(w["failurePolicy"] == ("Fail" if k.startswith("Validating") else "Ignore"),
            "%s failurePolicy from values (per webhook)" % k)
        say(pod.get("priorityClassName") == "system-cluster-critical",
            "priorityClassName system-cluster-critical when a webhook is Fail")
        say(w["namespaceSelector"].get("matchLabels") == {"trainguard.dev/webhook": "enabled"},
            "%s namespaceSelector.matchLabels from values" % k)
say("Certificate" in kinds if src == "certManager" else "Certificate" not in kinds,
    "cert-manager objects only with certManager")
say(pod["containers"][0]["securityContext"]["readOnlyRootFilesystem"] is True, "read-only root")
say(dep["spec"]["replicas"] == (2 if src == "certManager" else 1), "replicas from values")
args = pod["containers"][0]["args"]
if src == "certManager":
    say("--tls-min-version=VersionTLS12" in args and "--metrics-namespace-label" not in args
        and not any(a.startswith("--tls-cipher-suites") for a in args), "TLS and metrics flags: defaults")
else:
    say("--tls-min-version=VersionTLS13" in args and "--metrics-namespace-label" in args and
        "--tls-cipher-suites=TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"
        in args, "tls.minVersion, tls.cipherSuites, metrics.namespaceLabel from values")
say(("PodDisruptionBudget" in kinds) == (dep["spec"]["replicas"] >= 2), "a PDB only with 2+ replicas")
pol = yaml.safe_load(kinds["ConfigMap"][0]["data"]["policy.yaml"])
say({"kube-system", ns} <= set(pol.get("exemptNamespaces") or []), "policy exempts kube-system and %s" % ns)
say(pol.get("mode") == ("audit" if src == "certManager" else "warn"), "policy mode from values")
say(str(pol.get("rulesVersion")) == (rules_version if src == "certManager" else "0.1"),
    "policy rulesVersion: the chart's release, or from values")
say(pol.get("exceptionNamespaces", []) == ([] if src == "certManager" else ["ml-a"]),
    "policy exceptionNamespaces from values")
open(path + ".policy", "w").write(kinds["ConfigMap"][0]["data"]["policy.yaml"])
PY
            cat "$tmp/py2.out"
            pass=$((pass + $(grep -c '^ok ' "$tmp/py2.out")))
            fail=$((fail + $(grep -c '^FAIL ' "$tmp/py2.out")))
            grep -q '^Traceback' "$tmp/py2.out" && bad "chart ($src): python checks crashed"
            if [ -x "$BIN" ]; then
                check "chart ($src): policy passes 'trainguard policy check'" \
                    "$BIN" policy check "$tmp/chart.yaml.policy"
            fi
        done
        printf 'certificates:\n  source: secret\n' >"$tmp/nocab.yaml"
        "$tmp/hr" "$CHART" ns r "$tmp/nocab.yaml" >/dev/null 2>"$tmp/nocab.err"
        rc=$?
        check "chart refuses source secret without caBundle" \
            bash -c "test $rc -ne 0 && grep -q 'caBundle is required' '$tmp/nocab.err'"
    else
        bad "building the template renderer: $(head -c 300 "$tmp/go.err")"
    fi
else
    echo "SKIP: chart rendering (needs go, Debian golang-github-masterminds-sprig-dev and" \
        "golang-gopkg-yaml.v3-dev, and PyYAML)"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
