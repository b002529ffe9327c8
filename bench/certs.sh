#!/usr/bin/env bash
# Generates the benchmark certificates into bench/certs/ (git-ignored):
#   rsa.pem    RSA-2048 key,      self-signed certificate (sha256WithRSAEncryption)
#   ecdsa.pem  ECDSA P-256 key,   self-signed certificate (ecdsa-with-SHA256)
# Each PEM holds the certificate then the PKCS#8 key, the combined form both HAProxy (`crt`) and
# tern (`tls = { certs = [...] }`) load. Names: CN and SAN "localhost", SAN IP 127.0.0.1.
# Existing files are kept; pass --force to regenerate.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v openssl >/dev/null || { echo "error: openssl not found" >&2; exit 1; }

dir=bench/certs
mkdir -p "$dir"
force=${1:-}

make_cert() {
    local name=$1
    shift
    if [[ -s $dir/$name.pem && $force != --force ]]; then
        echo "$dir/$name.pem exists (use --force to regenerate)"
        return
    fi
    local tmp
    tmp=$(mktemp -d)
    openssl req -x509 -nodes -days 3650 -subj /CN=localhost \
        -addext "subjectAltName=DNS:localhost,IP:127.0.0.1" \
        "$@" -keyout "$tmp/key.pem" -out "$tmp/cert.pem" 2>/dev/null
    cat "$tmp/cert.pem" "$tmp/key.pem" >"$dir/$name.pem"
    chmod 600 "$dir/$name.pem"
    rm -rf "$tmp"
    echo "$dir/$name.pem: $(openssl x509 -in "$dir/$name.pem" -noout -text |
        grep -m1 'Public Key Algorithm' | sed 's/.*: //'), $(openssl x509 -in "$dir/$name.pem" \
        -noout -text | grep -m1 -E 'Public-Key' | sed 's/^ *//')"
}

make_cert rsa -newkey rsa:2048 -sha256
make_cert ecdsa -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -sha256
