#!/usr/bin/env bash
# test_log_decisions.sh -- `serve --log-decisions=all|findings|none` (SPEC 13) and the buffered
# decision log: which decisions get a line, and that no buffered line is lost when the server
# stops (SIGTERM) or dies (SIGABRT). Needs curl; always kills the servers it started.
set -u
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
TG_BIN=${TG_BIN:-$ROOT/build/trainguard}
. "$(dirname "$0")/tap.sh" logdec-it

"$TG_BIN" certs --out-dir "$WORK" --service trainguard --namespace it --dns localhost \
    --ip 127.0.0.1 >/dev/null 2>&1 || { echo "cannot make certificates"; exit 1; }

# A Pod with no finding (allowed) and one with FI_PROVIDER=efa but no EFA device (a finding).
printf '%s' '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"u-plain",
"kind":{"group":"","version":"v1","kind":"Pod"},"resource":{"group":"","version":"v1","resource":"pods"},
"namespace":"ml","name":"plain","operation":"CREATE","userInfo":{"username":"alice"},
"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"plain"},
"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}' >"$WORK/plain.json"
FINDING=$ROOT/tests/fixtures/reviews/validate-audit-pod-fi-provider-without-device.request.json
FINDING_UID=7c1d6c3a-9f1e-4f5e-9d0a-1b2c3d4e5f60

# start NAME ARGS...: sets SPID and WPORT; the log is $WORK/NAME.log.
start() {
    local name=$1
    shift
    tap_serve "$name" --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --shutdown-delay 0 \
        --tls-cert-file "$WORK/tls.crt" --tls-private-key-file "$WORK/tls.key" "$@"
}

post() { # body-file: prints the HTTP status
    curl -sS --max-time 10 --cacert "$WORK/ca.crt" -o /dev/null -w '%{http_code}' \
        -H 'Content-Type: application/json' --data-binary @"$1" \
        "https://127.0.0.1:$WPORT/validate"
}

# One curl, N requests on one keep-alive connection: they arrive faster than the flush period.
post_many() { # n body-file
    local args=()
    for _ in $(seq 1 "$1"); do
        args+=(--next -sS -o /dev/null --cacert "$WORK/ca.crt" -H 'Content-Type: application/json'
            --data-binary @"$2" "https://127.0.0.1:$WPORT/validate")
    done
    curl --max-time 30 "${args[@]:1}"
}

lines() { grep -c "\"msg\":\"admission\".*\"uid\":\"$2\"" "$WORK/$1.log"; }

stop() { # sends SIGTERM and waits; the exit code goes to RC
    kill -TERM "$SPID"
    wait "$SPID"
    RC=$?
}

# ---- the three settings -------------------------------------------------------------------
for setting in all findings none; do
    start "$setting" --log-decisions="$setting"
    expect "--log-decisions=$setting: plain Pod allowed" "$(post "$WORK/plain.json")" 200
    expect "--log-decisions=$setting: Pod with a finding answered" "$(post "$FINDING")" 200
    stop
    expect "--log-decisions=$setting: exit 0 on SIGTERM" "$RC" 0
    case $setting in
    all) want_plain=1 want_finding=1 ;;
    findings) want_plain=0 want_finding=1 ;;
    none) want_plain=0 want_finding=0 ;;
    esac
    expect "--log-decisions=$setting: lines for the plain Pod" "$(lines "$setting" u-plain)" \
        "$want_plain"
    expect "--log-decisions=$setting: lines for the Pod with a finding" \
        "$(lines "$setting" "$FINDING_UID")" "$want_finding"
    grep -q '"msg":"stopped"' "$WORK/$setting.log" && ok "--log-decisions=$setting: other lines stay" ||
        not_ok "--log-decisions=$setting: other lines stay" "$(tail -3 "$WORK/$setting.log")"
done

start default
post "$WORK/plain.json" >/dev/null
stop
expect "the default is all" "$(lines default u-plain)" 1

# ---- no line lost on the way out ------------------------------------------------------------
start burst
post_many 200 "$WORK/plain.json"
stop
expect "SIGTERM right after 200 requests: exit 0" "$RC" 0
expect "... and all 200 decision lines are written" "$(lines burst u-plain)" 200
bad=$(grep '"msg":"admission"' "$WORK/burst.log" | grep -cv '^{"ts":"[^"]*","level":"info".*}$')
expect "... each a whole line" "$bad" 0

start abort
post_many 50 "$WORK/plain.json"
kill -ABRT "$SPID"
timeout 10 tail --pid="$SPID" -f /dev/null
wait "$SPID"
rc=$?
expect "SIGABRT: the process dies of it" "$rc" 134
expect "... after writing all 50 decision lines" "$(lines abort u-plain)" 50

# ---- bad values -----------------------------------------------------------------------------
"$TG_BIN" serve --tls-cert-file "$WORK/tls.crt" --tls-private-key-file "$WORK/tls.key" \
    --log-decisions=some 2>"$WORK/bad.err"
expect "--log-decisions=some: exit 2" "$?" 2
grep -q "log-decisions: expected all, findings or none, got 'some'" "$WORK/bad.err" &&
    ok "... saying what is expected" || not_ok "... saying what is expected" "$(cat "$WORK/bad.err")"

if grep -lE 'AddressSanitizer|LeakSanitizer|runtime error' "$WORK"/*.log >/dev/null 2>&1; then
    not_ok "no sanitizer report in any server log" "$(grep -hE 'Sanitizer|runtime error' "$WORK"/*.log | head -3)"
else
    ok "no sanitizer report in any server log"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
