#!/usr/bin/env bash
# Debian's ZooKeeper 3.8 as a three-member ensemble (three QuorumPeerMain JVMs) on free
# loopback ports: the reference for the failover tests (recipes/tests/failover/).
#
#   . .ci/real-zk-ensemble.sh              start it now; SHEPHERD_REAL_ENSEMBLE (the connect
#                                          string of all members) and SHEPHERD_REAL_ENSEMBLE_MEMBERS
#                                          (the members file) are exported, an EXIT trap stops it
#                                          (REAL_ZK_NO_START=1: functions only)
#   bash .ci/real-zk-ensemble.sh CMD ARGS  start it, run CMD, stop it, exit with CMD's status
#   bash .ci/real-zk-ensemble.sh           start it and keep it up until interrupted
#
# $REAL_ENSEMBLE_DIR holds, per member ID (1..3): ID/zoo.cfg, ID/data (with myid), ID/zookeeper.log
# and ID/start, a script that starts that member's JVM again in the background (a test that
# killed a member runs it) and records its pid. The members file, $REAL_ENSEMBLE_DIR/members,
# has one line per member, `ID CLIENT_PORT PID`, so a test can kill the JVM of a given member.
#
# tickTime is 500 ms, so sessions of 1 s (2 ticks) to 10 s (20 ticks) are granted: failover
# tests use short sessions and still see a killed leader replaced well within them.
#
# Functions: real_zk_ensemble_start, real_zk_ensemble_stop, real_zk_ensemble_leader (prints
# the leader's id).

_real_zk_ensemble_here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# The classpath, JVM options, log4j file and four-letter-word helper are real-zk.sh's.
_real_zk_ensemble_no_start=${REAL_ZK_NO_START-}
REAL_ZK_NO_START=1
# shellcheck source=.ci/real-zk.sh
. "$_real_zk_ensemble_here/real-zk.sh"
if [[ -n $_real_zk_ensemble_no_start ]]; then
  REAL_ZK_NO_START=$_real_zk_ensemble_no_start
else
  unset REAL_ZK_NO_START
fi

REAL_ENSEMBLE_SIZE=3
REAL_ENSEMBLE_START_TIMEOUT=${REAL_ENSEMBLE_START_TIMEOUT:-60}

# Writes every member's configuration and start script for one set of ports.
_real_zk_ensemble_configure() {
  local id servers=() ports=() all
  # Every member's client, quorum and election port, all distinct: a port given twice (once,
  # member 3's election port was its client port) passes the start check and then refuses
  # the clients pinned to that member.
  read -r -a all <<<"$(_real_zk_free_ports $((3 * REAL_ENSEMBLE_SIZE)))"
  for ((id = 1; id <= REAL_ENSEMBLE_SIZE; id++)); do
    ports[id]="${all[3 * id - 3]} ${all[3 * id - 2]} ${all[3 * id - 1]}"
  done
  for ((id = 1; id <= REAL_ENSEMBLE_SIZE; id++)); do
    read -r _ quorum election <<<"${ports[id]}"
    servers+=("server.$id=127.0.0.1:$quorum:$election")
  done
  : >"$REAL_ENSEMBLE_DIR/members"
  for ((id = 1; id <= REAL_ENSEMBLE_SIZE; id++)); do
    local dir=$REAL_ENSEMBLE_DIR/$id client
    read -r client _ <<<"${ports[id]}"
    rm -rf "$dir"
    mkdir -p "$dir/data"
    echo "$id" >"$dir/data/myid"
    real_zk_write_log4j "$dir"
    # initLimit/syncLimit in ticks: 5 s to join, 2.5 s of silence before a peer is dropped.
    {
      printf '%s\n' tickTime=500 initLimit=10 syncLimit=5 "dataDir=$dir/data" \
        "clientPort=$client" clientPortAddress=127.0.0.1 admin.enableServer=false \
        '4lw.commands.whitelist=*' maxClientCnxns=0
      printf '%s\n' "${servers[@]}"
    } >"$dir/zoo.cfg"
    # The start script: the JVM is detached (its parent exits), so nobody has to reap it;
    # its pid replaces the member's line in the members file. The election's connect timeout
    # is cut from 5 s so that a frozen (SIGSTOP) peer does not stall an election for long.
    {
      echo '#!/usr/bin/env bash'
      echo "cd $(printf %q "$dir") || exit 1"
      printf 'java'
      printf ' %q' "${REAL_ZK_JAVA_OPTS[@]}" -Dzookeeper.cnxTimeout=1000 \
        -cp "$dir:$REAL_ZK_CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$dir/zoo.cfg"
      echo ' >>zookeeper.log 2>&1 </dev/null &'
      echo 'pid=$!'
      echo "members=$(printf %q "$REAL_ENSEMBLE_DIR/members")"
      echo "awk -v id=$id -v pid=\"\$pid\" '\$1 == id { \$3 = pid } { print }' \"\$members\" >\"\$members.new\" && mv \"\$members.new\" \"\$members\""
      echo 'echo "$pid"'
    } >"$dir/start"
    chmod +x "$dir/start"
    echo "$id $client 0" >>"$REAL_ENSEMBLE_DIR/members"
  done
}

# Prints `ID CLIENT_PORT PID` for every member.
_real_zk_ensemble_members() {
  cat "$REAL_ENSEMBLE_DIR/members" 2>/dev/null
}

# Prints the leader's id, or nothing.
real_zk_ensemble_leader() {
  local id port pid
  while read -r id port pid; do
    if real_zk_4lw "$port" srvr | grep -q '^Mode: leader'; then
      echo "$id"
      return 0
    fi
  done < <(_real_zk_ensemble_members)
}

# One attempt: every member started, then every member serving (a Mode) and one of them leader.
_real_zk_ensemble_try_start() {
  local id port pid deadline ready leader
  _real_zk_ensemble_configure
  for ((id = 1; id <= REAL_ENSEMBLE_SIZE; id++)); do
    "$REAL_ENSEMBLE_DIR/$id/start" >/dev/null || return 1
  done
  deadline=$((SECONDS + REAL_ENSEMBLE_START_TIMEOUT))
  while ((SECONDS < deadline)); do
    ready=0 leader=0
    while read -r id port pid; do
      kill -0 "$pid" 2>/dev/null || return 1
      case $(real_zk_4lw "$port" srvr | grep '^Mode:') in
        'Mode: leader') ready=$((ready + 1)) leader=$((leader + 1)) ;;
        'Mode: follower') ready=$((ready + 1)) ;;
      esac
    done < <(_real_zk_ensemble_members)
    if ((ready == REAL_ENSEMBLE_SIZE && leader == 1)); then
      return 0
    fi
    sleep 0.1
  done
  return 1
}

# Stops every member: a frozen one is thawed first, so that it can act on SIGTERM.
_real_zk_ensemble_kill() {
  local id port pid i alive pids=()
  while read -r id port pid; do
    if [[ $pid != 0 ]]; then pids+=("$pid"); fi
  done < <(_real_zk_ensemble_members)
  ((${#pids[@]})) || return 0
  kill -CONT "${pids[@]}" 2>/dev/null || true
  kill "${pids[@]}" 2>/dev/null || true
  for ((i = 0; i < 50; i++)); do
    alive=0
    for pid in "${pids[@]}"; do
      if kill -0 "$pid" 2>/dev/null; then alive=1; fi
    done
    ((alive)) || break
    sleep 0.1
  done
  kill -9 "${pids[@]}" 2>/dev/null || true
}

# Runs real_zk_ensemble_stop on exit, after any EXIT trap the caller already had (as
# real-zk.sh does for its own).
_real_zk_ensemble_add_exit_trap() {
  local old
  old=$(trap -p EXIT)
  if [[ -n $old ]]; then
    eval "old=(${old#trap -- })"
    [[ ${old[0]} == *real_zk_ensemble_stop* ]] && return 0
    # shellcheck disable=SC2064 # expanded now on purpose: it is the old handler's text
    trap "${old[0]}
real_zk_ensemble_stop" EXIT
  else
    trap real_zk_ensemble_stop EXIT
  fi
}

real_zk_ensemble_start() {
  local attempt id port pid hosts=()
  if [[ -n ${REAL_ENSEMBLE_DIR:-} && -f $REAL_ENSEMBLE_DIR/members ]]; then
    return 0
  fi
  if [[ ! -f $REAL_ZK_JAR ]]; then
    echo "real-zk-ensemble: $REAL_ZK_JAR is missing (apt-get install -y zookeeper zookeeper-bin)" >&2
    return 1
  fi
  REAL_ENSEMBLE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/real-zk-ensemble.XXXXXX")
  export REAL_ENSEMBLE_DIR
  _real_zk_ensemble_add_exit_trap
  local started=$SECONDS
  for attempt in 1 2 3; do
    if _real_zk_ensemble_try_start; then
      while read -r id port pid; do
        hosts+=("127.0.0.1:$port")
      done < <(_real_zk_ensemble_members)
      SHEPHERD_REAL_ENSEMBLE=$(IFS=,; echo "${hosts[*]}")
      export SHEPHERD_REAL_ENSEMBLE
      export SHEPHERD_REAL_ENSEMBLE_MEMBERS=$REAL_ENSEMBLE_DIR/members
      echo "real-zk-ensemble: up at $SHEPHERD_REAL_ENSEMBLE in $((SECONDS - started)) s," \
        "leader $(real_zk_ensemble_leader) (members $SHEPHERD_REAL_ENSEMBLE_MEMBERS)"
      return 0
    fi
    _real_zk_ensemble_kill
    # Retry only for a port lost to a race; anything else will not get better.
    cat "$REAL_ENSEMBLE_DIR"/*/zookeeper.log 2>/dev/null | grep -q 'Address already in use' || break
    echo "real-zk-ensemble: a port was taken meanwhile; attempt $((attempt + 1))" >&2
  done
  {
    echo "=================================================================="
    echo "real-zk-ensemble: FAILED to start within ${REAL_ENSEMBLE_START_TIMEOUT}s. Log tails:"
    for ((id = 1; id <= REAL_ENSEMBLE_SIZE; id++)); do
      echo "--- member $id"
      tail -n 20 "$REAL_ENSEMBLE_DIR/$id/zookeeper.log" 2>/dev/null
    done
    echo "=================================================================="
  } >&2
  return 1
}

real_zk_ensemble_stop() {
  if [[ -n ${REAL_ENSEMBLE_DIR:-} && -d $REAL_ENSEMBLE_DIR ]]; then
    _real_zk_ensemble_kill
    rm -rf "$REAL_ENSEMBLE_DIR"
  fi
  REAL_ENSEMBLE_DIR=
  unset SHEPHERD_REAL_ENSEMBLE SHEPHERD_REAL_ENSEMBLE_MEMBERS
}

if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
  # Sourced.
  if [[ ${REAL_ZK_NO_START:-0} != 1 ]] && ! real_zk_ensemble_start; then
    [[ $- == *i* ]] && return 1 # don't close an interactive shell
    exit 1
  fi
else
  set -euo pipefail
  real_zk_ensemble_start
  if (($# > 0)); then
    status=0
    "$@" || status=$?
    exit "$status"
  fi
  echo "real-zk-ensemble: press Ctrl-C to stop"
  trap 'exit 130' INT TERM
  while :; do sleep 3600; done
fi
