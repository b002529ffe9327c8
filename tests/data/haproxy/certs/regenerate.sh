#!/bin/sh
# Regenerates the self-signed test certificates used by the HAProxy configurations in the parent
# directory. Each file is a combined PEM: the certificate, then its PKCS#8 private key (the layout
# HAProxy's `crt` reads). Keys in test data are fine: nothing trusts these certificates.
#
# Run from this directory: sh regenerate.sh
set -eu

# make FILE KIND NAME... : a self-signed leaf (CA:FALSE, serverAuth) for the DNS names given, plus
# localhost and 127.0.0.1, valid for 100 years. KIND is rsa (RSA-2048) or ec (ECDSA P-256).
make() {
    file=$1 kind=$2
    shift 2
    san="DNS:localhost,IP:127.0.0.1"
    for name in "$@"; do san="$san,DNS:$name"; done
    case $kind in
        rsa) keyopts="-algorithm RSA -pkeyopt rsa_keygen_bits:2048"; usage="digitalSignature,keyEncipherment" ;;
        ec) keyopts="-algorithm EC -pkeyopt ec_paramgen_curve:P-256"; usage="digitalSignature" ;;
    esac
    mkdir -p "$(dirname "$file")"
    tmp=$(mktemp -d)
    # shellcheck disable=SC2086
    openssl genpkey $keyopts -out "$tmp/key.pem" 2>/dev/null
    openssl req -new -x509 -key "$tmp/key.pem" -out "$tmp/cert.pem" -days 36500 -sha256 \
        -subj "/CN=${1:-localhost}" \
        -addext "subjectAltName=$san" \
        -addext "basicConstraints=critical,CA:FALSE" \
        -addext "keyUsage=critical,$usage" \
        -addext "extendedKeyUsage=serverAuth"
    cat "$tmp/cert.pem" "$tmp/key.pem" > "$file"
    rm -rf "$tmp"
}

# seed000-figure2*.cfg: `crt-base` + `crt ecc/combined-ecc.crt` (and the commented RSA line)
make ecc/combined-ecc.crt ec
make rsa/combined-rsa.crt rsa
# example-ssl.cfg: a primary certificate and a directory of SNI certificates
make server.pem rsa
make certdir/www.example.org.pem ec www.example.org
# tls-termination-h2.cfg: one ECDSA and one RSA certificate for the same names
make site-ecdsa.pem ec www.example.com example.com
make site-rsa.pem rsa www.example.com example.com
# sni-routing.cfg: a directory with one certificate per host name
make sni/api.example.com.pem ec api.example.com
make sni/www.example.com.pem ec www.example.com
