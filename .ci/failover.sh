#!/usr/bin/env bash
# The failover tests (recipes/tests/failover.rs) against a real three-member ZooKeeper 3.8
# ensemble: starts one with .ci/real-zk-ensemble.sh, runs the tests (the embedded-ensemble
# ones run too; the real ones take turns on the one ensemble), prints `failover: N passed`.
#
#   bash .ci/failover.sh            from the workspace root; exits non-zero if a test fails
#
# Environment: CARGO (default cargo), CARGO_TARGET_DIR as usual.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

started=$SECONDS
# Build first, so that the ensemble is up only while tests run.
"${CARGO:-cargo}" test -q -p shepherd-recipes --test failover --no-run
log=$(mktemp "${TMPDIR:-/tmp}/failover.XXXXXX")
trap 'rm -f "$log"' EXIT # real-zk-ensemble.sh adds its own after this one
# shellcheck source=.ci/real-zk-ensemble.sh
. .ci/real-zk-ensemble.sh
status=0
"${CARGO:-cargo}" test -p shepherd-recipes --test failover -- --nocapture 2>&1 | tee "$log" ||
  status=$?
passed=$(sed -n 's/^test result: .* \([0-9][0-9]*\) passed.*/\1/p' "$log" | tail -n 1)
failed=$(sed -n 's/^test result: .* \([0-9][0-9]*\) failed.*/\1/p' "$log" | tail -n 1)
if grep -q 'SHEPHERD_REAL_ENSEMBLE_MEMBERS is not set' "$log"; then
  echo "failover: the real ensemble was not seen by the tests" >&2
  status=1
fi
echo "failover: ${passed:-0} passed, ${failed:-0} failed ($((SECONDS - started)) s)"
exit "$status"
