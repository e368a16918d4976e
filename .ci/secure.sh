#!/usr/bin/env bash
# The secure interop matrix (docs/security-matrix.md): kazoo and the Java client over TLS and
# with SASL DIGEST-MD5, and bad input, on real ZooKeeper 3.8 and on `shepherd serve`, both
# configured with the same certificates, JAAS file and zoo.cfg keys (.ci/real-zk-secure.sh).
#
#   bash .ci/secure.sh SHEPHERD_BIN [--matrix FILE]
#
# Two phases, each with a fresh pair of servers: `main` (TLS with ssl.clientAuth=need, SASL
# offered) and `enforce` (enforce.auth.enabled=true, enforce.auth.schemes=sasl). Prints one
# line per case and server, then the matrix (also written to FILE with --matrix) and
# `secure: N passed, M failed`. Exits 1 if anything failed, after running everything. Needs
# kazoo, pure-sasl, Java and Debian's zookeeper package. About 20 s.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

usage() {
  echo "usage: $0 SHEPHERD_BIN [--matrix FILE]" >&2
  exit 2
}
(($# == 1 || $# == 3)) || usage
SHEPHERD_BIN=$1
matrix_file=''
if (($# == 3)); then
  [[ $2 == --matrix ]] || usage
  matrix_file=$3
fi
export SHEPHERD_BIN

work=$(mktemp -d "${TMPDIR:-/tmp}/secure.XXXXXX")
# start_shepherd, stop_shepherd, listen_addr.
# shellcheck source=.ci/shepherd-secure.sh
source .ci/shepherd-secure.sh
cleanup() {
  stop_shepherd
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=.ci/real-zk-secure.sh
REAL_ZK_NO_START=1 source .ci/real-zk-secure.sh
# SHEPHERD_SECURE_DIR, when set, holds certificates made beforehand (the JAAS files are rewritten).
export SHEPHERD_SECURE_DIR=${SHEPHERD_SECURE_DIR:-$work/files}
real_zk_secure_material "$SHEPHERD_SECURE_DIR" || exit 1

shepherd_secure_jaas_args

results=$work/results.jsonl
status=0
for phase in main enforce; do
  echo "--- phase $phase"
  if [[ $phase == enforce ]]; then export REAL_ZK_ENFORCE_AUTH=1; fi
  if ! real_zk_secure_start; then
    echo "secure: real ZooKeeper did not start" >&2
    exit 1
  fi
  start_shepherd "$phase"
  python3 tests/interop/secure/secure_suite.py --phase "$phase" --dir "$SHEPHERD_SECURE_DIR" \
    --results "$results" --zk-tls "$SHEPHERD_REAL_ZK_TLS" --zk-sasl "$SHEPHERD_REAL_ZK_SASL" \
    ${SHEPHERD_TLS:+--shepherd-tls "$SHEPHERD_TLS"} \
    ${SHEPHERD_SASL:+--shepherd-sasl "$SHEPHERD_SASL"} || status=1
  stop_shepherd
  real_zk_secure_stop
done
unset REAL_ZK_ENFORCE_AUTH

echo "--- matrix"
python3 tests/interop/secure/secure_suite.py --report "$results" \
  ${matrix_file:+--matrix "$matrix_file"} || status=1
exit "$status"
