#!/usr/bin/env bash
# make bench: end-to-end HTTPS benchmark (server pinned to core 0, wrk to core 1) and the
# in-process pipeline benchmark. Prints figures; asserts nothing about speed.
# Knobs: BENCH_SECONDS (default 10), BENCH_CONNS (default "16 64").
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${BENCH_SECONDS:-10}
CONNS=${BENCH_CONNS:-16 64}
BODIES=${BENCH_BODIES:-pod-efa mpijob podgroup pod-large pod-update}
BUILD=build-bench
command -v wrk >/dev/null || { echo "bench: wrk not found (make deps installs it)"; exit 2; }
make --no-print-directory BUILD=$BUILD OPT="-O2 -DNDEBUG" $BUILD/trainguard $BUILD/libtg.a >/dev/null
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc tests/bench/bench_pipeline.c $BUILD/libtg.a \
    $(pkg-config --cflags --libs libmicrohttpd jansson yaml-0.1 openssl gnutls) -lm -pthread \
    -o $BUILD/bench_pipeline
tmp=$(mktemp -d)
pid=""
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null; wait 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
$BUILD/trainguard certs --out-dir "$tmp" --service trainguard --namespace bench --dns localhost \
    --ip 127.0.0.1 >/dev/null 2>&1
port=$((20000 + RANDOM % 20000)); probe=$((port + 1))
ncpu=$(nproc)
pin_srv=""; pin_load=""
if command -v taskset >/dev/null && [ "$ncpu" -ge 2 ]; then pin_srv="taskset -c 0"; pin_load="taskset -c 1"; fi
$pin_srv $BUILD/trainguard serve --listen 127.0.0.1:$port --probe-listen 127.0.0.1:$probe \
    --tls-cert-file "$tmp/tls.crt" --tls-private-key-file "$tmp/tls.key" --threads 1 \
    --log-level error 2>"$tmp/server.log" &
pid=$!
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$probe/readyz" >/dev/null && break; sleep 0.1; done
cpu_ticks() { awk '{print $14 + $15}' /proc/$target/stat; }
target=$pid
hz=$(getconf CLK_TCK)
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "server: --threads 1 pinned to core 0; wrk pinned to core 1; ${SECS}s per run"
printf '%-10s %-11s %5s %9s %8s %8s %9s %7s %10s\n' endpoint body conns rps p50_ms p99_ms p99.9_ms errors cpu_us/req
run() { # endpoint body conns close [label]: drives https://127.0.0.1:$port, measures $target
    local before after out
    before=$(cpu_ticks)
    out=$(BODY=tests/bench/bodies/$2.json CLOSE=$4 $pin_load wrk -t1 -c"$3" -d"${SECS}s" \
        -s tests/bench/post.lua "https://127.0.0.1:$port/$1" | tail -1)
    after=$(cpu_ticks)
    python3 - "$1" "$2" "$3" "$4" "$out" "$before" "$after" "$hz" "${5:-}" <<'PY'
import json, sys
ep, body, conns, close, out, b, a, hz, label = sys.argv[1:]
r = json.loads(out)
cpu_us = (int(a) - int(b)) * 1e6 / int(hz) / max(r["requests"], 1)
label = label or ep + ("+tls" if close == "1" else "")
print(f'{label:<10} {body:<11} {conns:>5} {r["rps"]:>9} {r["p50_ms"]:>8.3f} {r["p99_ms"]:>8.3f} {r["p999_ms"]:>9.3f} {r["errors"] + r["non2xx"]:>7} {cpu_us:>10.1f}')
PY
}
rss() { # what /proc says of $target: peak, and now anonymous / file-backed
    echo "$(awk '/VmHWM/ {print $2, $3}' /proc/$target/status) (now: $(awk '/RssAnon/ {printf "%s %s anonymous", $2, $3}' /proc/$target/status), $(awk '/RssFile/ {printf "%s %s file-backed, shared libraries", $2, $3}' /proc/$target/status))"
}
warm() { # one unrecorded second, so the first row is not the one that pays for cold caches
    BODY=tests/bench/bodies/pod-efa.json CLOSE=0 $pin_load wrk -t1 -c16 -d1s \
        -s tests/bench/post.lua "https://127.0.0.1:$port/validate" >/dev/null
}
warm
# The 6.8 KB EFA Pod first, so that the peak it causes is read before larger bodies raise it.
for c in $CONNS; do run validate pod-efa "$c" 0; run mutate pod-efa "$c" 0; done
rss_efa=$(rss)
for c in $CONNS; do
    for b in $BODIES; do [ "$b" = pod-efa ] || run validate $b "$c" 0; done
done
run validate pod-efa 16 1
echo "peak RSS under the EFA Pod load: $rss_efa"
echo "peak RSS over the whole run:     $(rss)"

# The yardstick: a Go net/http webhook that decodes the review and the object with
# encoding/json and allows everything (tests/bench/gobaseline), on the same core, same load.
if command -v go >/dev/null; then
    if (cd tests/bench/gobaseline && go build -o "$OLDPWD/$BUILD/gobaseline" .) 2>"$tmp/go.log"; then
        kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null || true
        port=$((port + 2))
        GOMAXPROCS=1 $pin_srv $BUILD/gobaseline -listen 127.0.0.1:$port -cert "$tmp/tls.crt" \
            -key "$tmp/tls.key" 2>"$tmp/go-server.log" &
        pid=$!
        target=$pid
        for _ in $(seq 100); do
            curl -sk -o /dev/null "https://127.0.0.1:$port/validate" && break
            sleep 0.1
        done
        echo
        echo "Go net/http baseline (decode only, no rules; GOMAXPROCS=1, same core):"
        warm
        for c in $CONNS; do run validate pod-efa "$c" 0 go-validate; done
        echo "Go peak RSS: $(rss)"
    else
        echo "bench: Go baseline not built: $(head -c 300 "$tmp/go.log")"
    fi
else
    echo "bench: go not found (make deps installs golang-go): no Go baseline"
fi
echo
echo "pipeline alone (no network), microseconds per request:"
$BUILD/bench_pipeline tests/bench/bodies/*.json
