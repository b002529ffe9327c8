#!/usr/bin/env bash
# global.crypto_batch on against off: full TLS 1.3 handshakes (ECDSA P-256 or RSA-2048
# certificate, X25519) per CPU-second of tern, the handshake's p99 under that load, and its
# latency at one connection at a time.
#
# tern pinned to CPU $SERVER_CPU (one worker), the client (tern bench, one thread) to
# $CLIENT_CPU. Each run starts tern with batching off, then on (interleaved, so slow drifts of
# the machine's load hit both alike): a closed loop of $CONNS connections with one request each
# for $DURATION s, tern's utime+stime read from /proc around it; then $DURATION s at one
# connection at a time for the latency. Prints a line per run and the median ratios.
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/crypto-batch.sh
#   RUNS=5 DURATION=10 CONNS=64 DEADLINE=100us bench/crypto-batch.sh
#   CERT=rsa bench/crypto-batch.sh
#   RATE=4000 bench/crypto-batch.sh   # open loop: 4,000 new connections/s (at most $CONNS open)
set -euo pipefail
cd "$(dirname "$0")/.."
TERN=${TERN:-target/release/tern}
RUNS=${RUNS:-3}
DURATION=${DURATION:-8}
CONNS=${CONNS:-32}
DEADLINE=${DEADLINE:-50us}
CERT=${CERT:-ecdsa}
RATE=${RATE:-}
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
CLK_TCK=$(getconf CLK_TCK)
TMP=$(mktemp -d)
PID=
trap '[[ -n $PID ]] && kill "$PID" 2>/dev/null; rm -rf "$TMP"' EXIT

[[ -s bench/certs/$CERT.pem ]] || bench/certs.sh >/dev/null
[[ -s bench/certs/$CERT.pem ]] || { echo "no bench/certs/$CERT.pem (CERT=ecdsa or rsa)" >&2; exit 1; }

cpu_us() {
    awk -v tck="$CLK_TCK" '{ sub(/.*\) /, ""); printf "%d\n", ($12 + $13) * 1000000 / tck }' \
        "/proc/$1/stat"
}

json_get() { grep -o "\"$2\":[^,}]*" "$1" | head -n 1 | cut -d: -f2- | tr -d '"'; }
json_latency() {
    grep -o "\"$2\":{[^}]*}" "$1" | head -n 1 | grep -o "\"$3\":[^,}]*" | head -n 1 | cut -d: -f2-
}

# Starts tern with batching $1 (on/off) on an ephemeral port; sets PID and PORT.
start() {
    # Spelled out either way: batching is on by default.
    local batch="crypto_batch = { enabled = false }"
    [[ $1 == on ]] && batch="crypto_batch = { enabled = true, size = 8, deadline = \"$DEADLINE\" }"
    cat >"$TMP/tern.toml" <<TOML
[global]
workers = 1
$batch

[[frontend]]
name = "web"
bind = ["127.0.0.1:0"]
tls = { certs = ["$PWD/bench/certs/$CERT.pem"] }
monitor_uri = "/test"
default_backend = "app"

[[backend]]
name = "app"
servers = [ { name = "none", address = "127.0.0.1:1" } ]
TOML
    taskset -c "$SERVER_CPU" "$TERN" run -c "$TMP/tern.toml" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    for _ in $(seq 100); do
        grep -q '^ready:' "$TMP/out" 2>/dev/null && break
        sleep 0.05
    done
    PORT=$(grep -m 1 '^listening:' "$TMP/out" | grep -o '[0-9]*$')
}

stop() {
    kill -INT "$PID"
    wait "$PID" || true
    PID=
}

client() {
    taskset -c "$CLIENT_CPU" "$TERN" bench "https://127.0.0.1:$PORT/test" --cpus "$CLIENT_CPU" \
        --threads 1 --requests-per-conn 1 --tls-version 1.3 --groups x25519 --sni localhost \
        --warmup 1 -d "$DURATION" "$@" >/dev/null
}

# One run with batching $1; prints: hs/s, server µs per handshake, p50 µs at -c 1, mean fill,
# handshakes, p99 µs under load.
measure() {
    start "$1"
    local cpu0 cpu1 full
    cpu0=$(cpu_us "$PID")
    client -c "$CONNS" ${RATE:+--rate "$RATE"} --json "$TMP/load.json"
    cpu1=$(cpu_us "$PID")
    client -c 1 --json "$TMP/one.json"
    stop
    full=$(json_get "$TMP/load.json" full)
    local fill
    fill=$(grep -o 'stats: crypto_batch all .*' "$TMP/out" |
        awk '{ for (i = 4; i <= NF; i++) { split($i, kv, "="); v[kv[1]] = kv[2] }
               printf "%.2f", (v["batches"] > 0 ? v["batched"] / v["batches"] : 0) }' || true)
    printf '%s %s %s %s %s %s\n' "$(json_get "$TMP/load.json" connections_per_s)" \
        "$(awk -v c=$((cpu1 - cpu0)) -v n="$full" 'BEGIN { printf "%.1f", c / (n > 0 ? n : 1) }')" \
        "$(json_latency "$TMP/one.json" handshake p50)" "${fill:--}" "$full" \
        "$(json_latency "$TMP/load.json" handshake p99)"
}

echo "$CERT certificate + X25519, TLS 1.3, $CONNS connections${RATE:+ at $RATE/s}, ${DURATION}s per run, deadline $DEADLINE"
printf '%-4s %-4s %10s %12s %14s %16s %9s\n' run mode 'hs/s' 'server µs/hs' 'p50 µs (c=1)' \
    "p99 µs (c=$CONNS)" 'mean fill'
for ((run = 1; run <= RUNS; run++)); do
    for mode in off on; do
        read -r rate us p50 fill full p99 < <(measure "$mode")
        printf '%-4s %-4s %10.0f %12s %14s %16s %9s\n' "$run" "$mode" "$rate" "$us" "$p50" \
            "$p99" "$fill"
        echo "$run $mode $rate $us $p50 $p99" >>"$TMP/results"
    done
done
echo
awk '{ r[$1, $2] = $3; u[$1, $2] = $4; p[$1, $2] = $5; q[$1, $2] = $6; n = $1 }
     END {
       for (i = 1; i <= n; i++) {
         printf "run %d: on/off hs/s %.3f, CPU per handshake %.3f, p99 under load %.3f, p50 +%d µs\n",
           i, r[i, "on"] / r[i, "off"], u[i, "on"] / u[i, "off"],
           (q[i, "off"] > 0 ? q[i, "on"] / q[i, "off"] : 0), p[i, "on"] - p[i, "off"]
       }
     }' "$TMP/results"
