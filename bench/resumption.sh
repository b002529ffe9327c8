#!/usr/bin/env bash
# Resumed vs full TLS 1.3 handshakes (issue 5's goal: resumed handshakes/s ≥ 4× full ECDSA).
#
# Workload as in handshakes.sh (TLS 1.3, $SUITE, X25519, one GET /test per connection to the
# monitor URI, tern on CPU $SERVER_CPU with one worker, the client on CPU $CLIENT_CPU with one
# thread), tern with its default resumption settings (stateless tickets on):
#   full:    the client never resumes and asks for no ticket (tern sends none), as handshakes.sh;
#   resumed: `--resume ticket`: every new connection offers the ticket of an earlier one
#            (TLS 1.3 PSK with (EC)DHE, the only mode rustls offers), so all but the first few
#            handshakes are resumed; both kinds are counted and divide the server's CPU time.
# Each run: a fresh tern per mode, a $WARMUP s warm-up, a $DURATION s measured run while tern's
# utime+stime is read from /proc/PID/stat; modes interleaved within each of $RUNS runs.
#
# SERVER=haproxy measures HAProxy the same way (its stateless TLS 1.3 tickets on, the session
# cache off as in the other scripts), for what the same client and key exchange give there.
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/resumption.sh
#   DURATION=10 RUNS=5 CERT=rsa bench/resumption.sh
#   SERVER=haproxy bench/resumption.sh
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-32}
CERT=${CERT:-ecdsa}
SERVER=${SERVER:-tern}
# HAProxy issues tickets only when asked to (bench/servers.sh turns them off by default).
export HAPROXY_TICKETS=1

find_client
case $SERVER in
tern) have_tern_run || die "no tern binary at $TERN: run 'cargo build --release'" ;;
haproxy) need_cmd haproxy "apt-get install -y haproxy" ;;
*) die "SERVER must be tern or haproxy" ;;
esac
need_certs "$CERT"

client() {
    taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "https://127.0.0.1:$FRONT_PORT/test" \
        --cpus "$CLIENT_CPU" --threads 1 -c "$CONNS" --requests-per-conn 1 \
        --tls-version 1.3 --groups x25519 --ciphers "$SUITE" --sni localhost "$@"
}

# One measurement: mode $1 (full|resumed), run $2; appends a line to $TMP/results.
measure() {
    local mode=$1 run=$2 json=$TMP/$1-$2.json opts=()
    [[ $mode == resumed ]] && opts=(--resume ticket)
    start_server "$SERVER" "$CERT"
    if [[ $WARMUP != 0 ]]; then
        client "${opts[@]}" -d "$WARMUP" --warmup 0 >"$TMP/$mode-$run.warmup.txt" ||
            die "warm-up ($mode) failed: see $TMP/$mode-$run.warmup.txt"
    fi
    local cpu0 cpu1
    cpu0=$(cpu_us "$SERVER_PID")
    client "${opts[@]}" -d "$DURATION" --warmup 0 --json "$json" >"$TMP/$mode-$run.txt" ||
        die "client run ($mode) failed: $(cat "$TMP/$mode-$run.txt")"
    cpu1=$(cpu_us "$SERVER_PID")
    stop_pid "$SERVER_PID"

    local full resumed rate errors client_us share server_us
    full=$(json_get "$json" full)
    resumed=$(json_get "$json" resumed)
    rate=$(json_get "$json" connections_per_s)
    errors=$(json_get "$json" errors_total)
    client_us=$(json_get "$json" us_per_connection)
    share=$(json_get "$json" share)
    server_us=$(calc "($cpu1 - $cpu0) / ($full + $resumed > 0 ? $full + $resumed : 1)")
    printf '%-8s %3s %10.1f %12s %12.1f %8.0f%% %8s %8s %6s\n' "$mode" "$run" "$rate" \
        "$server_us" "$client_us" "$(calc "$share * 100" 0)" "$full" "$resumed" "$errors"
    echo "$mode $run $rate $server_us $client_us $share $full $resumed $errors" >>"$TMP/results"
}

echo "resumed vs full: TLS 1.3 $SUITE X25519 $CERT, 1 request/connection to /test"
echo "$SERVER CPU $SERVER_CPU (1 worker), client CPU $CLIENT_CPU (${CLIENT[*]}, $CONNS connections)," \
    "$DURATION s per run after $WARMUP s warm-up, $RUNS run(s)"
echo
printf '%-8s %3s %10s %12s %12s %9s %8s %8s %6s\n' mode run "hs/s" "server µs/hs" "client µs/hs" \
    client full resumed errors
for ((run = 1; run <= RUNS; run++)); do
    for mode in full resumed; do
        measure "$mode" "$run"
    done
done

echo
echo "median over $RUNS run(s) (spread min-max)"
for mode in full resumed; do
    rates=$(awk -v m="$mode" '$1 == m { print $3 }' "$TMP/results")
    cpus=$(awk -v m="$mode" '$1 == m { print $4 }' "$TMP/results")
    printf '%-8s %8.0f hs/s (%s) %8.1f server µs/hs (%s)\n' "$mode" "$(median <<<"$rates")" \
        "$(spread 0 <<<"$rates")" "$(median <<<"$cpus")" "$(spread 1 <<<"$cpus")"
    eval "rate_$mode=$(median <<<"$rates") cpu_$mode=$(median <<<"$cpus")"
done
echo "resumed/full: rate $(calc "$rate_resumed / $rate_full" 2)x," \
    "server CPU per handshake $(calc "$cpu_full / $cpu_resumed" 2)x less (goal >= 4x)"
if awk '$6 > 0.9 { bound = 1 } END { exit !bound }' "$TMP/results"; then
    echo "WARNING: the client used > 90% of its CPU in some runs: their rate is client-bound;"
    echo "         compare server µs/handshake (CPU time per handshake) for those."
fi
