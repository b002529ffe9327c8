#!/usr/bin/env bash
# Is the load generator fast enough? Full handshakes per client CPU-second, tern's generator vs
# ApacheBench (`ab`, OpenSSL 3), both against the same HAProxy.
#
# The server (HAProxy, the handshakes.sh config: TLS 1.3, $SUITE, X25519, monitor URI, no
# cache, no tickets) is pinned to CPU $SERVER_CPU; each client in turn to CPU $CLIENT_CPU with
# $CONNS concurrent one-request connections for $DURATION s. Client CPU is taken the same way
# for both: the `times` builtin around the client process (user + system of the child,
# start-up included). Server-side TLS connections come from HAProxy's CumSslConns, so the
# figure for `ab` (which does not count handshakes itself) is checked too.
#
# Usage (from the repo root): bench/client-check.sh      (needs: apt-get install apache2-utils)
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-32}
CERTS=${CERTS:-rsa ecdsa}
# tern-bench-nosig: tern bench with --no-signature-check (the server still signs).
CLIENTS=${CLIENTS:-ab tern-bench tern-bench-nosig}

need_cmd haproxy "apt-get install -y haproxy"
need_cmd ab "apt-get install -y apache2-utils"
find_client
# shellcheck disable=SC2086
need_certs $CERTS
URL=https://127.0.0.1:$FRONT_PORT/test

# Runs "$@" pinned to the client CPU; prints "user_s system_s" of the child on the last line.
timed() {
    (
        taskset -c "$CLIENT_CPU" "$@" >"$TMP/client.out" 2>&1 || echo "client failed" >&2
        # `times` must run in this shell, not in a pipeline's forked subshell (which has no
        # children yet), so its output goes to a file first.
        times >"$TMP/times"
        tail -n 1 "$TMP/times" | awk '{ gsub(/s/, "", $1); gsub(/s/, "", $2); split($1, u, "m");
            split($2, s, "m"); printf "%.3f %.3f\n", u[1] * 60 + u[2], s[1] * 60 + s[2] }'
    )
}

run_client() {
    case $1 in
    ab) timed ab -q -f TLS1.3 -c "$CONNS" -t "$DURATION" -n 100000000 "$URL" ;;
    tern-bench*)
        local extra=()
        [[ $1 == tern-bench-nosig ]] && extra=(--no-signature-check)
        timed "${CLIENT[@]}" "$URL" --cpus "$CLIENT_CPU" -c "$CONNS" --requests-per-conn 1 \
            --tls-version 1.3 --groups x25519 --ciphers "$SUITE" -d "$DURATION" --warmup 0 \
            --json "$TMP/client.json" "${extra[@]}"
        ;;
    esac
}

# Completed requests from the client's own output.
client_requests() {
    case $1 in
    ab) awk '/^Complete requests:/ { print $3 }' "$TMP/client.out" ;;
    tern-bench*) json_get "$TMP/client.json" requests ;;
    esac
}

echo "client check: TLS 1.3 $SUITE X25519, 1 request/connection, $CONNS connections," \
    "$DURATION s; HAProxy on CPU $SERVER_CPU, client on CPU $CLIENT_CPU"
echo
printf '%-6s %-16s %8s %10s %10s %14s %12s %13s\n' cert client "hs/s" "srv conns" "client s" \
    "hs/client-s" "client µs/hs" "server µs/hs"
for cert in $CERTS; do
    for client in $CLIENTS; do
        start_server haproxy "$cert"
        ssl0=$(haproxy_info CumSslConns)
        cpu0=$(cpu_us "$SERVER_PID")
        read -r user sys < <(run_client "$client" | tail -n 1)
        cpu1=$(cpu_us "$SERVER_PID")
        ssl1=$(haproxy_info CumSslConns)
        stop_pid "$SERVER_PID"
        requests=$(client_requests "$client")
        [[ -n $requests && $requests -gt 0 ]] || die "$client completed no requests: $(cat "$TMP/client.out")"
        conns=$((ssl1 - ssl0))
        cpu=$(calc "$user + $sys" 3)
        printf '%-6s %-16s %8.0f %10s %10s %14.0f %12.1f %13.1f\n' "$cert" "$client" \
            "$(calc "$requests / $DURATION")" "$conns" "$cpu" "$(calc "$conns / $cpu")" \
            "$(calc "$cpu * 1e6 / $conns")" "$(calc "($cpu1 - $cpu0) / $conns")"
    done
done
echo
echo "hs/client-s = server-counted TLS connections per second of client CPU: the most handshakes"
echo "per second the client could drive from one core. A client is not the bottleneck while it"
echo "stays well above the server's rate."
