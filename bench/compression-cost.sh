#!/usr/bin/env bash
# CPU per MiB of response compression: tern's (`compression`, crates/tern-proxy/src/compress)
# against HAProxy's built-in compressor, on the same text, at the same level.
#
# Why: issue 18 asks for compression measured against HAProxy. Compression dominates the CPU
# of a compressed response (tens of µs per MiB for the relay, milliseconds for the coding), so
# the figure is CPU time per MiB of *uncompressed* body, with the same run without
# `Accept-Encoding` (identity: the relay alone) subtracted.
#
# Workload: one text file (SIZE bytes of docs/*.md repeated: HTML-like prose), served with a
# Content-Length by a small HTTP/1.1 origin (Python's standard library, on the client's CPU),
# behind tern and HAProxy in turn (each alone on CPU $SERVER_CPU: `workers = 1` / `nbthread 1`),
# fetched $REQUESTS times by h2load over HTTP/1.1 keep-alive ($CONNS connections) with
# `accept-encoding: $ALGO`, then $REQUESTS times without it. Each proxy's CPU time (utime +
# stime from /proc/PID/stat) over each run, divided by the MiB relayed. $RUNS rounds, the order
# of the two proxies swapped every round (A/B/B/A) so a drift in machine noise favours neither.
#
# ALGO: gzip (default) or deflate, the codings both have; LEVEL: gzip level, 1 (both defaults:
# HAProxy's tune.comp.maxlevel, tern's gzip_level) to 9. HAProxy must be built with zlib or
# libslz (`haproxy -vv | grep -i -e zlib -e slz`: Debian's uses libslz at level 1, a faster
# and weaker compressor than zlib, so also compare the ratios printed).
#
# Usage (from the repo root, after `cargo build --release -p tern`):
#   bench/compression-cost.sh
#   RUNS=6 REQUESTS=400 SIZE=4194304 LEVEL=6 bench/compression-cost.sh
# OUT=dir keeps configs, logs and h2load outputs.
RUNS=${RUNS:-4}
source "$(dirname "$0")/lib.sh"

ALGO=${ALGO:-gzip}
LEVEL=${LEVEL:-1}
SIZE=${SIZE:-4194304}
REQUESTS=${REQUESTS:-200}
CONNS=${CONNS:-4}
need_cmd h2load "install nghttp2-client"
need_cmd haproxy "install haproxy"
need_cmd python3
need_cmd curl
have_tern_run || die "no tern binary at $TERN: cargo build --release -p tern"

# The text: the repository's docs, repeated to SIZE bytes.
while [[ $(stat -c %s "$TMP/body.html" 2>/dev/null || echo 0) -lt $SIZE ]]; do
    cat docs/*.md >>"$TMP/body.html"
done
truncate -s "$SIZE" "$TMP/body.html"

cat >"$TMP/origin.py" <<'EOF'
import http.server, sys
body = open(sys.argv[2], "rb").read()
class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_GET(self):
        self.send_response(200)
        self.send_header("content-type", "text/html; charset=utf-8")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
    def log_message(self, *a):
        pass
http.server.ThreadingHTTPServer(("127.0.0.1", int(sys.argv[1])), H).serve_forever()
EOF
port_free "$BACKEND_PORT" || die "port $BACKEND_PORT is taken (BACKEND_PORT=...)"
port_free "$FRONT_PORT" || die "port $FRONT_PORT is taken (FRONT_PORT=...)"
start_pinned "$CLIENT_CPU" origin python3 "$TMP/origin.py" "$BACKEND_PORT" "$TMP/body.html"
wait_port "$BACKEND_PORT" "$LAST_PID"

cat >"$TMP/tern.toml" <<EOF
[global]
workers = 1
cpus = [$SERVER_CPU]

[[frontend]]
name = "web"
bind = ["127.0.0.1:$FRONT_PORT"]
default_backend = "app"
compression = { algos = ["$ALGO"], gzip_level = $LEVEL, min_size = 0 }

[[backend]]
name = "app"
servers = [{ name = "origin", address = "127.0.0.1:$BACKEND_PORT" }]
EOF
cat >"$TMP/haproxy.cfg" <<EOF
global
  nbthread 1
  cpu-map 1/1 $SERVER_CPU
  tune.comp.maxlevel $LEVEL
defaults
  mode http
  timeout client 30s
  timeout server 30s
  timeout connect 5s
frontend web
  bind 127.0.0.1:$FRONT_PORT
  compression algo $ALGO
  default_backend app
backend app
  server origin 127.0.0.1:$BACKEND_PORT
EOF

# Starts proxy $1 pinned on the server CPU; sets LAST_PID once it listens.
start_proxy() {
    case $1 in
        tern) start_pinned "$SERVER_CPU" tern "$TERN" run -c "$TMP/tern.toml" ;;
        haproxy) start_pinned "$SERVER_CPU" haproxy haproxy -db -f "$TMP/haproxy.cfg" ;;
    esac
    wait_port "$FRONT_PORT" "$LAST_PID"
}

# One h2load run ($1: name, then its extra arguments); prints the proxy's CPU µs per MiB.
run_load() {
    local name=$1 pid=$2
    shift 2
    local before after
    before=$(cpu_us "$pid")
    taskset -c "$CLIENT_CPU" h2load --h1 -n "$REQUESTS" -c "$CONNS" "$@" \
        "http://127.0.0.1:$FRONT_PORT/" >"$TMP/$name.h2load" 2>&1 ||
        die "h2load failed: $(tail -3 "$TMP/$name.h2load")"
    grep -q " $REQUESTS succeeded, 0 failed" "$TMP/$name.h2load" ||
        die "requests failed ($name): $(grep requests: "$TMP/$name.h2load")"
    after=$(cpu_us "$pid")
    calc "($after - $before) / ($REQUESTS * $SIZE / 1048576)" 0
}

declare -A coded plain ratio
for ((round = 1; round <= RUNS; round++)); do
    order="tern haproxy"
    ((round % 2 == 0)) && order="haproxy tern"
    for proxy in $order; do
        start_proxy "$proxy"
        pid=$LAST_PID
        head=$(curl -sS -o "$TMP/sample" -D - -H "accept-encoding: $ALGO" "http://127.0.0.1:$FRONT_PORT/")
        grep -qi "^content-encoding: $ALGO" <<<"$head" || die "$proxy did not compress: $head"
        ratio[$proxy]=$(calc "$(stat -c %s "$TMP/sample") * 100 / $SIZE" 1)
        # Warm-up, then the coded run and the identity run.
        run_load "$proxy-warm-$round" "$pid" -H "accept-encoding: $ALGO" >/dev/null
        c=$(run_load "$proxy-coded-$round" "$pid" -H "accept-encoding: $ALGO")
        p=$(run_load "$proxy-plain-$round" "$pid")
        coded[$proxy]+="$c "
        plain[$proxy]+="$p "
        echo "round $round $proxy: coded ${c} µs/MiB, identity ${p} µs/MiB, output ${ratio[$proxy]}% of input"
        stop_pid "$pid"
        forget_pid "$pid"
    done
done

echo
for proxy in tern haproxy; do
    c=$(median <<<"${coded[$proxy]}")
    p=$(median <<<"${plain[$proxy]}")
    echo "$proxy: $ALGO level $LEVEL: $(calc "$c - $p" 0) µs CPU per MiB compressed" \
        "(coded $c, identity $p; medians of $RUNS; spread $(spread <<<"${coded[$proxy]}")), output ${ratio[$proxy]}%"
done
