#!/usr/bin/env bash
# Is the load generator cheap enough on keep-alive connections? Requests per client CPU-second,
# tern's generator vs wrk, both against the same HAProxy; the handshake side (vs ab) is
# bench/client-check.sh.
#
# HTTPS: HAProxy with the handshakes.sh config (TLS 1.3, $SUITE, X25519, ECDSA certificate)
# answering its monitor URI; HTTP: HAProxy answering every request itself ("ok"). The server is
# pinned to CPU $SERVER_CPU; each client in turn to CPU $CLIENT_CPU with $CONNS keep-alive
# connections for $DURATION s, one thread. Client CPU is taken the same way for both: the
# `times` builtin around the client process (user + system, start-up included). Requests are
# the clients' own counts of completed responses. When a client saturates its core, requests
# per CPU-second is still its cost per request, which is the figure compared here.
#
# Usage (from the repo root): bench/client-efficiency.sh      (needs: apt-get install wrk)
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-32}
RUNS=${RUNS:-3}

need_cmd haproxy "apt-get install -y haproxy"
need_cmd wrk "apt-get install -y wrk"
find_client
need_certs ecdsa

# Runs "$@" pinned to the client CPU; prints "user_s system_s" of the child on the last line.
timed() {
    (
        taskset -c "$CLIENT_CPU" "$@" >"$TMP/client.out" 2>&1 || echo "client failed" >&2
        times >"$TMP/times"
        tail -n 1 "$TMP/times" | awk '{ gsub(/s/, "", $1); gsub(/s/, "", $2); split($1, u, "m");
            split($2, s, "m"); printf "%.3f %.3f\n", u[1] * 60 + u[2], s[1] * 60 + s[2] }'
    )
}

# $1 = client, $2 = URL
run_client() {
    case $1 in
    wrk) timed wrk -t1 -c"$CONNS" -d"${DURATION}s" "$2" ;;
    tern-bench)
        timed "${CLIENT[@]}" "$2" --cpus "$CLIENT_CPU" -c "$CONNS" --threads 1 -d "$DURATION" \
            --warmup 0 -q --json "$TMP/client.json"
        ;;
    esac
}

client_requests() {
    case $1 in
    wrk) awk '/requests in/ { print $1 }' "$TMP/client.out" ;;
    tern-bench) json_get "$TMP/client.json" requests ;;
    esac
}

# Starts the server for protocol $1 (https|http); sets SERVER_PID and URL.
start_for() {
    case $1 in
    https)
        start_server haproxy ecdsa
        URL=https://127.0.0.1:$FRONT_PORT/test
        ;;
    http)
        port_free "$BACKEND_PORT" || die "port $BACKEND_PORT is busy (set BACKEND_PORT)"
        haproxy_backend_config "$SERVER_CPU" >"$TMP/haproxy-plain.cfg"
        start_pinned "$SERVER_CPU" haproxy-plain haproxy -db -f "$TMP/haproxy-plain.cfg"
        SERVER_PID=$LAST_PID
        wait_port "$BACKEND_PORT" "$SERVER_PID"
        URL=http://127.0.0.1:$BACKEND_PORT/
        ;;
    esac
}

echo "client efficiency: keep-alive, $CONNS connections, 1 thread, $DURATION s, $RUNS runs;" \
    "HAProxy on CPU $SERVER_CPU, client on CPU $CLIENT_CPU"
echo
printf '%-6s %-10s %10s %10s %16s %14s\n' proto client "req/s" "client s" "req/client-s" "client µs/req"
declare -A PER_CPU
for proto in https http; do
    for ((run = 1; run <= RUNS; run++)); do
        for client in wrk tern-bench; do
            start_for "$proto"
            read -r user sys < <(run_client "$client" "$URL" | tail -n 1)
            stop_pid "$SERVER_PID"
            requests=$(client_requests "$client")
            [[ -n $requests && $requests -gt 0 ]] || die "$client completed no requests: $(cat "$TMP/client.out")"
            cpu=$(calc "$user + $sys" 3)
            per_cpu=$(calc "$requests / $cpu" 0)
            PER_CPU[$proto-$client]+="$per_cpu "
            printf '%-6s %-10s %10.0f %10s %16s %14.2f\n' "$proto" "$client" \
                "$(calc "$requests / $DURATION")" "$cpu" "$per_cpu" "$(calc "$cpu * 1e6 / $requests" 3)"
        done
    done
done
echo
echo "medians (min-max) of requests per client CPU-second:"
for proto in https http; do
    w=${PER_CPU[$proto-wrk]}
    t=${PER_CPU[$proto-tern-bench]}
    wm=$(median <<<"$w")
    tm=$(median <<<"$t")
    printf '%-6s wrk %s (%s)   tern-bench %s (%s)   ratio tern-bench/wrk %s\n' "$proto" \
        "$wm" "$(spread <<<"$w")" "$tm" "$(spread <<<"$t")" "$(calc "$tm / $wm" 2)"
done
