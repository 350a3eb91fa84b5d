#!/usr/bin/env bash
# profile.sh -- where the CPU of `trainguard serve --threads 1` goes under keep-alive load (wrk,
# 16 connections, the 6.8 KB EFA Pod on /validate): perf record -e cpu-clock -g (hardware counters
# do not work on these machines), then the top entries by shared object and by symbol.
# Usage: tests/bench/profile.sh [TRAINGUARD_BINARY] (default build-bench/trainguard, built by
# make bench); PROFILE_FLOOR=1 profiles the floor server (build-bench/floor) instead. Knobs: PROFILE_SECONDS (default 10), PROFILE_BODY (default pod-efa),
# PROFILE_ARGS (more serve flags).
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=${1:-build-bench/trainguard}
SECS=${PROFILE_SECONDS:-10}
BODY=${PROFILE_BODY:-pod-efa}
command -v perf >/dev/null || { echo "profile: perf not found"; exit 2; }
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
"$BIN" certs --out-dir "$tmp" --service trainguard --namespace bench --dns localhost \
    --ip 127.0.0.1 >/dev/null 2>&1
port=$((20000 + RANDOM % 20000)); probe=$((port + 1))
if [ "${PROFILE_FLOOR:-0}" = 1 ]; then
    taskset -c 0 "$(dirname "$BIN")/floor" $port "$tmp/tls.crt" "$tmp/tls.key" 2>"$tmp/server.log" &
    pid=$!
    for _ in $(seq 100); do curl -sk -o /dev/null "https://127.0.0.1:$port/" && break; sleep 0.1; done
else
    # shellcheck disable=SC2086
    taskset -c 0 "$BIN" serve --listen 127.0.0.1:$port --probe-listen 127.0.0.1:$probe \
        --tls-cert-file "$tmp/tls.crt" --tls-private-key-file "$tmp/tls.key" --threads 1 \
        ${PROFILE_ARGS:-} 2>"$tmp/server.log" &
    pid=$!
    for _ in $(seq 100); do curl -sf "http://127.0.0.1:$probe/readyz" >/dev/null && break; sleep 0.1; done
fi
BODY=tests/bench/bodies/$BODY.json CLOSE=0 taskset -c 1 wrk -t1 -c16 -d"$((SECS + 2))s" \
    -s tests/bench/post.lua "https://127.0.0.1:$port/validate" >"$tmp/wrk.out" &
sleep 1
perf record -e cpu-clock -g -o "$tmp/perf.data" -p "$pid" -- sleep "$SECS" 2>/dev/null
wait %2 || true
echo "threads: $(ls /proc/$pid/task | wc -l) ($(cat /proc/$pid/task/*/comm | sort | uniq -c | xargs))"
echo "wrk: $(tail -1 "$tmp/wrk.out")"
echo "context switches per thread (voluntary/involuntary):"
for t in /proc/$pid/task/*; do
    echo "  $(cat "$t/comm"): $(awk '/^voluntary_ctxt_switches/ {v=$2} /^nonvoluntary_ctxt_switches/ {n=$2} END {print v "/" n}' "$t/status")"
done
echo
echo "by shared object (self):"
perf report -i "$tmp/perf.data" --no-children --sort dso --stdio 2>/dev/null | grep -E '^ +[0-9]' | head -12
echo
echo "by symbol (self):"
perf report -i "$tmp/perf.data" --no-children --sort dso,sym --stdio -g none 2>/dev/null |
    grep -E '^ +[0-9]' | head -${PROFILE_TOP:-40}
