#!/usr/bin/env bash
# Cost of the access log (`[access_log]`): tern's CPU per request without a log, and with one
# line per request in text and in JSON.
#
# Why: with logging on, each request costs a few clock reads at its phase boundaries, a copy of
# a ~1.7 KiB record into the bounded queue, and the writer thread's formatting and writes; with
# no `[access_log]` table it must cost nothing measurable (one branch per hook). The cheapest
# request tern serves, a small plain HTTP keep-alive exchange (~10 µs of CPU), is where any
# overhead is largest in relative terms, so that is the workload.
#
# Workload: $CONNS keep-alive connections from one `tern bench` client (closed loop) through
# tern to one `tern term` backend, GET / answered with a small body. The log goes to a file in
# the temporary directory (deleted after each run), or to $LOG_TARGET (e.g. /dev/null, to leave
# the disk out, or udp://127.0.0.1:5514 for syslog framing).
#
# CPUs: tern alone on CPU $SERVER_CPU (`workers = 1`, `cpus = [$SERVER_CPU]`, and taskset, which
# also holds the writer thread there: its CPU is counted, and competes with the worker); the
# client and the backend share CPU $CLIENT_CPU. The figure is tern's CPU time (utime + stime of
# all its threads, from /proc/PID/stat) per request. "others" is the share of tern's core that
# went to anything but tern during the run: high values mark disturbed runs.
#
# Runs: $RUNS rounds; each round runs every mode of $MODES (rotated by one each round, so a
# drift in machine noise does not always favour one): a fresh tern, a $WARMUP s warm-up
# (discarded), a $DURATION s measured run. The summary gives per mode, over the quiet rounds
# (every run of the round has others <= $QUIET%), the median µs/request and the median and
# min-max of the per-round ratios to "off"; then the same over every round. It also prints
# tern's `stats: access_log` line of each logging run's last round (dropped should be 0).
#
# Usage (from the repo root, after `cargo build --release -p tern`):
#   bench/access-log-cost.sh
#   RUNS=6 DURATION=8 bench/access-log-cost.sh
#   LOG_TARGET=/dev/null MODES="off json" bench/access-log-cost.sh
# OUT=dir keeps configs, logs and JSON reports (not the access logs).
DURATION=${DURATION:-5}
RUNS=${RUNS:-4}
source "$(dirname "$0")/lib.sh"

CONNS=${CONNS:-8}
QUIET=${QUIET:-10}
MODES=${MODES:-off text json}
LOG_TARGET=${LOG_TARGET:-}
read -r -a MODE_LIST <<<"$MODES"

((CONNS >= 1)) || die "CONNS must be at least 1"
((RUNS >= 1)) || die "RUNS must be at least 1"
[[ $QUIET =~ ^[0-9]+$ ]] || die "QUIET must be a whole percentage"
[[ ${MODE_LIST[0]:-} == off ]] || die "MODES must start with off (the reference)"
for m in "${MODE_LIST[@]}"; do
    [[ $m == off || $m == text || $m == json ]] || die "unknown mode $m: use off, text, json"
done
find_client
have_tern_run || die "'$TERN run' is not available: cargo build --release -p tern"
have_tern_term || die "'$TERN term' is not available: cargo build --release -p tern"

# tern's configuration for mode $1, logging to $2.
tern_config() {
    echo '[global]'
    echo 'workers = 1'
    echo "cpus = [$SERVER_CPU]"
    echo
    echo '[[frontend]]'
    echo 'name = "web"'
    echo 'bind = ["127.0.0.1:0"]'
    echo 'default_backend = "app"'
    echo
    echo '[[backend]]'
    echo 'name = "app"'
    echo "servers = [{ name = \"s1\", address = \"$BACKEND\" }]"
    [[ $1 == off ]] && return
    echo
    echo '[access_log]'
    echo "target = \"$2\""
    echo "format = \"$1\""
}

# One measurement: mode $1 in round $2; appends "mode round us_per_req others rate errors" to
# $TMP/results.
measure() {
    local mode=$1 run=$2 name=tern-$1-$2 log=${LOG_TARGET:-$TMP/access-$1-$2.log}
    tern_config "$mode" "$log" >"$TMP/$name.toml"
    start_pinned "$SERVER_CPU" "$name" "$TERN" run -c "$TMP/$name.toml"
    local pid=$LAST_PID
    wait_ready "$TMP/$name.log" "$pid"
    local url="http://$(listening "$TMP/$name.log")/"
    local client=("${CLIENT[@]}" "$url" --cpus "$CLIENT_CPU" --threads 1 -c "$CONNS"
        --requests-per-conn 0 --warmup 0 -q)
    measure_run "$mode" "$run" "$name" "$pid" "${client[@]}"
    [[ -n $LOG_TARGET ]] || rm -f "$log"
    [[ $mode == off ]] || grep '^stats: access_log ' "$TMP/$name.log" >"$TMP/last-$mode" || true
}

start_pinned "$CLIENT_CPU" backend "$TERN" term --threads 1 --cpus "$CLIENT_CPU" --listen 127.0.0.1:0
wait_ready "$TMP/backend.log" "$LAST_PID"
BACKEND=$(listening "$TMP/backend.log")
[[ -n $BACKEND ]] || die "tern term printed no listening address"

echo "access log cost: plain HTTP keep-alive, GET / through tern to one tern term," \
    "$CONNS connections, closed loop; log to ${LOG_TARGET:-a file in $TMP}"
echo "tern CPU $SERVER_CPU (1 worker and the log writer); client and backend CPU $CLIENT_CPU;" \
    "$DURATION s per run after $WARMUP s warm-up, $RUNS round(s); load average: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-10s %5s %9s %9s %8s %7s\n' log round "req/s" "µs/req" others errors
count=${#MODE_LIST[@]}
for ((run = 1; run <= RUNS; run++)); do
    for ((i = 0; i < count; i++)); do
        measure "${MODE_LIST[(i + run - 1) % count]}" "$run"
    done
done

# Summary of the rounds whose every run passes awk condition $2 (label $1).
summary() {
    local label=$1 cond=$2 rounds keep mode med r
    rounds=$(awk -v m="$QUIET" -v want="$count" "$cond"' { n[$2]++ } END { for (r in n) if (n[r] == want) print r }' \
        "$TMP/results")
    if [[ -z $rounds ]]; then
        printf '%s: no round\n' "$label"
        return
    fi
    keep=" $(tr '\n' ' ' <<<"$rounds")"
    echo "$label: $(wc -w <<<"$keep") round(s)"
    for mode in "${MODE_LIST[@]}"; do
        med=$(awk -v k="$keep" -v m="$mode" '$1 == m && index(k, " " $2 " ") { print $3 }' \
            "$TMP/results" | median)
        r=$(awk -v k="$keep" -v m="$mode" 'index(k, " " $2 " ") { t[$1 " " $2] = $3 }
            END { for (x in t) { split(x, p, " "); if (p[1] == m && t["off " p[2]] > 0) print t[x] / t["off " p[2]] } }' \
            "$TMP/results")
        printf '  %-8s %9.3f %8.4fx %-17s\n' "$mode" "$med" "$(median <<<"$r")" "[$(spread 4 <<<"$r")]"
    done
}

echo
echo "tern CPU µs per request, medians; ratio to off: median of the per-round ratios [min-max]"
summary "quiet (others <= $QUIET%)" '$4 <= m'
summary "all" '1'
if awk '$6 != 0 { bad = 1 } END { exit !bad }' "$TMP/results"; then
    echo "WARNING: some runs had errors; see the raw results (OUT=dir keeps them)"
fi
for mode in "${MODE_LIST[@]}"; do
    [[ -s $TMP/last-$mode ]] && echo "$mode, last run: $(cat "$TMP/last-$mode")"
done
exit 0
