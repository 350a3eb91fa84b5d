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
. "$HERE/tap.sh" cases-it
if ! python3 -c 'import yaml' 2>/dev/null; then
    echo "not ok - python3 with PyYAML is needed (make deps installs python3-yaml)"
    echo "0 passed, 1 failed"
    exit 1
fi
"$TG_BIN" certs --out-dir "$WORK/certs" --service trainguard --namespace trainguard \
    --dns localhost --ip 127.0.0.1 >/dev/null 2>&1 || { echo "cannot make certificates"; exit 1; }
# The embedded default policy (enforce), as the cases expect.
if ! tap_serve server --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 \
    --tls-cert-file "$WORK/certs/tls.crt" --tls-private-key-file "$WORK/certs/tls.key"; then
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
