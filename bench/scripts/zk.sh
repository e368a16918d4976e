#!/usr/bin/env bash
# Debian's ZooKeeper 3.8, standalone, configured for benchmarks (docs/bench/load.md,
# docs/bench/scale.md, docs/bench/recovery.md, docs/bench/snapshot-latency.md).
#
#   bench/scripts/zk.sh start DIR [FORCESYNC]   start it with dataDir DIR (created if
#                                               missing), forceSync FORCESYNC (yes:
#                                               ZooKeeper's default); prints "port PORT pid
#                                               PID" once it serves; a DIR started before
#                                               keeps its port
#   bench/scripts/zk.sh stop DIR                stop the one started with DIR (SIGTERM, then
#                                               KILL)
#
# Unlike .ci/real-zk.sh (a quick-starting test server: 256 MiB heap, serial GC, C1 only), the
# JVM here runs as Debian's package runs it (JAVA_OPTS="" in /etc/zookeeper/conf/environment):
# the JVM's default heap (a quarter of the RAM), G1 and the C2 compiler. maxClientCnxns=0 lets
# one address open every session of the benchmarks. The log is DIR/zookeeper.log.
# ZK_SNAPCOUNT overrides snapCount (ZooKeeper's default: 100000): the memory benchmark sets it
# above its million creates, since every snapshot of a growing tree is written in full and ten
# of them fill a disk with gigabytes.
# ZK_HEAP (e.g. 16g) sets the JVM's -Xmx instead of the default quarter of the RAM: ten million
# nodes need more (bench/scripts/tree.sh).
# ZK_INFO_LOGGERS (space-separated logger names) raises those loggers to INFO, e.g. the ones
# that log when a snapshot starts and ends (bench/scripts/snapshot-latency.sh).
# ZK_WRAP (a command and its arguments, space-separated) runs the JVM under it, e.g. strace's
# delay injection (bench/scripts/pressure.sh); the pid printed is then the JVM's, the wrapper's
# child, so that stopping and measuring it reach ZooKeeper itself.
set -euo pipefail

ZK_CP="/usr/share/java/zookeeper.jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar"

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

start() {
  local dir=$1 force=${2:-yes} port pid deadline
  mkdir -p "$dir/data"
  dir=$(cd "$dir" && pwd)
  if [[ -f $dir/port ]]; then port=$(cat "$dir/port"); else port=$(free_port); fi
  echo "$port" >"$dir/port"
  cat >"$dir/zoo.cfg" <<EOF
tickTime=2000
dataDir=$dir/data
clientPort=$port
clientPortAddress=127.0.0.1
maxClientCnxns=0
admin.enableServer=false
4lw.commands.whitelist=*
forceSync=$force
snapCount=${ZK_SNAPCOUNT:-100000}
EOF
  cat >"$dir/log4j.properties" <<'EOF'
log4j.rootLogger=WARN, FILE
log4j.appender.FILE=org.apache.log4j.FileAppender
log4j.appender.FILE.File=${zk.bench.log}
log4j.appender.FILE.layout=org.apache.log4j.PatternLayout
log4j.appender.FILE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
EOF
  for logger in ${ZK_INFO_LOGGERS:-}; do
    echo "log4j.logger.$logger=INFO" >>"$dir/log4j.properties"
  done
  # shellcheck disable=SC2086 # ZK_WRAP is a command line, split on purpose.
  ${ZK_WRAP:-} java ${ZK_HEAP:+-Xmx$ZK_HEAP} -Dzk.bench.log="$dir/zookeeper.log" -cp "$dir:$ZK_CP" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$dir/zoo.cfg" \
    >>"$dir/zookeeper.out" 2>&1 </dev/null &
  pid=$!
  deadline=$((SECONDS + 600))
  if [[ -n ${ZK_WRAP:-} ]]; then
    local wrapper=$pid
    pid=
    while [[ -z $pid ]] && ((SECONDS < deadline)); do
      kill -0 "$wrapper" 2>/dev/null || { echo "zk.sh: $ZK_WRAP exited; see $dir/zookeeper.out" >&2; exit 1; }
      pid=$(pgrep -P "$wrapper" | head -n 1 || true)
      [[ -n $pid ]] || sleep 0.05
    done
  fi
  echo "$pid" >"$dir/pid"
  while ((SECONDS < deadline)); do
    kill -0 "$pid" 2>/dev/null || { echo "zk.sh: ZooKeeper exited; see $dir/zookeeper.*" >&2; exit 1; }
    # `srvr` answers with Mode: once the database is loaded and sessions are accepted.
    if timeout 2 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && cat <&3' _ "$port" 2>/dev/null | grep -q '^Mode:'; then
      echo "port $port pid $pid"
      return 0
    fi
    sleep 0.05
  done
  echo "zk.sh: ZooKeeper did not serve within 600 s" >&2
  exit 1
}

stop() {
  local dir=$1 pid i
  pid=$(cat "$dir/pid")
  kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 600; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

case ${1:-} in
start) start "$2" "${3:-yes}" ;;
stop) stop "$2" ;;
*)
  echo "usage: $0 start DIR [FORCESYNC] | stop DIR" >&2
  exit 2
  ;;
esac
