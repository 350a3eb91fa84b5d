#!/usr/bin/env bash
# test_cases_server.sh -- the rule cases (tests/fixtures/*/cases.yaml and the upstream cases of
# tests/fixtures/upstream/: the kinds, the parallel plan, NodePool and Controller, issues 15 and
# 17-19) through the real server: each case's
# object goes to POST /validate over TLS and the answer must carry the case's verdict and findings
# (cases_server.py). The same cases run on the pipeline in the unit tests; this proves the server
# path (review decoding, cluster-scoped kinds, the response's deny lines and warnings) agrees.
# Needs python3 with PyYAML (make deps); always kills the server it started.
set -u
TG_BIN=${TG_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/trainguard}
HERE=$(cd "$(dirname "$0")" && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tg-cases-it.XXXXXX")
SPID=""
cleanup() {
    if [ -n "$SPID" ]; then
        kill "$SPID" 2>/dev/null
        wait "$SPID" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "not ok - python3 with PyYAML is needed (make deps installs python3-yaml)"
    echo "0 passed, 1 failed"
    exit 1
fi
"$TG_BIN" certs --out-dir "$WORK/certs" --service trainguard --namespace trainguard \
    --dns localhost --ip 127.0.0.1 >/dev/null 2>&1 || { echo "cannot make certificates"; exit 1; }
# The embedded default policy (enforce), as the cases expect.
"$TG_BIN" serve --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 \
    --tls-cert-file "$WORK/certs/tls.crt" --tls-private-key-file "$WORK/certs/tls.key" \
    2>"$WORK/server.log" &
SPID=$!
for _ in $(seq 1 50); do
    grep -qs 'probes listening' "$WORK/server.log" && break
    sleep 0.1
done
WPORT=$(grep -o 'webhook listening on [^ ]* port [0-9]*' "$WORK/server.log" | awk '{print $NF}')
if [ -z "$WPORT" ]; then
    echo "server did not start:"
    cat "$WORK/server.log"
    exit 1
fi
cd "$HERE/../fixtures" || exit 1
if python3 "$HERE/cases_server.py" 127.0.0.1 "$WPORT" "$WORK/certs/ca.crt" ./*/cases.yaml \
    upstream/*.yaml; then
    echo "1 passed, 0 failed"
else
    echo "0 passed, 1 failed"
    exit 1
fi
