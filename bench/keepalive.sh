#!/usr/bin/env bash
# Keep-alive requests through the proxy to a backend: proxy CPU time per request, tern vs HAProxy.
#
# Workload: $PROTO (default https: TLS 1.3, $SUITE, X25519, $CERT certificate) keep-alive
# connections from the client ($CONNS of them, unlimited requests each) to the proxy, GET
# $REQ_PATH forwarded to one backend server over plain HTTP/1.1 with connection reuse
# (HAProxy: http-reuse always).
#
# CPUs: the machine has 2 cores. The proxy gets CPU $SERVER_CPU to itself; the backend shares
# CPU $CLIENT_CPU with the client. That caps the request rate (the client core is the
# bottleneck), which is why the figure compared is not the rate but the proxy's CPU time per
# request: utime+stime from /proc/PID/stat before and after the run, divided by the requests
# completed. Both proxies talk to the same backend in a run: `tern term` when available
# (BACKEND=tern), otherwise a one-line HAProxy `http-request return` (BACKEND=haproxy).
#
# Usage (from the repo root, after `cargo build --release` and bench/certs.sh):
#   bench/keepalive.sh
#   PROTO=http DURATION=20 RUNS=5 bench/keepalive.sh
#   PROTO=http REQS_PER_CONN=1 SERVERS="tern tern-base" TERN_BASE=old/tern bench/keepalive.sh
#     (a new connection per request: REQS_PER_CONN requests each, 0 for unlimited)
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

CONNS=${CONNS:-32}
REQS_PER_CONN=${REQS_PER_CONN:-0}
CERT=${CERT:-ecdsa}
PROTO=${PROTO:-https}
REQ_PATH=${REQ_PATH:-/}
BACKEND=${BACKEND:-auto}

[[ $PROTO == http || $PROTO == https ]] || die "PROTO must be http or https"
[[ $REQ_PATH != /test* ]] || die "REQ_PATH must not be the monitor URI /test"
find_client
pick_servers
need_certs "$CERT"
if [[ $BACKEND == auto ]]; then
    BACKEND=haproxy
    have_tern_term && BACKEND=tern
fi

start_backend() {
    port_free "$BACKEND_PORT" || die "port $BACKEND_PORT is busy (set BACKEND_PORT)"
    case $BACKEND in
    haproxy)
        haproxy_backend_config "$CLIENT_CPU" >"$TMP/backend.cfg"
        start_pinned "$CLIENT_CPU" backend haproxy -db -f "$TMP/backend.cfg"
        ;;
    tern)
        have_tern_term || die "'$TERN term' is not available"
        start_pinned "$CLIENT_CPU" backend "$TERN" term --listen "127.0.0.1:$BACKEND_PORT" --threads 1
        ;;
    *) die "BACKEND must be auto, haproxy or tern" ;;
    esac
    BACKEND_PID=$LAST_PID
    wait_port "$BACKEND_PORT" "$BACKEND_PID"
}

# Plain HTTP: the same configs without TLS on the frontend.
if [[ $PROTO == http ]]; then
    eval "$(declare -f haproxy_config | sed 's/ ssl crt \$cert//')"
    eval "$(declare -f tern_config | sed '/^ *tls = /d')"
fi

client() {
    local tls=()
    [[ $PROTO == http ]] || tls=(--tls-version 1.3 --groups x25519 --ciphers "$SUITE" --sni localhost)
    taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "$PROTO://127.0.0.1:$FRONT_PORT$REQ_PATH" \
        --cpus "$CLIENT_CPU" --threads 1 -c "$CONNS" --requests-per-conn "$REQS_PER_CONN" "${tls[@]}" "$@"
}

measure() {
    local server=$1 run=$2 json=$TMP/$1-$2.json
    start_server "$server" "$CERT"
    if [[ $WARMUP != 0 ]]; then
        client -d "$WARMUP" --warmup 0 >"$TMP/$server-$run.warmup.txt" ||
            die "warm-up against $server failed: see $TMP/$server-$run.warmup.txt"
    fi
    local cpu0 bcpu0 cpu1 bcpu1
    cpu0=$(cpu_us "$SERVER_PID")
    bcpu0=$(cpu_us "$BACKEND_PID")
    client -d "$DURATION" --warmup 0 --json "$json" >"$TMP/$server-$run.txt" ||
        die "client run against $server failed: $(cat "$TMP/$server-$run.txt")"
    cpu1=$(cpu_us "$SERVER_PID")
    bcpu1=$(cpu_us "$BACKEND_PID")
    stop_pid "$SERVER_PID"

    local requests rate errors client_us share server_us backend_us share_srv
    requests=$(json_get "$json" requests)
    rate=$(json_get "$json" requests_per_s)
    errors=$(json_get "$json" errors_total)
    client_us=$(json_get "$json" us_per_request)
    share=$(json_get "$json" share)
    server_us=$(calc "($cpu1 - $cpu0) / ($requests > 0 ? $requests : 1)" 2)
    backend_us=$(calc "($bcpu1 - $bcpu0) / ($requests > 0 ? $requests : 1)" 2)
    share_srv=$(calc "($cpu1 - $cpu0) / ($DURATION * 1e6) * 100" 0)
    printf '%-8s %3s %10.0f %13s %8s%% %13s %13.2f %8.0f%% %6s\n' "$server" "$run" "$rate" \
        "$server_us" "$share_srv" "$backend_us" "$client_us" "$(calc "$share * 100" 0)" "$errors"
    echo "$server $run $rate $server_us $share $errors" >>"$TMP/results"
}

start_backend
echo "keep-alive: $PROTO$([[ $PROTO == https ]] && echo " TLS 1.3 $SUITE X25519 $CERT"), GET $REQ_PATH" \
    "via the proxy to a $BACKEND backend, $CONNS connections, unlimited requests each"
echo "proxy CPU $SERVER_CPU (1 thread); client and backend CPU $CLIENT_CPU;" \
    "$DURATION s per run after $WARMUP s warm-up, $RUNS run(s)"
echo
printf '%-8s %3s %10s %13s %9s %13s %13s %9s %6s\n' server run "req/s" "proxy µs/req" "proxy" \
    "backend µs" "client µs/req" client errors
for ((run = 1; run <= RUNS; run++)); do
    for server in "${SERVER_LIST[@]}"; do
        measure "$server" "$run"
    done
done

echo
echo "median over $RUNS run(s) (spread min-max)"
declare -A cpu
for server in "${SERVER_LIST[@]}"; do
    rates=$(awk -v s="$server" '$1 == s { print $3 }' "$TMP/results")
    cpus=$(awk -v s="$server" '$1 == s { print $4 }' "$TMP/results")
    printf '%-8s %8.0f req/s (%s)   proxy %6.2f µs/request (%s)\n' "$server" \
        "$(median <<<"$rates")" "$(spread 0 <<<"$rates")" "$(median <<<"$cpus")" "$(spread 2 <<<"$cpus")"
    cpu[$server]=$(median <<<"$cpus")
done
if [[ -n ${cpu[tern]:-} && -n ${cpu[haproxy]:-} ]]; then
    echo "tern / haproxy proxy CPU per request: $(calc "${cpu[tern]} / ${cpu[haproxy]}" 2)x (goal <= 0.8x)"
fi
if [[ -n ${cpu[tern]:-} && -n ${cpu[tern-base]:-} ]]; then
    echo "tern / tern-base proxy CPU per request: $(calc "${cpu[tern]} / ${cpu[tern-base]}" 3)x"
fi
if awk '$6 != 0 { bad = 1 } END { exit !bad }' "$TMP/results"; then
    echo "WARNING: some runs had errors; see the raw results (OUT=dir keeps them)"
fi
