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
shepherd_pid=''
stop_shepherd() {
  if [[ -n $shepherd_pid ]]; then
    kill "$shepherd_pid" 2>/dev/null
    wait "$shepherd_pid" 2>/dev/null
    shepherd_pid=''
  fi
}
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

# The JAAS flag, if this build of `shepherd serve` has it: without it the SASL cases fail on
# Shepherd, and the TLS cases still run.
jaas_args=()
if "$SHEPHERD_BIN" serve --help 2>/dev/null | grep -q -- '--jaas'; then
  jaas_args=(--jaas "$SHEPHERD_SECURE_DIR/jaas.conf")
else
  echo "secure: shepherd serve has no --jaas flag; SASL is not configured on Shepherd" >&2
fi

# Starts `shepherd serve` with the keys real ZooKeeper has (plus its ports) and sets
# SHEPHERD_SASL (its plain port) and SHEPHERD_TLS (empty if its TLS port does not come up);
# returns 1 (both empty) if it does not come up at all.
start_shepherd() {
  local phase=$1 port deadline log=$work/shepherd-$1.log
  SHEPHERD_TLS='' SHEPHERD_SASL=''
  port=$(_real_zk_free_port)
  {
    echo "secureClientPort=$port"
    echo "secureClientPortAddress=127.0.0.1"
    real_zk_secure_keys "$SHEPHERD_SECURE_DIR"
  } >"$work/shepherd-$phase.cfg"
  "$SHEPHERD_BIN" serve --bind 127.0.0.1 --port 0 --config "$work/shepherd-$phase.cfg" \
    ${jaas_args[@]+"${jaas_args[@]}"} >"$work/shepherd-$phase.out" 2>"$log" </dev/null &
  shepherd_pid=$!
  deadline=$((SECONDS + 30))
  until SHEPHERD_SASL=$(listen_addr "$work/shepherd-$phase.out") && [[ -n $SHEPHERD_SASL ]]; do
    if ! kill -0 "$shepherd_pid" 2>/dev/null || ((SECONDS >= deadline)); then
      echo "secure: shepherd serve ($phase) is not listening; its log:" >&2
      tail -n 20 "$log" >&2
      stop_shepherd
      return 1
    fi
    sleep 0.1
  done
  # The plain port is announced once every listener is bound; a short grace for the TLS one.
  deadline=$((SECONDS + 5))
  until _real_zk_secure_accepts "$port"; do
    if ((SECONDS >= deadline)); then
      echo "secure: shepherd serve ($phase) at $SHEPHERD_SASL has no TLS port; its log:" >&2
      grep -i -e tls -e ssl -e secure "$log" | tail -n 10 >&2
      return 0
    fi
    sleep 0.1
  done
  SHEPHERD_TLS=127.0.0.1:$port
  echo "secure: shepherd serve ($phase) at $SHEPHERD_SASL, TLS at $SHEPHERD_TLS"
}

listen_addr() { sed -n 's/^shepherd listening on \([0-9.]*:[0-9]*\)$/\1/p' "$1" | head -n 1; }

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
