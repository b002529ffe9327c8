#!/usr/bin/env bash
# tern against the floor: the smallest useful TLS server (crates/tern-bench/examples/
# floor-server.rs: tokio + rustls + aws-lc-rs with tern's TLS policy, fixed 200, close), under
# the same full-handshake workload as handshakes.sh. What tern spends per handshake beyond the
# floor is tern's own overhead; what the floor spends is crypto and the kernel.
#
#   cargo build --release && cargo build --release -p tern-bench --example floor-server
#   bench/certs.sh && bench/floor.sh
#
# Knobs: CERTS [rsa ecdsa], SUITE [as handshakes.sh: TLS_AES_256_GCM_SHA384], CONNS [32], RUNS, DURATION, WARMUP,
# SERVER_CPU, CLIENT_CPU, FRONT_PORT (see lib.sh).
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CERTS=${CERTS:-rsa ecdsa}
CONNS=${CONNS:-32}
FLOOR=target/release/examples/floor-server
[[ -x $FLOOR ]] || die "$FLOOR missing: cargo build --release -p tern-bench --example floor-server"
have_tern_run || die "$TERN missing: cargo build --release"
find_client

# One measured run of server $1 with certificate $2; prints "hs/s µs/hs".
measure() {
    local server=$1 cert=$2 pid before after n
    port_free "$FRONT_PORT" || die "port $FRONT_PORT is busy (set FRONT_PORT)"
    if [[ $server == floor ]]; then
        start_pinned "$SERVER_CPU" floor "$FLOOR" "127.0.0.1:$FRONT_PORT" "bench/certs/$cert.pem"
    else
        tern_config "$cert" >"$TMP/tern.toml"
        start_pinned "$SERVER_CPU" tern "$TERN" run -c "$TMP/tern.toml"
    fi
    pid=$LAST_PID
    wait_port "$FRONT_PORT" "$pid"
    local load=(taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "https://127.0.0.1:$FRONT_PORT/test"
        --requests-per-conn 1 -c "$CONNS" --threads 1 --cpus "$CLIENT_CPU" --ciphers "$SUITE")
    "${load[@]}" -d "$WARMUP" --warmup 0 >/dev/null 2>&1
    before=$(cpu_us "$pid")
    "${load[@]}" -d "$DURATION" --warmup 0 --json "$TMP/run.json" >/dev/null 2>&1
    after=$(cpu_us "$pid")
    stop_pid "$pid"
    n=$(json_get "$TMP/run.json" full)
    [[ -n $n && $n -gt 0 ]] || die "no handshakes counted (see $TMP)"
    echo "$(calc "$n / $DURATION" 0) $(calc "($after - $before) / $n" 1)"
}

echo "floor vs tern: TLS 1.3 $SUITE, 1 request per connection, $CONNS connections," \
    "server CPU $SERVER_CPU, client CPU $CLIENT_CPU, $RUNS x $DURATION s"
printf '%-6s %-6s %4s %9s %9s\n' cert server run hs/s "µs/hs"
for cert in $CERTS; do
    need_certs "$cert"
    declare -A cost=()
    for ((run = 1; run <= RUNS; run++)); do
        for server in floor tern; do
            read -r rate us < <(measure "$server" "$cert")
            printf '%-6s %-6s %4d %9s %9s\n' "$cert" "$server" "$run" "$rate" "$us"
            cost[$server]+="$us "
        done
    done
    f=$(median <<<"${cost[floor]}")
    t=$(median <<<"${cost[tern]}")
    echo "$cert: median µs/handshake floor $f, tern $t: tern = $(calc "$t / $f" 2) x the floor"
done
