#!/usr/bin/env bash
# The `zookeeper-client` crate (feature `tls`) over TLS against real ZooKeeper 3.8 and
# `shepherd serve`, both secured with the same certificates and zoo.cfg keys
# (.ci/real-zk-secure.sh, .ci/shepherd-secure.sh): tests/interop/zkc-tls.
#
#   bash .ci/zkc-tls.sh SHEPHERD_BIN
#
# The crate's TLS pulls rustls on aws-lc-rs, kept out of the workspace build: the package has a
# workspace of its own and builds into ${CARGO_TARGET_DIR:-target}/zkc-tls. Prints the binary's
# lines for each server, then `zkc-tls: N passed, M failed` over both. Exits 1 if anything
# failed. Needs Java, Debian's zookeeper package and a C compiler (aws-lc-sys builds aws-lc with
# the `cc` crate; no cmake). The first build, aws-lc's C sources included, takes about 3 minutes
# on 2 cores; after that the script takes about 6 s.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

(($# == 1)) || {
  echo "usage: $0 SHEPHERD_BIN" >&2
  exit 2
}
SHEPHERD_BIN=$1
export SHEPHERD_BIN

target_dir=${CARGO_TARGET_DIR:-$PWD/target}/zkc-tls
manifest=tests/interop/zkc-tls/Cargo.toml
if ! cargo build --quiet --locked --manifest-path "$manifest" --target-dir "$target_dir"; then
  echo "zkc-tls: the package does not build" >&2
  echo "zkc-tls: 0 passed, 1 failed"
  exit 1
fi
zkc=$target_dir/debug/zkc-tls

work=$(mktemp -d "${TMPDIR:-/tmp}/zkc-tls.XXXXXX")
# shellcheck source=.ci/shepherd-secure.sh
source .ci/shepherd-secure.sh
cleanup() {
  stop_shepherd
  real_zk_secure_stop 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=.ci/real-zk-secure.sh
REAL_ZK_NO_START=1 source .ci/real-zk-secure.sh
export SHEPHERD_SECURE_DIR=${SHEPHERD_SECURE_DIR:-$work/files}
real_zk_secure_material "$SHEPHERD_SECURE_DIR" || exit 1
shepherd_secure_jaas_args

passed=0 failed=0
# Runs the binary against HOST:PORT with the server's NAME prefixed to its lines, and adds its
# counts to the totals (a run that prints no summary counts as one failure).
run_against() {
  local name=$1 server=$2 out summary
  out=$("$zkc" "$server" --certs "$SHEPHERD_SECURE_DIR" 2>&1)
  sed "s/^zkc-tls: /zkc-tls [$name]: /" <<<"$out"
  summary=$(sed -n 's/^zkc-tls: \([0-9]*\) passed, \([0-9]*\) failed$/\1 \2/p' <<<"$out")
  if [[ -n $summary ]]; then
    passed=$((passed + ${summary% *})) failed=$((failed + ${summary#* }))
  else
    failed=$((failed + 1))
  fi
}

if real_zk_secure_start >/dev/null; then
  run_against zookeeper "$SHEPHERD_REAL_ZK_TLS"
  real_zk_secure_stop
else
  echo "zkc-tls: real ZooKeeper did not start" >&2
  failed=$((failed + 1))
fi

if start_shepherd zkc-tls >/dev/null && [[ -n $SHEPHERD_TLS ]]; then
  run_against shepherd "$SHEPHERD_TLS"
else
  echo "zkc-tls: shepherd serve has no TLS port" >&2
  failed=$((failed + 1))
fi
stop_shepherd

echo "zkc-tls: $passed passed, $failed failed"
((failed == 0))
