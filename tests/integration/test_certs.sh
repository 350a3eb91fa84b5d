#!/usr/bin/env bash
# test_certs.sh -- `trainguard certs` end to end, checked with the openssl command line tool.
# Needs $TG_BIN (the trainguard binary) and openssl; prints "N passed, M failed", exits 1 on failure.
set -u

BIN=${TG_BIN:-build/trainguard}
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { # check NAME COMMAND...: passes when the command succeeds
    local name=$1
    shift
    if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name"; fi
}

if ! command -v openssl >/dev/null 2>&1; then
    echo "SKIP: openssl command not found (apt-get install openssl)"
    echo "0 passed, 0 failed"
    exit 0
fi
if [ ! -x "$BIN" ]; then
    echo "FAIL: TG_BIN=$BIN is not executable"
    echo "0 passed, 1 failed"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-certs-it.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
out=$tmp/a/out

# ---- OpenSSL is in trainguard-x509.so, found beside the binary or in ../lib/trainguard/ ----
mkdir -p "$tmp/lonely/bin" "$tmp/lonely/lib/trainguard"
cp "$BIN" "$tmp/lonely/bin/trainguard"
"$tmp/lonely/bin/trainguard" certs --out-dir "$tmp/lonely/out" --service a --namespace b \
    >/dev/null 2>"$tmp/lonely.err"
check "without trainguard-x509.so: exit 1" test $? -eq 1
check "... naming the file it looked for" grep -qF "$tmp/lonely/bin/trainguard-x509.so (not found)" \
    "$tmp/lonely.err"
check "... and writing nothing" test ! -e "$tmp/lonely/out/ca.crt"
cp "$(dirname "$BIN")/trainguard-x509.so" "$tmp/lonely/lib/trainguard/"
check "found in ../lib/trainguard/" "$tmp/lonely/bin/trainguard" certs --out-dir \
    "$tmp/lonely/out" --service a --namespace b

# ---- ECDSA, the default ----
"$BIN" certs --out-dir "$out" --service trainguard --namespace trainguard \
    --dns localhost --ip 127.0.0.1 --ip ::1 >"$tmp/stdout" 2>"$tmp/stderr"
rc=$?
check "exit 0 on success" test "$rc" -eq 0
for f in ca.crt ca.key tls.crt tls.key; do
    check "$f written" test -s "$out/$f"
done
check "ca.key mode 0600" test "$(stat -c %a "$out/ca.key")" = 600
check "tls.key mode 0600" test "$(stat -c %a "$out/tls.key")" = 600
check "openssl verify -CAfile ca.crt tls.crt" openssl verify -CAfile "$out/ca.crt" "$out/tls.crt"
check "valid for TLS server trainguard.trainguard.svc" openssl verify -CAfile "$out/ca.crt" \
    -purpose sslserver -verify_hostname trainguard.trainguard.svc "$out/tls.crt"
check "valid for IP 127.0.0.1" openssl verify -CAfile "$out/ca.crt" -verify_ip 127.0.0.1 \
    "$out/tls.crt"
check "not valid for another service" bash -c "! openssl verify -CAfile '$out/ca.crt' \
    -verify_hostname other.trainguard.svc '$out/tls.crt'"

san=$(openssl x509 -in "$out/tls.crt" -noout -ext subjectAltName 2>/dev/null)
for want in "DNS:trainguard," "DNS:trainguard.trainguard," "DNS:trainguard.trainguard.svc," \
    "DNS:trainguard.trainguard.svc.cluster.local" "DNS:localhost" "IP Address:127.0.0.1" \
    "IP Address:0:0:0:0:0:0:0:1"; do
    check "SAN has $want" grep -qF "$want" <<<"$san"
done
check "serving cert is ECDSA P-256" bash -c \
    "openssl x509 -in '$out/tls.crt' -noout -text | grep -q 'NIST CURVE: P-256'"
check "tls.key matches tls.crt" test \
    "$(openssl x509 -in "$out/tls.crt" -noout -pubkey | openssl sha256)" = \
    "$(openssl pkey -in "$out/tls.key" -pubout | openssl sha256)"
check "CA is CA:TRUE critical" bash -c \
    "openssl x509 -in '$out/ca.crt' -noout -ext basicConstraints | grep -A1 critical | grep -q CA:TRUE"
check "serving cert has serverAuth" bash -c \
    "openssl x509 -in '$out/tls.crt' -noout -ext extendedKeyUsage | grep -q 'TLS Web Server'"
check "stdout is the base64 of ca.crt" test "$(base64 -d <"$tmp/stdout" | openssl sha256)" = \
    "$(openssl sha256 <"$out/ca.crt")"
check "stdout is one line" test "$(wc -l <"$tmp/stdout")" -eq 1
check "stderr says where the files went" grep -qF "$out" "$tmp/stderr"

# ---- refusal and --force ----
before=$(openssl sha256 <"$out/ca.crt")
"$BIN" certs --out-dir "$out" --service trainguard --namespace trainguard >/dev/null 2>"$tmp/err"
rc=$?
check "second run without --force exits 1" test "$rc" -eq 1
check "refusal names the file" grep -q "ca.crt already exists.*--force" "$tmp/err"
check "refusal leaves ca.crt alone" test "$(openssl sha256 <"$out/ca.crt")" = "$before"
"$BIN" certs --out-dir "$out" --service trainguard --namespace trainguard --force \
    --key-type rsa --days 30 >/dev/null 2>&1
check "--force replaces the files" test "$(openssl sha256 <"$out/ca.crt")" != "$before"
check "RSA chain verifies" openssl verify -CAfile "$out/ca.crt" "$out/tls.crt"
check "RSA key is 2048 bits" bash -c \
    "openssl pkey -in '$out/tls.key' -noout -text | grep -q '2048 bit'"
check "keys still 0600 after --force" test "$(stat -c %a "$out/tls.key")" = 600
check "--days 30 sets notAfter within 31 days" bash -c \
    "! openssl x509 -in '$out/tls.crt' -noout -checkend $((31 * 86400))"
check "--days 30 not already expiring in 29 days" openssl x509 -in "$out/tls.crt" -noout \
    -checkend $((29 * 86400))
check "no temporary files left" test "$(ls -A "$out" | wc -l)" -eq 4

# ---- usage errors exit 2 ----
usage() { # usage NAME ARGS...: expects exit 2 and a message on stderr
    local name=$1
    shift
    "$BIN" certs "$@" >/dev/null 2>"$tmp/err"
    local rc=$?
    if [ "$rc" -eq 2 ] && [ -s "$tmp/err" ]; then ok "$name"; else bad "$name (exit $rc)"; fi
}
d=$tmp/never
usage "missing --service" --out-dir "$d" --namespace x
usage "missing --namespace" --out-dir "$d" --service x
usage "missing --out-dir" --service x --namespace y
usage "bad IP" --out-dir "$d" --service x --namespace y --ip 300.1.2.3
usage "days 0" --out-dir "$d" --service x --namespace y --days 0
usage "days huge" --out-dir "$d" --service x --namespace y --days 100000
usage "days not a number" --out-dir "$d" --service x --namespace y --days 1e3
usage "unknown flag" --out-dir "$d" --service x --namespace y --frobnicate
usage "bad key type" --out-dir "$d" --service x --namespace y --key-type ed25519
check "nothing created on usage errors" test ! -e "$d"
check "--help exits 0" "$BIN" certs --help
check "--help names every flag" bash -c "'$BIN' certs --help | grep -q -- --key-type"


# ---- the certificates work with `trainguard serve` (GnuTLS) as the API server would dial it ----
serve_pid=""
stop_server() {
    if [ -n "$serve_pid" ]; then
        kill "$serve_pid" 2>/dev/null
        wait "$serve_pid" 2>/dev/null
        serve_pid=""
    fi
}
trap 'stop_server; rm -rf "$tmp"' EXIT
svc=trainguard.trainguard.svc
# curl_svc CA PORT: POST an empty JSON object as the API server would address the Service; prints
# the HTTP status (000 when TLS fails)
curl_svc() {
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 --cacert "$1" \
        --resolve "$svc:$2:127.0.0.1" -H 'Content-Type: application/json' -d '{}' \
        "https://$svc:$2/validate"
}
if command -v curl >/dev/null 2>&1 && "$BIN" serve --help >/dev/null 2>&1; then
    for kt in ecdsa rsa; do
        d=$tmp/serve-$kt
        "$BIN" certs --out-dir "$d" --service trainguard --namespace trainguard --key-type "$kt" \
            >/dev/null 2>&1
        "$BIN" serve --tls-cert-file "$d/tls.crt" --tls-private-key-file "$d/tls.key" \
            --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --reload-interval 1 \
            --shutdown-delay 0 2>"$d/serve.log" &
        serve_pid=$!
        port=""
        for _ in $(seq 50); do
            port=$(sed -n 's/.*webhook listening on .* port \([0-9]*\) .*/\1/p' "$d/serve.log")
            [ -n "$port" ] && break
            sleep 0.1
        done
        if [ -z "$port" ]; then
            bad "$kt: trainguard serve starts with the certificates: $(head -c 300 "$d/serve.log")"
            stop_server
            continue
        fi
        ok "$kt: trainguard serve starts with the certificates"
        # 400: TLS and the name check passed; the body is not a review
        check "$kt: TLS handshake verifies $svc against ca.crt" \
            test "$(curl_svc "$d/ca.crt" "$port")" = 400
        check "$kt: another CA is refused" test "$(curl_svc "$out/ca.crt" "$port")" = 000
        if [ "$kt" = ecdsa ]; then
            # rotation: a new CA and serving certificate written over the served files
            cp "$d/ca.crt" "$d/old-ca.crt"
            "$BIN" certs --out-dir "$d" --service trainguard --namespace trainguard --force \
                >/dev/null 2>&1
            code=""
            for _ in $(seq 40); do
                code=$(curl_svc "$d/ca.crt" "$port")
                [ "$code" = 400 ] && break
                sleep 0.25
            done
            check "rotation: --force over the served files is picked up without a restart" \
                test "$code" = 400
            check "rotation: the old CA no longer verifies" \
                test "$(curl_svc "$d/old-ca.crt" "$port")" = 000
        fi
        stop_server
    done
else
    echo "SKIP: curl or trainguard serve not available: TLS checks against the server"
fi

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
