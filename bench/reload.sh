#!/usr/bin/env bash
# Reloads and binary upgrades under a steady load (issue 6): no failed request, no refused
# connection, p99 latency during the reloads within 2x of the steady state, and memory back to
# its baseline once each old generation has ended.
#
# Workload: `tern bench` in open loop at $RATE requests/s over $CONNS keep-alive connections
# ($PROTO: https with an ECDSA P-256 certificate, or http) through tern (1 worker, CPU
# $SERVER_CPU) to two `tern term` backends (CPU $CLIENT_CPU, with the client). Latency is
# measured from each request's intended start, so a stall during a reload shows.
#
#  1. steady: a $DURATION s run with nothing happening: the reference p99.
#  2. reloads: a second $DURATION s run during which tern gets SIGHUP $RELOADS times (every
#     $EVERY s, the configuration alternating between two server weights) and then SIGUSR2
#     $UPGRADES times (each time once the previous old process has exited). After each reload,
#     once the old generation has ended (tern's thread count is back to its baseline), tern's
#     resident memory is sampled; after each upgrade, the new process's.
#
# An old generation's keep-alive connections get `Connection: close` on their next response,
# so each reload makes every client connection reconnect once (a new TLS handshake for https):
# that is the cost the p99 shows.
#
# Usage (from the repo root, after `cargo build --release -p tern`):
#   bench/reload.sh
#   RATE=4000 CONNS=32 PROTO=http bench/reload.sh
# Knobs: DURATION [30] s per run, RATE [2000], CONNS [16], RELOADS [10], UPGRADES [3],
# EVERY [1.5] s between reloads, PROTO [https], OUT=dir keeps configs, logs and JSON.
DURATION=${DURATION:-30}
source "$(dirname "$0")/lib.sh"

RATE=${RATE:-2000}
CONNS=${CONNS:-16}
RELOADS=${RELOADS:-10}
UPGRADES=${UPGRADES:-3}
EVERY=${EVERY:-1.5}
PROTO=${PROTO:-https}
[[ $PROTO == http || $PROTO == https ]] || die "PROTO must be http or https"
find_client
have_tern_run || die "'$TERN run' is not available: cargo build --release -p tern"
need_cmd ss "install iproute2"

B1=$BACKEND_PORT B2=$((BACKEND_PORT + 1))
for p in "$FRONT_PORT" "$B1" "$B2"; do port_free "$p" || die "port $p is in use"; done
start_pinned "$CLIENT_CPU" term1 "$TERN" term --listen "127.0.0.1:$B1" --name s1
wait_port "$B1" "$LAST_PID"
start_pinned "$CLIENT_CPU" term2 "$TERN" term --listen "127.0.0.1:$B2" --name s2
wait_port "$B2" "$LAST_PID"

TLS_LINE=""
if [[ $PROTO == https ]]; then
    bench/certs.sh >/dev/null
    TLS_LINE="tls = { certs = [\"$PWD/bench/certs/ecdsa.pem\"] }"
fi

# The configuration with server s2's weight $1.
write_config() {
    cat >"$TMP/tern.toml" <<EOF
[global]
workers = 1
cpus = [$SERVER_CPU]
hard_stop_after = "10s"

[[frontend]]
name = "web"
bind = ["127.0.0.1:$FRONT_PORT"]
$TLS_LINE
default_backend = "app"

[[backend]]
name = "app"
servers = [
  { name = "s1", address = "127.0.0.1:$B1" },
  { name = "s2", address = "127.0.0.1:$B2", weight = $1 },
]
EOF
}

# Connection errors (refused, reset during connect) of a run's JSON report.
connect_errors() { grep -o '"errors":{[^}]*}' "$1" | head -n 1 | grep -o '"connect":[0-9]*' | cut -d: -f2; }

status_kb() { awk -v f="$2:" '$1 == f { print $2 }' "/proc/$1/status"; }
threads() { awk '$1 == "Threads:" { print $2 }' "/proc/$1/status"; }

# Waits (bounded) until process $1 has $2 threads again (its old generation has ended).
wait_threads() {
    local i
    for ((i = 0; i < 300; i++)); do
        [[ $(threads "$1") -le $2 ]] && return 0
        sleep 0.05
    done
    echo "warning: process $1 still has $(threads "$1") threads (baseline $2)" >&2
}

# Waits (bounded: 30 s) until process $1 has exited.
wait_gone() {
    local i
    for ((i = 0; i < 600; i++)); do
        [[ -e /proc/$1 ]] || return 0
        grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null && return 0
        sleep 0.05
    done
    die "process $1 did not exit"
}

write_config 1
start_pinned "$SERVER_CPU" tern "$TERN" run -c "$TMP/tern.toml"
TERN_PID=$LAST_PID
wait_port "$FRONT_PORT" "$TERN_PID"
URL="$PROTO://127.0.0.1:$FRONT_PORT/"

run_bench() { # $1 name: a $DURATION s open-loop run in the background; sets BENCH_PID
    taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "$URL" --insecure -c "$CONNS" --rate "$RATE" \
        -d "$DURATION" --warmup 2 -q --json "$TMP/$1.json" >"$TMP/$1.out" 2>&1 &
    BENCH_PID=$!
}

echo "steady run: $DURATION s at $RATE/s over $CONNS $PROTO keep-alive connections"
run_bench steady
wait "$BENCH_PID" || die "the steady run failed: $(cat "$TMP/steady.out")"
BASE_RSS=$(status_kb "$TERN_PID" VmRSS)
BASE_THREADS=$(threads "$TERN_PID")

echo "reload run: $RELOADS reloads every $EVERY s, then $UPGRADES upgrades"
run_bench reloads
sleep 3
RSS_AFTER=()
for ((i = 1; i <= RELOADS; i++)); do
    write_config $((1 + i % 2))
    kill -HUP "$TERN_PID"
    sleep "$EVERY"
    wait_threads "$TERN_PID" "$BASE_THREADS"
    RSS_AFTER+=("$(status_kb "$TERN_PID" VmRSS)")
done
PIDS=("$TERN_PID")
for ((i = 1; i <= UPGRADES; i++)); do
    old=${PIDS[-1]}
    before=$(grep -c '^upgraded:' "$TMP/tern.log" || true)
    kill -USR2 "$old"
    for ((j = 0; j < 600; j++)); do
        [[ $(grep -c '^upgraded:' "$TMP/tern.log" || true) -gt $before ]] && break
        sleep 0.05
    done
    new=$(grep '^upgraded:' "$TMP/tern.log" | tail -n 1 | awk '{ print $3 }')
    [[ -n $new && $new != "$old" ]] || die "upgrade $i: no new process (see $TMP/tern.log)"
    wait_gone "$old"
    STARTED_PIDS+=("$new")
    PIDS+=("$new")
    sleep 1
    RSS_AFTER+=("$(status_kb "$new" VmRSS)")
done
wait "$BENCH_PID" || die "the reload run failed: $(cat "$TMP/reloads.out")"

for run in steady reloads; do
    f=$TMP/$run.json
    printf '%-8s requests %-7s errors %-3s connect errors %-3s p50 %6s µs  p99 %6s µs  p99.9 %6s µs  max %6s µs\n' \
        "$run" "$(json_get "$f" requests)" "$(json_get "$f" errors_total)" "$(connect_errors "$f")" \
        "$(json_latency "$f" total p50)" "$(json_latency "$f" total p99)" \
        "$(json_latency "$f" total p99.9)" "$(json_latency "$f" total max)"
done
P99_STEADY=$(json_latency "$TMP/steady.json" total p99)
P99_RELOAD=$(json_latency "$TMP/reloads.json" total p99)
echo "p99 during reloads / steady: $(calc "$P99_RELOAD / $P99_STEADY" 2)x (goal: <= 2x)"
echo "resident memory: baseline $BASE_RSS kB; after each reload and upgrade: ${RSS_AFTER[*]} kB"
echo "largest after / baseline: $(printf '%s\n' "${RSS_AFTER[@]}" | sort -n | tail -n 1 | awk -v b="$BASE_RSS" '{ printf "%.2fx", $1 / b }')"
ERRORS=$(json_get "$TMP/reloads.json" errors_total)
[[ $ERRORS == 0 ]] || { echo "FAILED: $ERRORS failed requests during reloads"; exit 1; }
for p in "${PIDS[@]:1}"; do kill "$p" 2>/dev/null || true; done
