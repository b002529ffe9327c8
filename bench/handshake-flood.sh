#!/usr/bin/env bash
# Keep-alive latency under a flood of full TLS handshakes, with and without the handshake rate
# cap (`global.max_tls_handshake_rate`, issue 5).
#
# 1. Capacity: closed-loop full TLS 1.3 ECDSA handshakes (one request each) against tern pinned
#    on CPU $SERVER_CPU (one worker): CAPACITY handshakes/s.
# 2. For each mode (no cap; cap = $CAP_SHARE × CAPACITY), a fresh tern:
#    - unloaded: keep-alive clients, open loop at $KA_RATE requests/s over $KA_CONNS connections,
#      $DURATION s: p99;
#    - flooded: the same, while a second client opens full handshakes at $FLOOD_FACTOR × CAPACITY
#      per second (open loop, --requests-per-conn 1, at most $FLOOD_CONNS at once): p99, and what
#      the flood got through.
#    Goal (issue 5): flooded p99 ≤ 2 × unloaded p99 with the cap.
#    The same with `handshake_offload` (handshake crypto on a nice-19 thread), without and with
#    the cap: modes `offload` and `offcap` ($MODES chooses).
# Both clients run on CPU $CLIENT_CPU (one thread each); on a 2-CPU machine they share it, so
# the client side is part of what is measured: see BENCHMARKS.md for the caveats. The flood
# client runs at nice $FLOOD_NICE (default 19) so that, when that CPU is short, the kernel runs
# the keep-alive client first: the flood's own handshake work (~200 µs of client CPU each) would
# otherwise delay the keep-alive client's requests before they reach tern at all.
# p50/p99 are of `latency_us.total` (intended start to last byte, open loop).
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/handshake-flood.sh
#   DURATION=20 KA_RATE=2000 bench/handshake-flood.sh
#   CAPACITY=4700 DURATION=20 OUT=/some/dir bench/handshake-flood.sh   # keep the JSON reports
source "$(dirname "$0")/lib.sh"

KA_RATE=${KA_RATE:-1000}
KA_CONNS=${KA_CONNS:-16}
FLOOD_FACTOR=${FLOOD_FACTOR:-2}
FLOOD_CONNS=${FLOOD_CONNS:-1024}
CAP_SHARE=${CAP_SHARE:-0.9}
CERT=${CERT:-ecdsa}
FLOOD_NICE=${FLOOD_NICE:-19}
# Niceness of the keep-alive (and capacity) client: below 0 it preempts the flood client on
# the shared client CPU at once, which tells the client side's share of the latency apart.
KA_NICE=${KA_NICE:-0}
# Modes run in turn, each on a fresh tern: nocap, cap (max_tls_handshake_rate), offload
# (handshake_offload, no cap), offcap (both).
MODES=${MODES:-nocap cap offload offcap}

find_client
have_tern_run || die "no tern binary at $TERN: run 'cargo build --release'"
[[ -s bench/certs/$CERT.pem ]] || die "bench/certs/$CERT.pem missing: run bench/certs.sh"

# tern config; $1 = the cap line (or empty).
flood_config() {
    cat <<CFG
[global]
workers = 1
cpus = [$SERVER_CPU]
maxconn = 10000
$1

[[frontend]]
name = "web"
bind = ["127.0.0.1:$FRONT_PORT"]
tls = { certs = ["$PWD/bench/certs/$CERT.pem"] }
monitor_uri = "/test"
default_backend = "app"
timeouts = { handshake = "5s" }

[[backend]]
name = "app"
servers = [ { name = "s1", address = "127.0.0.1:$BACKEND_PORT" } ]
CFG
}

# Starts a fresh tern: $1 = the cap line (or empty), $2 = a name for its config and log.
start_tern() {
    flood_config "$1" >"$TMP/tern-$2.toml"
    start_pinned "$SERVER_CPU" "tern-$2" "$TERN" run -c "$TMP/tern-$2.toml"
    TERN_PID=$LAST_PID
    wait_port "$FRONT_PORT" "$TERN_PID"
}

client() {
    nice -n "$KA_NICE" taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "https://127.0.0.1:$FRONT_PORT/test" \
        --cpus "$CLIENT_CPU" --threads 1 --tls-version 1.3 --sni localhost "$@"
}

echo "handshake flood: TLS 1.3 $CERT, tern on CPU $SERVER_CPU, clients on CPU $CLIENT_CPU"
# CAPACITY may be given (full handshakes/s, e.g. from bench/handshakes.sh) to skip the measure:
# on a shared 2-CPU machine the closed-loop measure is often the client's limit, not tern's.
if [[ -z ${CAPACITY:-} ]]; then
    start_tern "" capacity
    client -c 64 --requests-per-conn 1 -d "$DURATION" --warmup 1 --json "$TMP/capacity.json" \
        >"$TMP/capacity.txt" || die "capacity run failed: $(cat "$TMP/capacity.txt")"
    stop_pid "$TERN_PID"
    CAPACITY=$(json_get "$TMP/capacity.json" connections_per_s)
fi
CAP=$(calc "$CAPACITY * $CAP_SHARE" 0)
FLOOD=$(calc "$CAPACITY * $FLOOD_FACTOR" 0)
echo "capacity: $CAPACITY full handshakes/s; cap $CAP/s; flood $FLOOD/s; keep-alive $KA_RATE req/s"
echo
printf '%-8s %12s %12s %14s %14s %7s %12s %10s %10s\n' mode "p50 unloaded" "p50 flooded" \
    "p99 unloaded" "p99 flooded" ratio "flood hs/s" "ka errors" "flood err"
for mode in $MODES; do
    case $mode in
        nocap) line="" ;;
        cap) line="max_tls_handshake_rate = $CAP" ;;
        offload) line="handshake_offload = true" ;;
        offcap) line=$'handshake_offload = true\n'"max_tls_handshake_rate = $CAP" ;;
        *) die "unknown mode $mode (nocap, cap, offload, offcap)" ;;
    esac
    start_tern "$line" "$mode"
    client -c "$KA_CONNS" --rate "$KA_RATE" -d "$DURATION" --warmup 2 \
        --json "$TMP/$mode-ka0.json" >"$TMP/$mode-ka0.txt" ||
        die "keep-alive run failed: $(cat "$TMP/$mode-ka0.txt")"
    # The keep-alive client connects first (its handshakes are not the flood's victims: the
    # goal is about clients already connected); the flood starts half a second later and runs
    # past the end of the keep-alive client's window, which opens after a 2 s warm-up.
    client -c "$KA_CONNS" --rate "$KA_RATE" -d "$DURATION" --warmup 2 \
        --json "$TMP/$mode-ka1.json" >"$TMP/$mode-ka1.txt" &
    ka_pid=$!
    sleep 0.5
    nice -n "$FLOOD_NICE" taskset -c "$CLIENT_CPU" "${CLIENT[@]}" \
        "https://127.0.0.1:$FRONT_PORT/test" --cpus "$CLIENT_CPU" --threads 1 --tls-version 1.3 \
        --sni localhost -c "$FLOOD_CONNS" --rate "$FLOOD" --requests-per-conn 1 \
        -d "$((DURATION + 3))" --warmup 0 --json "$TMP/$mode-flood.json" >"$TMP/$mode-flood.txt" 2>&1 &
    flood_pid=$!
    wait "$ka_pid" || die "keep-alive run under flood failed: $(cat "$TMP/$mode-ka1.txt")"
    wait "$flood_pid" || true
    stop_pid "$TERN_PID"
    m0=$(json_latency "$TMP/$mode-ka0.json" total p50)
    m1=$(json_latency "$TMP/$mode-ka1.json" total p50)
    p0=$(json_latency "$TMP/$mode-ka0.json" total p99)
    p1=$(json_latency "$TMP/$mode-ka1.json" total p99)
    hs=n/a
    ferr=n/a
    if [[ -s $TMP/$mode-flood.json ]]; then
        hs=$(json_get "$TMP/$mode-flood.json" connections_per_s)
        ferr=$(json_get "$TMP/$mode-flood.json" errors_total)
    fi
    printf '%-8s %9s µs %9s µs %11s µs %11s µs %7s %12s %10s %10s\n' "$mode" "$m0" "$m1" "$p0" "$p1" \
        "$(calc "$p1 / ($p0 > 0 ? $p0 : 1)" 2)" "$hs" \
        "$(json_get "$TMP/$mode-ka1.json" errors_total)" "$ferr"
done
echo
for mode in $MODES; do
    echo "tern's counters ($mode):" \
        "$(grep '^stats: tls web' "$TMP/tern-$mode.log" | tr ' ' '\n' |
            grep -E '^(rate_|source_|resume_|full_tls13)' | tr '\n' ' ')"
done
