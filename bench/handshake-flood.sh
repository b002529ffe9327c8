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
# Where the clients run: the flood client on CPU $CLIENT_CPU at nice $FLOOD_NICE; the keep-alive
# clients on CPU $KA_CPU (default: tern's CPU). On a 2-CPU machine there is no third CPU for the
# measuring client: next to the flood client it measures the flood client's side too (its
# kernel work, loopback softirqs and wake-ups; an independent server then sees the same
# 3-4x), so by default it shares tern's CPU instead, where it only makes tern's job harder.
# A control: a `tern term` HTTPS server on tern's CPU, which takes no part in the flood, gets
# the same keep-alive load at the same time (REF=0 turns it off): what the flood does to any
# process on that CPU, as opposed to what it does to tern.
# p50/p99 are of `latency_us.total` (intended start to last byte, open loop).
# tern's keep-alive timeout is raised to 300 s (default 10 s) for this: the open-loop client
# sends each request on its first free connection, so at 1,000 requests/s most of its 16
# connections sit idle longer than 10 s and tern closes them; the client's next burst then opens
# new connections, which queue behind the flood in the accept queue (a SYN dropped there waits
# 1 s to be sent again): no longer "clients already connected". The control has no such timeout.
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/handshake-flood.sh
#   DURATION=20 KA_RATE=2000 bench/handshake-flood.sh
#   RUNS=3 MODES="offload offcap" bench/handshake-flood.sh          # medians over 3 rounds
#   CAPACITY=4700 DURATION=20 OUT=/some/dir bench/handshake-flood.sh   # keep the JSON reports
source "$(dirname "$0")/lib.sh"

KA_RATE=${KA_RATE:-1000}
KA_CONNS=${KA_CONNS:-16}
FLOOD_FACTOR=${FLOOD_FACTOR:-2}
FLOOD_CONNS=${FLOOD_CONNS:-1024}
CAP_SHARE=${CAP_SHARE:-0.9}
CERT=${CERT:-ecdsa}
FLOOD_NICE=${FLOOD_NICE:-19}
KA_CPU=${KA_CPU:-$SERVER_CPU}
REF=${REF:-1}
# Rounds of all the modes; with more than one, the median ratios are printed at the end.
RUNS=${RUNS:-1}
REF_PORT=${REF_PORT:-$((FRONT_PORT + 1))}
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
timeouts = { handshake = "5s", keep_alive = "300s" }

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

# tern bench against $1 (a port), pinned to CPU $2, with the options that follow.
bench_on() {
    local port=$1 cpu=$2
    shift 2
    nice -n "$KA_NICE" taskset -c "$cpu" "${CLIENT[@]}" "https://127.0.0.1:$port/test" \
        --cpus "$cpu" --threads 1 --tls-version 1.3 --sni localhost "$@"
}

# The keep-alive load against tern (and the control), JSON into $TMP/$1-ka$2.json (and
# $TMP/$1-ref$2.json); runs in the background, sets KA_PIDS.
keep_alive() {
    local load=(-c "$KA_CONNS" --rate "$KA_RATE" -d "$DURATION" --warmup 2)
    KA_PIDS=()
    bench_on "$FRONT_PORT" "$KA_CPU" "${load[@]}" --json "$TMP/$1-ka$2.json" >"$TMP/$1-ka$2.txt" 2>&1 &
    KA_PIDS+=($!)
    if ((REF)); then
        bench_on "$REF_PORT" "$KA_CPU" "${load[@]}" --json "$TMP/$1-ref$2.json" \
            >"$TMP/$1-ref$2.txt" 2>&1 &
        KA_PIDS+=($!)
    fi
}

wait_keep_alive() {
    local pid
    for pid in "${KA_PIDS[@]}"; do
        wait "$pid" || die "keep-alive run failed: $(cat "$TMP"/*-ka*.txt)"
    done
}

echo "handshake flood: TLS 1.3 $CERT, tern on CPU $SERVER_CPU, flood client on CPU $CLIENT_CPU," \
    "keep-alive clients on CPU $KA_CPU"
if ((REF)); then
    port_free "$REF_PORT" || die "port $REF_PORT is busy (set REF_PORT)"
    start_pinned "$SERVER_CPU" ref-term "$TERN" term --listen "127.0.0.1:$REF_PORT" \
        --tls-cert "bench/certs/$CERT.pem" --cpus "$SERVER_CPU"
    REF_PID=$LAST_PID
    wait_port "$REF_PORT" "$REF_PID"
fi
# CAPACITY may be given (full handshakes/s, e.g. from bench/handshakes.sh) to skip the measure:
# on a shared 2-CPU machine the closed-loop measure is often the client's limit, not tern's.
if [[ -z ${CAPACITY:-} ]]; then
    start_tern "" capacity
    bench_on "$FRONT_PORT" "$CLIENT_CPU" -c 64 --requests-per-conn 1 -d "$DURATION" --warmup 1 \
        --json "$TMP/capacity.json" \
        >"$TMP/capacity.txt" || die "capacity run failed: $(cat "$TMP/capacity.txt")"
    stop_pid "$TERN_PID"
    CAPACITY=$(json_get "$TMP/capacity.json" connections_per_s)
fi
CAP=$(calc "$CAPACITY * $CAP_SHARE" 0)
FLOOD=$(calc "$CAPACITY * $FLOOD_FACTOR" 0)
echo "capacity: $CAPACITY full handshakes/s; cap $CAP/s; flood $FLOOD/s; keep-alive $KA_RATE req/s"
echo
# One mode, one round ($2): unloaded, then flooded; prints a row, adds to RATIOS/REF_RATIOS.
run_mode() {
    local mode=$1 round=$2 line name
    case $mode in
        nocap) line="" ;;
        cap) line="max_tls_handshake_rate = $CAP" ;;
        offload) line="handshake_offload = true" ;;
        offcap) line=$'handshake_offload = true\n'"max_tls_handshake_rate = $CAP" ;;
        *) die "unknown mode $mode (nocap, cap, offload, offcap)" ;;
    esac
    name=$mode-$round
    start_tern "$line" "$name"
    keep_alive "$name" 0
    wait_keep_alive
    # The keep-alive clients connect first (their handshakes are not the flood's victims: the
    # goal is about clients already connected); the flood starts half a second later and runs
    # past the end of their window, which opens after a 2 s warm-up.
    keep_alive "$name" 1
    sleep 0.5
    nice -n "$FLOOD_NICE" taskset -c "$CLIENT_CPU" "${CLIENT[@]}" \
        "https://127.0.0.1:$FRONT_PORT/test" --cpus "$CLIENT_CPU" --threads 1 --tls-version 1.3 \
        --sni localhost -c "$FLOOD_CONNS" --rate "$FLOOD" --requests-per-conn 1 \
        -d "$((DURATION + 3))" --warmup 0 --json "$TMP/$name-flood.json" >"$TMP/$name-flood.txt" 2>&1 &
    local flood_pid=$!
    wait_keep_alive
    wait "$flood_pid" || true
    stop_pid "$TERN_PID"
    local m0 m1 p0 p1 ratio hs=n/a ferr=n/a r0=n/a r1=n/a rr=n/a
    m0=$(json_latency "$TMP/$name-ka0.json" total p50)
    m1=$(json_latency "$TMP/$name-ka1.json" total p50)
    p0=$(json_latency "$TMP/$name-ka0.json" total p99)
    p1=$(json_latency "$TMP/$name-ka1.json" total p99)
    ratio=$(calc "$p1 / ($p0 > 0 ? $p0 : 1)" 2)
    RATIOS[$mode]+="$ratio "
    if [[ -s $TMP/$name-flood.json ]]; then
        hs=$(json_get "$TMP/$name-flood.json" connections_per_s)
        ferr=$(json_get "$TMP/$name-flood.json" errors_total)
    fi
    if ((REF)); then
        r0=$(json_latency "$TMP/$name-ref0.json" total p99)
        r1=$(json_latency "$TMP/$name-ref1.json" total p99)
        rr=$(calc "$r1 / ($r0 > 0 ? $r0 : 1)" 2)
        REF_RATIOS[$mode]+="$rr "
    fi
    printf '%-8s %5s %9s µs %9s µs %11s µs %11s µs %7s %12.0f %10s %10s %9s µs %9s µs %7s\n' \
        "$mode" "$round" "$m0" "$m1" "$p0" "$p1" "$ratio" "$hs" \
        "$(json_get "$TMP/$name-ka1.json" errors_total)" "$ferr" "$r0" "$r1" "$rr"
}

declare -A RATIOS REF_RATIOS
printf '%-8s %5s %12s %12s %14s %14s %7s %12s %10s %10s %12s %12s %7s\n' mode round \
    "p50 unloaded" "p50 flooded" "p99 unloaded" "p99 flooded" ratio "flood conn/s" "ka errors" \
    "flood err" "ref p99 unl" "ref p99 fl" "ref ×"
# Rounds interleave the modes, so that a noisy minute of the host spreads over all of them.
for ((round = 1; round <= RUNS; round++)); do
    for mode in $MODES; do
        run_mode "$mode" "$round"
    done
done
((REF)) && stop_pid "$REF_PID"
echo
for mode in $MODES; do
    echo "tern's counters ($mode, round $RUNS):" \
        "$(grep '^stats: tls web' "$TMP/tern-$mode-$RUNS.log" | tr ' ' '\n' |
            grep -E '^(rate_|source_|resume_|full_tls13)' | tr '\n' ' ')"
done
if ((RUNS > 1)); then
    echo
    echo "p99 flooded ÷ unloaded, median over $RUNS rounds (the goal: ≤ 2 with protection):"
    for mode in $MODES; do
        line="  $mode: tern $(median <<<"${RATIOS[$mode]}") (${RATIOS[$mode]% })"
        if ((REF)); then
            line+="; control $(median <<<"${REF_RATIOS[$mode]}") (${REF_RATIOS[$mode]% })"
        fi
        echo "$line"
    done
fi
