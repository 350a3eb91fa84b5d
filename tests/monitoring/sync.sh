#!/usr/bin/env bash
# sync.sh -- the monitoring files have one source, charts/trainguard/files/; deploy/monitoring/
# holds copies kustomize can read (it reads no file outside its directory).
#   bash tests/monitoring/sync.sh          rewrite deploy/monitoring/{prometheusrule.yaml,grafana-dashboard.json}
#   bash tests/monitoring/sync.sh check    exit 1 when a copy differs from what it would write
set -eu
cd "$(dirname "$0")/../.."
src=charts/trainguard/files
dst=deploy/monitoring
mode=${1:-update}

rule_cr() {
    cat <<'HDR'
# GENERATED from charts/trainguard/files/trainguard.rules.yaml by tests/monitoring/sync.sh: edit
# that file, not this one. The alerts are explained there and in docs/operations.md.
apiVersion: monitoring.coreos.com/v1
kind: PrometheusRule
metadata:
  name: trainguard
  namespace: trainguard
  labels:
    app.kubernetes.io/name: trainguard
    app.kubernetes.io/part-of: trainguard
spec:
HDR
    sed 's/^/  /; s/^ *$//' "$src/trainguard.rules.yaml"
}

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rule_cr >"$tmp/prometheusrule.yaml"
cp "$src/grafana-dashboard.json" "$tmp/grafana-dashboard.json"
status=0
for f in prometheusrule.yaml grafana-dashboard.json; do
    if [ "$mode" = check ]; then
        if ! cmp -s "$tmp/$f" "$dst/$f"; then
            echo "sync: $dst/$f differs from $src/ (run: bash tests/monitoring/sync.sh)" >&2
            status=1
        fi
    else
        cp "$tmp/$f" "$dst/$f"
    fi
done
exit $status
