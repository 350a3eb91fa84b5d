#!/usr/bin/env bash
# test_tls_profile.sh -- the webhook's TLS profile end to end with the openssl CLI: by default
# TLS 1.2 offers only ECDHE with AEAD suites (a client offering only CBC or static-RSA suites is
# refused) and TLS 1.3 works; --tls-min-version VersionTLS13 refuses TLS 1.2;
# --tls-cipher-suites narrows TLS 1.2 to the named suites; bad values are usage errors.
set -u
TG_BIN=${TG_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/trainguard}
HERE=$(cd "$(dirname "$0")" && pwd)
. "$(dirname "$0")/tap.sh" tls-profile

C="$WORK/certs"
bash "$HERE/server_certs.sh" "$C" || { echo "cannot make certificates"; exit 1; }
# An RSA serving pair too, for the ECDHE-RSA suites and the static-RSA ones that must be refused.
openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out "$C/rsa.key" 2>/dev/null
openssl req -new -key "$C/rsa.key" -subj "/CN=serving-rsa" -out "$C/rsa.csr" 2>/dev/null
printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\nsubjectAltName=DNS:localhost,IP:127.0.0.1\n' > "$C/rsa.ext"
openssl x509 -req -in "$C/rsa.csr" -CA "$C/ca.crt" -CAkey "$C/ca.key" -CAcreateserial \
    -out "$C/rsa.crt" -days 5 -extfile "$C/rsa.ext" 2>/dev/null

# Starts a server; sets SPID and WPORT; the log is $WORK/$1.log.
start_server() {
    local name=$1
    shift
    tap_serve "$name" --listen 127.0.0.1:0 --probe-listen 127.0.0.1:0 --shutdown-delay 0 "$@"
}
stop_server() { kill -TERM "$SPID"; wait "$SPID"; }

# handshake ARGS... -> the negotiated "PROTOCOL CIPHER", or "refused"
handshake() {
    local out
    out=$(timeout 5 openssl s_client -connect "127.0.0.1:$WPORT" -servername localhost \
        -CAfile "$C/ca.crt" "$@" </dev/null 2>&1)
    if echo "$out" | grep -q 'Cipher is (NONE)' || ! echo "$out" | grep -q 'Cipher is '; then
        echo refused
    else
        echo "$out" | sed -n 's/^New, \(TLSv1\.[23]\), Cipher is \(.*\)$/\1 \2/p' | head -1
    fi
}

# ---- the default profile, ECDSA certificate ---------------------------------------------------
start_server ecdsa --tls-cert-file "$C/tls.crt" --tls-private-key-file "$C/tls.key" ||
    { not_ok "server starts" "$(cat "$WORK/ecdsa.log")"; echo "$PASS passed, $FAIL failed"; exit 1; }
expect "TLS 1.2 client offering only ECDHE-ECDSA-AES128-SHA (CBC) is refused" \
    "$(handshake -tls1_2 -cipher ECDHE-ECDSA-AES128-SHA)" "refused"
expect "TLS 1.2 client offering only ECDHE-ECDSA-AES256-SHA (CBC) is refused" \
    "$(handshake -tls1_2 -cipher ECDHE-ECDSA-AES256-SHA)" "refused"
expect "TLS 1.2 client offering every CBC suite is refused" \
    "$(handshake -tls1_2 -cipher 'ECDHE-ECDSA-AES128-SHA:ECDHE-ECDSA-AES256-SHA:ECDHE-ECDSA-AES128-SHA256:ECDHE-ECDSA-AES256-SHA384')" \
    "refused"
expect "TLS 1.2 client offering only AES-CCM (AEAD, but not in the profile) is refused" \
    "$(handshake -tls1_2 -cipher ECDHE-ECDSA-AES128-CCM)" "refused"
for c in ECDHE-ECDSA-AES128-GCM-SHA256 ECDHE-ECDSA-AES256-GCM-SHA384 ECDHE-ECDSA-CHACHA20-POLY1305; do
    expect "TLS 1.2 $c is accepted" "$(handshake -tls1_2 -cipher "$c")" "TLSv1.2 $c"
done
for c in TLS_AES_128_GCM_SHA256 TLS_AES_256_GCM_SHA384 TLS_CHACHA20_POLY1305_SHA256; do
    expect "TLS 1.3 $c is accepted" "$(handshake -tls1_3 -ciphersuites "$c")" "TLSv1.3 $c"
done
expect "a default client negotiates TLS 1.3" "$(handshake | cut -d' ' -f1)" "TLSv1.3"
stop_server

# ---- the default profile, RSA certificate -----------------------------------------------------
start_server rsa --tls-cert-file "$C/rsa.crt" --tls-private-key-file "$C/rsa.key" ||
    not_ok "server with an RSA certificate starts" "$(cat "$WORK/rsa.log")"
expect "TLS 1.2 ECDHE-RSA-AES128-GCM-SHA256 is accepted" \
    "$(handshake -tls1_2 -cipher ECDHE-RSA-AES128-GCM-SHA256)" "TLSv1.2 ECDHE-RSA-AES128-GCM-SHA256"
expect "TLS 1.2 ECDHE-RSA-CHACHA20-POLY1305 is accepted" \
    "$(handshake -tls1_2 -cipher ECDHE-RSA-CHACHA20-POLY1305)" "TLSv1.2 ECDHE-RSA-CHACHA20-POLY1305"
expect "TLS 1.2 ECDHE-RSA-AES128-SHA (CBC) is refused" \
    "$(handshake -tls1_2 -cipher ECDHE-RSA-AES128-SHA)" "refused"
expect "TLS 1.2 AES128-GCM-SHA256 (static RSA key exchange) is refused" \
    "$(handshake -tls1_2 -cipher AES128-GCM-SHA256)" "refused"
expect "TLS 1.2 DHE-RSA-AES128-GCM-SHA256 (finite-field DHE) is refused" \
    "$(handshake -tls1_2 -cipher DHE-RSA-AES128-GCM-SHA256)" "refused"
stop_server

# ---- --tls-min-version VersionTLS13 -------------------------------------------------------------
start_server tls13 --tls-cert-file "$C/tls.crt" --tls-private-key-file "$C/tls.key" \
    --tls-min-version VersionTLS13 || not_ok "server with VersionTLS13 starts" "$(cat "$WORK/tls13.log")"
grep -q 'webhook listening on .* (TLS 1.3, ' "$WORK/tls13.log" && ok "... and says TLS 1.3" ||
    not_ok "... and says TLS 1.3" "$(grep listening "$WORK/tls13.log")"
expect "VersionTLS13 refuses a TLS 1.2 AEAD client" \
    "$(handshake -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256)" "refused"
expect "VersionTLS13 accepts TLS 1.3" "$(handshake -tls1_3 | cut -d' ' -f1)" "TLSv1.3"
stop_server

# ---- --tls-cipher-suites ----------------------------------------------------------------------
start_server narrow --tls-cert-file "$C/tls.crt" --tls-private-key-file "$C/tls.key" \
    --tls-cipher-suites TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384 ||
    not_ok "server with --tls-cipher-suites starts" "$(cat "$WORK/narrow.log")"
expect "the listed suite is accepted" "$(handshake -tls1_2 -cipher ECDHE-ECDSA-AES256-GCM-SHA384)" \
    "TLSv1.2 ECDHE-ECDSA-AES256-GCM-SHA384"
expect "an unlisted AEAD suite is refused" \
    "$(handshake -tls1_2 -cipher ECDHE-ECDSA-AES128-GCM-SHA256)" "refused"
expect "TLS 1.3 keeps the listed cipher" "$(handshake -tls1_3)" "TLSv1.3 TLS_AES_256_GCM_SHA384"
grep -q 'TLS 1.3 offers only the suites of the listed ciphers' "$WORK/narrow.log" &&
    ok "... and the log says so" || not_ok "... and the log says so" "$(cat "$WORK/narrow.log")"
stop_server

# ---- bad values are usage errors (exit 2) naming the problem ------------------------------------
usage() { # expected-message args...
    local want=$1 out rc
    shift
    out=$(timeout 5 "$TG_BIN" serve --tls-cert-file "$C/tls.crt" --tls-private-key-file "$C/tls.key" \
        "$@" 2>&1)
    rc=$?
    if [ "$rc" = 2 ] && echo "$out" | grep -qF -- "$want"; then
        ok "serve $* is refused: $want"
    else
        not_ok "serve $* is refused: $want" "exit $rc: $out"
    fi
}
usage "TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA is not allowed" \
    --tls-cipher-suites TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA
usage "TLS_RSA_WITH_AES_128_GCM_SHA256 is not allowed: RSA key exchange (no forward secrecy)" \
    --tls-cipher-suites TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,TLS_RSA_WITH_AES_128_GCM_SHA256
usage "unknown cipher suite 'ECDHE-ECDSA-AES128-GCM-SHA256'" \
    --tls-cipher-suites ECDHE-ECDSA-AES128-GCM-SHA256
usage "would also enable TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256" \
    --tls-cipher-suites TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256
usage "VersionTLS11 is not allowed" --tls-min-version VersionTLS11
usage "unknown version 'tls1.3'" --tls-min-version tls1.3
out=$(timeout 5 "$TG_BIN" serve --help)
echo "$out" | grep -q -- '--tls-cipher-suites' && echo "$out" | grep -q -- '--tls-min-version' &&
    ok "--help lists the TLS flags" || not_ok "--help lists the TLS flags"

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
