#!/usr/bin/env bash
# make soak: saturation load on `trainguard serve` for SOAK_SECONDS (default 600) with wrk, a mix of
# valid reviews (tests/bench/bodies, the golden 200 requests) and invalid ones (malformed JSON, wrong
# apiVersion, the golden 400 requests); samples the server's RSS every SOAK_SAMPLE seconds (10).
# Passes when no valid request failed (transport error or non-200) and RSS is flat: the last sample
# within 10% (or 2 MiB) of the one at 20% of the run. Knobs: SOAK_SECONDS, SOAK_CONNS (32),
# SOAK_THREADS (4 wrk threads, the last sends the invalid reviews), SOAK_SAMPLE (10).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${SOAK_SECONDS:-600}
CONNS=${SOAK_CONNS:-32}
THREADS=${SOAK_THREADS:-4}
EVERY=${SOAK_SAMPLE:-10}
command -v wrk >/dev/null || { echo "soak: wrk not found (make deps installs it)"; exit 2; }
[ "$THREADS" -ge 2 ] && [ "$CONNS" -ge "$THREADS" ] ||
    { echo "soak: SOAK_THREADS must be >= 2 and <= SOAK_CONNS"; exit 2; }
make --no-print-directory all >/dev/null
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-soak.XXXXXX")
pid=""
sampler=""
cleanup() { # under set -e a failed kill (process already gone) would turn the exit status to 1
    if [ -n "$sampler" ]; then kill "$sampler" 2>/dev/null || true; fi
    if [ -n "$pid" ]; then kill -9 "$pid" 2>/dev/null || true; fi
    rm -rf "$tmp"
}
trap cleanup EXIT
cp build/trainguard build/trainguard-x509.so "$tmp"/ # others may rebuild build/ meanwhile
"$tmp/trainguard" certs --out-dir "$tmp/certs" --service trainguard --namespace soak \
    --dns localhost --ip 127.0.0.1 >/dev/null 2>&1

# ---- bodies ---------------------------------------------------------------------------------------
valid=()
invalid=()
for f in tests/bench/bodies/*.json; do valid+=("$f"); done
for f in tests/fixtures/reviews/*.request.json; do
    r=${f%.request.json}.response.json
    [ -f "$r" ] || continue
    if grep -qE '"status": *200' "$r"; then valid+=("$f"); else invalid+=("$f"); fi
done
printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x",' \
    > "$tmp/malformed.json"
printf '{"apiVersion":"admission.k8s.io/v9","kind":"AdmissionReview","request":{"uid":"x"}}' \
    > "$tmp/wrong-version.json"
printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"x",' \
    > "$tmp/garbage-tail.json"
head -c 2000 /dev/zero | tr '\0' '[' >> "$tmp/garbage-tail.json"
invalid+=("$tmp/malformed.json" "$tmp/wrong-version.json" "$tmp/garbage-tail.json")
join() { local IFS=:; echo "$*"; }

# ---- server -----------------------------------------------------------------------------------------
# --log-level error (the invalid reviews would log a line each): ports chosen here, retried.
for _ in 1 2 3 4 5; do
    port=$((20000 + RANDOM % 20000)); probe=$((port + 1))
    "$tmp/trainguard" serve --listen 127.0.0.1:$port --probe-listen 127.0.0.1:$probe \
        --tls-cert-file "$tmp/certs/tls.crt" --tls-private-key-file "$tmp/certs/tls.key" \
        --shutdown-delay 0 --log-level error 2>"$tmp/server.log" &
    pid=$!
    for _ in $(seq 1 100); do
        curl -sf --max-time 1 "http://127.0.0.1:$probe/readyz" >/dev/null 2>&1 && break
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
    done
    kill -0 "$pid" 2>/dev/null && break
    wait "$pid" 2>/dev/null || true
    pid=""
done
[ -n "$pid" ] || { echo "soak: server did not start: $(head -c 500 "$tmp/server.log")"; exit 1; }
curl -sf --max-time 5 --cacert "$tmp/certs/ca.crt" -H 'Content-Type: application/json' \
    --data-binary @"${valid[0]}" "https://127.0.0.1:$port/validate" >/dev/null ||
    { echo "soak: the server does not answer a valid review"; exit 1; }

echo "soak: ${SECS}s, wrk -t$THREADS -c$CONNS, ${#valid[@]} valid and ${#invalid[@]} invalid" \
    "bodies (1 thread of $THREADS sends the invalid ones); $(nproc) cores; load: $(uptime | sed 's/.*load/load/')"

# ---- load and RSS samples -----------------------------------------------------------------------------
rss() { awk '/^VmRSS:/ { print $2 }' "/proc/$pid/status" 2>/dev/null; }
(
    t=0
    while [ "$t" -le "$SECS" ]; do
        echo "$t $(rss)"
        sleep "$EVERY"
        t=$((t + EVERY))
    done
) > "$tmp/rss" &
sampler=$!
THREADS=$THREADS VALID_FILES=$(join "${valid[@]}") INVALID_FILES=$(join "${invalid[@]}") \
    wrk -t"$THREADS" -c"$CONNS" -d"${SECS}s" --timeout 10s -s tests/soak/mix.lua \
    "https://127.0.0.1:$port" > "$tmp/wrk.out" 2>&1 || true
sleep 1
echo "$((SECS + 1)) $(rss)" >> "$tmp/rss"
kill "$sampler" 2>/dev/null || true
wait "$sampler" 2>/dev/null || true
sampler=""

val() { awk -v k="$1" '$1 == k { print $2 }' "$tmp/wrk.out"; }
if [ -z "$(val requests)" ]; then
    echo "soak: wrk gave no figures:"
    cat "$tmp/wrk.out"
    exit 1
fi
alive=yes
kill -0 "$pid" 2>/dev/null || alive=no
health=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://127.0.0.1:$probe/healthz" || true)

# ---- report ------------------------------------------------------------------------------------------
terr=$(val transport_errors)
vsent=$(val valid_sent); v200=$(val valid_ok200); v400=$(val valid_got400); vother=$(val valid_other)
isent=$(val invalid_sent); i200=$(val invalid_ok200); i400=$(val invalid_got400); iother=$(val invalid_other)
vfail=$((v400 + vother))
echo
printf '%-24s %s\n' "requests" "$(val requests) in $(val duration_s) s ($(awk -v r="$(val requests)" \
    -v d="$(val duration_s)" 'BEGIN { printf "%.0f", r / d }') req/s)"
printf '%-24s %s\n' "latency" "p50 $(val p50_ms) ms, p99 $(val p99_ms) ms, max $(val max_ms) ms"
printf '%-24s %s\n' "transport errors" "$terr ($(awk '$1 == "errors_detail" { $1 = ""; print }' "$tmp/wrk.out" | xargs))"
printf '%-24s %s\n' "valid: sent / 200" "$vsent / $v200 (400: $v400, other: $vother)"
printf '%-24s %s\n' "invalid: sent / 400" "$isent / $i400 (200: $i200, other: $iother)"
printf '%-24s %s\n' "server" "alive: $alive, /healthz: $health, peak RSS $(awk '/^VmHWM:/ { print $2 }' \
    "/proc/$pid/status" 2>/dev/null) KiB"
echo
echo "RSS over time:"
printf '  %8s %10s\n' "t (s)" "RSS (KiB)"
awk '{ printf "  %8s %10s\n", $1, $2 }' "$tmp/rss"
# Reference: the sample at 20% of the run (after warm-up); verdict on the last one.
ref_t=$(awk -v at="$((SECS / 5))" '$2 != "" && $1 >= at { print $1; exit }' "$tmp/rss")
ref=$(awk -v at="$((SECS / 5))" '$2 != "" && $1 >= at { print $2; exit }' "$tmp/rss")
last=$(awk '$2 != "" { v = $2 } END { print v }' "$tmp/rss")
verdict=flat
if [ -z "$ref" ] || [ -z "$last" ]; then
    verdict=unknown
elif [ $((last - ref)) -gt 2048 ] && [ $((last * 10)) -gt $((ref * 11)) ]; then
    verdict=grew
fi
echo "RSS: ${ref:-?} KiB at ${ref_t:-?} s (20% of the run), ${last:-?} KiB at the end: $verdict"

status=0
if [ "$terr" != 0 ] || [ "$vfail" != 0 ] || [ "$i200" != 0 ] || [ "$iother" != 0 ]; then
    echo "soak: FAILED: $terr transport errors, $vfail valid requests not 200, $i200 invalid ones" \
        "answered 200, $iother invalid ones answered neither 200 nor 400"
    status=1
fi
if [ "$verdict" != flat ] || [ "$alive" != yes ] || [ "$health" != 200 ]; then
    echo "soak: FAILED: RSS $verdict, server alive: $alive, /healthz: $health"
    status=1
fi
[ $status = 0 ] && echo "soak: ok"
kill -TERM "$pid" 2>/dev/null || true
for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
exit $status
