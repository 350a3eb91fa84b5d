#!/usr/bin/env bash
# server_certs.sh -- makes the certificates tests/integration/test_server.sh needs, with the
# openssl CLI: a CA, two serving pairs signed by it (for rotation), a key that matches neither, an
# expired pair, a client CA with a client certificate, and a stranger client certificate.
# Usage: server_certs.sh DIR
set -euo pipefail
d=$1
mkdir -p "$d"
cd "$d"
ossl() { openssl "$@" >/dev/null 2>&1; }
ec_key() { ossl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1"; }

ca() { # name cn
    ec_key "$1.key"
    ossl req -x509 -new -key "$1.key" -out "$1.crt" -days 30 -subj "/CN=$2" \
        -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign"
}

leaf() { # name ca cn usage san
    ec_key "$1.key"
    ossl req -new -key "$1.key" -out "$1.csr" -subj "/CN=$3"
    printf 'basicConstraints=CA:FALSE\nkeyUsage=critical,digitalSignature\nextendedKeyUsage=%s\n%s\n' \
        "$4" "$5" > "$1.ext"
    ossl x509 -req -in "$1.csr" -CA "$2.crt" -CAkey "$2.key" -CAcreateserial -out "$1.crt" \
        -days 5 -extfile "$1.ext"
}

ca ca "trainguard test CA"
leaf tls ca "serving-one" serverAuth "subjectAltName=DNS:localhost,IP:127.0.0.1"
leaf tls2 ca "serving-two" serverAuth "subjectAltName=DNS:localhost,IP:127.0.0.1"
ec_key stray.key

# An expired pair: `openssl ca` is the CLI way to set both dates in the past.
mkdir -p expired-db
: > expired-db/index.txt
echo 1000 > expired-db/serial
cat > expired-db/ca.cnf <<CNF
[ ca ]
default_ca = test
[ test ]
database = expired-db/index.txt
new_certs_dir = expired-db
serial = expired-db/serial
default_md = sha256
policy = any
copy_extensions = copy
[ any ]
commonName = supplied
CNF
ec_key expired.key
ossl req -new -key expired.key -out expired.csr -subj "/CN=expired" \
    -addext "subjectAltName=DNS:localhost,IP:127.0.0.1"
ossl ca -batch -config expired-db/ca.cnf -cert ca.crt -keyfile ca.key -in expired.csr \
    -out expired.crt -startdate 20200101000000Z -enddate 20200102000000Z -notext

ca clientca "trainguard client CA"
leaf client clientca "kube-apiserver" clientAuth "subjectAltName=DNS:apiserver"
ca otherca "some other CA"
leaf stranger otherca "stranger" clientAuth "subjectAltName=DNS:stranger"
