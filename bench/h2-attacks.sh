#!/usr/bin/env bash
# A well-behaved HTTP/2 client's latency while other connections attack tern (issue 16,
# "Attacks": p99 within 2x of unloaded).
#
# The well-behaved client is h2load at a fixed rate (-c $CONNS, --rps $RPS per connection, so
# the figure is latency at a set load, not at saturation), GET $REQ_PATH over TLS 1.3 with ALPN
# h2, through tern to `tern term` over HTTP/1.1. Its p99 comes from h2load's per-request log.
# Each attack is crates/tern/tests/clients/h2_attack.py (the tests' attack client) run on
# connection after connection for the whole window, then stopped; "none" is the unloaded
# figure. Scenarios are interleaved run by run.
#
# CPUs: tern has CPU $SERVER_CPU; the backend, h2load and the attacker share CPU $CLIENT_CPU,
# so an attacker busy on its CPU also slows the client and the backend. The "busy" scenario is
# the control for that: a Python loop on that CPU that never talks to tern. An attack's cost to
# the client is its p99 against busy's; against none it is an upper bound.
# ATTACKER_PRIORITY=idle (the default) runs the attacker and busy at SCHED_IDLE (`chrt -i 0`):
# they get only the CPU the client and the backend leave, as an attacker on another machine
# would take none of theirs (the cache they share stays shared). ATTACKER_PRIORITY=normal
# runs them as ordinary processes, the set-up of the first figures in BENCHMARKS.md.
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/h2-attacks.sh
#   DURATION=10 RUNS=3 ATTACKS="ping settings" bench/h2-attacks.sh
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-4}
RPS=${RPS:-250}
CERT=${CERT:-ecdsa}
REQ_PATH=${REQ_PATH:-/?s=1k}
ATTACKS=${ATTACKS:-continuation hpack-bomb big-headers settings ping empty-data window-update zero-window streams}
ATTACKER=crates/tern/tests/clients/h2_attack.py
case ${ATTACKER_PRIORITY:-idle} in
idle) PRIO=(chrt -i 0) ;;
normal) PRIO=() ;;
*) die "ATTACKER_PRIORITY is idle or normal" ;;
esac
need_cmd h2load "apt-get install nghttp2-client"
need_cmd python3 "and Python's h2 package (pip install h2)"
need_certs "$CERT"
have_tern_run || die "'$TERN run' is not available: cargo build --release"
have_tern_term || die "'$TERN term' is not available: the backend is tern term"

port_free "$BACKEND_PORT" || die "port $BACKEND_PORT is busy (set BACKEND_PORT)"
start_pinned "$CLIENT_CPU" backend "$TERN" term --listen "127.0.0.1:$BACKEND_PORT" --threads 1
BACKEND_PID=$LAST_PID
wait_port "$BACKEND_PORT" "$BACKEND_PID"
start_server tern "$CERT"

# p99 of the request times (µs, third column) of an h2load log file, in ms.
p99_ms() {
    sort -g -k3,3 "$1" | awk '{ v[NR] = $3 } END { i = int(NR * 0.99); if (i < 1) i = 1; printf "%.2f", v[i] / 1000 }'
}

measure() {
    local attack=$1 run=$2 log=$TMP/$1-$2.log out=$TMP/$1-$2.txt attacker=
    if [[ $attack == busy ]]; then
        taskset -c "$CLIENT_CPU" "${PRIO[@]}" timeout $((DURATION + 5)) python3 -c 'while True: pass' &
        attacker=$!
        STARTED_PIDS+=("$attacker")
    elif [[ $attack != none ]]; then
        taskset -c "$CLIENT_CPU" "${PRIO[@]}" python3 "$ATTACKER" "$attack" 127.0.0.1 "$FRONT_PORT" tls 100000 \
            >"$TMP/$attack-$run.attack.txt" 2>&1 &
        attacker=$!
        STARTED_PIDS+=("$attacker")
        sleep 0.5 # the attacker is connected and at work before the window opens
    fi
    taskset -c "$CLIENT_CPU" h2load -c "$CONNS" -m 1 --rps "$RPS" -D "$DURATION" --log-file "$log" \
        "https://127.0.0.1:$FRONT_PORT$REQ_PATH" >"$out" 2>&1 || die "h2load failed: $(tail -5 "$out")"
    [[ -z $attacker ]] || stop_pid "$attacker"
    local ok failed connections p99
    ok=$(awk '/^requests:/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^succeeded/) print $i }' "$out")
    failed=$(awk '/^requests:/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^failed/) print $i }' "$out")
    connections=0
    [[ $attack == none || $attack == busy ]] || connections=$(grep -c . "$TMP/$attack-$run.attack.txt" || true)
    p99=$(p99_ms "$log")
    printf '%-15s %3s %8s %7s %10s %12s\n' "$attack" "$run" "$ok" "$failed" "$p99" "$connections"
    echo "$attack $run $p99" >>"$TMP/results"
}

echo "well-behaved: h2load -c $CONNS --rps $RPS for $DURATION s, GET $REQ_PATH over TLS 1.3 ($CERT)"
echo "tern CPU $SERVER_CPU; backend, h2load and attacker CPU $CLIENT_CPU; $RUNS run(s)"
printf '%-15s %3s %8s %7s %10s %12s\n' attack run ok failed "p99 ms" "attack conns"
for ((run = 1; run <= RUNS; run++)); do
    for attack in none busy $ATTACKS; do
        measure "$attack" "$run"
    done
done
echo
echo "median p99 over $RUNS run(s), and its ratio to the medians of none and busy"
none=$(awk '$1 == "none" { print $3 }' "$TMP/results" | median)
busy=$(awk '$1 == "busy" { print $3 }' "$TMP/results" | median)
for attack in none busy $ATTACKS; do
    p99=$(awk -v a="$attack" '$1 == a { print $3 }' "$TMP/results" | median)
    printf '%-15s %8.2f ms  %5.2fx  %5.2fx\n' "$attack" "$p99" "$(calc "$p99 / $none" 2)" \
        "$(calc "$p99 / $busy" 2)"
done
