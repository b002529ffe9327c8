#!/usr/bin/env bash
# Memory per idle and per slow client connection (issue 19), tern next to HAProxy and nginx,
# and a well-behaved client's latency while slowloris connections are held open.
#
# For each server and mode, bench/idle_clients.py opens $CONNS connections and reports the
# server's resident memory (VmRSS, all its processes) before and with them open:
#
#   plain      plain TCP, connected, nothing sent yet
#   plain-req  plain HTTP/1.1, one request answered, idle on keep-alive
#   tls        TLS 1.3 handshake (X25519, ECDSA P-256) done, nothing sent
#   tls-req    TLS, one HTTP/1.1 request answered, idle on keep-alive
#   h2-req     TLS with ALPN h2, one request answered, idle
#   slow       slowloris: a request head dribbled one byte every 2 s, never finished
#
# In `slow` mode, a well-behaved client (`tern bench`, open loop, $PROBE_RATE requests/s of
# 100 bytes over 8 keep-alive connections, $PROBE_S s) measures its latency against the same
# server first alone, then while the slow connections are held: p50, p99 and the ratio. The
# slow clients run at idle CPU priority (`chrt -i 0`; SLOW_PRIORITY=normal to run them as
# ordinary processes): they share CPU $CLIENT_CPU with the probe, whose p99 should show what
# the slow connections cost the server, not what the Python client dribbling them costs the probe.
#
# Set-up: every server has one worker / thread pinned to CPU $SERVER_CPU, a plain bind and a
# TLS bind (ALPN h2 and http/1.1), the same `tern term` backend with keep-alive, no TLS session
# cache or tickets, and timeouts of 120 s (client, request head, keep-alive) so that nothing
# closes the connections while they are counted. The clients share CPU $CLIENT_CPU.
# Connections: 9,000 by default: HAProxy 2.6 refuses a `maxconn` whose descriptors pass the hard
# limit (20,000 on this machine, and it cannot be raised here), and it needs two per connection.
#
# Usage (after `cargo build --release` and bench/certs.sh; haproxy, nginx, python3 installed):
#   bench/idle-memory.sh
#   SERVERS="tern tern-base" TERN_BASE=old/tern MODES="tls-req" bench/idle-memory.sh
#   HAPROXY=/path/to/haproxy-3.0 SERVERS=haproxy bench/idle-memory.sh
source "$(dirname "$0")/lib.sh"

SERVERS=${SERVERS:-tern haproxy nginx}
MODES=${MODES:-plain plain-req tls tls-req h2-req slow}
CONNS=${CONNS:-9000}
case ${SLOW_PRIORITY:-idle} in
idle) SLOW_PRIO=(chrt -i 0) ;;
normal) SLOW_PRIO=() ;;
*) die "SLOW_PRIORITY is idle or normal" ;;
esac
PLAIN_PORT=${PLAIN_PORT:-8081}
PROBE_RATE=${PROBE_RATE:-200}
PROBE_S=${PROBE_S:-10}
HAPROXY=${HAPROXY:-haproxy}
SUITE=${SUITE:-TLS_AES_256_GCM_SHA384}
CERT_PATH=$PWD/bench/certs/ecdsa.pem

need_cmd python3
[[ -f $CERT_PATH ]] || die "no $CERT_PATH: run bench/certs.sh"
have_tern_term || die "no tern binary at $TERN: cargo build --release"
find_client
for s in $SERVERS; do
    case $s in
    tern) ;;
    tern-base) [[ -x ${TERN_BASE:-} ]] || die "tern-base needs TERN_BASE, a tern binary" ;;
    haproxy) need_cmd "$HAPROXY" ;;
    nginx) need_cmd nginx "apt-get install nginx-light" ;;
    *) die "unknown server $s (tern, tern-base, haproxy, nginx)" ;;
    esac
done
for p in "$FRONT_PORT" "$PLAIN_PORT" "$BACKEND_PORT"; do
    port_free "$p" || die "port $p is busy (set FRONT_PORT, PLAIN_PORT, BACKEND_PORT)"
done

tern_idle_config() {
    local timeouts='timeouts = { client = "120s", http_request = "120s", keep_alive = "120s", handshake = "120s" }'
    cat <<CFG
[global]
workers = 1
cpus = [$SERVER_CPU]
maxconn = 20000

[[frontend]]
name = "plain"
bind = ["127.0.0.1:$PLAIN_PORT"]
$timeouts
default_backend = "app"

[[frontend]]
name = "tls"
bind = ["127.0.0.1:$FRONT_PORT"]
tls = { certs = ["$CERT_PATH"] }
$timeouts
default_backend = "app"

[[backend]]
name = "app"
servers = [ { name = "s1", address = "127.0.0.1:$BACKEND_PORT" } ]
CFG
}

haproxy_idle_config() {
    cat <<CFG
global
    nbthread 1
    cpu-map 1/1 $SERVER_CPU
    maxconn $((CONNS + 900))
    tune.ssl.cachesize 0
    ssl-default-bind-ciphersuites $SUITE
    ssl-default-bind-curves X25519
    ssl-default-bind-options ssl-min-ver TLSv1.3 no-tls-tickets

defaults
    mode http
    timeout connect 5s
    timeout client 120s
    timeout server 120s
    timeout http-request 120s
    timeout http-keep-alive 120s

frontend plain
    bind 127.0.0.1:$PLAIN_PORT
    default_backend app

frontend tls
    bind 127.0.0.1:$FRONT_PORT ssl crt $CERT_PATH alpn h2,http/1.1
    default_backend app

backend app
    http-reuse always
    server s1 127.0.0.1:$BACKEND_PORT
CFG
}

nginx_idle_config() {
    cat <<CFG
worker_processes 1;
worker_cpu_affinity $(printf '1%0*d' "$SERVER_CPU" 0);
worker_rlimit_nofile 20000;
daemon off;
pid $TMP/nginx.pid;
error_log $TMP/nginx-error.log;
events { worker_connections 19000; }
http {
    access_log off;
    keepalive_timeout 120s;
    keepalive_requests 100000;
    client_header_timeout 120s;
    ssl_protocols TLSv1.3;
    ssl_ecdh_curve X25519;
    ssl_session_cache off;
    ssl_session_tickets off;
    upstream app { server 127.0.0.1:$BACKEND_PORT; keepalive 64; }
    server {
        listen 127.0.0.1:$PLAIN_PORT;
        listen 127.0.0.1:$FRONT_PORT ssl http2;
        ssl_certificate $CERT_PATH;
        ssl_certificate_key $CERT_PATH;
        location / {
            proxy_pass http://app;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
        }
    }
}
CFG
}

# Starts server $1; sets SERVER_PID and SERVER_PIDS (every process whose memory counts).
start_server() {
    local name=$1 bin=$TERN
    case $name in
    tern | tern-base)
        [[ $name == tern ]] || bin=$TERN_BASE
        tern_idle_config >"$TMP/$name.toml"
        start_pinned "$SERVER_CPU" "$name" "$bin" run -c "$TMP/$name.toml"
        ;;
    haproxy)
        haproxy_idle_config >"$TMP/haproxy.cfg"
        start_pinned "$SERVER_CPU" haproxy "$HAPROXY" -db -f "$TMP/haproxy.cfg"
        ;;
    nginx)
        mkdir -p "$TMP/nginx"
        nginx_idle_config >"$TMP/nginx.conf"
        start_pinned "$SERVER_CPU" nginx nginx -p "$TMP/nginx" -c "$TMP/nginx.conf"
        ;;
    esac
    SERVER_PID=$LAST_PID
    wait_port "$FRONT_PORT" "$SERVER_PID"
    wait_port "$PLAIN_PORT" "$SERVER_PID"
    SERVER_PIDS=("$SERVER_PID")
    if [[ $name == nginx ]]; then
        SERVER_PIDS+=($(pgrep -P "$SERVER_PID"))
    fi
}

# The well-behaved client: p50 and p99 of its total latency in µs ($1: output name).
probe() {
    local json=$TMP/$1.json
    taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "http://127.0.0.1:$PLAIN_PORT/?s=100" --rate "$PROBE_RATE" \
        -c 8 -d "$PROBE_S" --warmup 1 --timeout 10 --json "$json" >"$TMP/$1.txt" 2>&1 ||
        die "probe $1 failed: $(tail -3 "$TMP/$1.txt")"
    echo "$(json_latency "$json" total p50) $(json_latency "$json" total p99) $(json_get "$json" errors_total)"
}

start_pinned "$CLIENT_CPU" backend "$TERN" term --listen "127.0.0.1:$BACKEND_PORT"
wait_port "$BACKEND_PORT" "$LAST_PID"

results=()
for server in $SERVERS; do
    for mode in $MODES; do
        start_server "$server"
        port=$FRONT_PORT
        [[ $mode == plain* || $mode == slow ]] && port=$PLAIN_PORT
        if [[ $mode == slow ]]; then
            read -r alone50 alone99 alone_err < <(probe "$server-alone")
            # Hold the slow connections for the open time plus the probe's run.
            taskset -c "$CLIENT_CPU" "${SLOW_PRIO[@]}" python3 bench/idle_clients.py slow "$port" "$CONNS" \
                "${SERVER_PIDS[@]}" --hold $((PROBE_S + 6)) >"$TMP/$server-$mode.out" 2>&1 &
            clients=$!
            for ((i = 0; i < 1200; i++)); do
                grep -q '^ready' "$TMP/$server-$mode.out" 2>/dev/null && break
                kill -0 "$clients" 2>/dev/null || break
                sleep 0.25
            done
            read -r slow50 slow99 slow_err < <(probe "$server-slow")
            wait "$clients" || die "slow clients against $server failed: $(tail -3 "$TMP/$server-$mode.out")"
            line=$(grep '^{' "$TMP/$server-$mode.out")
            results+=("$server $mode $line probe_alone_p50=$alone50 p99=$alone99 errors=$alone_err probe_slow_p50=$slow50 p99=$slow99 errors=$slow_err")
        else
            taskset -c "$CLIENT_CPU" python3 bench/idle_clients.py "$mode" "$port" "$CONNS" \
                "${SERVER_PIDS[@]}" >"$TMP/$server-$mode.out" 2>&1 ||
                die "clients against $server ($mode) failed: $(tail -3 "$TMP/$server-$mode.out")"
            results+=("$server $mode $(grep '^{' "$TMP/$server-$mode.out")")
        fi
        stop_pid "$SERVER_PID"
        forget_pid "$SERVER_PID"
        echo "${results[-1]}"
    done
done

echo
echo "bytes of resident memory per connection ($CONNS connections, one worker):"
printf '%-10s' mode
for server in $SERVERS; do printf '%12s' "$server"; done
echo
for mode in $MODES; do
    printf '%-10s' "$mode"
    for server in $SERVERS; do
        v=$(printf '%s\n' "${results[@]}" | awk -v s="$server" -v m="$mode" '$1 == s && $2 == m' |
            grep -o '"bytes_per_conn": [0-9-]*' | awk '{ print $2 }')
        printf '%12s' "${v:-n/a}"
    done
    echo
done
if [[ " $MODES " == *" slow "* ]]; then
    echo
    echo "well-behaved client ($PROBE_RATE req/s), total latency p50 / p99 in µs, alone and with the slow connections:"
    printf '%s\n' "${results[@]}" | awk '$2 == "slow"' | sed -E 's/^([^ ]+) slow .*probe_alone_p50=([0-9]+) p99=([0-9]+) errors=([0-9]+) probe_slow_p50=([0-9]+) p99=([0-9]+) errors=([0-9]+).*/\1: alone \2 \/ \3 (errors \4), slowloris \5 \/ \6 (errors \7)/'
fi
