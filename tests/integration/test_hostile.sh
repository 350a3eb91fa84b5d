#!/usr/bin/env bash
# test_hostile.sh -- hostile clients against `trainguard serve` while well-behaved ones keep being
# served: slow headers and bodies (slowloris), half-open connections, a connection flood past
# --max-connections, a Content-Length larger than the body, a body over 7 MiB sent slowly, TLS 1.0
# and 1.1 only clients, plain HTTP and garbage on the TLS port. Asserts that the server lives, that
# the good clients had no failure (200 with their uid, every time) and that RSS stayed small.
# Needs bash, curl and openssl; 127.0.0.1 only; about 30 s; kills everything it starts.
set -u
set -m # every background job in its own process group, so cleanup can end a whole pipeline
TG_BIN=${TG_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/trainguard}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/tg-hostile.XXXXXX")
MAXCONN=32   # --max-connections: small, so that a flood passes it quickly
CTIMEOUT=3   # --connection-timeout (idle seconds)
HTIMEOUT=5   # --header-timeout: headers must be complete this long after the request line
SPID=""
JOBS_PG=()
PASS=0
FAIL=0
T_START=$SECONDS
T0_MS=$(($(date +%s%N) / 1000000))

cleanup() {
    for p in "${JOBS_PG[@]}"; do kill -- "-$p" 2>/dev/null; done
    [ -n "$SPID" ] && kill -9 "$SPID" 2>/dev/null
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM HUP
trap '' PIPE

ok() { PASS=$((PASS + 1)); echo "ok - $1"; }
phase() { echo "$(($(now_ms) - T0_MS)) $1" >> "$WORK/phases"; } # for the slowest-request report
not_ok() {
    FAIL=$((FAIL + 1))
    echo "not ok - $1"
    [ $# -gt 1 ] && echo "    $2" | head -c 800 && echo
}
expect() { if [ "$2" = "$3" ]; then ok "$1"; else not_ok "$1" "got '$2', want '$3'"; fi; }
# expect_le DESC ACTUAL MAX (integers)
expect_le() {
    if [ "$2" -le "$3" ] 2>/dev/null; then ok "$1 ($2 <= $3)"; else not_ok "$1" "got $2, want <= $3"; fi
}
bg() { "$@" & JOBS_PG+=("$!"); } # runs a command in the background in its own process group
now_ms() { echo $(($(date +%s%N) / 1000000)); }
alive() { [ -n "$SPID" ] && kill -0 "$SPID" 2>/dev/null; }
rss_kib() { awk -v k="$1" '$1 == k":" { print $2 }' "/proc/$SPID/status" 2>/dev/null; }
sockets() { # sockets the server holds (listeners and connections)
    local n=0 f
    for f in /proc/"$SPID"/fd/*; do [[ "$(readlink "$f" 2>/dev/null)" == socket:* ]] && n=$((n + 1)); done
    echo "$n"
}
inflight() {
    curl -sS --max-time 3 "http://127.0.0.1:$PPORT/metrics" 2>/dev/null |
        awk '$1 == "trainguard_inflight_requests" { print $2 }'
}

# ---- server -----------------------------------------------------------------------------------
"$TG_BIN" certs --out-dir "$WORK/certs" --service trainguard --namespace test --dns localhost \
    --ip 127.0.0.1 >/dev/null 2>"$WORK/certs.err" ||
    { echo "cannot make certificates: $(cat "$WORK/certs.err")"; echo "0 passed, 1 failed"; exit 1; }
CA=$WORK/certs/ca.crt
"$TG_BIN" serve --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 \
    --tls-cert-file "$WORK/certs/tls.crt" --tls-private-key-file "$WORK/certs/tls.key" \
    --threads 2 --max-connections $MAXCONN --connection-timeout $CTIMEOUT --header-timeout $HTIMEOUT \
    --shutdown-delay 0 \
    --drain-timeout 2 2>"$WORK/server.log" &
SPID=$!
for _ in $(seq 1 100); do
    grep -qs 'probes listening' "$WORK/server.log" && break
    alive || break
    sleep 0.1
done
WPORT=$(grep -o 'webhook listening on [^ ]* port [0-9]*' "$WORK/server.log" | awk '{print $NF}')
PPORT=$(grep -o 'probes listening on [^ ]* port [0-9]*' "$WORK/server.log" | awk '{print $NF}')
if [ -z "$WPORT" ] || [ -z "$PPORT" ]; then
    echo "not ok - server starts: $(head -c 600 "$WORK/server.log")"
    echo "0 passed, 1 failed"
    exit 1
fi
ok "server starts (--max-connections $MAXCONN --connection-timeout $CTIMEOUT --threads 2)"
URL=https://127.0.0.1:$WPORT/validate
# ASan and UBSan builds (make check-asan) have a much larger footprint: a looser RSS bound there.
RSS_MAX_MIB=64
GROW_MAX_MIB=24
if grep -qa '__asan_init' "$TG_BIN" 2>/dev/null || { command -v ldd >/dev/null &&
    ldd "$TG_BIN" 2>/dev/null | grep -q libasan; }; then
    RSS_MAX_MIB=1024
    GROW_MAX_MIB=160 # ASan keeps freed memory in quarantine and pads every allocation
fi

review() { # uid -> a small valid AdmissionReview for a Pod
    printf '{"apiVersion":"admission.k8s.io/v1","kind":"AdmissionReview","request":{"uid":"%s",' "$1"
    printf '"kind":{"group":"","version":"v1","kind":"Pod"},'
    printf '"resource":{"group":"","version":"v1","resource":"pods"},"namespace":"ml",'
    printf '"name":"p1","operation":"CREATE","userInfo":{"username":"alice"},'
    printf '"object":{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p1"},'
    printf '"spec":{"containers":[{"name":"c","image":"busybox"}]}}}}'
}
review good-keepalive > "$WORK/ka.json"
review good-fresh > "$WORK/fresh.json"

# ---- well-behaved clients ------------------------------------------------------------------------
# Each answer is recorded as "<code> <uid-ok> <ms> <connects>"; bounded in count and in time.
STOP=$WORK/stop
RATE_OK=0
curl --help all 2>/dev/null | grep -q -- '--rate' && RATE_OK=1
# The keep-alive client: one curl per batch of 20 POSTs over one connection (--rate spaces them).
good_keepalive() {
    local urls=() b
    for _ in $(seq 1 20); do urls+=("$URL"); done
    for b in $(seq 1 60); do
        [ -e "$STOP" ] && break
        [ $((SECONDS - T_START)) -gt 50 ] && break
        curl -sS --cacert "$CA" --max-time 10 $([ $RATE_OK = 1 ] && echo "--rate 10/s") \
            -H 'Content-Type: application/json' --data-binary @"$WORK/ka.json" \
            -w '\n%{http_code} %{time_total} %{num_connects}\n' "${urls[@]}" 2>>"$WORK/ka.err" |
            awk '/^[0-9][0-9][0-9] / { ok = (prev ~ /"uid":"good-keepalive","allowed":true/);
                     printf "%s %d %d %s %s\n", $1, ok, $2 * 1000, $3, t; prev = ""; next }
                 { prev = $0 }' >> "$WORK/ka.log"
        [ $RATE_OK = 1 ] || sleep 0.5
    done
}
# The fresh-connection client: a new TLS connection for every POST, every 0.2 s.
good_fresh() {
    local out
    for _ in $(seq 1 250); do
        [ -e "$STOP" ] && break
        [ $((SECONDS - T_START)) -gt 50 ] && break
        t=$(($(now_ms) - T0_MS))
        out=$(curl -sS --cacert "$CA" --max-time 10 -H 'Content-Type: application/json' \
            --data-binary @"$WORK/fresh.json" -w '\n%{http_code} %{time_total} %{num_connects}\n' \
            "$URL" 2>>"$WORK/fresh.err")
        echo "$out" | awk -v t="$t" '/^[0-9][0-9][0-9] / { ok = (prev ~ /"uid":"good-fresh","allowed":true/);
                     printf "%s %d %d %s %s\n", $1, ok, $2 * 1000, $3, t;
                     prev = ""; next } { prev = $0 }' >> "$WORK/fresh.log"
        sleep 0.2
    done
}
: > "$WORK/ka.log"
: > "$WORK/fresh.log"
: > "$WORK/phases"
bg good_keepalive
KA=$!
bg good_fresh
FRESH=$!
sleep 1

# ---- hostile clients, phase 1: slow headers, half-open, stalled uploads (all under the limit) ----
# Slowloris: TLS connections that send a header line every second and never end the headers.
slowloris() { # seconds
    {
        printf 'POST /validate HTTP/1.1\r\nHost: localhost\r\n'
        for i in $(seq 1 "$1"); do sleep 1; printf 'X-Slow-%d: %d\r\n' "$i" "$i"; done
    } | timeout $(($1 + 3)) openssl s_client -quiet -connect "127.0.0.1:$WPORT" -CAfile "$CA" \
        >/dev/null 2>&1
}
# A Content-Length of 5000 with 14 bytes sent, then silence.
short_body() { # seconds
    {
        printf 'POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n'
        printf 'Content-Length: 5000\r\n\r\n{"apiVersion":'
        sleep "$1"
    } | timeout $(($1 + 3)) openssl s_client -quiet -connect "127.0.0.1:$WPORT" -CAfile "$CA" \
        >/dev/null 2>&1
}
# Slow body: complete headers, then one body byte a second (never idle, never complete here).
slow_body() { # seconds
    {
        printf 'POST /validate HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n'
        printf 'Content-Length: 100\r\n\r\n'
        for _ in $(seq 1 "$1"); do printf ' '; sleep 1; done
    } | timeout $(($1 + 3)) openssl s_client -quiet -connect "127.0.0.1:$WPORT" -CAfile "$CA" \
        >/dev/null 2>&1
}
base_sockets=$(sockets)
base_inflight=$(inflight)
phase "slowloris, slow bodies, half-open, stalled uploads"
for _ in $(seq 1 6); do bg slowloris 7; done
for _ in $(seq 1 3); do bg short_body 9; done
for _ in $(seq 1 2); do bg slow_body 7; done
HALF=()
for _ in $(seq 1 12); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$WPORT" && HALF+=("$fd")
done
expect "12 half-open TCP connections are accepted" "${#HALF[@]}" "12"
sleep 2
n=$(inflight)
if [ "${n:-0}" -ge 5 ]; then ok "stalled and slow uploads are in flight ($n)"; else
    not_ok "stalled and slow uploads are in flight" "trainguard_inflight_requests=$n"; fi
held=$(($(sockets) - base_sockets))
if [ "$held" -ge 20 ]; then ok "the server holds the slow and half-open connections ($held)"; else
    not_ok "the server holds the slow and half-open connections" "only $held more sockets"; fi
sleep $((CTIMEOUT + 1))
# Half-open connections are idle: cut by --connection-timeout (EOF on our side).
cut=0
for fd in "${HALF[@]}"; do
    read -r -t 1 -u "$fd" _ 2>/dev/null
    [ $? -le 1 ] && cut=$((cut + 1))   # 1 = EOF (0 would be data); > 128 = still open
    exec {fd}>&-
done
expect "half-open connections are closed by --connection-timeout" "$cut" "12"
n=$(inflight)
expect_le "stalled uploads (Content-Length larger than the body) are cut by the timeout" \
    "${n:-99}" "$((base_inflight + 4))" # the good clients' and the 2 slow bodies' (still dribbling)
# The slowloris clients send a byte every second: never idle, so the idle timeout keeps them.
# They are bounded by their own timeout here; the good clients ran beside them all along.

# ---- phase 2: oversize bodies, old TLS, plain HTTP, garbage --------------------------------------
phase "oversize bodies"
head -c $((8 * 1024 * 1024)) /dev/zero | tr '\0' ' ' > "$WORK/big.json"
t0=$(now_ms)
res=$(curl -sS --cacert "$CA" --max-time 20 --limit-rate 100k -H 'Content-Type: application/json' \
    --data-binary @"$WORK/big.json" -o "$WORK/big.body" -w '%{http_code} %{size_upload}' "$URL" \
    2>/dev/null)
dt=$(($(now_ms) - t0))
expect "8 MiB body declared by Content-Length, sent at 100 kB/s: 413" "${res%% *}" "413"
expect_le "... answered at once, in ms" "$dt" 3000
expect_le "... before 1 MiB of it was sent (bytes uploaded)" "${res##* }" $((1024 * 1024))
grep -q '"code":413' "$WORK/big.body" && ok "... with a JSON Status body" ||
    not_ok "... with a JSON Status body" "$(head -c 300 "$WORK/big.body")"
hwm_before=$(rss_kib VmHWM)
res=$(curl -sS --cacert "$CA" --max-time 20 --limit-rate 4M -H 'Content-Type: application/json' \
    -H 'Transfer-Encoding: chunked' --data-binary @"$WORK/big.json" -o /dev/null \
    -w '%{http_code}' "$URL" 2>/dev/null)
case "$res" in
    413 | 000) ok "8 MiB chunked body at 4 MB/s: 413 or cut ($res)" ;;
    *) not_ok "8 MiB chunked body at 4 MB/s: 413 or cut" "got $res" ;;
esac
grow=$((($(rss_kib VmHWM) - hwm_before) / 1024))
expect_le "... the server buffers at most about the 7 MiB limit (peak RSS growth, MiB)" "$grow" "$GROW_MAX_MIB"

phase "old TLS, plain HTTP, garbage"
sc() { timeout 5 openssl s_client -connect "127.0.0.1:$WPORT" -servername localhost \
    -CAfile "$CA" "$@" </dev/null 2>&1; }
# The client is made willing (security level 0); the server must still refuse.
for v in tls1 tls1_1; do
    sc "-$v" -cipher 'DEFAULT@SECLEVEL=0' > "$WORK/$v.out"
    if grep -qE 'Cipher is \(NONE\)|handshake failure|no protocols available|alert' "$WORK/$v.out" &&
        ! grep -qE 'New, TLSv1(\.1)?,' "$WORK/$v.out"; then
        ok "a client offering only -$v gets no handshake"
    else
        not_ok "a client offering only -$v gets no handshake" "$(tail -5 "$WORK/$v.out")"
    fi
done
expect "curl --tls-max 1.1 fails" "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 \
    --tls-max 1.1 --cacert "$CA" "$URL" 2>/dev/null)" "000"
code=$(curl -sS -o "$WORK/plain.body" -w '%{http_code}' --max-time 5 \
    -H 'Content-Type: application/json' --data-binary @"$WORK/fresh.json" \
    "http://127.0.0.1:$WPORT/validate" 2>/dev/null)
case "$code" in
    000 | 400) ok "plain HTTP on the TLS port: closed or 400 ($code)" ;;
    *) not_ok "plain HTTP on the TLS port: closed or 400" "got $code" ;;
esac
# All at once; each reader ends when the server closes (at once, or after the idle timeout for a
# record announced but never completed).
GARBAGE=()
for i in $(seq 1 10); do
    if exec {g}<>"/dev/tcp/127.0.0.1/$WPORT"; then
        case $((i % 3)) in
            0) head -c 4096 /dev/urandom >&$g 2>/dev/null ;;
            1) printf '\x16\x03\x01\x40\x00\x01\x00\x3f\xfc' >&$g 2>/dev/null ;; # huge record, cut
            2) printf 'GET / HTTP/1.1\r\nHost: x\r\n\r\n' >&$g 2>/dev/null ;;
        esac
        timeout $((CTIMEOUT + 4)) cat <&$g >/dev/null 2>&1 &
        GARBAGE+=("$!")
        exec {g}>&-
    fi
done
garbage_ok=0
for p in "${GARBAGE[@]}"; do wait "$p" && garbage_ok=$((garbage_ok + 1)); done
expect "garbage and plain HTTP on the TLS port: the server closes all 10 connections" \
    "$garbage_ok" "10"
alive && ok "the server is alive after phase 2" || not_ok "the server is alive after phase 2"

# ---- phase 3: a connection flood up to and past the limit ---------------------------------------
phase "flood"
# First 200 connections opened and closed at once (while the server accepts them), then more than
# the limit held open: those past it wait in the listen backlog.
churn=0
for _ in $(seq 1 200); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$WPORT" 2>/dev/null && { exec {fd}>&-; churn=$((churn + 1)); }
done
FLOOD=()
for _ in $(seq 1 $((MAXCONN + 16))); do
    exec {fd}<>"/dev/tcp/127.0.0.1/$WPORT" 2>/dev/null && FLOOD+=("$fd")
done
if [ "${#FLOOD[@]}" -gt "$MAXCONN" ]; then
    ok "flood: ${#FLOOD[@]} connections held open (limit $MAXCONN), $churn opened and closed"
else
    not_ok "flood: more connections than the limit" "only ${#FLOOD[@]}"
fi
sleep 1.5
alive && ok "the server is alive under the flood" || not_ok "the server is alive under the flood"
for fd in "${FLOOD[@]}"; do exec {fd}>&-; done
phase "after the flood"
t0=$(now_ms)
code=$(curl -sS --cacert "$CA" --max-time $((CTIMEOUT + 5)) -o /dev/null -w '%{http_code}' \
    -H 'Content-Type: application/json' --data-binary @"$WORK/fresh.json" "$URL" 2>/dev/null)
expect "a new client is served once the flood has gone" "$code" "200"
expect_le "... within the connection timeout (ms)" "$(($(now_ms) - t0))" $(((CTIMEOUT + 1) * 1000))

# ---- the good clients' record --------------------------------------------------------------------
sleep 1
touch "$STOP"
for _ in $(seq 1 150); do kill -0 "$KA" 2>/dev/null || kill -0 "$FRESH" 2>/dev/null || break; sleep 0.1; done
kill -- "-$KA" "-$FRESH" 2>/dev/null # only if they overran the 15 s above
wait "$KA" "$FRESH" 2>/dev/null
slowest_at() { # log -> ", at T ms, during PHASE" for the fresh client's slowest request
    local at
    at=$(awk 'NF >= 5 && $3 >= m { m = $3; t = $5 } END { print t }' "$1")
    [ -n "$at" ] || return 0
    awk -v t="$at" '$1 <= t { p = $0 } END { sub(/^[0-9]+ /, "", p);
        printf ", at %d ms, during %s", t, p == "" ? "the warm-up" : p }' "$WORK/phases"
}
report() { # name log
    local total bad slow max
    total=$(wc -l < "$2")
    bad=$(awk '$1 != 200 || $2 != 1' "$2" | wc -l)
    max=$(awk 'BEGIN { m = 0 } $3 > m { m = $3 } END { print m }' "$2")
    if [ "$total" -ge 10 ] && [ "$bad" -eq 0 ]; then
        ok "$1 client: $total requests, all 200 with its uid (slowest ${max} ms$(slowest_at "$2"))"
    else
        not_ok "$1 client: every request 200 with its uid" \
            "$bad of $total failed: $(awk '$1 != 200 || $2 != 1' "$2" | head -5 | tr '\n' ';') $(head -c 300 "$WORK/$3.err" 2>/dev/null)"
    fi
}
report "the keep-alive" "$WORK/ka.log" ka
report "the fresh-connection" "$WORK/fresh.log" fresh
reconnects=$(awk '$4 > 0' "$WORK/ka.log" | wc -l)
batches=$(awk 'BEGIN { n = 0 } { n++ } END { print int((n + 19) / 20) }' "$WORK/ka.log")
expect_le "the keep-alive client reused its connections (connects)" "$reconnects" "$((batches + 1))"

# ---- slow headers at the connection limit --------------------------------------------------------
# --connection-timeout is only an idle timeout: a client that sends a header line every second is
# never idle. Enough of them fill --max-connections; the server's header deadline
# (--header-timeout, src/server/conntrack.c) cuts them, so a new client is served within it.
for _ in $(seq 1 $((MAXCONN + 2))); do bg slowloris 12; done
sleep $((CTIMEOUT + 1))
t0=$(date +%s)
code=$(curl -sS --cacert "$CA" --max-time 2 --retry 8 --retry-delay 1 --retry-all-errors \
    -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
    --data-binary @"$WORK/fresh.json" "$URL" 2>/dev/null)
waited=$(( $(date +%s) - t0 ))
if [ "$code" = 200 ]; then
    ok "a new client is served while $((MAXCONN + 2)) slowloris clients dribble headers (${waited}s)"
else
    not_ok "a new client is served while $((MAXCONN + 2)) slowloris clients dribble headers" "got $code"
fi
for p in "${JOBS_PG[@]}"; do kill -- "-$p" 2>/dev/null; done
for p in "${JOBS_PG[@]}"; do wait "$p" 2>/dev/null; done
JOBS_PG=()

# ---- the server at the end --------------------------------------------------------------------------
expect "/healthz is 200 at the end" "$(curl -sS -o /dev/null -w '%{http_code}' --max-time 5 \
    "http://127.0.0.1:$PPORT/healthz")" "200"
t0=$(now_ms)
for _ in $(seq 1 50); do
    code=$(curl -sS --cacert "$CA" --max-time 2 -o /dev/null -w '%{http_code}' \
        -H 'Content-Type: application/json' --data-binary @"$WORK/fresh.json" "$URL" 2>/dev/null)
    [ "$code" = 200 ] && break
    sleep 0.2
done
expect "/validate is 200 again once the hostile clients are gone" "$code" "200"
rss=$(rss_kib VmRSS)
hwm=$(rss_kib VmHWM)
expect_le "RSS at the end (MiB)" "$((${rss:-999999} / 1024))" "$RSS_MAX_MIB"
expect_le "peak RSS (MiB)" "$((${hwm:-999999} / 1024))" "$RSS_MAX_MIB"
if grep -qiE 'AddressSanitizer|runtime error|Segmentation|Aborted' "$WORK/server.log"; then
    not_ok "no sanitizer report or crash in the server log" "$(grep -iE 'Sanitizer|runtime error' \
        "$WORK/server.log" | head -3)"
else
    ok "no sanitizer report or crash in the server log"
fi
kill -TERM "$SPID"
for _ in $(seq 1 50); do alive || break; sleep 0.1; done
if alive; then
    not_ok "the server stops within 5 s of SIGTERM"
    kill -9 "$SPID"
fi
wait "$SPID"
rc=$?
if [ "$rc" = 0 ]; then ok "the server stops with exit 0 on SIGTERM"; else
    not_ok "the server stops with exit 0 on SIGTERM" "exit $rc; $(grep -vE '^\{' "$WORK/server.log" |
        grep -E 'ERROR|SUMMARY|#[0-9] ' | head -12)"
fi
SPID=""
echo "# phases (ms since start): $(tr '\n' ';' < "$WORK/phases") end $(($(now_ms) - T0_MS))"
echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
