#!/usr/bin/env bash
# Apache Curator 5.4 (Debian's libcurator-*-java) against both servers: the recipe suite
# (tests/interop/curator/CuratorSuite.java) and the mixed fleet, in which our Curator-compatible
# locks (verify's curator_fleet) and Curator's contend on the same paths (Fleet.java).
#
#   bash .ci/curator.sh SHEPHERD_ADDR REAL_ZK_ADDR
#
# Both servers must run as CI runs them: TTL nodes on (zookeeper.extendedTypesEnabled=true) and
# znode.container.checkIntervalMs=1000 (.ci/real-zk.sh, start_shepherd in .ci/run). Prints
# `curator: N passed` and `fleet: N passed` for each server; exits 1 if anything failed, after
# running everything. Needs javac and the libcurator-{client,framework,recipes}-java packages.
# CURATOR_FLEET_BIN=PATH: use that curator_fleet binary instead of building it.
# CURATOR_BUILD=DIR: compile into DIR and keep it (default: a temporary directory).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if (($# != 2)); then
  echo "usage: $0 SHEPHERD_ADDR REAL_ZK_ADDR" >&2
  exit 2
fi
shepherd_addr=$1 real_zk_addr=$2

work=$(mktemp -d "${TMPDIR:-/tmp}/curator-ci.XXXXXX") # the two runs' logs
# The classes go to CURATOR_BUILD when it is set (kept, for later steps to reuse), else here.
build=${CURATOR_BUILD:-$work/classes}
runs=() # the two server runs below, stopped if we are interrupted
cleanup() {
  if ((${#runs[@]} > 0)); then kill "${runs[@]}" 2>/dev/null; fi
  rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
# shellcheck source=tests/interop/curator/build.sh
source tests/interop/curator/build.sh "$build" || {
  echo "curator: the suite did not compile" >&2
  exit 1
}
# The fleet's Rust side; CURATOR_FLEET_BIN names one already built (then cargo is not run).
fleet_bin=${CURATOR_FLEET_BIN:-}
if [[ -z $fleet_bin ]]; then
  cargo build -q --bin curator_fleet || exit 1
  target_dir=$(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])') || exit 1
  fleet_bin=$target_dir/debug/curator_fleet
fi

# A test JVM wants a quick start, not peak throughput.
java_opts=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CURATOR_CP")
# One server's run: the suite, then the fleet. Most of it is waiting on the servers' timers
# (TTLs, the container reaper), so the two servers run side by side, each into its own log.
run_against() { # NAME ADDR
  local status=0
  echo "--- Curator suite against $1 ($2)"
  java "${java_opts[@]}" CuratorSuite "$2" || status=1
  echo "--- mixed fleet against $1 ($2)"
  java "${java_opts[@]}" Fleet "$2" "$fleet_bin" || status=1
  return "$status"
}
run_against "real ZooKeeper" "$real_zk_addr" >"$work/real-zk.log" 2>&1 &
runs+=($!)
run_against "shepherd serve" "$shepherd_addr" >"$work/shepherd.log" 2>&1 &
runs+=($!)
status=0
for pid in "${runs[@]}"; do
  wait "$pid" || status=1
done
runs=()
cat "$work/real-zk.log" "$work/shepherd.log"
exit "$status"
