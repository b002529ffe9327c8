#!/usr/bin/env bash
# Cost per request of each balancing algorithm, measured through the proxy.
#
# Why: the balancing core's micro-benchmarks (`cargo bench -p tern-balance`) put every pick
# under ~100 ns; this script checks that the choice of algorithm is also invisible in tern's
# CPU time per proxied request, next to the ~10 µs of a keep-alive exchange.
#
# Workload: plain HTTP keep-alive through tern to $NSERVERS backend servers (one `tern term`
# process listening on $NSERVERS ports, each port a server of the backend). `tern bench` sends
# one URL per process, so the key is varied per client process: $KEYS clients run side by
# side, $CONNS_PER_KEY connections each, and client i targets its own frontend bind (tern
# listens on $KEYS ports, so the Host header differs), path /k/i and query ?id=i. Every
# algorithm sees exactly the same requests:
#   uri             hashes /k/i              ($KEYS keys)
#   url_param(id)   hashes i                 ($KEYS keys)
#   hdr(Host)       hashes 127.0.0.1:PORT_i  ($KEYS keys)
#   source          hashes 127.0.0.1         (one key: every request goes to one server)
#   first           fills s1 first           (no server limit here: every request goes to s1)
# The last two therefore use one server's connection pool where the others spread over up to
# $NSERVERS; the "servers" column shows how many servers got at least 1% of the requests.
#
# CPUs: tern alone on CPU $SERVER_CPU (`workers = 1`, `cpus = [$SERVER_CPU]`, and taskset);
# the clients and the backend share CPU $CLIENT_CPU. The figure is tern's CPU time (utime +
# stime from /proc/PID/stat) per request, not the rate, which the client core and the
# machine's other jobs decide. The "others" column is the share of tern's core that went to
# anything but tern during the run (other jobs, interrupts): high values mark disturbed runs.
#
# Load: closed loop by default (each connection sends its next request when the last one
# ends). RATE=N switches to open loop at N requests/s in total (N/$KEYS per client), so every
# run offers tern the same rate whatever the client core's neighbours do; give it more
# connections (CONNS_PER_KEY=8), since a client with 2 connections falls behind at ~500/s.
# tern is not CPU-bound here, and its CPU per request falls as the rate rises (more requests
# per wake-up), so compare runs at similar rates.
#
# Runs: for each of $RUNS rounds, every algorithm in turn (interleaved, so drifting machine
# noise hits all alike): a fresh tern, a $WARMUP s warm-up run (discarded), a $DURATION s
# measured run. The summary keeps the quiet runs (others <= $QUIET%, default 10; the column
# reads a few % below zero on an idle core, tick accounting) and gives per algorithm the median
# and min-max, the ratio of its median to roundrobin's, and the spread of the per-round ratios
# (against the roundrobin run of the same round); its last column is the median of all runs.
# QUIET=100 keeps every run.
#
# Usage (from the repo root, after `cargo build --release -p tern`):
#   bench/balance-cost.sh
#   RUNS=5 DURATION=10 bench/balance-cost.sh
#   ALGOS="roundrobin uri/consistent random(4)" KEYS=32 bench/balance-cost.sh
#   RATE=20000 CONNS_PER_KEY=8 bench/balance-cost.sh
# ALGOS entries are BALANCE[/consistent[/FACTOR]]: the `balance` value, then hash_type =
# "consistent" and hash_balance_factor = FACTOR. OUT=dir keeps configs, logs and JSON reports.
DURATION=${DURATION:-5}
source "$(dirname "$0")/lib.sh"

NSERVERS=${NSERVERS:-10}
KEYS=${KEYS:-16}
CONNS_PER_KEY=${CONNS_PER_KEY:-2}
RATE=${RATE:-0}
QUIET=${QUIET:-10}
ALGOS=${ALGOS:-roundrobin static-rr leastconn first source source/consistent uri uri/consistent \
hdr(Host) hdr(Host)/consistent url_param(id) url_param(id)/consistent url_param(id)/consistent/125 \
random random(4) ewma}
read -r -a ALGO_LIST <<<"$ALGOS"

((NSERVERS >= 1 && NSERVERS <= 256)) || die "NSERVERS must be 1 to 256"
((KEYS >= 1 && KEYS <= 64)) || die "KEYS must be 1 to 64"
((CONNS_PER_KEY >= 1)) || die "CONNS_PER_KEY must be at least 1"
[[ $QUIET =~ ^[0-9]+$ ]] || die "QUIET must be a whole percentage"
[[ $RATE =~ ^[0-9]+$ ]] || die "RATE must be a whole number of requests per second (0: closed loop)"
((${#ALGO_LIST[@]} >= 1)) || die "ALGOS is empty"
[[ ${ALGO_LIST[0]} == roundrobin ]] || die "ALGOS must start with roundrobin (the reference)"
find_client
have_tern_run || die "'$TERN run' is not available: cargo build --release -p tern"
have_tern_term || die "'$TERN term' is not available: cargo build --release -p tern"

# The host:port of every `listening:` line of log $1, in order.
listening_all() {
    awk '/^listening:/ { sub(/.*:\/\//, ""); print }' "$1"
}

# User and system CPU time of process $1 in microseconds: "user sys".
cpu_split() {
    local stat
    stat=$(<"/proc/$1/stat") || die "process $1 is gone"
    awk -v tck="$CLK_TCK" '{ sub(/.*\) /, ""); printf "%.0f %.0f\n", $12 * 1e6 / tck, $13 * 1e6 / tck }' <<<"$stat"
}

# tern's configuration for algorithm label $1 (BALANCE[/consistent[/FACTOR]]).
tern_config() {
    local balance hash factor i
    IFS=/ read -r balance hash factor <<<"$1"
    echo '[global]'
    echo 'workers = 1'
    echo "cpus = [$SERVER_CPU]"
    echo 'maxconn = 10000'
    echo
    echo '[[frontend]]'
    echo 'name = "web"'
    printf 'bind = ['
    for ((i = 1; i <= KEYS; i++)); do
        printf '"127.0.0.1:0"%s' "$([[ $i -lt $KEYS ]] && echo ', ')"
    done
    echo ']'
    echo 'default_backend = "app"'
    echo
    echo '[[backend]]'
    echo 'name = "app"'
    echo "balance = \"$balance\""
    case $hash in
    "") ;;
    consistent) echo 'hash_type = "consistent"' ;;
    *) die "algorithm $1: expected BALANCE[/consistent[/FACTOR]]" ;;
    esac
    [[ -z $factor ]] || echo "hash_balance_factor = $factor"
    echo 'servers = ['
    for ((i = 0; i < NSERVERS; i++)); do
        echo "  { name = \"s$((i + 1))\", address = \"${BACKENDS[i]}\" },"
    done
    echo ']'
}

# Runs the $KEYS clients side by side for $1 seconds against FRONTS; $2 = JSON file prefix
# (empty: no JSON). Fails if any client fails.
run_clients() {
    local secs=$1 prefix=$2 i pids=() json=() load=()
    ((RATE == 0)) || load=(--rate "$(calc "$RATE / $KEYS" 3)")
    for ((i = 0; i < KEYS; i++)); do
        [[ -z $prefix ]] || json=(--json "$prefix-$i.json")
        start_pinned "$CLIENT_CPU" "client-$i" "${CLIENT[@]}" "http://${FRONTS[i]}/k/$i?id=$i" \
            --cpus "$CLIENT_CPU" --threads 1 -c "$CONNS_PER_KEY" --requests-per-conn 0 \
            -d "$secs" --warmup 0 -q "${load[@]}" "${json[@]}"
        pids+=("$LAST_PID")
    done
    local failed=0
    for i in "${!pids[@]}"; do
        wait "${pids[i]}" || failed=1
        forget_pid "${pids[i]}"
    done
    ((failed == 0)) || die "a client failed: $(cat "$TMP"/client-*.log)"
}

# Sum of key $2 over the JSON reports $1-*.json.
json_sum() {
    local f total=0
    for f in "$1"-*.json; do
        total=$(calc "$total + $(json_get "$f" "$2")" 0)
    done
    echo "$total"
}

# Servers that got at least 1% of the requests, and the largest share, from tern's exit stats
# in log $1: "used max%".
server_spread() {
    awk '/^stats: server / {
            for (i = 4; i <= NF; i++) if ($i ~ /^requests=/) { n[++s] = substr($i, 10) + 0; t += n[s] }
        }
        END {
            for (i = 1; i <= s; i++) { if (n[i] * 100 >= t && t > 0) u++; if (n[i] > m) m = n[i] }
            printf "%d %.0f\n", u, (t > 0 ? m * 100 / t : 0)
        }' "$1"
}

# One measurement: algorithm number $1 in round $2.
measure() {
    local idx=$1 run=$2 label=${ALGO_LIST[$1]} name=tern-$1-$2
    tern_config "$label" >"$TMP/$name.toml"
    start_pinned "$SERVER_CPU" "$name" "$TERN" run -c "$TMP/$name.toml"
    local pid=$LAST_PID
    wait_ready "$TMP/$name.log" "$pid"
    mapfile -t FRONTS < <(listening_all "$TMP/$name.log")
    ((${#FRONTS[@]} == KEYS)) || die "tern listens on ${#FRONTS[@]} addresses, expected $KEYS"

    [[ $WARMUP == 0 ]] || run_clients "$WARMUP" ""
    local u0 s0 u1 s1 t0 t1 b0 b1
    read -r u0 s0 < <(cpu_split "$pid")
    b0=$(cpu_busy_us "$SERVER_CPU")
    t0=$(date +%s%N)
    run_clients "$DURATION" "$TMP/$name"
    t1=$(date +%s%N)
    b1=$(cpu_busy_us "$SERVER_CPU")
    read -r u1 s1 < <(cpu_split "$pid")
    stop_pid "$pid"
    forget_pid "$pid"

    local requests rate errors user sys total share others used maxshare
    requests=$(json_sum "$TMP/$name" requests)
    ((requests > 0)) || die "no request completed through $label: see $TMP/$name.log"
    rate=$(calc "$requests / (($t1 - $t0) / 1e9)" 0)
    errors=$(json_sum "$TMP/$name" errors_total)
    user=$(calc "($u1 - $u0) / $requests" 2)
    sys=$(calc "($s1 - $s0) / $requests" 2)
    total=$(calc "($u1 - $u0 + $s1 - $s0) / $requests" 2)
    share=$(calc "($u1 - $u0 + $s1 - $s0) / (($t1 - $t0) / 1e3) * 100" 0)
    # CPU time of tern's core not spent in tern: other jobs of the machine (noise), interrupts.
    others=$(calc "($b1 - $b0 - ($u1 - $u0 + $s1 - $s0)) / (($t1 - $t0) / 1e3) * 100" 0)
    read -r used maxshare < <(server_spread "$TMP/$name.log")
    printf '%-30s %3s %9s %7s %7s %7s %6s%% %6s%% %4s/%-3s %6s%% %6s\n' "$label" "$run" "$rate" \
        "$user" "$sys" "$total" "$share" "$others" "$used" "$NSERVERS" "$maxshare" "$errors"
    echo "$idx $run $rate $user $sys $total $errors $others" >>"$TMP/results"
}

listens=()
for ((i = 0; i < NSERVERS; i++)); do
    listens+=(--listen 127.0.0.1:0)
done
start_pinned "$CLIENT_CPU" backend "$TERN" term --threads 1 --cpus "$CLIENT_CPU" "${listens[@]}"
wait_ready "$TMP/backend.log" "$LAST_PID"
mapfile -t BACKENDS < <(listening_all "$TMP/backend.log")
((${#BACKENDS[@]} == NSERVERS)) || die "tern term listens on ${#BACKENDS[@]} ports, expected $NSERVERS"

echo "balancing cost: plain HTTP keep-alive, GET /k/i?id=i through tern to $NSERVERS servers" \
    "(one tern term), $KEYS clients x $CONNS_PER_KEY connections, one key each," \
    "$( ((RATE == 0)) && echo "closed loop" || echo "open loop at $RATE requests/s")"
echo "tern CPU $SERVER_CPU (1 worker); clients and backend CPU $CLIENT_CPU;" \
    "$DURATION s per run after $WARMUP s warm-up, $RUNS round(s) of ${#ALGO_LIST[@]} algorithms"
echo
printf '%-30s %3s %9s %7s %7s %7s %7s %7s %8s %7s %6s\n' algorithm run "req/s" "user" "sys" \
    "µs/req" "tern" "others" servers "max" errors
for ((run = 1; run <= RUNS; run++)); do
    for idx in "${!ALGO_LIST[@]}"; do
        measure "$idx" "$run"
    done
done

# The summary of results file $1 (one line per run: index round rate user sys total errors
# others), over the quiet runs only: those where other work took at most $QUIET% of tern's core.
summary() {
    local idx q quiet totals users rates ratios all med rr_med=
    echo "tern CPU µs per request over the quiet runs (others <= $QUIET% of tern's core):" \
        "median (min-max), ratio to roundrobin of the medians [min-max of the per-round ratios," \
        "rounds where both were quiet]; last column: median over all runs, disturbed included"
    printf '%-30s %6s %8s %13s %6s %7s %-12s %8s %8s\n' algorithm quiet "µs/req" spread user ratio \
        "(rounds)" "req/s" "all runs"
    for idx in "${!ALGO_LIST[@]}"; do
        q=$(awk -v i="$idx" -v m="$QUIET" '$1 == i && $8 <= m' "$1")
        quiet=$(grep -c . <<<"$q" || true)
        all=$(awk -v i="$idx" '$1 == i { print $6 }' "$1" | median)
        if ((quiet == 0)); then
            printf '%-30s %4s/%s %8s %13s %6s %7s %-12s %8s %8.2f\n' "${ALGO_LIST[idx]}" 0 "$RUNS" \
                - - - - - - "$all"
            continue
        fi
        totals=$(awk '{ print $6 }' <<<"$q")
        users=$(awk '{ print $4 }' <<<"$q")
        rates=$(awk '{ print $3 }' <<<"$q")
        ratios=$(awk -v i="$idx" -v m="$QUIET" '$8 > m { next } $1 == 0 { rr[$2] = $6 } $1 == i { t[$2] = $6 }
            END { for (r in t) if (rr[r] > 0) print t[r] / rr[r] }' "$1")
        med=$(median <<<"$totals")
        [[ $idx != 0 ]] || rr_med=$med
        printf '%-30s %4s/%s %8.2f %13s %6.2f %6sx %-12s %8.0f %8.2f\n' "${ALGO_LIST[idx]}" "$quiet" \
            "$RUNS" "$med" "($(spread 2 <<<"$totals"))" "$(median <<<"$users")" \
            "$([[ -n $rr_med ]] && calc "$med / $rr_med" 2 || echo -)" \
            "[$([[ -n $ratios ]] && spread 2 <<<"$ratios" || echo -)]" "$(median <<<"$rates")" "$all"
    done
}

echo
summary "$TMP/results"
if awk '$7 != 0 { bad = 1 } END { exit !bad }' "$TMP/results"; then
    echo "WARNING: some runs had errors; see the raw results (OUT=dir keeps them)"
fi
