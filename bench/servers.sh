# Config generators and start helpers for the servers under test. Sourced after lib.sh.
#
# Both servers get the same certificate, TLS policy (TLS 1.3 only, one suite, X25519), one
# thread pinned to SERVER_CPU, no session cache and no tickets, and the same monitor URI.

SUITE=${SUITE:-TLS_AES_256_GCM_SHA384}
# The HAProxy binary of the `haproxy` server: Debian's by default; e.g. the 3.0 that
# HAProxy 3.0 + OpenSSL 3.5 anchor binary.
HAPROXY=${HAPROXY:-haproxy}

# HAProxy config: $1 = certificate name (rsa|ecdsa). /test is answered by HAProxy itself
# (monitor-uri, for handshake runs); every other path goes to the backend (keep-alive runs).
haproxy_config() {
    local cert=$PWD/bench/certs/$1.pem
    cat <<CFG
global
    nbthread 1
    cpu-map 1/1 $SERVER_CPU
    maxconn 8000
    tune.ssl.cachesize 0
    ssl-default-bind-ciphersuites $SUITE
    ssl-default-bind-curves X25519
    ssl-default-bind-options ssl-min-ver TLSv1.3$( ((${HAPROXY_TICKETS:-0})) || echo " no-tls-tickets")
    stats socket ipv4@127.0.0.1:$INFO_PORT level admin

defaults
    mode http
    timeout connect 5s
    timeout client 30s
    timeout server 30s
    timeout http-keep-alive 30s

frontend web
    bind 127.0.0.1:$FRONT_PORT ssl crt $cert
    monitor-uri /test
    default_backend app

backend app
    http-reuse always
    server s1 127.0.0.1:$BACKEND_PORT
CFG
}

# tern config: $1 = certificate name (rsa|ecdsa), $2 = extra [global] lines (TERN_GLOBAL for
# `tern`, TERN_BASE_GLOBAL for `tern-base`: compare settings, e.g. handshake_offload, side by side),
# $3 = extra frontend lines (TERN_FRONTEND, TERN_BASE_FRONTEND: rules, e.g. the cost of a
# rewrite), $4 = extra tables at the end (TERN_EXTRA, TERN_BASE_EXTRA: e.g. a `[[table]]`).
tern_config() {
    cat <<CFG
[global]
workers = 1
cpus = [$SERVER_CPU]
maxconn = 10000
${2:-}

[[frontend]]
name = "web"
bind = ["127.0.0.1:$FRONT_PORT"]
tls = { certs = ["$PWD/bench/certs/$1.pem"] }
monitor_uri = "/test"
${3:-}
default_backend = "app"

[[backend]]
name = "app"
servers = [ { name = "s1", address = "127.0.0.1:$BACKEND_PORT", weight = 1 } ]
${4:-}
CFG
}

# A tiny HTTP backend made of HAProxy: answers every request with 200 and a 2-byte body.
haproxy_backend_config() {
    cat <<CFG
global
    nbthread 1
    cpu-map 1/1 $1
    maxconn 8000

defaults
    mode http
    timeout client 30s
    timeout http-keep-alive 30s

frontend backend
    bind 127.0.0.1:$BACKEND_PORT
    http-request return status 200 content-type text/plain string ok
CFG
}

# Starts server $1 (haproxy|tern|tern-base) with certificate $2; sets SERVER_PID once it listens.
# `tern-base` is another tern binary ($TERN_BASE, e.g. an older commit's build) run with the same
# configuration, to measure what a change costs.
start_server() {
    local server=$1 cert=$2
    port_free "$FRONT_PORT" || die "port $FRONT_PORT is busy (set FRONT_PORT)"
    case $server in
    haproxy)
        port_free "$INFO_PORT" || die "port $INFO_PORT is busy (set INFO_PORT)"
        haproxy_config "$cert" >"$TMP/haproxy-$cert.cfg"
        "$HAPROXY" -c -q -f "$TMP/haproxy-$cert.cfg" || die "HAProxy rejected $TMP/haproxy-$cert.cfg"
        start_pinned "$SERVER_CPU" "haproxy-$cert" "$HAPROXY" -db -f "$TMP/haproxy-$cert.cfg"
        ;;
    tern)
        tern_config "$cert" "${TERN_GLOBAL:-}" "${TERN_FRONTEND:-}" "${TERN_EXTRA:-}" >"$TMP/tern-$cert.toml"
        start_pinned "$SERVER_CPU" "tern-$cert" "$TERN" run -c "$TMP/tern-$cert.toml"
        ;;
    tern-base)
        tern_config "$cert" "${TERN_BASE_GLOBAL:-}" "${TERN_BASE_FRONTEND:-}" "${TERN_BASE_EXTRA:-}" \
            >"$TMP/tern-base-$cert.toml"
        start_pinned "$SERVER_CPU" "tern-base-$cert" "$TERN_BASE" run -c "$TMP/tern-base-$cert.toml"
        ;;
    *) die "unknown server $server" ;;
    esac
    SERVER_PID=$LAST_PID
    wait_port "$FRONT_PORT" "$SERVER_PID"
}

# Server-side count of TLS connections accepted so far, or "n/a" where the server has no
# counter the script can read yet (tern: pending its stats endpoint).
server_ssl_conns() {
    case $1 in
    haproxy) haproxy_info CumSslConns ;;
    *) echo n/a ;;
    esac
}

# The servers to compare ($SERVERS, default "haproxy tern"): haproxy, tern when `tern run`
# exists, tern-base (needs TERN_BASE).
pick_servers() {
    [[ " ${SERVERS:-haproxy} " != *" haproxy "* ]] || need_cmd "$HAPROXY" "apt-get install -y haproxy"
    SERVER_LIST=()
    local s
    for s in ${SERVERS:-haproxy tern}; do
        case $s in
        haproxy) SERVER_LIST+=(haproxy) ;;
        tern)
            if have_tern_run; then
                SERVER_LIST+=(tern)
            else
                echo "note: '$TERN run' is not available yet: tern columns are pending" >&2
            fi
            ;;
        tern-base)
            [[ -x ${TERN_BASE:-} ]] || die "SERVERS has tern-base: set TERN_BASE to a tern binary"
            SERVER_LIST+=(tern-base)
            ;;
        *) die "unknown server $s in SERVERS" ;;
        esac
    done
}

need_certs() {
    local c
    for c in "$@"; do
        [[ -s bench/certs/$c.pem ]] || die "bench/certs/$c.pem missing: run bench/certs.sh"
    done
}
