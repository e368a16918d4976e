#!/usr/bin/env bash
# Functions only (source it): `shepherd serve` configured as .ci/real-zk-secure.sh configures
# real ZooKeeper (the same certificates, JAAS file and zoo.cfg keys), for .ci/secure.sh and
# .ci/zkc-tls.sh. Source .ci/real-zk-secure.sh (REAL_ZK_NO_START=1) first.
#
# Reads: SHEPHERD_BIN, SHEPHERD_SECURE_DIR (made by real_zk_secure_material) and `work` (a
# scratch directory for the server's config, output and log).
#   shepherd_secure_jaas_args  sets jaas_args to `--jaas FILE` when the binary has the flag
#   start_shepherd PHASE       sets shepherd_pid, SHEPHERD_SASL (plain port), SHEPHERD_TLS
#   stop_shepherd

shepherd_pid=''

# The JAAS flag, if this build of `shepherd serve` has it: without it the SASL cases fail on
# Shepherd, and the TLS cases still run.
shepherd_secure_jaas_args() {
  jaas_args=()
  if "$SHEPHERD_BIN" serve --help 2>/dev/null | grep -q -- '--jaas'; then
    jaas_args=(--jaas "$SHEPHERD_SECURE_DIR/jaas.conf")
  else
    echo "secure: shepherd serve has no --jaas flag; SASL is not configured on Shepherd" >&2
  fi
}

stop_shepherd() {
  if [[ -n $shepherd_pid ]]; then
    kill "$shepherd_pid" 2>/dev/null
    wait "$shepherd_pid" 2>/dev/null
    shepherd_pid=''
  fi
}

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
