#!/usr/bin/env bash
# The proof runs (docs/proof.md): every workload, a bounded number of operations each, against
# the embedded server (cut and held connections), `shepherd serve --data-dir` (kill -9 and
# restart), real ZooKeeper standalone (our own JVM, kill -9 and restart; and, without faults,
# the one CI shares, $SHEPHERD_REAL_ZK, when set) and the real three-JVM ensemble (members
# killed, the leader included, and stopped). Each run prints
#   proof: WORKLOAD on SERVER: N events, F faults (kinds), verdict VALID|INVALID|UNKNOWN
# and the script prints `proof: N runs, M invalid (S s)`.
#
#   bash .ci/proof.sh [OPS]     from the workspace root; OPS per run (default 200); exits
#                               non-zero if any run is INVALID or fails to run
#
# Needs Debian's ZooKeeper and a JVM (installed by .ci/run's prerequisites step); without them
# the ZooKeeper runs are reported as skipped, never as passed.
# Environment: CARGO (default cargo), CARGO_TARGET_DIR as usual.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

ops=${1:-200}
started=$SECONDS
"${CARGO:-cargo}" build -q --bin proof --bin shepherd
target_dir=$("${CARGO:-cargo}" metadata --no-deps --format-version 1 |
  python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')
proof=$target_dir/debug/proof
log=$(mktemp "${TMPDIR:-/tmp}/proof.XXXXXX")
trap 'rm -f "$log"' EXIT # real-zk-ensemble.sh adds its own after this one

status=0
run() { # SERVER [ARGS]: every workload on SERVER
  "$proof" --workload all --ops "$ops" --duration 60 --server "$@" 2>&1 | tee -a "$log" ||
    status=1
}

run embedded
run durable --shepherd-bin "$target_dir/debug/shepherd"
run ensemble
if [[ -f /usr/share/java/zookeeper.jar ]] && command -v java >/dev/null; then
  run zookeeper
  if [[ -n ${SHEPHERD_REAL_ZK:-} ]]; then
    run zookeeper --connect "$SHEPHERD_REAL_ZK" --no-nemesis
  fi
  # shellcheck source=.ci/real-zk-ensemble.sh
  . .ci/real-zk-ensemble.sh
  run zk-ensemble
else
  echo "proof: SKIPPED the real ZooKeeper runs: no /usr/share/java/zookeeper.jar or java" | tee -a "$log"
fi

runs=$(grep -c '^proof: .* verdict ' "$log" || true)
invalid=$(grep -c '^proof: .* verdict INVALID' "$log" || true)
echo "proof: $runs runs, $invalid invalid ($((SECONDS - started)) s)"
if ((invalid > 0)); then status=1; fi
exit "$status"
