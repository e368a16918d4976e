#!/usr/bin/env bash
# The failover tests (recipes/tests/failover/) against a real three-member ZooKeeper 3.8
# ensemble: starts one with .ci/real-zk-ensemble.sh, runs the tests named zookeeper_* (they
# take turns on the one ensemble; the embedded-ensemble ones, shepherd_*, run in the workspace's
# `cargo test`), prints `failover: N passed, M failed (S s)`.
#
#   bash .ci/failover.sh            from the workspace root; exits non-zero if a test fails
#
# Environment: CARGO (default cargo), CARGO_TARGET_DIR as usual.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=$SECONDS
# Build first, so that the ensemble is up only while tests run.
"${CARGO:-cargo}" test -q --workspace --test failover --no-run
log=$(mktemp "${TMPDIR:-/tmp}/failover.XXXXXX")
trap 'rm -f "$log"' EXIT # real-zk-ensemble.sh adds its own after this one
# shellcheck source=.ci/real-zk-ensemble.sh
. .ci/real-zk-ensemble.sh
status=0
"${CARGO:-cargo}" test --workspace --test failover -- --ignored zookeeper_ 2>&1 | tee "$log" ||
  status=$?
if ((status != 0)); then
  for member in "$REAL_ENSEMBLE_DIR"/[0-9]*; do
    echo "--- real ensemble member ${member##*/}: the log's tail"
    tail -n 15 "$member/zookeeper.log"
  done
fi
passed=$(sed -n 's/^test result: .* \([0-9][0-9]*\) passed.*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/^test result: .* \([0-9][0-9]*\) failed.*/\1/p' "$log" | tail -n 1)
echo "failover: ${passed:-0} passed, ${failed:-0} failed ($((SECONDS - started)) s)"
exit "$status"
