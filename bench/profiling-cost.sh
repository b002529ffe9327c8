#!/usr/bin/env bash
# Cost of task profiling (`global.profiling`, `show profiling`): tern's CPU per request with
# profiling off and on.
#
# Why: profiling times every poll of every phase of a connection (two clock reads each, one
# more per wake-up) and the issue's budget is 2% of the CPU when on, nothing measurable when
# off. The cheapest request tern serves, a small plain HTTP keep-alive exchange (~10 µs of CPU),
# is where that overhead is largest in relative terms, so that is the workload. TLS=1 measures
# TLS keep-alive instead (more CPU per request, so a smaller share), with the ECDSA certificate
# of bench/certs.sh.
#
# Workload: $CONNS keep-alive connections from one `tern bench` client (closed loop, each
# connection sends its next request when the last one ends) through tern to one `tern term`
# backend, GET / answered with a small body.
#
# CPUs: tern alone on CPU $SERVER_CPU (`workers = 1`, `cpus = [$SERVER_CPU]`, and taskset);
# the client and the backend share CPU $CLIENT_CPU. The figure is tern's CPU time (utime +
# stime from /proc/PID/stat) per request. "others" is the share of tern's core that went to
# anything but tern during the run (other jobs, interrupts): high values mark disturbed runs.
#
# Runs: $RUNS rounds; each round runs "off" then "on" (or the other way round on even rounds,
# so a drift in machine noise does not always favour one): a fresh tern, a $WARMUP s warm-up
# (discarded), a $DURATION s measured run. The summary gives, over the rounds where both runs
# were quiet (others <= $QUIET%), the median µs/request of each and the median and min-max of
# the per-round on/off ratios; then the same over every round. It also prints tern's
# `stats: profile` lines of the last "on" run (what profiling measured).
#
# Usage (from the repo root, after `cargo build --release -p tern`):
#   bench/profiling-cost.sh
#   RUNS=6 DURATION=8 bench/profiling-cost.sh
#   TLS=1 bench/profiling-cost.sh
# OUT=dir keeps configs, logs and JSON reports.
DURATION=${DURATION:-5}
RUNS=${RUNS:-4}
source "$(dirname "$0")/lib.sh"

CONNS=${CONNS:-8}
QUIET=${QUIET:-10}
TLS=${TLS:-0}

((CONNS >= 1)) || die "CONNS must be at least 1"
((RUNS >= 1)) || die "RUNS must be at least 1"
[[ $QUIET =~ ^[0-9]+$ ]] || die "QUIET must be a whole percentage"
[[ $TLS == 0 || $TLS == 1 ]] || die "TLS must be 0 or 1"
find_client
have_tern_run || die "'$TERN run' is not available: cargo build --release -p tern"
have_tern_term || die "'$TERN term' is not available: cargo build --release -p tern"

# Drops $1 from STARTED_PIDS once it has been waited for, so the exit trap never signals a
# process id the system may have reused.
forget_pid() {
    local p keep=()
    for p in "${STARTED_PIDS[@]}"; do
        [[ $p == "$1" ]] || keep+=("$p")
    done
    STARTED_PIDS=("${keep[@]}")
}

# Waits (bounded: 10 s) for the `ready:` line in log $1 of process $2.
wait_ready() {
    local i
    for ((i = 0; i < 200; i++)); do
        grep -qs '^ready:' "$1" && return 0
        kill -0 "$2" 2>/dev/null || die "process $2 exited before it was ready: $(cat "$1")"
        sleep 0.05
    done
    die "no ready line after 10 s in $1"
}

# The host:port of the first `listening:` line of log $1.
listening() {
    awk '/^listening:/ { sub(/.*:\/\//, ""); print; exit }' "$1"
}

# Busy time of CPU $1 in microseconds (everything but idle and iowait), from /proc/stat.
cpu_busy_us() {
    awk -v cpu="cpu$1" -v tck="$CLK_TCK" \
        '$1 == cpu { printf "%.0f\n", ($2 + $3 + $4 + $7 + $8 + $9) * 1e6 / tck }' /proc/stat
}

# tern's configuration with profiling $1 (true/false).
tern_config() {
    echo '[global]'
    echo 'workers = 1'
    echo "cpus = [$SERVER_CPU]"
    echo "profiling = $1"
    echo
    echo '[[frontend]]'
    echo 'name = "web"'
    echo 'bind = ["127.0.0.1:0"]'
    ((TLS == 0)) || echo "tls = { certs = [\"$TMP/cert.pem\"] }"
    echo 'default_backend = "app"'
    echo
    echo '[[backend]]'
    echo 'name = "app"'
    echo "servers = [{ name = \"s1\", address = \"$BACKEND\" }]"
}

# One measurement: profiling $1 (off/on) in round $2; appends "mode round us_per_req others
# rate errors" to $TMP/results.
measure() {
    local mode=$1 run=$2 name=tern-$1-$2 flag=false scheme=http
    [[ $mode == on ]] && flag=true
    ((TLS == 0)) || scheme=https
    tern_config "$flag" >"$TMP/$name.toml"
    start_pinned "$SERVER_CPU" "$name" "$TERN" run -c "$TMP/$name.toml"
    local pid=$LAST_PID
    wait_ready "$TMP/$name.log" "$pid"
    local url="$scheme://$(listening "$TMP/$name.log")/"
    local client=("${CLIENT[@]}" "$url" --cpus "$CLIENT_CPU" --threads 1 -c "$CONNS"
        --requests-per-conn 0 --warmup 0 -q)
    if [[ $WARMUP != 0 ]]; then
        start_pinned "$CLIENT_CPU" "warm-$name" "${client[@]}" -d "$WARMUP"
        wait "$LAST_PID" || die "the warm-up client failed: $(cat "$TMP/warm-$name.log")"
        forget_pid "$LAST_PID"
    fi
    local c0 c1 t0 t1 b0 b1
    c0=$(cpu_us "$pid")
    b0=$(cpu_busy_us "$SERVER_CPU")
    t0=$(date +%s%N)
    start_pinned "$CLIENT_CPU" "client-$name" "${client[@]}" -d "$DURATION" --json "$TMP/$name.json"
    wait "$LAST_PID" || die "the client failed: $(cat "$TMP/client-$name.log")"
    forget_pid "$LAST_PID"
    t1=$(date +%s%N)
    b1=$(cpu_busy_us "$SERVER_CPU")
    c1=$(cpu_us "$pid")
    stop_pid "$pid"
    forget_pid "$pid"

    local requests errors per others rate
    requests=$(json_get "$TMP/$name.json" requests)
    ((requests > 0)) || die "no request completed: see $TMP/$name.log"
    errors=$(json_get "$TMP/$name.json" errors_total)
    per=$(calc "($c1 - $c0) / $requests" 3)
    rate=$(calc "$requests / (($t1 - $t0) / 1e9)" 0)
    others=$(calc "($b1 - $b0 - ($c1 - $c0)) / (($t1 - $t0) / 1e3) * 100" 0)
    printf '%-10s %5s %9s %9s %7s%% %7s\n' "$mode" "$run" "$rate" "$per" "$others" "$errors"
    echo "$mode $run $per $others $rate $errors" >>"$TMP/results"
    [[ $mode == off ]] || grep '^stats: profile ' "$TMP/$name.log" >"$TMP/last-profile" || true
}

if ((TLS == 1)); then
    bench/certs.sh >/dev/null || die "bench/certs.sh could not make the certificates"
    cp bench/certs/ecdsa.pem "$TMP/cert.pem"
fi

start_pinned "$CLIENT_CPU" backend "$TERN" term --threads 1 --cpus "$CLIENT_CPU" --listen 127.0.0.1:0
wait_ready "$TMP/backend.log" "$LAST_PID"
BACKEND=$(listening "$TMP/backend.log")
[[ -n $BACKEND ]] || die "tern term printed no listening address"

echo "profiling cost: $( ((TLS == 0)) && echo plain HTTP || echo TLS) keep-alive, GET / through" \
    "tern to one tern term, $CONNS connections, closed loop"
echo "tern CPU $SERVER_CPU (1 worker); client and backend CPU $CLIENT_CPU;" \
    "$DURATION s per run after $WARMUP s warm-up, $RUNS round(s); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-10s %5s %9s %9s %8s %7s\n' profiling round "req/s" "µs/req" others errors
for ((run = 1; run <= RUNS; run++)); do
    if ((run % 2)); then
        measure off "$run"
        measure on "$run"
    else
        measure on "$run"
        measure off "$run"
    fi
done

# Summary line for the rounds whose runs pass awk condition $2 (label $1).
summary() {
    local label=$1 cond=$2 quiet_rounds off on r
    quiet_rounds=$(awk -v m="$QUIET" "$cond"' { n[$2]++ } END { for (r in n) if (n[r] == 2) print r }' \
        "$TMP/results")
    if [[ -z $quiet_rounds ]]; then
        printf '%-22s %s\n' "$label" "no round"
        return
    fi
    local keep
    keep=$(tr '\n' ' ' <<<"$quiet_rounds")
    off=$(awk -v k=" $keep" '$1 == "off" && index(k, " " $2 " ") { print $3 }' "$TMP/results" | median)
    on=$(awk -v k=" $keep" '$1 == "on" && index(k, " " $2 " ") { print $3 }' "$TMP/results" | median)
    r=$(awk -v k=" $keep" '{ if (index(k, " " $2 " ")) print }' "$TMP/results" |
        awk '{ t[$1 " " $2] = $3 } END { for (k in t) { split(k, p, " ");
            if (p[1] == "on" && t["off " p[2]] > 0) print t[k] / t["off " p[2]] } }')
    printf '%-22s %6s %9.3f %9.3f %8.4fx %-17s\n' "$label" "$(wc -w <<<"$keep")" "$off" "$on" \
        "$(median <<<"$r")" "[$(spread 4 <<<"$r")]"
}

echo
echo "tern CPU µs per request, medians; on/off: median of the per-round ratios [min-max]"
printf '%-22s %6s %9s %9s %9s %-17s\n' rounds count off on on/off "(min-max)"
summary "quiet (others <= $QUIET%)" '$4 <= m'
summary "all" '1'
if awk '$6 != 0 { bad = 1 } END { exit !bad }' "$TMP/results"; then
    echo "WARNING: some runs had errors; see the raw results (OUT=dir keeps them)"
fi
if [[ -s $TMP/last-profile ]]; then
    echo
    echo "what profiling measured in the last \"on\" run:"
    cat "$TMP/last-profile"
fi
