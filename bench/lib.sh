# Shared helpers for the benchmark scripts in bench/. Sourced, not run.
#
# Why a helper file: every script must pin processes the same way, read CPU time the same way
# (/proc/PID/stat, utime + stime) and clean up only the processes it started.

set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."   # the repository root

SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
DURATION=${DURATION:-10}
WARMUP=${WARMUP:-2}
RUNS=${RUNS:-3}
FRONT_PORT=${FRONT_PORT:-8443}
BACKEND_PORT=${BACKEND_PORT:-8080}
INFO_PORT=${INFO_PORT:-9999}
TERN=${TERN:-target/release/tern}
CLK_TCK=$(getconf CLK_TCK)

STARTED_PIDS=()
TMP=$(mktemp -d "${TMPDIR:-/tmp}/tern-bench.XXXXXX")

cleanup() {
    local pid
    for pid in "${STARTED_PIDS[@]}"; do
        kill "$pid" 2>/dev/null || true
    done
    for pid in "${STARTED_PIDS[@]}"; do
        wait "$pid" 2>/dev/null || true
    done
    if [[ -n ${OUT:-} ]]; then
        mkdir -p "$OUT" && cp -r "$TMP"/. "$OUT"/ && echo "raw results kept in $OUT"
    fi
    rm -rf "$TMP"
}
trap cleanup EXIT

die() {
    echo "error: $*" >&2
    exit 1
}

need_cmd() {
    command -v "$1" >/dev/null 2>&1 || die "$1 not found${2:+: $2}"
}

need_cmd taskset "install util-linux"
need_cmd awk

# The load generator: `tern bench` once the tern binary mounts it, else the standalone example.
# Sets CLIENT (an array).
find_client() {
    if [[ -n ${CLIENT_CMD:-} ]]; then
        read -r -a CLIENT <<<"$CLIENT_CMD"
    elif [[ -x $TERN ]] && "$TERN" bench --help 2>/dev/null | grep -q -- --requests-per-conn; then
        CLIENT=("$TERN" bench)
    elif [[ -x target/release/examples/tern-bench ]]; then
        CLIENT=(target/release/examples/tern-bench)
    else
        die "no load generator: run 'cargo build --release' (tern bench) or" \
            "'cargo build --release -p tern-bench --example tern-bench'"
    fi
}

# Whether `tern run` is available (the tern columns are skipped otherwise).
have_tern_run() {
    [[ -x $TERN ]] && "$TERN" run --help 2>/dev/null | grep -qi usage
}

# Whether `tern term` is available.
have_tern_term() {
    [[ -x $TERN ]] && "$TERN" term --help 2>/dev/null | grep -q -- --listen
}

port_free() {
    [[ -z $(ss -Htln "sport = :$1") ]]
}

# Waits (bounded: 10 s) until something listens on 127.0.0.1:$1 and process $2 is alive.
wait_port() {
    local i
    for ((i = 0; i < 200; i++)); do
        kill -0 "$2" 2>/dev/null || die "process $2 exited before listening on port $1"
        if (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; then
            return 0
        fi
        sleep 0.05
    done
    die "nothing listens on port $1 after 10 s"
}

# Starts "$@" pinned to CPU $1 in the background, logging to $TMP/$2.log; sets LAST_PID.
start_pinned() {
    local cpu=$1 name=$2
    shift 2
    taskset -c "$cpu" "$@" >"$TMP/$name.log" 2>&1 &
    LAST_PID=$!
    STARTED_PIDS+=("$LAST_PID")
}

# Stops a process this script started.
stop_pid() {
    kill "$1" 2>/dev/null || true
    wait "$1" 2>/dev/null || true
}

# CPU time (user + system) of process $1 in microseconds, from /proc/PID/stat.
cpu_us() {
    local stat
    stat=$(<"/proc/$1/stat") || die "process $1 is gone"
    # Fields after the ")" that closes the command name: utime is the 12th, stime the 13th.
    awk -v tck="$CLK_TCK" '{ sub(/.*\) /, ""); printf "%d\n", ($12 + $13) * 1000000 / tck }' <<<"$stat"
}

# CPU time (user + system) of process $1 and every descendant, in microseconds: for servers
# that fork workers (hitch) or helpers. Children already reaped count through their parent's
# cutime + cstime; a process that vanishes between the listing and the read is skipped.
tree_cpu_us() {
    { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v root="$1" -v tck="$CLK_TCK" '
        {
            pid = $1
            sub(/.*\) /, "")
            parent[pid] = $2
            own[pid] = $12 + $13 + $14 + $15
        }
        END {
            total = 0
            for (p in own) {
                q = p
                for (depth = 0; depth < 64 && q != "" && q != 0; depth++) {
                    if (q == root) { total += own[p]; break }
                    q = parent[q]
                }
            }
            printf "%.0f\n", total * 1000000 / tck
        }'
}

# Value of a numeric or string key in the generator's flat JSON ($1 file, $2 key): first match.
json_get() {
    grep -o "\"$2\":[^,}]*" "$1" | head -n 1 | cut -d: -f2- | tr -d '"'
}

# A latency percentile from the generator's JSON: $1 file, $2 kind (connect, handshake, ttfb,
# total), $3 key (p50, p99, p99.9, max, ...), in µs. The kinds are objects inside `latency_us`
# whose own keys repeat in every kind, so `json_get p99` would read the first kind (`connect`,
# empty in a keep-alive run after warm-up) instead: see crates/tern-bench/JSON.md.
json_latency() {
    grep -o "\"$2\":{[^}]*}" "$1" | head -n 1 | grep -o "\"$3\":[^,}]*" | head -n 1 | cut -d: -f2-
}

# A field of HAProxy's `show info` from the stats socket on INFO_PORT.
haproxy_info() {
    local line
    exec 3<>"/dev/tcp/127.0.0.1/$INFO_PORT" || die "cannot reach the HAProxy stats socket"
    printf 'show info\n' >&3
    while IFS= read -r line <&3; do
        if [[ $line == "$1:"* ]]; then
            echo "${line#*: }"
        fi
    done
    exec 3<&-
}

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

# One measured run against server process $4 (pinned on CPU $SERVER_CPU), which it stops: a
# $WARMUP s warm-up of the client command "${@:5}", then $DURATION s measured with its JSON in
# $TMP/$3.json. Prints and appends "mode($1) round($2) us_per_req others rate errors" to
# $TMP/results; "others" is the share of the server's CPU used by anything else.
measure_run() {
    local mode=$1 run=$2 name=$3 pid=$4
    shift 4
    local client=("$@")
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
}

# Floating-point helpers.
calc() { awk "BEGIN { printf \"%.${2:-1}f\", $1 }"; }
median() { tr ' ' '\n' | grep -v '^$' | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# Min-max of the numbers on stdin, printed with $1 decimals.
spread() { tr ' ' '\n' | grep -v '^$' | sort -g | awk -v d="${1:-0}" 'NR == 1 { lo = $1 } { hi = $1 } END { printf "%.*f-%.*f", d, lo, d, hi }'; }
