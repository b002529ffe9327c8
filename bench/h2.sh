#!/usr/bin/env bash
# HTTP/2 over TLS through the proxy: proxy CPU time per request, tern vs HAProxy, with h2load.
#
# Workload (issue 16): h2load -c $CONNS -m $STREAMS (default 16 connections, 32 streams each),
# TLS 1.3 with ALPN h2, GET $REQ_PATH (default /?s=1k: a 1 KiB response from `tern term`),
# forwarded over HTTP/1.1 keep-alive to one backend (HAProxy: http-reuse always).
#
# CPUs: the proxy has CPU $SERVER_CPU to itself; the backend and h2load share CPU $CLIENT_CPU,
# which caps the rate, so the figure compared is the proxy's CPU time per request
# (utime+stime from /proc/PID/stat around the measured run, divided by the requests h2load saw
# succeed), as in bench/keepalive.sh. Servers are interleaved run by run.
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/h2.sh
#   DURATION=20 RUNS=5 SERVERS="tern haproxy" bench/h2.sh
#   HAPROXY=/path/to/haproxy-3.0 bench/h2.sh   # another HAProxy binary (e.g. 3.0 + OpenSSL 3.5)
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-16}
STREAMS=${STREAMS:-32}
CERT=${CERT:-ecdsa}
REQ_PATH=${REQ_PATH:-/?s=1k}
need_cmd h2load "apt-get install nghttp2-client"
pick_servers
need_certs "$CERT"
have_tern_term || die "'$TERN term' is not available: the backend is tern term"

# HAProxy offers h2 on its bind (2.6 offers no ALPN by default).
eval "$(declare -f haproxy_config | sed 's/ ssl crt \$cert/ ssl crt $cert alpn h2,http\/1.1/')"

port_free "$BACKEND_PORT" || die "port $BACKEND_PORT is busy (set BACKEND_PORT)"
start_pinned "$CLIENT_CPU" backend "$TERN" term --listen "127.0.0.1:$BACKEND_PORT" --threads 1
BACKEND_PID=$LAST_PID
wait_port "$BACKEND_PORT" "$BACKEND_PID"

client() {
    taskset -c "$CLIENT_CPU" h2load -c "$CONNS" -m "$STREAMS" -t 1 "$@" \
        "https://127.0.0.1:$FRONT_PORT$REQ_PATH"
}

measure() {
    local server=$1 run=$2 out=$TMP/$1-$2.txt
    start_server "$server" "$CERT"
    client -D "$WARMUP" >"$TMP/$server-$run.warmup.txt" 2>&1 ||
        die "warm-up against $server failed: see $TMP/$server-$run.warmup.txt"
    local cpu0 cpu1
    cpu0=$(cpu_us "$SERVER_PID")
    client -D "$DURATION" >"$out" 2>&1 || die "h2load against $server failed: $(tail -5 "$out")"
    cpu1=$(cpu_us "$SERVER_PID")
    stop_pid "$SERVER_PID"
    grep -q "Application protocol: h2" "$out" || die "$server did not negotiate h2: $out"
    local ok failed rate us
    ok=$(awk '/^requests:/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^succeeded/) print $i }' "$out")
    failed=$(awk '/^requests:/ { for (i = 1; i <= NF; i++) if ($(i + 1) ~ /^failed/) print $i }' "$out")
    rate=$(calc "$ok / $DURATION" 0)
    us=$(calc "($cpu1 - $cpu0) / ($ok > 0 ? $ok : 1)" 2)
    printf '%-8s %3s %10s %12s %8s\n' "$server" "$run" "$rate" "$us" "$failed"
    echo "$server $run $rate $us $failed" >>"$TMP/results"
}

echo "HTTP/2: h2load -c $CONNS -m $STREAMS, GET $REQ_PATH over TLS 1.3 ($CERT), HTTP/1.1 to tern term"
echo "proxy CPU $SERVER_CPU, backend + h2load CPU $CLIENT_CPU, $DURATION s per run, $RUNS run(s)"
printf '%-8s %3s %10s %12s %8s\n' server run "req/s" "µs/request" failed
for ((run = 1; run <= RUNS; run++)); do
    for server in "${SERVER_LIST[@]}"; do
        measure "$server" "$run"
    done
done
echo
echo "median over $RUNS run(s): proxy CPU µs per request (spread)"
for server in "${SERVER_LIST[@]}"; do
    us=$(awk -v s="$server" '$1 == s { print $4 }' "$TMP/results")
    rates=$(awk -v s="$server" '$1 == s { print $3 }' "$TMP/results")
    printf '%-8s %8.2f (%s) µs/request, %8.0f req/s\n' "$server" "$(median <<<"$us")" \
        "$(spread 2 <<<"$us")" "$(median <<<"$rates")"
done
