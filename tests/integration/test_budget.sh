#!/usr/bin/env bash
# One budget for all buffered request bodies (--max-buffered-mib): while a slow upload holds most
# of it, another request gets 503 with Connection: close and a Status body; once the slow upload is
# gone, requests succeed again. Uses 127.0.0.1 only; bounded in time; always stops the server.
set -u
TG_BIN=${TG_BIN:?set TG_BIN}
WORK=$(mktemp -d)
PASS=0
FAIL=0
SPID=""
cleanup() {
    [ -n "$SPID" ] && kill "$SPID" 2>/dev/null && wait "$SPID" 2>/dev/null
    jobs -p | xargs -r kill 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
ok() { echo "ok - $1"; PASS=$((PASS + 1)); }
not_ok() { echo "not ok - $1 ($2)"; FAIL=$((FAIL + 1)); }

"$TG_BIN" certs --out-dir "$WORK/c" --service t --namespace t --dns localhost --ip 127.0.0.1 \
    >/dev/null 2>&1 || { echo "cannot make certificates"; echo "0 passed, 1 failed"; exit 1; }
"$TG_BIN" serve --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --tls-cert-file "$WORK/c/tls.crt" \
    --tls-private-key-file "$WORK/c/tls.key" --threads 2 --max-buffered-mib 1 \
    --connection-timeout 20 --shutdown-delay 0 2>"$WORK/log" &
SPID=$!
for _ in $(seq 1 100); do grep -qs 'probes listening' "$WORK/log" && break; sleep 0.1; done
WPORT=$(sed -n 's/.*webhook listening on [^ ]* port \([0-9]*\).*/\1/p' "$WORK/log" | head -1)
[ -n "$WPORT" ] || { echo "server did not start"; cat "$WORK/log"; echo "0 passed, 1 failed"; exit 1; }
URL="https://127.0.0.1:$WPORT/validate"
REVIEW=tests/fixtures/reviews/validate-enforce-pod-efa-ok.request.json
post() { # body file -> "code" ; headers in $WORK/h
    curl -sS --max-time 5 --cacert "$WORK/c/ca.crt" -D "$WORK/h" -o "$WORK/out" -w '%{http_code}' \
        -H 'Content-Type: application/json' --data-binary @"$1" "$URL" 2>/dev/null
}

code=$(post "$REVIEW")
[ "$code" = 200 ] && ok "a review is served" || not_ok "a review is served" "got $code"

# A slow upload declares 700,000 bytes: the server reserves them up front (under 1 MiB) and holds
# them while the client sends nothing more.
(printf 'POST /validate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n'
 printf 'Content-Length: 700000\r\n\r\n{"apiVersion":'; sleep 8) |
    timeout 10 openssl s_client -quiet -connect "127.0.0.1:$WPORT" >/dev/null 2>&1 &
sleep 1
head -c 600000 /dev/zero | tr '\0' ' ' > "$WORK/big.json"
code=$(post "$WORK/big.json")
[ "$code" = 503 ] && ok "a second large body past the budget gets 503" || \
    not_ok "a second large body past the budget gets 503" "got $code"
grep -qi '^connection: close' "$WORK/h" && ok "... with Connection: close" || \
    not_ok "... with Connection: close" "$(tr -d '\r' < "$WORK/h" | head -5)"
grep -q '"kind":"Status"' "$WORK/out" && grep -q 'max-buffered-mib' "$WORK/out" &&
    ok "... and a Status body naming the flag" || not_ok "... and a Status body naming the flag" "$(cat "$WORK/out")"
code=$(post "$REVIEW")
[ "$code" = 200 ] && ok "a small review still fits the budget" || not_ok "a small review still fits the budget" "got $code"

pkill -f "s_client -quiet -connect 127.0.0.1:$WPORT" 2>/dev/null
for _ in $(seq 1 20); do
    code=$(post "$WORK/big.json")
    [ "$code" = 400 ] && break
    sleep 0.25
done
[ "$code" = 400 ] && ok "once the slow upload is gone the large body is read (and refused as JSON: 400)" || \
    not_ok "once the slow upload is gone the large body is read" "got $code"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" = 0 ]
