#!/usr/bin/env bash
# The fleet (issue 22): three tern nodes as three hosts in network namespaces, their servers on
# a fourth, the client spreading connections across them. Prints the fleet's figures, one
# `fleet:` line per check: TLS sessions resumed on another node than the one that made them,
# cookie persistence held across nodes, requests lost per node when one node is killed.
#
# It runs the fleet tests (crates/tern/tests/fleet.rs), which build the namespaces, start the
# nodes and check the figures, and collects their lines: one implementation of the fleet, so
# the script and CI measure the same thing. Needs root (ip netns).
#
# Usage (from the repo root):
#   bench/fleet.sh
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" -ne 0 ]; then
    echo "bench/fleet.sh needs root (network namespaces)" >&2
    exit 1
fi
out=$(cargo test --release -q -p tern --test fleet -- --nocapture --test-threads=1 2>&1) || {
    echo "$out" >&2
    exit 1
}
grep -o 'fleet: .*' <<<"$out"
