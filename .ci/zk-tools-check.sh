#!/usr/bin/env bash
# Checks a data directory with ZooKeeper 3.8's own tools (Debian's zookeeper.jar):
#
#   bash .ci/zk-tools-check.sh DIR [--no-load]
#
# DIR is a data directory (holding version-2/) or a version-2 directory itself.
#   1. TxnLogToolkit dumps every log.* file: a CRC error, a partial last entry, or an
#      exception fails the check.
#   2. SnapshotFormatter dumps every snapshot.* file: an exception fails the check.
#   3. Unless --no-load: a standalone ZooKeeper starts on a copy of the directory. It loads the
#      newest snapshot (checking both seals and the snapshot digest) and replays the logs
#      (comparing every transaction's digest with its own tree's); any "CRC corruption",
#      "problem reading snap file", "Digests are not matching", "digest mismatch" or a failure
#      to serve fails the check.
# Exit status 0 only if everything passed; every failure is printed.
set -uo pipefail

dir=${1:?usage: zk-tools-check.sh DIR [--no-load]}
load=1
[[ ${2:-} == --no-load ]] && load=0
[[ -d $dir/version-2 ]] && dir=$dir/version-2
if [[ ! -d $dir ]]; then
  echo "zk-tools-check: $dir is not a directory" >&2
  exit 2
fi
jar=${REAL_ZK_JAR:-/usr/share/java/zookeeper.jar}
if [[ ! -f $jar ]]; then
  echo "zk-tools-check: $jar is missing (apt-get install -y zookeeper)" >&2
  exit 2
fi
cp="$jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-nop.jar:/usr/share/java/commons-cli.jar"
java_opts=(-Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1)
failures=0
fail() {
  echo "zk-tools-check: FAIL: $*" >&2
  failures=$((failures + 1))
}

shopt -s nullglob
logs=("$dir"/log.*)
snaps=("$dir"/snapshot.*)
echo "zk-tools-check: $dir: ${#logs[@]} log file(s), ${#snaps[@]} snapshot(s)"

for f in "${logs[@]}"; do
  # Node data is printed raw: drop NUL bytes rather than have bash warn about each.
  out=$(java "${java_opts[@]}" -cp "$cp" org.apache.zookeeper.server.persistence.TxnLogToolkit "$f" 2>&1 | tr -d '\0')
  status=$? # pipefail: the tool's status
  summary=$(grep -E '^EOF reached after [0-9]+ txns' <<<"$out")
  if ((status != 0)); then
    fail "TxnLogToolkit $f exited $status: $(tail -n 3 <<<"$out")"
  elif grep -qE 'CRC ERROR|Got exception|partial|Exception' <<<"$out"; then
    fail "TxnLogToolkit $f: $(grep -m 3 -E 'CRC ERROR|Got exception|partial|Exception' <<<"$out")"
  elif [[ -z $summary ]]; then
    fail "TxnLogToolkit $f: no end-of-log line"
  else
    echo "  $(basename "$f"): $summary"
  fi
done

for f in "${snaps[@]}"; do
  out=$(java "${java_opts[@]}" -cp "$cp" org.apache.zookeeper.server.SnapshotFormatter "$f" 2>&1 | tr -d '\0')
  status=$? # pipefail: the tool's status
  if ((status != 0)) || grep -qE 'Exception|doesn.t exist' <<<"$out"; then
    fail "SnapshotFormatter $f exited $status: $(grep -m 3 -E 'Exception|exist' <<<"$out")"
  else
    echo "  $(basename "$f"): $(grep -m 1 -E '^ZNode Details' <<<"$out"), $(grep -m 1 -E '^Last zxid' <<<"$out")"
  fi
done

if ((load)) && ((${#logs[@]} + ${#snaps[@]} > 0)); then
  work=$(mktemp -d "${TMPDIR:-/tmp}/zk-tools-check.XXXXXX")
  pid=
  cleanup() {
    [[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$work"
  }
  trap cleanup EXIT
  mkdir -p "$work/data/version-2"
  cp -p "$dir"/log.* "$dir"/snapshot.* "$work/data/version-2/" 2>/dev/null
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  cat >"$work/zoo.cfg" <<CFG
tickTime=2000
dataDir=$work/data
clientPort=$port
clientPortAddress=127.0.0.1
admin.enableServer=false
4lw.commands.whitelist=
CFG
  cat >"$work/log4j.properties" <<'LOG'
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
LOG
  logcp="$jar:/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar"
  # TTL nodes in the snapshot need the extended types to load as they were written.
  java "${java_opts[@]}" -Dzookeeper.extendedTypesEnabled=true -cp "$work:$logcp" \
    org.apache.zookeeper.server.ZooKeeperServerMain "$work/zoo.cfg" >"$work/zk.log" 2>&1 </dev/null &
  pid=$!
  # The request pipeline starts only once the database is loaded: that line means it loaded.
  served=0
  for _ in $(seq 600); do
    kill -0 "$pid" 2>/dev/null || break
    if grep -q 'PrepRequestProcessor (sid:0) started' "$work/zk.log"; then
      served=1
      break
    fi
    sleep 0.1
  done
  pattern='CRC corruption|problem reading snap file|Digests are not matching|[Dd]igest mismatch|Not able to find valid snapshots|Unable to load database|Unreasonable length|Unexpected exception|Failed to process transaction'
  if ((!served)); then
    fail "ZooKeeper did not start on a copy of $dir: $(grep -m 5 -E "$pattern|Exception" "$work/zk.log")"
  elif grep -qE "$pattern" "$work/zk.log"; then
    fail "ZooKeeper loaded $dir with complaints: $(grep -m 5 -E "$pattern" "$work/zk.log")"
  else
    echo "  ZooKeeper loaded it: $(grep -m 1 -oE 'Snapshot loaded in [0-9]+ ms, highest zxid is 0x[0-9a-f]+, digest is [-0-9]+' "$work/zk.log")"
    echo "  $(grep -m 1 -oE '[0-9]+ txns loaded in [0-9]+ ms' "$work/zk.log")"
  fi
fi

if ((failures)); then
  echo "zk-tools-check: $failures failure(s)" >&2
  exit 1
fi
echo "zk-tools-check: OK"
