#!/usr/bin/env bash
# Debian's ZooKeeper 3.8, standalone on a free loopback port, as the reference server.
#
#   . .ci/real-zk.sh               start it now; SHEPHERD_REAL_ZK=127.0.0.1:PORT is exported
#                                  and an EXIT trap stops it (REAL_ZK_NO_START=1: functions only)
#   bash .ci/real-zk.sh CMD ARGS   start it, run CMD, stop it, exit with CMD's status
#   bash .ci/real-zk.sh            start it and keep it up until interrupted
#
# Functions: real_zk_start, real_zk_stop; shared with .ci/real-zk-ensemble.sh: real_zk_4lw,
# real_zk_write_log4j, REAL_ZK_CP, REAL_ZK_JAVA_OPTS.  The log and dataDir live in $REAL_ZK_DIR.
# Hooks for a variant (.ci/real-zk-secure.sh): REAL_ZK_CFG_HOOK names a function called with
# the config file after the base keys are written, at each attempt, to append its own;
# REAL_ZK_EXTRA_JAVA_OPTS is an array of JVM options added to REAL_ZK_JAVA_OPTS.

REAL_ZK_JAR=${REAL_ZK_JAR:-/usr/share/java/zookeeper.jar}
REAL_ZK_CP="$REAL_ZK_JAR:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar"
REAL_ZK_START_TIMEOUT=${REAL_ZK_START_TIMEOUT:-30}

# The JVM options of every ZooKeeper started here (.ci/real-zk-ensemble.sh shares them).
# Serial GC and C1 only: a test server wants a quick start, not peak throughput.
# The super user is the differential oracle's cleanup credential (verify/src/oracle/run.rs).
REAL_ZK_JAVA_OPTS=(
  -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1
  -Dzookeeper.extendedTypesEnabled=true
  -Dznode.container.checkIntervalMs=1000
  -Dzookeeper.DigestAuthenticationProvider.superDigest=oracle:b29uxuNcniFv6vjwF9tdJVA4Q8c=
)

# Writes DIR/log4j.properties; with DIR first on the classpath, everything goes to stdout,
# which is the log.
real_zk_write_log4j() {
  cat >"$1/log4j.properties" <<'EOF'
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
EOF
}

_real_zk_free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# Prints N free loopback ports, distinct by construction: all N are bound at once before any
# is released, so no two can be the same (one at a time, the OS may hand out a port twice).
_real_zk_free_ports() {
  python3 -c '
import socket, sys
held = [socket.socket() for _ in range(int(sys.argv[1]))]
for s in held:
    s.bind(("127.0.0.1", 0))
print(" ".join(str(s.getsockname()[1]) for s in held))' "$1"
}

# Prints the reply to a four-letter word, or nothing. Bounded so a half-open port can't hang us.
real_zk_4lw() {
  # shellcheck disable=SC2016 # $1 and $2 belong to the inner bash
  timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf %s "$2" >&3 && cat <&3' _ "$1" "$2" 2>/dev/null || true
}

# One attempt on one port; the port may be taken between choosing and binding it.
_real_zk_try_start() {
  local port=$1 deadline
  cat >"$REAL_ZK_DIR/zoo.cfg" <<EOF
tickTime=2000
dataDir=$REAL_ZK_DIR/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=*
maxClientCnxns=0
EOF
  if [[ -n ${REAL_ZK_CFG_HOOK:-} ]]; then
    "$REAL_ZK_CFG_HOOK" "$REAL_ZK_DIR/zoo.cfg" || return 1
  fi
  real_zk_write_log4j "$REAL_ZK_DIR"
  java "${REAL_ZK_JAVA_OPTS[@]}" ${REAL_ZK_EXTRA_JAVA_OPTS[@]+"${REAL_ZK_EXTRA_JAVA_OPTS[@]}"} \
    -cp "$REAL_ZK_DIR:$REAL_ZK_CP" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$REAL_ZK_DIR/zoo.cfg" \
    >>"$REAL_ZK_DIR/zookeeper.log" 2>&1 </dev/null &
  REAL_ZK_PID=$!
  # `ruok` answers before sessions are accepted; `srvr` showing Mode: means it is serving.
  deadline=$((SECONDS + REAL_ZK_START_TIMEOUT))
  while ((SECONDS < deadline)); do
    kill -0 "$REAL_ZK_PID" 2>/dev/null || return 1
    if real_zk_4lw "$port" srvr | grep -q '^Mode:'; then
      REAL_ZK_PORT=$port
      return 0
    fi
    sleep 0.1
  done
  return 1
}

_real_zk_kill() {
  local pid=${REAL_ZK_PID:-} i
  [[ -n $pid ]] || return 0
  if kill "$pid" 2>/dev/null; then
    for ((i = 0; i < 50; i++)); do
      kill -0 "$pid" 2>/dev/null || break
      sleep 0.1
    done
    kill -9 "$pid" 2>/dev/null || true
  fi
  wait "$pid" 2>/dev/null || true
  REAL_ZK_PID=
}

# Runs real_zk_stop on exit, after any EXIT trap the caller already had: that one runs
# first so it still sees the exit status (and under set -e a failure in it would skip ours).
_real_zk_add_exit_trap() {
  local old
  old=$(trap -p EXIT) # "trap -- 'CMD' EXIT", quoted for re-reading
  if [[ -n $old ]]; then
    eval "old=(${old#trap -- })"
    [[ ${old[0]} == *real_zk_stop* ]] && return 0
    # shellcheck disable=SC2064 # expanded now on purpose: it is the old handler's text
    trap "${old[0]}
real_zk_stop" EXIT
  else
    trap real_zk_stop EXIT
  fi
}

real_zk_start() {
  local attempt port
  if [[ -n ${REAL_ZK_PID:-} ]] && kill -0 "$REAL_ZK_PID" 2>/dev/null; then
    return 0
  fi
  if [[ ! -f $REAL_ZK_JAR ]]; then
    echo "real-zk: $REAL_ZK_JAR is missing (apt-get install -y zookeeper zookeeper-bin)" >&2
    return 1
  fi
  REAL_ZK_DIR=$(mktemp -d "${TMPDIR:-/tmp}/real-zk.XXXXXX")
  mkdir -p "$REAL_ZK_DIR/data"
  _real_zk_add_exit_trap
  for attempt in 1 2 3; do
    port=$(_real_zk_free_port)
    echo "--- attempt $attempt, port $port" >>"$REAL_ZK_DIR/zookeeper.log"
    if _real_zk_try_start "$port"; then
      export SHEPHERD_REAL_ZK="127.0.0.1:$REAL_ZK_PORT"
      echo "real-zk: ZooKeeper up at $SHEPHERD_REAL_ZK (pid $REAL_ZK_PID, log $REAL_ZK_DIR/zookeeper.log)"
      return 0
    fi
    _real_zk_kill
    # Retry only for a port lost to a race; anything else will not get better.
    grep -q 'Address already in use' "$REAL_ZK_DIR/zookeeper.log" || break
  done
  {
    echo "=================================================================="
    echo "real-zk: FAILED to start ZooKeeper within ${REAL_ZK_START_TIMEOUT}s. Log tail:"
    tail -n 40 "$REAL_ZK_DIR/zookeeper.log"
    echo "=================================================================="
  } >&2
  return 1
}

real_zk_stop() {
  _real_zk_kill
  if [[ -n ${REAL_ZK_DIR:-} && -d $REAL_ZK_DIR ]]; then
    rm -rf "$REAL_ZK_DIR"
  fi
  REAL_ZK_DIR=
  unset SHEPHERD_REAL_ZK
}

if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
  # Sourced.
  if [[ ${REAL_ZK_NO_START:-0} != 1 ]] && ! real_zk_start; then
    [[ $- == *i* ]] && return 1 # don't close an interactive shell
    exit 1
  fi
else
  set -euo pipefail
  real_zk_start
  if (($# > 0)); then
    status=0
    "$@" || status=$?
    exit "$status"
  fi
  echo "real-zk: press Ctrl-C to stop"
  trap 'exit 130' INT TERM
  wait "$REAL_ZK_PID"
fi
