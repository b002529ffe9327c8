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
# Workload: $CONNS keep-alive connections from one `tern bench` client through tern to one
# `tern term` backend, GET / answered with a small body. Closed loop by default (each
# connection sends its next request when the last one ends); RATE=N makes it an open loop at N
# requests/s, so that both modes are measured at the same rate: tern's CPU per request falls
# as the rate rises (more requests per wake-up), and in a closed loop the rate follows whatever
# else the client's core runs. Prefer RATE on a shared machine (below what the client can
# reach: the req/s column shows it).
#
# CPUs: tern alone on CPU $SERVER_CPU (`workers = 1`, `cpus = [$SERVER_CPU]`, and taskset);
# the client and the backend share CPU $CLIENT_CPU. The figure is tern's CPU time (utime +
# stime from /proc/PID/stat) per request. "others" is the share of tern's core that went to
# anything but tern during the run (other jobs, interrupts): high values mark disturbed runs.
#
# Two ways to compare (MODE):
# - runs (default): $RUNS rounds; each round runs "off" then "on" (the other way round on even
#   rounds, so a drift in machine noise does not always favour one): a fresh tern started with
#   `profiling = false` or `true`, a $WARMUP s warm-up (discarded), a $DURATION s measured run.
#   Figure: tern's whole CPU time per request, requests counted by the client.
# - switch: one tern and one client for the whole measurement; after the warm-up, the script
#   switches profiling with `tern ctl set profiling on|off` every $DURATION s, $RUNS windows of
#   each (alternating which comes first), and reads the worker thread's own CPU time
#   (/proc/PID/task/TID/stat) and tern's request counter (`tern ctl show stat`) at every
#   boundary. Same process, same connections, windows seconds apart: machine noise that drifts
#   over minutes falls on both modes alike, which is what a shared 2-core machine needs. The
#   clock ticks of /proc are 10 ms, so use windows of a few seconds. AA=1 leaves profiling
#   off in the "on" windows too: the ratio then shows the method's own noise and bias.
# The summary gives, over the rounds (window pairs) where both were quiet (others <= $QUIET%),
# the median µs/request of each and the median and min-max of the per-round on/off ratios;
# then the same over every round. It also prints what profiling measured (`stats: profile`
# lines of the last "on" run, or the `show profiling` table at the end of a switch run).
#
# Usage (from the repo root, after `cargo build --release -p tern`):
#   bench/profiling-cost.sh
#   RUNS=6 DURATION=8 bench/profiling-cost.sh
#   TLS=1 bench/profiling-cost.sh
#   RATE=30000 CONNS=16 RUNS=8 bench/profiling-cost.sh
#   MODE=switch RATE=30000 CONNS=16 RUNS=20 DURATION=3 bench/profiling-cost.sh
# OUT=dir keeps configs, logs and JSON reports.
DURATION=${DURATION:-5}
RUNS=${RUNS:-4}
source "$(dirname "$0")/lib.sh"

CONNS=${CONNS:-8}
QUIET=${QUIET:-10}
TLS=${TLS:-0}
RATE=${RATE:-0}
MODE=${MODE:-runs}
AA=${AA:-0}
# BASE=path/to/old/tern (runs mode): compare that binary ("off" rows) with $TERN ("on" rows),
# profiling off in both: the request path's cost of a change, side by side.
BASE=${BASE:-}

((CONNS >= 1)) || die "CONNS must be at least 1"
((RUNS >= 1)) || die "RUNS must be at least 1"
[[ $QUIET =~ ^[0-9]+$ ]] || die "QUIET must be a whole percentage"
[[ $TLS == 0 || $TLS == 1 ]] || die "TLS must be 0 or 1"
[[ $RATE =~ ^[0-9]+$ ]] || die "RATE must be a whole number of requests per second (0: closed loop)"
[[ $MODE == runs || $MODE == switch ]] || die "MODE must be runs or switch"
[[ -z $BASE || $MODE == runs ]] || die "BASE compares binaries in MODE=runs only"
find_client
have_tern_run || die "'$TERN run' is not available: cargo build --release -p tern"
have_tern_term || die "'$TERN term' is not available: cargo build --release -p tern"

# tern's configuration with profiling $1 (true/false).
tern_config() {
    echo '[global]'
    echo 'workers = 1'
    echo "cpus = [$SERVER_CPU]"
    echo "profiling = $1"
    echo
    echo '[control]'
    echo "socket = \"$TMP/ctl.sock\""
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

# Sets `client` (an array): the load generator's command line against the tern whose log is $1.
client_args() {
    local scheme=http
    ((TLS == 0)) || scheme=https
    client=("${CLIENT[@]}" "$scheme://$(listening "$1")/" --cpus "$CLIENT_CPU" --threads 1
        -c "$CONNS" --requests-per-conn 0 --warmup 0 -q)
    ((RATE == 0)) || client+=(--rate "$RATE")
}

# One measurement: profiling $1 (off/on) in round $2; appends "mode round us_per_req others
# rate errors" to $TMP/results.
measure() {
    local mode=$1 run=$2 name=tern-$1-$2 flag=false binary=$TERN
    [[ $mode == on ]] && flag=true
    # BASE: an A/B of two binaries instead, profiling off in both ("off" = BASE, "on" = TERN).
    if [[ -n $BASE ]]; then
        flag=false
        [[ $mode == off ]] && binary=$BASE
    fi
    tern_config "$flag" >"$TMP/$name.toml"
    start_pinned "$SERVER_CPU" "$name" "$binary" run -c "$TMP/$name.toml"
    local pid=$LAST_PID
    wait_ready "$TMP/$name.log" "$pid"
    local client
    client_args "$TMP/$name.log"
    measure_run "$mode" "$run" "$name" "$pid" "${client[@]}"
    [[ $mode == off ]] || grep '^stats: profile ' "$TMP/$name.log" >"$TMP/last-profile" || true
}

# `tern ctl` on the measured tern, on the client's CPU (not tern's).
ctl() {
    taskset -c "$CLIENT_CPU" "$TERN" ctl -s "$TMP/ctl.sock" "$@"
}

# Requests tern forwarded so far (the backend's counter, from `show stat`).
forwarded() {
    ctl --json show stat | grep -o '"requests":[0-9]*' | head -n 1 | cut -d: -f2
}

# CPU time of thread $2 of process $1 in microseconds (utime + stime).
thread_cpu_us() {
    local stat
    stat=$(<"/proc/$1/task/$2/stat") || die "thread $2 of process $1 is gone"
    awk -v tck="$CLK_TCK" '{ sub(/.*\) /, ""); printf "%d\n", ($12 + $13) * 1000000 / tck }' <<<"$stat"
}

# The id of tern's worker thread (`tern-worker-0`) in process $1.
worker_tid() {
    local task
    for task in /proc/"$1"/task/*; do
        if [[ $(<"$task/comm") == tern-worker-0 ]]; then
            basename "$task"
            return
        fi
    done
    die "no tern-worker-0 thread in process $1"
}

# One window of $DURATION s with profiling $1 (off/on) in round $2, on tern $3 (worker $4).
window() {
    local mode=$1 run=$2 pid=$3 tid=$4 c0 c1 r0 r1 b0 b1 t0 t1 set=$1
    ((AA == 0)) || set=off
    ctl set profiling "$set" >/dev/null || die "tern ctl set profiling $set failed"
    c0=$(thread_cpu_us "$pid" "$tid")
    b0=$(cpu_busy_us "$SERVER_CPU")
    r0=$(forwarded)
    t0=$(date +%s%N)
    sleep "$DURATION"
    c1=$(thread_cpu_us "$pid" "$tid")
    b1=$(cpu_busy_us "$SERVER_CPU")
    r1=$(forwarded)
    t1=$(date +%s%N)
    local requests=$((r1 - r0)) per others rate
    ((requests > 0)) || die "no request in a window: see $TMP/client-switch.log"
    per=$(calc "($c1 - $c0) / $requests" 3)
    rate=$(calc "$requests / (($t1 - $t0) / 1e9)" 0)
    others=$(calc "($b1 - $b0 - ($c1 - $c0)) / (($t1 - $t0) / 1e3) * 100" 0)
    printf '%-10s %5s %9s %9s %7s%% %7s\n' "$mode" "$run" "$rate" "$per" "$others" -
    echo "$mode $run $per $others $rate 0" >>"$TMP/results"
}

# The whole switch measurement: one tern, one client, $RUNS pairs of windows.
switch_run() {
    tern_config false >"$TMP/tern-switch.toml"
    start_pinned "$SERVER_CPU" tern-switch "$TERN" run -c "$TMP/tern-switch.toml"
    local pid=$LAST_PID tid run client
    wait_ready "$TMP/tern-switch.log" "$pid"
    tid=$(worker_tid "$pid")
    client_args "$TMP/tern-switch.log"
    local total=$((WARMUP + 2 * RUNS * DURATION + 2 * RUNS + 5))
    start_pinned "$CLIENT_CPU" client-switch "${client[@]}" -d "$total" --json "$TMP/switch.json"
    local cpid=$LAST_PID
    sleep "$WARMUP"
    for ((run = 1; run <= RUNS; run++)); do
        if ((run % 2)); then
            window off "$run" "$pid" "$tid"
            window on "$run" "$pid" "$tid"
        else
            window on "$run" "$pid" "$tid"
            window off "$run" "$pid" "$tid"
        fi
    done
    ctl show profiling >"$TMP/last-profile" || true
    stop_pid "$cpid"
    forget_pid "$cpid"
    stop_pid "$pid"
    forget_pid "$pid"
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
    "tern to one tern term, $CONNS connections," \
    "$( ((RATE == 0)) && echo "closed loop" || echo "open loop at $RATE requests/s")"
echo "tern CPU $SERVER_CPU (1 worker); client and backend CPU $CLIENT_CPU;" \
    "mode $MODE$( ((AA == 0)) || echo ' (A/A: profiling never on)')$([[ -z $BASE ]] || echo " (A/B: off = $BASE, on = $TERN, profiling off)"): $DURATION s per run or window after $WARMUP s warm-up, $RUNS round(s);" \
    "load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-10s %5s %9s %9s %8s %7s\n' profiling round "req/s" "µs/req" others errors
if [[ $MODE == switch ]]; then
    switch_run
else
    for ((run = 1; run <= RUNS; run++)); do
        if ((run % 2)); then
            measure off "$run"
            measure on "$run"
        else
            measure on "$run"
            measure off "$run"
        fi
    done
fi

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
    echo "what profiling measured (the last \"on\" run, or every \"on\" window):"
    cat "$TMP/last-profile"
fi
