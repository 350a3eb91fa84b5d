#!/usr/bin/env bash
# make bench: end-to-end HTTPS benchmark (server pinned to core 0, wrk to core 1) and the
# in-process pipeline benchmark. Prints figures; asserts nothing about speed.
# The yardstick is the transport floor (tests/bench/floor.c: libmicrohttpd + GnuTLS answering a
# fixed allow review, one thread, the same certificate). Both servers run side by side on the
# same core, and each trainguard row follows a floor row on the same body and connection count,
# seconds apart: its CPU per request is given as a ratio to that floor row (on a shared machine
# absolute figures move with the other load; a ratio of two rows taken back to back is steadier).
# Knobs: BENCH_SECONDS (default 10, per row), BENCH_ROUNDS (default 3: each row's seconds as
# that many runs alternating with the floor's), BENCH_CONNS (default "16 64"), BENCH_BODIES,
# BENCH_HANDSHAKE_SECONDS (default 5), BENCH_CALLGRIND=1 (instructions per request in the handler),
# BENCH_WORK_US (default 20: the calibration row, a floor that spins that long per request).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECS=${BENCH_SECONDS:-10}
ROUNDS=${BENCH_ROUNDS:-3}
[ "$ROUNDS" -ge 1 ] 2>/dev/null || { echo "bench: BENCH_ROUNDS must be a whole number >= 1"; exit 2; }
ROUND_SECS=$((SECS / ROUNDS))
[ "$ROUND_SECS" -ge 1 ] || ROUND_SECS=1
HS_SECS=${BENCH_HANDSHAKE_SECONDS:-5}
CONNS=${BENCH_CONNS:-16 64}
BODIES=${BENCH_BODIES:-pod-efa mpijob mpijob-torch pod-torch podgroup pod-large pod-update}
BUILD=build-bench
command -v wrk >/dev/null || { echo "bench: wrk not found (make deps installs it)"; exit 2; }
make --no-print-directory BUILD=$BUILD OPT="-O2 -DNDEBUG" $BUILD/trainguard $BUILD/libtg.a >/dev/null
cc -std=c11 -D_GNU_SOURCE -O2 -g -Iinclude -Isrc tests/bench/bench_pipeline.c $BUILD/libtg.a \
    $(pkg-config --cflags --libs libmicrohttpd jansson yaml-0.1 openssl gnutls) -lm -pthread \
    -o $BUILD/bench_pipeline
cc -std=c11 -D_GNU_SOURCE -O2 -Wall -Wextra tests/bench/floor.c \
    $(pkg-config --cflags --libs libmicrohttpd) -pthread -o $BUILD/floor
tmp=$(mktemp -d)
pids=()
cleanup() {
    for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
    wait 2>/dev/null || true
    rm -rf "$tmp"
}
trap cleanup EXIT
$BUILD/trainguard certs --out-dir "$tmp" --service trainguard --namespace bench --dns localhost \
    --ip 127.0.0.1 >/dev/null 2>&1
base=$((20000 + RANDOM % 20000))
fport=$base tport=$((base + 2)) probe=$((base + 3)) gport=$((base + 4)) wport=$((base + 5))
WORK_US=${BENCH_WORK_US:-20}
ncpu=$(nproc)
pin_srv=""; pin_load=""
if command -v taskset >/dev/null && [ "$ncpu" -ge 2 ]; then pin_srv="taskset -c 0"; pin_load="taskset -c 1"; fi
hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14, $15}' /proc/$1/stat; } # user and system ticks
wait_tls() { # port: until the server there completes a TLS handshake
    for _ in $(seq 100); do
        curl -sk -o /dev/null "https://127.0.0.1:$1/" && return 0
        sleep 0.1
    done
    echo "bench: the server on port $1 never answered"; exit 1
}
rss() { # pid: what /proc says: peak, and now anonymous / file-backed
    echo "$(awk '/VmHWM/ {print $2, $3}' /proc/$1/status) (now: $(awk '/RssAnon/ {printf "%s %s anonymous", $2, $3}' /proc/$1/status), $(awk '/RssFile/ {printf "%s %s file-backed, shared libraries", $2, $3}' /proc/$1/status))"
}

# The servers, all pinned to core 0 (an idle one costs nothing).
$pin_srv $BUILD/floor $fport "$tmp/tls.crt" "$tmp/tls.key" 2>"$tmp/floor.log" &
fpid=$!
pids+=("$fpid")
$pin_srv $BUILD/trainguard serve --listen 127.0.0.1:$tport --probe-listen 127.0.0.1:$probe \
    --tls-cert-file "$tmp/tls.crt" --tls-private-key-file "$tmp/tls.key" --threads 1 \
    --log-level ${BENCH_LOG_LEVEL:-info} 2>"$tmp/server.log" &
tpid=$!
pids+=("$tpid")
# The calibration floor: the same server spending WORK_US of CPU per request before it answers.
$pin_srv $BUILD/floor $wport "$tmp/tls.crt" "$tmp/tls.key" "$WORK_US" 2>"$tmp/floor-work.log" &
wpid=$!
pids+=("$wpid")
gpid=""
if command -v go >/dev/null; then
    if (cd tests/bench/gobaseline && go build -o "$OLDPWD/$BUILD/gobaseline" .) 2>"$tmp/go.log"; then
        GOMAXPROCS=1 $pin_srv $BUILD/gobaseline -listen 127.0.0.1:$gport -cert "$tmp/tls.crt" \
            -key "$tmp/tls.key" 2>"$tmp/go-server.log" &
        gpid=$!
        pids+=("$gpid")
    else
        echo "bench: Go baseline not built: $(head -c 300 "$tmp/go.log")"
    fi
else
    echo "bench: go not found (make deps installs golang-go): no Go baseline"
fi
wait_tls $fport
wait_tls $wport
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$probe/readyz" >/dev/null && break; sleep 0.1; done
[ -z "$gpid" ] || wait_tls $gport

echo "machine: $ncpu cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "servers: one thread each, pinned to core 0; wrk and openssl pinned to core 1; $((ROUNDS * ROUND_SECS))s per row,"
echo "as $ROUNDS runs of ${ROUND_SECS}s that alternate with the yardstick's (floor, trainguard, floor, ...)"
echo "x_floor: CPU per request over the floor row above (same body, connections, endpoint), and"
echo "x_range: the lowest and highest ratio of the rounds; cpu_us/req is user + system time"
echo "(usr_us, sys_us) of the server process; latencies are the median of the rounds'"
printf '%-12s %-12s %5s %9s %8s %8s %9s %7s %10s %7s %7s %7s %9s\n' server body conns rps p50_ms \
    p99_ms p99.9_ms errors cpu_us/req usr_us sys_us x_floor x_range
once() { # label pid port endpoint body conns close: one wrk run of SECS/ROUNDS seconds,
    # appended as a JSON line (wrk's figures and the server's CPU ticks) to $tmp/rows
    local before after out
    before=$(cpu_ticks "$2")
    out=$(BODY=tests/bench/bodies/$5.json CLOSE=$7 $pin_load wrk -t1 -c"$6" -d"${ROUND_SECS}s" \
        -s tests/bench/post.lua "https://127.0.0.1:$3/$4" | tail -1)
    after=$(cpu_ticks "$2")
    echo "$1 $5 $6 $before $after $out" >>"$tmp/rows"
}
# Prints the rows of one comparison: the yardstick's (floor, ...) and the server's, each summed
# over its ROUNDS runs, which alternate (floor, server, floor, server, ...) so that a change in
# the machine's other load falls on both. x_floor: CPU per request over the yardstick's;
# x_range: the lowest and highest of the per-round ratios.
report() {
    python3 - "$hz" "$tmp/rows" <<'PY'
import json, statistics, sys
hz, path = int(sys.argv[1]), sys.argv[2]
rows = {}
for line in open(path):
    label, body, conns, bu, bs, au, as_, out = line.split(" ", 7)
    r = json.loads(out)
    rows.setdefault(label, []).append((body, conns, int(au) - int(bu), int(as_) - int(bs), r))
labels = list(rows)
def total(label):
    runs = rows[label]
    n = sum(r["requests"] for *_, r in runs)
    per = 1e6 / hz / max(n, 1)
    usr = sum(u for _, _, u, _, _ in runs) * per
    sys_ = sum(s for _, _, _, s, _ in runs) * per
    return n, usr, sys_
def per_round(label):
    return [(u + s) * 1e6 / hz / max(r["requests"], 1) for _, _, u, s, r in rows[label]]
base = total(labels[0])
base_rounds = per_round(labels[0])
for label in labels:
    runs = rows[label]
    body, conns = runs[0][0], runs[0][1]
    n, usr, sys_ = total(label)
    med = lambda k: statistics.median(r[k] for *_, r in runs)
    rps = sum(r["requests"] for *_, r in runs) / max(sum(r["duration_s"] for *_, r in runs), 1e-9)
    errors = sum(r["errors"] + r["non2xx"] for *_, r in runs)
    ratio = (usr + sys_) / max(base[1] + base[2], 1e-9)
    rr = [a / max(b, 1e-9) for a, b in zip(per_round(label), base_rounds)]
    span = f"{min(rr):.2f}-{max(rr):.2f}" if label != labels[0] else ""
    print(f"{label:<12} {body:<12} {conns:>5} {rps:>9.0f} {med('p50_ms'):>8.3f} "
          f"{med('p99_ms'):>8.3f} {med('p999_ms'):>9.3f} {errors:>7} {usr + sys_:>10.1f} "
          f"{usr:>7.1f} {sys_:>7.1f} {ratio:>7.2f} {span:>9}")
PY
    : >"$tmp/rows"
}
compare() { # endpoint body conns close label1 pid1 port1 label2 pid2 port2
    : >"$tmp/rows"
    for _ in $(seq "$ROUNDS"); do
        once "$5" "$6" "$7" "$1" "$2" "$3" "$4"
        once "$8" "$9" "${10}" "$1" "$2" "$3" "$4"
    done
    report
}
handshakes() { # label pid port version: new TLS connections per second (openssl s_time -new)
    local before after out
    before=$(cpu_ticks "$2")
    out=$($pin_load openssl s_time -connect 127.0.0.1:$3 -new -"$4" -time "$HS_SECS" 2>&1 |
        grep 'connections in .* real seconds' | tail -1)
    after=$(cpu_ticks "$2")
    python3 - "$1" "$4" "$out" "$before" "$after" "$hz" "$tmp" <<'PY'
import os, re, sys
label, ver, out, b, a, hz, tmp = sys.argv[1:]
b, a = (sum(map(int, x.split())) for x in (b, a))
m = re.match(r"\s*(\d+) connections in (\d+) real seconds", out)
if not m:
    print(f"{label:<12} {ver:<8} openssl s_time said: {out!r}")
    sys.exit(0)
n, secs = int(m.group(1)), int(m.group(2))
rate = n / max(secs, 1)
cpu_us = (int(a) - int(b)) * 1e6 / int(hz) / max(n, 1)
path = os.path.join(tmp, "floor.hs")
if label == "floor":
    with open(path, "w") as f:
        f.write(f"{rate} {cpu_us}")
ratio = cpu_ratio = ""
try:
    with open(path) as f:
        f_rate, f_cpu = (float(x) for x in f.read().split())
    ratio, cpu_ratio = f"{rate / f_rate:.2f}", f"{cpu_us / f_cpu:.2f}"
except (OSError, ZeroDivisionError, ValueError):
    pass
print(f"{label:<12} {ver:<8} {rate:>10.0f} {cpu_us:>12.1f} {ratio:>8} {cpu_ratio:>8}")
PY
}
warm() { # port: one unrecorded second, so that no first row pays for cold caches
    BODY=tests/bench/bodies/pod-efa.json CLOSE=0 $pin_load wrk -t1 -c16 -d1s \
        -s tests/bench/post.lua "https://127.0.0.1:$1/validate" >/dev/null
}
pair() { # endpoint body conns close: the floor and trainguard, alternating
    local suffix=""
    [ "$1" = mutate ] && suffix="-mut"
    [ "$4" = 1 ] && suffix="$suffix+close"
    compare "$1" "$2" "$3" "$4" "floor$suffix" "$fpid" $fport "trainguard$suffix" "$tpid" $tport
}
warm $fport
warm $tport
# The 6.8 KB EFA Pod first, so that the peak it causes is read before larger bodies raise it.
for c in $CONNS; do pair validate pod-efa "$c" 0; pair mutate pod-efa "$c" 0; done
rss_efa=$(rss $tpid)
# Calibration: the floor plus WORK_US of CPU per request, against the floor row before it. Its
# x_floor is what a handler of that cost alone would score (the kernel share grows with it).
compare validate pod-efa 16 0 floor "$fpid" $fport "spin+${WORK_US}us" "$wpid" $wport
for c in $CONNS; do
    for b in $BODIES; do [ "$b" = pod-efa ] || pair validate "$b" "$c" 0; done
done
pair validate pod-efa 16 1
echo "floor peak RSS: $(rss $fpid)"
echo "trainguard peak RSS under the EFA Pod load: $rss_efa"
echo "trainguard peak RSS over the whole run:     $(rss $tpid)"
echo
echo "new TLS connections (openssl s_time -new, one at a time):"
printf '%-12s %-8s %10s %12s %8s %8s\n' server version conn/s cpu_us/conn x_floor cpu_x_fl
for v in tls1_3 tls1_2; do
    handshakes floor "$fpid" $fport $v
    handshakes trainguard "$tpid" $tport $v
done
echo "decision lines logged: $(grep -c '"msg":"admission"' "$tmp/server.log" || true)"

# The yardstick of the first round: a Go net/http webhook that decodes the review and the object
# with encoding/json and allows everything (tests/bench/gobaseline), on the same core, same load.
if [ -n "$gpid" ]; then
    echo
    echo "Go net/http baseline (decode only, no rules; GOMAXPROCS=1, same core):"
    warm $gport
    for c in $CONNS; do
        compare validate pod-efa "$c" 0 floor "$fpid" $fport go "$gpid" $gport
    done
    echo "Go peak RSS: $(rss $gpid)"
fi
echo
echo "pipeline alone (no network), microseconds per request:"
$BUILD/bench_pipeline tests/bench/bodies/*.json
if [ "${BENCH_CALLGRIND:-0}" = 1 ] && command -v valgrind >/dev/null; then
    echo
    echo "instructions per request inside tg_admission_handle (callgrind, 200 requests):"
    for b in pod-efa mpijob-torch pod-torch pod-large; do
        for e in validate mutate; do
            BENCH_ITER=200 valgrind --tool=callgrind --callgrind-out-file="$tmp/cg.out" \
                --toggle-collect=tg_admission_handle $BUILD/bench_pipeline --only $e \
                tests/bench/bodies/$b.json >/dev/null 2>"$tmp/cg.log"
            ir=$(grep -m1 '^summary:' "$tmp/cg.out" | awk '{print $2}')
            printf '%-12s %-8s %12d\n' "$b" "$e" $((ir / 200))
        done
    done
fi
