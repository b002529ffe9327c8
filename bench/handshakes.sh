#!/usr/bin/env bash
# Full TLS 1.3 handshakes per second: tern vs HAProxy, RSA-2048 and ECDSA P-256.
#
# Workload: TLS 1.3, $SUITE (default TLS_AES_256_GCM_SHA384), X25519, one GET /test per
# connection (the frontend's monitor URI: no backend involved), no session resumption (the
# client never resumes and counts full vs resumed handshakes; HAProxy has no cache and no
# tickets and its CumSslConns is checked against the client's count).
# Server pinned to CPU $SERVER_CPU (one thread), client to CPU $CLIENT_CPU (one thread).
# Each run: a fresh server, a $WARMUP s warm-up run, then a $DURATION s measured run while
# the server's utime+stime is read from /proc/PID/stat. $RUNS runs, servers interleaved.
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/handshakes.sh
#   DURATION=20 RUNS=5 CONNS=64 CERTS=ecdsa SERVERS=haproxy bench/handshakes.sh
#   SERVERS="tern tern-base" TERN_BASE=/path/to/old/tern bench/handshakes.sh   # a change's cost
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-32}
CERTS=${CERTS:-rsa ecdsa}

find_client
pick_servers
# shellcheck disable=SC2086
need_certs $CERTS

client() {
    taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "https://127.0.0.1:$FRONT_PORT/test" \
        --cpus "$CLIENT_CPU" --threads 1 -c "$CONNS" --requests-per-conn 1 \
        --tls-version 1.3 --groups x25519 --ciphers "$SUITE" --sni localhost "$@"
}

# One measurement: server $1, certificate $2, run $3; appends a line to $TMP/results.
measure() {
    local server=$1 cert=$2 run=$3 json=$TMP/$1-$2-$3.json
    start_server "$server" "$cert"
    if [[ $WARMUP != 0 ]]; then
        client -d "$WARMUP" --warmup 0 >"$TMP/$server-$cert-$run.warmup.txt" ||
            die "warm-up against $server failed: see $TMP/$server-$cert-$run.warmup.txt"
    fi
    local ssl0 cpu0 cpu1 ssl1
    ssl0=$(server_ssl_conns "$server")
    cpu0=$(cpu_us "$SERVER_PID")
    client -d "$DURATION" --warmup 0 --json "$json" >"$TMP/$server-$cert-$run.txt" ||
        die "client run against $server failed: $(cat "$TMP/$server-$cert-$run.txt")"
    cpu1=$(cpu_us "$SERVER_PID")
    ssl1=$(server_ssl_conns "$server")
    stop_pid "$SERVER_PID"

    local full resumed rate errors client_us share ssl server_us
    full=$(json_get "$json" full)
    resumed=$(json_get "$json" resumed)
    rate=$(json_get "$json" connections_per_s)
    errors=$(json_get "$json" errors_total)
    client_us=$(json_get "$json" us_per_connection)
    share=$(json_get "$json" share)
    ssl=n/a
    [[ $ssl0 == n/a ]] || ssl=$((ssl1 - ssl0))
    server_us=$(calc "($cpu1 - $cpu0) / ($full > 0 ? $full : 1)")
    printf '%-6s %-8s %3s %10.1f %12s %12.1f %8.0f%% %8s %7s %9s %6s\n' "$cert" "$server" "$run" \
        "$rate" "$server_us" "$client_us" "$(calc "$share * 100" 0)" "$full" "$resumed" "$ssl" "$errors"
    echo "$cert $server $run $rate $server_us $client_us $share $full $resumed $errors" >>"$TMP/results"
}

echo "full handshakes: TLS 1.3 $SUITE X25519, 1 request/connection to /test, no resumption"
echo "server CPU $SERVER_CPU (1 thread), client CPU $CLIENT_CPU (${CLIENT[*]}, $CONNS connections)," \
    "$DURATION s per run after $WARMUP s warm-up, $RUNS run(s)"
echo
printf '%-6s %-8s %3s %10s %12s %12s %9s %8s %7s %9s %6s\n' cert server run "hs/s" "server µs/hs" \
    "client µs/hs" "client" full resumed "srv conns" errors
for ((run = 1; run <= RUNS; run++)); do
    for cert in $CERTS; do
        for server in "${SERVER_LIST[@]}"; do
            measure "$server" "$cert" "$run"
        done
    done
done

# Median over the runs of tern ÷ tern-base for column $2 (4 = rate, 5 = CPU) of certificate $1:
# each run's two servers ran back to back, so the per-run ratio cancels slow drifts of the load.
per_run_ratio() {
    awk -v c="$1" -v k="$2" '$1 == c && $2 == "tern" { t[$3] = $k } $1 == c && $2 == "tern-base" { b[$3] = $k }
        END { for (r in t) if (r in b && b[r] > 0) printf "%.3f\n", t[r] / b[r] }' "$TMP/results" |
        median
}

echo
echo "median over $RUNS run(s) (spread min-max); ratio = tern / haproxy for rate, haproxy / tern for CPU"
printf '%-6s %-8s %18s %22s\n' cert server "hs/s" "server µs/handshake"
for cert in $CERTS; do
    for server in "${SERVER_LIST[@]}"; do
        rates=$(awk -v c="$cert" -v s="$server" '$1 == c && $2 == s { print $4 }' "$TMP/results")
        cpus=$(awk -v c="$cert" -v s="$server" '$1 == c && $2 == s { print $5 }' "$TMP/results")
        printf '%-6s %-8s %8.0f (%s) %8.1f (%s)\n' "$cert" "$server" "$(median <<<"$rates")" \
            "$(spread 0 <<<"$rates")" "$(median <<<"$cpus")" "$(spread 1 <<<"$cpus")"
        eval "rate_${server//-/_}_${cert}=$(median <<<"$rates") cpu_${server//-/_}_${cert}=$(median <<<"$cpus")"
    done
    if [[ -n ${rate_tern_rsa:-}${rate_tern_ecdsa:-} ]] && [[ " ${SERVER_LIST[*]} " == *" haproxy "* ]]; then
        r_t=rate_tern_$cert r_h=rate_haproxy_$cert c_t=cpu_tern_$cert c_h=cpu_haproxy_$cert
        goal=$([[ $cert == rsa ]] && echo 1.6 || echo 2.5)
        echo "$cert: tern/haproxy rate $(calc "${!r_t} / ${!r_h}" 2)x," \
            "CPU per handshake $(calc "${!c_h} / ${!c_t}" 2)x better (goal >= ${goal}x)"
    fi
    if [[ " ${SERVER_LIST[*]} " == *" tern-base "* ]] && [[ " ${SERVER_LIST[*]} " == *" tern "* ]]; then
        r_t=rate_tern_$cert r_b=rate_tern_base_$cert c_t=cpu_tern_$cert c_b=cpu_tern_base_$cert
        echo "$cert: tern/tern-base rate $(calc "${!r_t} / ${!r_b}" 3)x," \
            "CPU per handshake $(calc "${!c_t} / ${!c_b}" 3)x (median of per-run ratios: rate" \
            "$(per_run_ratio "$cert" 4), CPU $(per_run_ratio "$cert" 5))"
    fi
done
if awk '$7 > 0.9 { bound = 1 } END { exit !bound }' "$TMP/results"; then
    echo "WARNING: the client used > 90% of its CPU in some runs: their rate may be client-bound;"
    echo "         compare server µs/handshake (CPU time per handshake) for those."
fi
