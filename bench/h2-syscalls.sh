#!/usr/bin/env bash
# HTTP/2 over TLS through the proxy: system calls and context switches per request, tern vs
# HAProxy, counted by perf over a fixed number of requests.
#
# Why counts: HAProxy 2.6's system time is more than half its CPU per HTTP/2 request, and on a
# shared host timings move with the load while counts do not. Same setup as bench/h2.sh (the
# proxy alone on CPU $SERVER_CPU, `tern term` and h2load on CPU $CLIENT_CPU, GET $REQ_PATH over
# TLS 1.3 with ALPN h2, HTTP/1.1 keep-alive to the backend): $WARMUP_REQUESTS requests first,
# then every `syscalls:sys_enter_*` tracepoint of the proxy's process over exactly $REQUESTS
# requests, printed per request, and how many `recvfrom` returned EAGAIN.
#
# Usage (root, for the tracepoints; from the repo root after `cargo build --release` and
# bench/certs.sh):
#   bench/h2-syscalls.sh
#   REQUESTS=50000 CONNS=8 STREAMS=8 SERVERS="tern haproxy" bench/h2-syscalls.sh
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-16}
STREAMS=${STREAMS:-32}
CERT=${CERT:-ecdsa}
REQ_PATH=${REQ_PATH:-/?s=1k}
REQUESTS=${REQUESTS:-20000}
WARMUP_REQUESTS=${WARMUP_REQUESTS:-20000}
need_cmd h2load "apt-get install nghttp2-client"
need_cmd perf "apt-get install linux-perf"
pick_servers
need_certs "$CERT"
have_tern_term || die "'$TERN term' is not available: the backend is tern term"

# HAProxy offers h2 on its bind (2.6 offers no ALPN by default), as in bench/h2.sh.
eval "$(declare -f haproxy_config | sed 's/ ssl crt \$cert/ ssl crt $cert alpn h2,http\/1.1/')"

port_free "$BACKEND_PORT" || die "port $BACKEND_PORT is busy (set BACKEND_PORT)"
start_pinned "$CLIENT_CPU" backend "$TERN" term --listen "127.0.0.1:$BACKEND_PORT" --threads 1
wait_port "$BACKEND_PORT" "$LAST_PID"

client() {
    taskset -c "$CLIENT_CPU" h2load -c "$CONNS" -m "$STREAMS" -t 1 -n "$1" \
        "https://127.0.0.1:$FRONT_PORT$REQ_PATH"
}

# Counts server $1's system calls over $REQUESTS requests; prints one line per call made.
count() {
    local server=$1 stat=$TMP/$1.perf out=$TMP/$1.h2load
    start_server "$server" "$CERT"
    client "$WARMUP_REQUESTS" >"$TMP/$server.warmup" 2>&1 || die "warm-up against $server failed"
    perf record -q -e syscalls:sys_exit_recvfrom -p "$SERVER_PID" -o "$TMP/$server.data" \
        >/dev/null 2>&1 &
    local recorder=$!
    perf stat -e 'syscalls:sys_enter_*' -e context-switches -p "$SERVER_PID" -o "$stat" -- \
        taskset -c "$CLIENT_CPU" h2load -c "$CONNS" -m "$STREAMS" -t 1 -n "$REQUESTS" \
        "https://127.0.0.1:$FRONT_PORT$REQ_PATH" >"$out" 2>&1 ||
        die "h2load against $server failed: $(tail -5 "$out")"
    kill -INT "$recorder" && wait "$recorder" || true
    stop_pid "$SERVER_PID"
    grep -q "Application protocol: h2" "$out" || die "$server did not negotiate h2: $out"
    grep -q "$REQUESTS succeeded" "$out" || die "not every request succeeded: $(grep '^requests:' "$out")"
    local eagain
    eagain=$(perf script -i "$TMP/$server.data" 2>/dev/null | grep -c '0xfffffffffffffff5$' || true)
    echo "== $server: per request over $REQUESTS (h2load -c $CONNS -m $STREAMS)"
    awk -v n="$REQUESTS" '$1 ~ /^[0-9,]+$/ {
        c = $1; gsub(",", "", c); name = $2; sub("syscalls:sys_enter_", "", name)
        if (c > 0) { printf "%-20s %8.3f\n", name, c / n; if (name != "context-switches") all += c }
    } END { printf "%-20s %8.3f\n", "all system calls", all / n }' "$stat"
    printf '%-20s %8.3f (of the calls recorded)\n' "recvfrom EAGAIN" "$(calc "$eagain / $REQUESTS" 3)"
}

for server in "${SERVER_LIST[@]}"; do
    count "$server"
done
