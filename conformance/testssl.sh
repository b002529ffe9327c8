#!/usr/bin/env bash
# TLS conformance: run testssl.sh (Debian package `testssl.sh`) against tern's default TLS policy
# and fail on any finding of severity MEDIUM or worse that is not about the test certificate
# itself (self-signed, no OCSP/CRL, long validity are properties of the throwaway certificate,
# not of tern). Run from the repository root after `cargo build --release`.
#
#   conformance/testssl.sh            # RSA-2048 and ECDSA P-256 certificates
#   KEEP=dir conformance/testssl.sh   # keep the JSON reports
set -euo pipefail

TERN=${TERN:-target/release/tern}
command -v testssl >/dev/null || { echo "testssl not installed: apt-get install -y testssl.sh" >&2; exit 2; }
command -v openssl >/dev/null || { echo "openssl not installed" >&2; exit 2; }
[[ -x $TERN ]] || { echo "$TERN missing: cargo build --release" >&2; exit 2; }

TMP=$(mktemp -d)
trap 'kill "${PID:-0}" 2>/dev/null || true; rm -rf "$TMP"' EXIT

status=0
for kind in rsa ecdsa; do
    case $kind in
    rsa) keyopt=(-newkey rsa:2048) ;;
    ecdsa) keyopt=(-newkey ec -pkeyopt ec_paramgen_curve:P-256) ;;
    esac
    openssl req -x509 "${keyopt[@]}" -nodes -days 30 -subj /CN=localhost \
        -addext subjectAltName=DNS:localhost,IP:127.0.0.1 \
        -keyout "$TMP/$kind.key" -out "$TMP/$kind.crt" 2>/dev/null
    cat "$TMP/$kind.crt" "$TMP/$kind.key" >"$TMP/$kind.pem"
    cat >"$TMP/$kind.toml" <<TOML
[global]
workers = 1
[[frontend]]
name = "tls"
bind = ["127.0.0.1:0"]
tls = { certs = ["$kind.pem"] }
monitor_uri = "/"
default_backend = "none"
[[backend]]
name = "none"
servers = [ { name = "s1", address = "127.0.0.1:1" } ]
TOML
    "$TERN" run -c "$TMP/$kind.toml" >"$TMP/$kind.out" 2>"$TMP/$kind.err" &
    PID=$!
    for _ in $(seq 1 100); do grep -q '^ready:' "$TMP/$kind.out" && break; sleep 0.1; done
    addr=$(grep -oP '^listening: tls https://\K\S+' "$TMP/$kind.out")
    echo "== testssl against tern ($kind) at $addr"
    testssl --quiet --color 0 --warnings off --jsonfile "$TMP/$kind.json" -p -s -f -S -U "$addr" >/dev/null
    kill "$PID"; wait "$PID" 2>/dev/null || true
    python3 - "$TMP/$kind.json" <<'PY' || status=1
import json, sys
findings = json.load(open(sys.argv[1]))
cert_ids = ("cert", "OCSP", "DNS_CAA", "intermediate", "chain_of_trust")
bad = [f for f in findings
       if f.get("severity") in ("MEDIUM", "HIGH", "CRITICAL")
       and not f["id"].startswith(cert_ids)]
for f in bad:
    print(f"  FLAGGED {f['id']}: {f['finding']} ({f['severity']})")
print(f"  {len(findings)} findings, {len(bad)} flagged")
sys.exit(1 if bad else 0)
PY
    [[ -n ${KEEP:-} ]] && mkdir -p "$KEEP" && cp "$TMP/$kind.json" "$KEEP/"
done
exit $status
