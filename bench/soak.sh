#!/usr/bin/env bash
# A soak (issue 19): tern at about 70% of its capacity for $DURATION s (default 30 minutes)
# with a mix of keep-alive requests, full TLS handshakes, uploads and slow clients, and a
# reload every $RELOAD_EVERY s. Passes when, after the warm-up, tern's resident memory stays
# within ±5% of its post-warm-up median, its file descriptors do not grow, and no error occurs
# but the injected ones (the slow clients' 408s).
#
# Setup: tern (1 worker, CPU $SERVER_CPU, TLS with an ECDSA P-256 certificate, `http_request`
# 5 s) in front of two `tern term` backends; all clients share CPU $CLIENT_CPU.
#  1. Capacity, measured with the rest of the mix running, since every client and both backends
#     share one CPU and a keep-alive rate measured alone is more than the client can make beside
#     the others: first full handshakes alone (closed loop, -c 16, one request per connection,
#     $CAP_SECONDS s) give HS_RATE = $LOAD% x 15% of that; then the handshake load, the
#     uploaders and the slow clients start, and a closed-loop keep-alive run (-c 32,
#     $CAP_SECONDS s) beside them gives KA_RATE = $LOAD% of what it made. Skipped when KA_RATE
#     and HS_RATE are given.
#  2. Load: open-loop `tern bench` at KA_RATE over 32 keep-alive connections and at HS_RATE with
#     a new connection per request; bench/soak_clients.py's $UPLOADERS uploaders (256 KiB
#     POSTs) and $SLOW slow clients (a header line every 2 s until the 408); SIGHUP every
#     $RELOAD_EVERY s, the configuration alternating between two weights of s2.
#  3. Every $SAMPLE_EVERY s: tern's VmRSS and open descriptors, and whether a previous
#     generation is still draining (a reload sent and its "the previous generation has ended"
#     line not yet logged) ($TMP/samples.csv). Samples of the first $WARMUP_SHARE% of the run
#     are the warm-up and not judged, nor those of the last 3 s (the load is ending), nor
#     those taken while two generations are alive: a reload holds both until the old one's
#     connections finish (the slow clients' take up to `http_request`), and that peak is
#     reported on its own, with the longest drain. Memory: every judged sample within ±5% of
#     their median. Descriptors: the mean of the last quarter of the judged samples at most 10%
#     (and at least 16 descriptors) above the first quarter's. Every drain must end before the
#     next reload.
#
# Usage (from the repo root, after `cargo build --release -p tern`):
#   bench/soak.sh                         # 30 minutes
#   DURATION=120 bench/soak.sh            # a 2-minute check of the script and the mix
#   OUT=bench/results/soak-$(date +%F) bench/soak.sh   # keep samples, logs and JSON
# Knobs: DURATION [1800], LOAD [70] percent of the measured capacity, RELOAD_EVERY [60],
# SAMPLE_EVERY [5], WARMUP_SHARE [20], CAP_SECONDS [10], KA_RATE, HS_RATE, UPLOADERS [2], SLOW
# [20], FRONT_PORT / BACKEND_PORT (default: free ports), TERN [target/release/tern].
#
# The machine must be otherwise idle: the capacity is measured once, at the start, and the
# clients, the backends and the uploads all share CPU $CLIENT_CPU. On a machine others are
# using, 70% of a capacity measured in a quiet moment can be more than tern gets later, and
# the open-loop runs then count their queued requests as timeouts; lower LOAD there.
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
FRONT_PORT=${FRONT_PORT:-$(free_port)}
BACKEND_PORT=${BACKEND_PORT:-$(free_port)}
DURATION=${DURATION:-1800}
source "$(dirname "$0")/lib.sh"

RELOAD_EVERY=${RELOAD_EVERY:-60}
SAMPLE_EVERY=${SAMPLE_EVERY:-5}
WARMUP_SHARE=${WARMUP_SHARE:-20}
CAP_SECONDS=${CAP_SECONDS:-10}
UPLOADERS=${UPLOADERS:-2}
SLOW=${SLOW:-20}
LOAD=${LOAD:-70}
find_client
need_cmd python3
have_tern_run || die "'$TERN run' is not available: cargo build --release -p tern"

B1=$BACKEND_PORT
B2=$(free_port)
for p in "$FRONT_PORT" "$B1" "$B2"; do port_free "$p" || die "port $p is in use"; done
start_pinned "$CLIENT_CPU" term1 "$TERN" term --listen "127.0.0.1:$B1" --name s1
wait_port "$B1" "$LAST_PID"
start_pinned "$CLIENT_CPU" term2 "$TERN" term --listen "127.0.0.1:$B2" --name s2
wait_port "$B2" "$LAST_PID"
bench/certs.sh >/dev/null

# The configuration with server s2's weight $1.
write_config() {
    cat >"$TMP/tern.toml" <<EOF
[global]
workers = 1
cpus = [$SERVER_CPU]
hard_stop_after = "30s"

[[frontend]]
name = "web"
bind = ["127.0.0.1:$FRONT_PORT"]
tls = { certs = ["$PWD/bench/certs/ecdsa.pem"] }
timeouts = { http_request = "5s" }
default_backend = "app"

[[backend]]
name = "app"
servers = [
  { name = "s1", address = "127.0.0.1:$B1" },
  { name = "s2", address = "127.0.0.1:$B2", weight = $1 },
]
EOF
}

write_config 1
start_pinned "$SERVER_CPU" tern "$TERN" run -c "$TMP/tern.toml"
TERN_PID=$LAST_PID
wait_port "$FRONT_PORT" "$TERN_PID"
URL="https://127.0.0.1:$FRONT_PORT/?s=1k"

bench() { # $1 name, then tern bench options: a run pinned to the client CPU, JSON in $TMP/$1.json
    local name=$1
    shift
    taskset -c "$CLIENT_CPU" "${CLIENT[@]}" "$URL" --insecure -q --json "$TMP/$name.json" "$@" \
        >"$TMP/$name.out" 2>&1
}

# The handshake load, the uploaders and the slow clients run from here to the end; when the
# keep-alive capacity is measured beside them, they start that much earlier.
MIX_SECONDS=$DURATION
if [[ -z ${KA_RATE:-} || -z ${HS_RATE:-} ]]; then
    echo "capacity: ${CAP_SECONDS} s of full handshakes alone (closed loop)"
    bench cap-hs -c 16 --requests-per-conn 1 -d "$CAP_SECONDS" --warmup 2 ||
        die "capacity run failed: $(cat "$TMP/cap-hs.out")"
    CAP_HS=$(json_get "$TMP/cap-hs.json" requests_per_s)
    HS_RATE=${HS_RATE:-$(awk -v c="$CAP_HS" -v l="$LOAD" 'BEGIN { r = int(c * l / 100 * 0.15); print (r < 1 ? 1 : r) }')}
    MIX_SECONDS=$((DURATION + CAP_SECONDS + 4))
fi

bench hs -c 64 --rate "$HS_RATE" --requests-per-conn 1 -d "$MIX_SECONDS" --warmup 0 --timeout 5 &
HS_PID=$!
STARTED_PIDS+=("$HS_PID")
taskset -c "$CLIENT_CPU" python3 bench/soak_clients.py 127.0.0.1 "$FRONT_PORT" "$MIX_SECONDS" \
    "$UPLOADERS" "$SLOW" >"$TMP/clients.json" 2>"$TMP/clients.err" &
CLIENTS_PID=$!
STARTED_PIDS+=("$CLIENTS_PID")

if [[ -z ${KA_RATE:-} ]]; then
    echo "capacity: ${CAP_SECONDS} s of keep-alive requests (closed loop) beside the handshakes, uploads and slow clients"
    bench cap-ka -c 32 -d "$CAP_SECONDS" --warmup 2 || die "capacity run failed: $(cat "$TMP/cap-ka.out")"
    CAP_KA=$(json_get "$TMP/cap-ka.json" requests_per_s)
    KA_RATE=$(awk -v c="$CAP_KA" -v l="$LOAD" 'BEGIN { r = int(c * l / 100); print (r < 1 ? 1 : r) }')
    echo "capacity: $CAP_KA keep-alive requests/s beside the rest, $CAP_HS full handshakes/s alone"
fi
echo "soak: $DURATION s at ${LOAD}% of capacity; keep-alive $KA_RATE/s, full handshakes $HS_RATE/s, $UPLOADERS uploaders," \
    "$SLOW slow clients, a reload every $RELOAD_EVERY s"

bench ka -c 32 --rate "$KA_RATE" -d "$DURATION" --warmup 0 --timeout 5 &
KA_PID=$!
STARTED_PIDS+=("$KA_PID")

fds() { find "/proc/$1/fd" -mindepth 1 -maxdepth 1 2>/dev/null | wc -l; }
rss_kb() { awk '$1 == "VmRSS:" { print $2 }' "/proc/$1/status"; }

# 1 while a reload's previous generation has not yet logged its end.
draining() {
    local ended
    ended=$(grep -c 'the previous generation has ended' "$TMP/tern.log" || true)
    ((ended < RELOADS)) && echo 1 || echo 0
}

echo "t_s,rss_kb,fds,draining" >"$TMP/samples.csv"
START=$(date +%s)
NEXT_RELOAD=$((START + RELOAD_EVERY))
RELOADS=0
LATE_DRAINS=0
while (($(date +%s) < START + DURATION)); do
    sleep "$SAMPLE_EVERY"
    kill -0 "$TERN_PID" 2>/dev/null || die "tern exited (see $TMP/tern.log)"
    now=$(date +%s)
    echo "$((now - START)),$(rss_kb "$TERN_PID"),$(fds "$TERN_PID"),$(draining)" >>"$TMP/samples.csv"
    if ((now >= NEXT_RELOAD && now < START + DURATION - 5)); then
        [[ $(draining) == 0 ]] || LATE_DRAINS=$((LATE_DRAINS + 1))
        RELOADS=$((RELOADS + 1))
        write_config $((1 + RELOADS % 2))
        kill -HUP "$TERN_PID"
        NEXT_RELOAD=$((NEXT_RELOAD + RELOAD_EVERY))
    fi
done
wait "$KA_PID" || die "the keep-alive run failed: $(tail -5 "$TMP/ka.out")"
wait "$HS_PID" || die "the handshake run failed: $(tail -5 "$TMP/hs.out")"
wait "$CLIENTS_PID" || die "the upload and slow clients failed: $(tail -5 "$TMP/clients.err")"
forget_pid "$KA_PID"
forget_pid "$HS_PID"
forget_pid "$CLIENTS_PID"
RELOADED=$(grep -c '^reloaded:' "$TMP/tern.log" || true)

FAILED=()
for run in ka hs; do
    f=$TMP/$run.json
    printf '%-3s requests %-8s errors %-4s p50 %7s µs  p99 %7s µs  p99.9 %7s µs  max %8s µs\n' \
        "$run" "$(json_get "$f" requests)" "$(json_get "$f" errors_total)" \
        "$(json_latency "$f" total p50)" "$(json_latency "$f" total p99)" \
        "$(json_latency "$f" total p99.9)" "$(json_latency "$f" total max)"
    [[ $(json_get "$f" errors_total) == 0 ]] || FAILED+=("$run: $(json_get "$f" errors_total) errors")
done
echo "uploads and slow clients: $(cat "$TMP/clients.json")"
upload_errors=$(json_get "$TMP/clients.json" upload_errors)
slow_other=$(json_get "$TMP/clients.json" slow_other)
[[ $upload_errors == 0 ]] || FAILED+=("$upload_errors failed uploads")
[[ $slow_other == 0 ]] || FAILED+=("$slow_other slow clients not ended by a 408")
[[ $(json_get "$TMP/clients.json" uploads) -gt 0 ]] || FAILED+=("no upload completed")
echo "reloads: $RELOADS sent, $RELOADED done"
((RELOADED == RELOADS)) || FAILED+=("$((RELOADS - RELOADED)) reloads not done")
((LATE_DRAINS == 0)) || FAILED+=("$LATE_DRAINS reloads found the previous generation still draining")
awk -F, 'NR > 1 && $4 == 1 { n++; if ($2 > hi) hi = $2 } END {
        printf "while draining a reload: %d samples, largest RSS %d kB (not judged)\n", n, hi }' \
    "$TMP/samples.csv"

# Memory and descriptors after the warm-up.
awk -F, -v share="$WARMUP_SHARE" -v total="$DURATION" \
    'NR > 1 && $1 >= total * share / 100 && $1 <= total - 3 && $4 == 0' \
    "$TMP/samples.csv" >"$TMP/judged.csv"
MEDIAN=$(cut -d, -f2 "$TMP/judged.csv" | sort -n | awk '{ v[NR] = $1 } END { if (NR) print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }')
verdict=$(awk -F, -v med="${MEDIAN:-0}" '
    { n++; rss[n] = $2; fd[n] = $3 }
    END {
        if (n < 4) { print "FAIL too few samples after the warm-up (" n ")"; exit }
        lo = rss[1]; hi = rss[1]; dev = 0
        for (i = 1; i <= n; i++) {
            if (rss[i] < lo) lo = rss[i]
            if (rss[i] > hi) hi = rss[i]
            d = (rss[i] - med) / med; if (d < 0) d = -d; if (d > dev) dev = d
        }
        q = int(n / 4); if (q < 1) q = 1
        for (i = 1; i <= q; i++) { a += fd[i]; b += fd[n - q + i] }
        a /= q; b /= q
        grow = b - a; allowed = a * 0.10; if (allowed < 16) allowed = 16
        printf "memory after warm-up: %d samples, median %d kB, %d to %d kB, largest deviation %.1f%% (goal <= 5%%)\n", n, med, lo, hi, dev * 100
        printf "descriptors after warm-up: first quarter %.0f, last quarter %.0f (goal: growth <= %.0f)\n", a, b, allowed
        if (dev > 0.05) print "FAIL memory deviates " sprintf("%.1f", dev * 100) "% from its median"
        if (grow > allowed) print "FAIL descriptors grew by " sprintf("%.0f", grow)
    }' "$TMP/judged.csv")
echo "$verdict" | grep -v '^FAIL' || true
while IFS= read -r line; do FAILED+=("${line#FAIL }"); done < <(echo "$verdict" | grep '^FAIL' || true)

if ((${#FAILED[@]} > 0)); then
    printf 'FAILED: %s\n' "${FAILED[@]}"
    exit 1
fi
echo "soak passed"
