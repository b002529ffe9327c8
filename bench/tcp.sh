#!/usr/bin/env bash
# TCP mode (issue 17): tern as a TLS terminator and as a plain TCP relay, side by side with the
# programs it replaces. Figure compared: the relay's CPU time per operation.
#
# Scenarios ($SCENARIOS, each run against every server of its list, interleaved run by run):
#   handshake  seed 004's job: each connection a full TLS 1.3 handshake, one GET of a 107-byte
#              page (/?s=107), closed. Connections per CPU-second of the terminator.
#              Servers: $TLS_SERVERS [tern stunnel hitch haproxy].
#   bulk-1m    kept-alive TLS connections ($BULK_CONNS [4]), each GET returns 1 MiB (/?s=1m).
#   bulk-16m   the same with 16 MiB (/?s=16m). Gbit/s per terminator core: plaintext bytes
#              relayed × 8 / terminator CPU-seconds. Servers: $TLS_SERVERS.
#   plain-bulk plain TCP in and out, kept-alive, 1 MiB responses: Gbit/s per relay core.
#   plain-conn plain TCP, one connection per 107-byte GET: relay CPU µs per connection.
#              Servers: $PLAIN_SERVERS [tern haproxy].
#
# The terminators: `tern` (TCP mode, `mode = "tcp"`, one worker), `stunnel` (Debian's stunnel4,
# threads), `hitch` (Debian's, 1 worker; its manager and worker processes are summed),
# `haproxy` (`mode tcp`, `ssl` on the bind, 1 thread). Optional: `haproxy-splice` (the same
# with `option splice-auto`: HAProxy splices in the kernel once a transfer looks large; plain
# relays only) and `tern-base` (another tern binary, $TERN_BASE, with the same configuration: measures
# a change). Every one gets the same certificate ($CERT [ecdsa]) and TLS policy (TLS 1.3 only,
# $SUITE, X25519, no session cache, no tickets where the program has the switch) and forwards
# to one plain backend, `tern term` on CPU $CLIENT_CPU (1 thread), the same for all. Tickets:
# tern sends none to this client (it asks for none, RFC 9149), HAProxy none (`no-tls-tickets`);
# stunnel and hitch send OpenSSL's two per TLS 1.3 handshake (`openssl s_client -tls1_3`
# shows them; stunnel's NO_TICKET only makes them stateful): part of their cost as configured.
#
# Client: `tern bench` (1 thread, pinned to CPU $CLIENT_CPU). Why: it offers exactly one
# version, suite and group (so no terminator can pick something cheaper), never resumes a
# session and asks for no tickets (RFC 9149), checks the handshake signature as a real client
# does, skips response bodies without copying them, and counts requests, connections and bytes
# in the same JSON for every scenario. h2load offers no handshake-per-request HTTP/1.1 mode with
# that control of the TLS offer; curl and openssl s_client cost a process per connection.
#
# CPUs: the terminator has CPU $SERVER_CPU to itself (taskset, plus its own pinning where it
# has one); the client and the backend share CPU $CLIENT_CPU, which usually caps the rate. So
# the figure is the terminator's CPU time (utime + stime of its whole process tree, from
# /proc/PID/stat, before and after the measured run) divided by what the client completed,
# not the rate. "others" is the share of CPU $SERVER_CPU used by anything else during the run
# (a busy host shows up there). Each run starts a fresh terminator, warms it up for $WARMUP s
# (a discarded client run), then measures $DURATION s; the summary is the median with the
# min-max spread, and the ratios are tern's against each other server's medians.
#
# Usage (from the repo root, after `cargo build --release -p tern`, bench/certs.sh and
# `apt-get install -y haproxy stunnel4 hitch`):
#   bench/tcp.sh
#   RUNS=5 DURATION=10 SCENARIOS="handshake bulk-1m" bench/tcp.sh
#   SCENARIOS="plain-bulk plain-conn" PLAIN_SERVERS="tern haproxy haproxy-splice" bench/tcp.sh
#   PLAIN_SERVERS="tern tern-base" TERN_BASE=old/tern SCENARIOS=plain-bulk bench/tcp.sh
#   FRONT_PORT=18443 BACKEND_PORT=18080 OUT=bench/results/tmp/tcp bench/tcp.sh
# Other knobs: CERT, SUITE, HS_CONNS [32], BULK_CONNS [4], PLAIN_CONN_CONNS [32], TERN_GLOBAL
# (extra [global] lines for tern), HAPROXY, STUNNEL, HITCH (binaries), SERVER_CPU, CLIENT_CPU.
source "$(dirname "$0")/lib.sh"
source bench/servers.sh

SCENARIOS=${SCENARIOS:-handshake bulk-1m bulk-16m plain-bulk plain-conn}
TLS_SERVERS=${TLS_SERVERS:-tern stunnel hitch haproxy}
PLAIN_SERVERS=${PLAIN_SERVERS:-tern haproxy}
CERT=${CERT:-ecdsa}
HS_CONNS=${HS_CONNS:-32}
BULK_CONNS=${BULK_CONNS:-4}
PLAIN_CONN_CONNS=${PLAIN_CONN_CONNS:-32}
STUNNEL=${STUNNEL:-stunnel4}
HITCH=${HITCH:-hitch}

find_client
need_certs "$CERT"
have_tern_term || die "'$TERN term' is not available: the backend is tern term"
have_tern_run || die "'$TERN run' is not available"
for s in $TLS_SERVERS $PLAIN_SERVERS; do
    case $s in
    tern) ;;
    tern-base) [[ -x ${TERN_BASE:-} ]] || die "tern-base needs TERN_BASE, a tern binary" ;;
    haproxy | haproxy-splice) need_cmd "$HAPROXY" "apt-get install -y haproxy" ;;
    stunnel) need_cmd "$STUNNEL" "apt-get install -y stunnel4" ;;
    hitch) need_cmd "$HITCH" "apt-get install -y hitch" ;;
    *) die "unknown server $s" ;;
    esac
done
for p in "$FRONT_PORT" "$BACKEND_PORT"; do
    port_free "$p" || die "port $p is busy (set FRONT_PORT, BACKEND_PORT)"
done
CERT_PATH=$PWD/bench/certs/$CERT.pem

# $1 = tls|plain
tcp_tern_config() {
    local tls=
    [[ $1 == plain ]] || tls="tls = { certs = [\"$CERT_PATH\"] }"
    cat <<CFG
[global]
workers = 1
cpus = [$SERVER_CPU]
maxconn = 10000
${TERN_GLOBAL:-}

[[frontend]]
name = "front"
mode = "tcp"
bind = ["127.0.0.1:$FRONT_PORT"]
$tls
default_backend = "app"

[[backend]]
name = "app"
mode = "tcp"
servers = [ { name = "s1", address = "127.0.0.1:$BACKEND_PORT" } ]
CFG
}

# $1 = tls|plain, $2 = splice|nosplice
tcp_haproxy_config() {
    local ssl= splice=
    [[ $1 == plain ]] || ssl=" ssl crt $CERT_PATH"
    [[ $2 != splice ]] || splice='    option splice-auto'
    cat <<CFG
global
    nbthread 1
    cpu-map 1/1 $SERVER_CPU
    # 4000: splicing takes two pipes per connection, and 8000 would pass the usual 20000 fds.
    maxconn 4000
    tune.ssl.cachesize 0
    ssl-default-bind-ciphersuites $SUITE
    ssl-default-bind-curves X25519
    ssl-default-bind-options ssl-min-ver TLSv1.3 no-tls-tickets

defaults
    mode tcp
    timeout connect 5s
    timeout client 30s
    timeout server 30s
$splice

listen relay
    bind 127.0.0.1:$FRONT_PORT$ssl
    server s1 127.0.0.1:$BACKEND_PORT
CFG
}

# stunnel: its defaults otherwise (a thread per connection, Debian's build).
tcp_stunnel_config() {
    cat <<CFG
foreground = yes
pid =
syslog = no
debug = 3

[relay]
accept = 127.0.0.1:$FRONT_PORT
connect = 127.0.0.1:$BACKEND_PORT
cert = $CERT_PATH
sslVersionMin = TLSv1.3
ciphersuites = $SUITE
curves = X25519
options = NO_TICKET
CFG
}

tcp_hitch_config() {
    cat <<CFG
frontend = "[127.0.0.1]:$FRONT_PORT"
backend = "[127.0.0.1]:$BACKEND_PORT"
pem-file = "$CERT_PATH"
workers = 1
daemon = off
write-proxy-v2 = off
syslog = off
log-level = 0
tls-protos = TLSv1.3
ciphersuites = "$SUITE"
ecdh-curve = "X25519"
CFG
    # hitch refuses to run its workers as root.
    [[ $(id -u) != 0 ]] || printf 'user = "nobody"\ngroup = "nogroup"\n'
}

# Starts terminator $1 for $2 (tls|plain); sets SERVER_PID once it listens.
start_relay() {
    local server=$1 kind=$2 name=$1-$2
    port_free "$FRONT_PORT" || die "port $FRONT_PORT is busy (set FRONT_PORT)"
    case $server in
    tern | tern-base)
        tcp_tern_config "$kind" >"$TMP/$name.toml"
        local bin=$TERN
        [[ $server == tern ]] || bin=$TERN_BASE
        start_pinned "$SERVER_CPU" "$name" "$bin" run -c "$TMP/$name.toml"
        ;;
    haproxy | haproxy-splice)
        local splice=nosplice
        [[ $server == haproxy ]] || splice=splice
        tcp_haproxy_config "$kind" "$splice" >"$TMP/$name.cfg"
        "$HAPROXY" -c -q -f "$TMP/$name.cfg" || die "HAProxy rejected $TMP/$name.cfg"
        start_pinned "$SERVER_CPU" "$name" "$HAPROXY" -db -f "$TMP/$name.cfg"
        ;;
    stunnel)
        [[ $kind == tls ]] || die "stunnel relays TLS only here"
        tcp_stunnel_config >"$TMP/$name.conf"
        start_pinned "$SERVER_CPU" "$name" "$STUNNEL" "$TMP/$name.conf"
        ;;
    hitch)
        [[ $kind == tls ]] || die "hitch relays TLS only"
        tcp_hitch_config >"$TMP/$name.conf"
        start_pinned "$SERVER_CPU" "$name" "$HITCH" --config="$TMP/$name.conf"
        ;;
    *) die "unknown server $server" ;;
    esac
    SERVER_PID=$LAST_PID
    wait_port "$FRONT_PORT" "$SERVER_PID"
}

# The client for scenario $1, then extra arguments.
client() {
    local scenario=$1 proto=https path rpc=0 conns=$BULK_CONNS
    shift
    case $scenario in
    handshake) path=/?s=107 rpc=1 conns=$HS_CONNS ;;
    bulk-1m) path=/?s=1m ;;
    bulk-16m) path=/?s=16m ;;
    plain-bulk) proto=http path=/?s=1m ;;
    plain-conn) proto=http path=/?s=107 rpc=1 conns=$PLAIN_CONN_CONNS ;;
    *) die "unknown scenario $scenario" ;;
    esac
    local tls=()
    [[ $proto == http ]] || tls=(--tls-version 1.3 --groups x25519 --ciphers "$SUITE" --sni localhost)
    taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "$proto://127.0.0.1:$FRONT_PORT$path" \
        --cpus "$CLIENT_CPU" --threads 1 -c "$conns" --requests-per-conn "$rpc" --timeout 10 \
        "${tls[@]}" "$@"
}

kind_of() {
    case $1 in
    plain-*) echo plain ;;
    *) echo tls ;;
    esac
}

measure() {
    local scenario=$1 server=$2 run=$3 kind json
    kind=$(kind_of "$scenario")
    json=$TMP/$scenario-$server-$run.json
    start_relay "$server" "$kind"
    if [[ $WARMUP != 0 ]]; then
        client "$scenario" -d "$WARMUP" --warmup 0 >"$TMP/$scenario-$server-$run.warmup.txt" 2>&1 ||
            die "warm-up against $server failed: see $TMP/$scenario-$server-$run.warmup.txt"
    fi
    local c0 c1 b0 b1 t0 t1
    c0=$(tree_cpu_us "$SERVER_PID")
    b0=$(cpu_busy_us "$SERVER_CPU")
    t0=$(date +%s%N)
    client "$scenario" -d "$DURATION" --warmup 0 --json "$json" >"$TMP/$scenario-$server-$run.txt" 2>&1 ||
        die "client run against $server failed: $(tail -5 "$TMP/$scenario-$server-$run.txt")"
    t1=$(date +%s%N)
    b1=$(cpu_busy_us "$SERVER_CPU")
    c1=$(tree_cpu_us "$SERVER_PID")
    stop_pid "$SERVER_PID"
    forget_pid "$SERVER_PID"

    local requests conns bytes errors cpu us_op gbps_core gbps others
    requests=$(json_get "$json" requests)
    conns=$(json_get "$json" connections)
    bytes=$(json_get "$json" bytes)
    errors=$(json_get "$json" errors_total)
    ((requests > 0)) || die "no request completed against $server: see $TMP/$scenario-$server-$run.txt"
    cpu=$((c1 - c0))
    us_op=$(calc "$cpu / $requests" 2)
    gbps_core=$(calc "$bytes * 8 / ($cpu > 0 ? $cpu : 1) / 1e3" 3)
    gbps=$(calc "$bytes * 8 / (($t1 - $t0) / 1e9) / 1e9" 3)
    others=$(calc "($b1 - $b0 - $cpu) / (($t1 - $t0) / 1e3) * 100" 0)
    printf '%-11s %-15s %3s %9s %9.0f %11s %9s %9s %7s%% %6s\n' "$scenario" "$server" "$run" \
        "$requests" "$(calc "$requests / $DURATION" 0)" "$us_op" "$gbps_core" "$gbps" "$others" "$errors"
    echo "$scenario $server $run $requests $conns $bytes $cpu $us_op $gbps_core $gbps $others $errors" >>"$TMP/results"
}

servers_of() {
    case $(kind_of "$1") in
    plain) echo "$PLAIN_SERVERS" ;;
    *) echo "$TLS_SERVERS" ;;
    esac
}

port_free "$BACKEND_PORT" || die "port $BACKEND_PORT is busy (set BACKEND_PORT)"
start_pinned "$CLIENT_CPU" backend "$TERN" term --listen "127.0.0.1:$BACKEND_PORT" --threads 1
BACKEND_PID=$LAST_PID
wait_port "$BACKEND_PORT" "$BACKEND_PID"

echo "TCP mode: terminator/relay on CPU $SERVER_CPU; tern bench + tern term backend on CPU $CLIENT_CPU"
echo "TLS 1.3 $SUITE X25519, $CERT certificate; $DURATION s per run after $WARMUP s warm-up, $RUNS run(s)"
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-11s %-15s %3s %9s %9s %11s %9s %9s %8s %6s\n' scenario server run requests "req/s" \
    "µs/request" "Gb/s/core" "Gb/s" others errors
for ((run = 1; run <= RUNS; run++)); do
    for scenario in $SCENARIOS; do
        for server in $(servers_of "$scenario"); do
            measure "$scenario" "$server" "$run"
        done
    done
done

echo
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median over $RUNS run(s) (spread min-max); ratio = tern's efficiency / the other's"
for scenario in $SCENARIOS; do
    echo
    case $scenario in
    handshake | plain-conn) echo "$scenario: CPU µs per connection, connections per CPU-second" ;;
    *) echo "$scenario: Gbit/s per relay core (plaintext relayed), CPU µs per response" ;;
    esac
    declare -A eff=()
    for server in $(servers_of "$scenario"); do
        us=$(awk -v s="$scenario" -v v="$server" '$1 == s && $2 == v { print $8 }' "$TMP/results")
        gb=$(awk -v s="$scenario" -v v="$server" '$1 == s && $2 == v { print $9 }' "$TMP/results")
        med_us=$(median <<<"$us")
        case $scenario in
        handshake | plain-conn)
            eff[$server]=$(calc "1e6 / $med_us" 0)
            printf '  %-15s %9.2f µs (%s)  %7s conn/CPU-s\n' "$server" "$med_us" "$(spread 2 <<<"$us")" \
                "${eff[$server]}"
            ;;
        *)
            eff[$server]=$(median <<<"$gb")
            printf '  %-15s %7.3f Gb/s/core (%s)  %9.1f µs/response\n' "$server" "${eff[$server]}" \
                "$(spread 3 <<<"$gb")" "$med_us"
            ;;
        esac
    done
    if [[ -n ${eff[tern]:-} ]]; then
        for server in "${!eff[@]}"; do
            [[ $server != tern ]] || continue
            printf '  tern / %-15s %5.2fx\n' "$server" "$(calc "${eff[tern]} / ${eff[$server]}" 3)"
        done
    fi
    unset eff
done
if awk '$12 != 0 { bad = 1 } END { exit !bad }' "$TMP/results"; then
    echo "WARNING: some runs had errors; see the raw results (OUT=dir keeps them)"
fi
