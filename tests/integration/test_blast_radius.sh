#!/usr/bin/env bash
# test_blast_radius.sh -- issue 20 through the real server: the listen sockets are dual-stack
# (answered on 127.0.0.1 and on [::1]), the UPDATE ratchet turns a deny the old object already
# had into a warning, exceptions (trainguard.dev/exempt-rules) work only in the policy's
# exceptionNamespaces and show up in the response's auditAnnotations, the decision log and
# /metrics. Needs curl, openssl and python3; always kills the server it started.
set -u
TG_BIN=${TG_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/trainguard}
. "$(dirname "$0")/tap.sh" blast-it

if ! python3 -c 'import socket; s = socket.socket(socket.AF_INET6); s.bind(("::1", 0))' 2>/dev/null; then
    echo "SKIP: this machine has no IPv6 loopback (::1); the dual-stack test needs it"
    echo "0 passed, 0 failed"
    exit 0
fi

"$TG_BIN" certs --out-dir "$WORK/certs" --service trainguard --namespace trainguard \
    --dns localhost --ip 127.0.0.1 --ip ::1 >/dev/null 2>&1 || { echo "cannot make certificates"; exit 1; }
cat >"$WORK/policy.yaml" <<'YAML'
apiVersion: trainguard.dev/v1alpha1
kind: Policy
mode: enforce
exceptionNamespaces: [team-a]
YAML
# The defaults ([::]:8443, [::]:8080) with port 0: the same dual-stack sockets on free ports.
if ! tap_serve server --listen '[::]:0' --probe-listen '[::]:0' --config "$WORK/policy.yaml" \
    --tls-cert-file "$WORK/certs/tls.crt" --tls-private-key-file "$WORK/certs/tls.key"; then
    echo "server did not start:"
    cat "$WORK/server.log"
    exit 1
fi
grep -q 'webhook listening on \[::\]:0 port [0-9]* (.*dual-stack' "$WORK/server.log" &&
    ok "the webhook socket is dual-stack" || not_ok "the webhook socket is dual-stack" "$(cat "$WORK/server.log")"

# ---- dual-stack: both loopbacks answer on the same ports -------------------------------------
for host in 127.0.0.1 '[::1]'; do
    code=$(curl -sS --max-time 5 -o /dev/null -w '%{http_code}' "http://$host:$PPORT/healthz")
    expect "GET /healthz on $host answers 200" "$code" 200
    code=$(curl -sS --max-time 5 --cacert "$WORK/certs/ca.crt" -o /dev/null -w '%{http_code}' \
        -H 'Content-Type: application/json' --data-binary '{}' "https://$host:$WPORT/validate")
    expect "POST /validate over TLS on $host answers (400 for an empty review)" "$code" 400
done

# post BODYFILE -> the response body in $WORK/resp.json; prints the HTTP status
post() {
    curl -sS --max-time 10 --cacert "$WORK/certs/ca.crt" -o "$WORK/resp.json" -w '%{http_code}' \
        -H 'Content-Type: application/json' --data-binary @"$1" "https://[::1]:$WPORT/validate"
}
# field PYTHON-EXPR -> evaluates it on the response (r = the parsed review's response)
field() { python3 -c "import json,sys; r = json.load(open(sys.argv[1]))['response']; print($1)" "$WORK/resp.json"; }

# review FILE OP NAMESPACE ANNOTATION OLD-WORKER-ENV NEW-WORKER-ENV: an MPIJob review. The
# worker env FI_PROVIDER=efa without an EFA device is efa.env-without-device (deny).
review() {
    python3 - "$@" <<'PY'
import json, sys
path, op, ns, ann, old_env, new_env = sys.argv[1:7]
def mpijob(env, workers, annotation):
    meta = {"name": "nccl", "namespace": ns}
    if annotation:
        meta["annotations"] = {"trainguard.dev/exempt-rules": annotation}
    worker = {"name": "w", "image": "nccl"}
    if env == "efa":
        worker["env"] = [{"name": "FI_PROVIDER", "value": "efa"}]
    return {"apiVersion": "kubeflow.org/v2beta1", "kind": "MPIJob", "metadata": meta,
            "spec": {"slotsPerWorker": 1, "mpiReplicaSpecs": {
                "Launcher": {"replicas": 1, "template": {"spec": {"containers": [
                    {"name": "l", "image": "nccl", "command": ["mpirun", "-np", str(workers), "a.out"]}]}}},
                "Worker": {"replicas": workers, "template": {"spec": {"containers": [worker]}}}}}}
req = {"uid": "u-" + op, "kind": {"group": "kubeflow.org", "version": "v2beta1", "kind": "MPIJob"},
       "resource": {"group": "kubeflow.org", "version": "v2beta1", "resource": "mpijobs"},
       "namespace": ns, "name": "nccl", "operation": op, "userInfo": {"username": "mpi-operator"},
       "object": mpijob(new_env, 4, ann)}
if op == "UPDATE":
    req["oldObject"] = mpijob(old_env, 2, "")
json.dump({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req},
          open(path, "w"))
PY
}

# ---- the UPDATE ratchet ----------------------------------------------------------------------
review "$WORK/r1.json" UPDATE team-b "" efa efa
expect "UPDATE keeping a deny finding the old object had: HTTP 200" "$(post "$WORK/r1.json")" 200
expect "... is allowed" "$(field 'r["allowed"]')" True
expect "... with the finding as a warning that says why" \
    "$(field 'any("efa.env-without-device" in w and "already in the object before this update" in w for w in r.get("warnings", []))')" True
review "$WORK/r2.json" UPDATE team-b "" none efa
post "$WORK/r2.json" >/dev/null
expect "UPDATE bringing a new deny finding is denied" "$(field 'r["allowed"]')" False
expect "... with 403" "$(field 'r["status"]["code"]')" 403

# ---- exceptions ------------------------------------------------------------------------------
review "$WORK/e1.json" CREATE team-a "efa.env-without-device" none efa
post "$WORK/e1.json" >/dev/null
expect "an object in an exception namespace exempts itself: allowed" "$(field 'r["allowed"]')" True
expect "... and the audit annotation exempted names the rule" \
    "$(field 'r.get("auditAnnotations", {}).get("exempted")')" efa.env-without-device
review "$WORK/e2.json" CREATE team-b "efa.env-without-device" none efa
post "$WORK/e2.json" >/dev/null
expect "the same object elsewhere is denied" "$(field 'r["allowed"]')" False
expect "... and nothing is exempted" "$(field '"exempted" in r.get("auditAnnotations", {})')" False
review "$WORK/e3.json" CREATE team-b "efa.env-without-device,zone.mising" none none
post "$WORK/e3.json" >/dev/null
expect "an unknown id is a warning (exempt.unknown-rule)" \
    "$(field 'any(w.startswith("[exempt.unknown-rule]") and "did you mean zone.missing" in w for w in r.get("warnings", []))')" True

# ---- logged and counted ----------------------------------------------------------------------
curl -sS --max-time 5 "http://127.0.0.1:$PPORT/metrics" >"$WORK/metrics.txt"
grep -q '^trainguard_exemptions_total{rule="efa.env-without-device"} 1$' "$WORK/metrics.txt" &&
    ok "trainguard_exemptions_total counts the exemption" ||
    not_ok "trainguard_exemptions_total counts the exemption" "$(grep exemptions "$WORK/metrics.txt")"
grep -q '^trainguard_ratcheted_findings_total 1$' "$WORK/metrics.txt" &&
    ok "trainguard_ratcheted_findings_total counts the ratcheted finding" ||
    not_ok "trainguard_ratcheted_findings_total counts the ratcheted finding" "$(grep ratcheted "$WORK/metrics.txt")"
# Decision lines are buffered for a few milliseconds (src/server/log.c): wait for the last one.
for _ in $(seq 1 50); do grep -qs '"uid":"u-UPDATE"' "$WORK/server.log" && break; sleep 0.1; done
grep -q '"uid":"u-CREATE".*"exempted":\["efa.env-without-device"\]' "$WORK/server.log" &&
    ok "the decision log line lists the exempted rule" ||
    not_ok "the decision log line lists the exempted rule" "$(grep '"msg":"admission"' "$WORK/server.log" | head -3)"
grep -q '"uid":"u-UPDATE".*"ratcheted":1' "$WORK/server.log" &&
    ok "the decision log line counts the ratcheted finding" ||
    not_ok "the decision log line counts the ratcheted finding" "$(grep '"u-UPDATE"' "$WORK/server.log" | head -2)"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
