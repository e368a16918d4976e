#!/usr/bin/env bash
# Data directories move between Shepherd and Debian's ZooKeeper 3.8, both ways (docs/compatibility.md,
# "Data directories").
#
#   .ci/datadir-compat.sh [SHEPHERD_BINARY]     default: cargo's target dir /debug/shepherd
#
# (a) `shepherd serve --data-dir A` makes a few writes, is stopped, and ZooKeeper serves a copy.
#     Then, on fresh dirs, it runs the workload (tests/interop/datadir.py), is dumped and
#     stopped: once with SIGTERM, once with SIGKILL. ZooKeeper started on a copy must serve the
#     identical tree, and Shepherd restarted on the dir itself too (resuming its session).
# (b) ZooKeeper writes C with the same workload and is stopped; Shepherd on a copy C2 serves the
#     identical tree, writes on, is stopped, and ZooKeeper on C2 serves what Shepherd served.
# (c) .ci/zk-tools-check.sh: ZooKeeper's SnapshotFormatter and TxnLogToolkit read every file
#     Shepherd wrote without an error, CRC or digest mismatch.
# (d) ZooKeeper's logs from loading Shepherd's files show no digest mismatch, corruption or error.
# Every wait is bounded; any difference fails the script with what differed.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

SNAP_COUNT=40 # small, so that the workload crosses several snapshots on both servers
START_TIMEOUT=30
# The super user is the dumper's credential (tests/interop/datadir.py SUPER); the long maximum
# session timeout lets the workload's kept session outlive a stop, a copy and a start elsewhere.
COMMON_CFG="tickTime=2000
maxSessionTimeout=120000
snapCount=$SNAP_COUNT
4lw.commands.whitelist=*
maxClientCnxns=0"
SUPER_DIGEST=oracle:b29uxuNcniFv6vjwF9tdJVA4Q8c=

if [[ -n ${1:-} ]]; then
  BIN=$1
else
  BIN=$(cargo metadata --no-deps --format-version 1 |
    python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')/debug/shepherd
fi
[[ -x $BIN ]] || { echo "datadir-compat: $BIN is not built (cargo build --bin shepherd)" >&2; exit 2; }

# REAL_ZK_CP, _real_zk_free_port and real_zk_4lw; no server of its own.
# shellcheck source=.ci/real-zk.sh
REAL_ZK_NO_START=1 source .ci/real-zk.sh

WORK=$(mktemp -d "${TMPDIR:-/tmp}/datadir-compat.XXXXXX")
PIDS=() LOGS=() STARTED=$SECONDS
on_exit() {
  local rc=$? pid log
  for pid in "${PIDS[@]}"; do kill -9 "$pid" 2>/dev/null || true; done
  if ((rc != 0)); then
    for log in "${LOGS[@]}"; do
      [[ -f $log ]] || continue
      echo "--- tail of $log" >&2
      tail -n 20 "$log" >&2 || true
    done
    echo "######## datadir-compat FAILED (exit $rc) ########" >&2
  fi
  rm -rf "$WORK"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

say() { printf 'datadir-compat: %s\n' "$*"; }
die() { printf 'datadir-compat: FAILED: %s\n' "$*" >&2; exit 1; }
py() { timeout 60 python3 tests/interop/datadir.py "$@"; }

# zk_start DATA_DIR NAME: ZooKeeper 3.8 on DATA_DIR, as .ci/real-zk.sh runs it; sets PID and ADDR.
zk_start() {
  local dir=$1 name=$2 port deadline
  local conf=$WORK/$name.conf log=$WORK/$name.log
  mkdir -p "$conf"
  port=$(_real_zk_free_port)
  printf '%s\ndataDir=%s\nclientPort=%s\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n' \
    "$COMMON_CFG" "$dir" "$port" >"$conf/zoo.cfg"
  printf '%s\n' 'log4j.rootLogger=INFO, CONSOLE' 'log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender' \
    'log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout' \
    'log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n' \
    >"$conf/log4j.properties"
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
    -Dzookeeper.extendedTypesEnabled=true \
    -Dzookeeper.DigestAuthenticationProvider.superDigest=$SUPER_DIGEST \
    -cp "$conf:$REAL_ZK_CP" org.apache.zookeeper.server.ZooKeeperServerMain "$conf/zoo.cfg" \
    >"$log" 2>&1 </dev/null &
  PID=$! ADDR=127.0.0.1:$port
  PIDS+=("$PID") LOGS+=("$log")
  deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    kill -0 "$PID" 2>/dev/null || die "ZooKeeper on $dir exited early (log $log)"
    real_zk_4lw "$port" srvr | grep -q '^Mode:' && { say "$name: ZooKeeper on $dir at $ADDR"; return 0; }
    sleep 0.1
  done
  die "ZooKeeper on $dir did not serve within ${START_TIMEOUT}s"
}

# shepherd_start DATA_DIR NAME: `shepherd serve --data-dir DATA_DIR`; sets PID and ADDR.
shepherd_start() {
  local dir=$1 name=$2 deadline
  local cfg=$WORK/$name.cfg log=$WORK/$name.log
  printf '%s\nextendedTypesEnabled=true\nsuperDigest=%s\n' "$COMMON_CFG" "$SUPER_DIGEST" >"$cfg"
  # Created here: the background job's own redirection may not have run before the first read.
  : >"$log"
  "$BIN" serve --bind 127.0.0.1 --port 0 --data-dir "$dir" --config "$cfg" >"$log" 2>&1 </dev/null &
  PID=$!
  PIDS+=("$PID") LOGS+=("$log")
  deadline=$((SECONDS + START_TIMEOUT))
  while ((SECONDS < deadline)); do
    ADDR=$(sed -n 's/.*listening on \([0-9.]*:[0-9][0-9]*\).*/\1/p' "$log" | head -n 1) ||
      die "cannot read $log"
    [[ -n $ADDR ]] && { say "$name: shepherd on $dir at $ADDR"; return 0; }
    kill -0 "$PID" 2>/dev/null || die "shepherd serve on $dir exited early (log $log)"
    sleep 0.1
  done
  die "shepherd serve on $dir printed no 'listening on' line within ${START_TIMEOUT}s"
}

# stop PID SIGNAL: sends the signal and waits for the exit, at most 10 s.
stop() {
  local pid=$1 sig=$2 i
  kill "-$sig" "$pid" 2>/dev/null || die "process $pid was already gone before SIG$sig"
  for ((i = 0; i < 100; i++)); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.1
  done
  die "process $pid still running 10s after SIG$sig"
}

# ZooKeeper's complaints about files it loaded: digest mismatches (DataTree.compareDigest,
# compareSnapshotDigests, FileTxnSnapLog.restore), unreadable or invalid snapshots (FileSnap),
# log corruption (FileTxnLog: CRC, EOF), and any ERROR but one: our `srvr` probe reaching
# ZooKeeper before it serves is logged as "Error closing a command socket".
zk_log_check() {
  local log=$1 bad
  bad=$(grep -E -i 'digest.*(mismatch|not matching|not covering|does not exist)|problem reading snap|invalid snapshot|crc|checksum|corrupt|EOFException| ERROR ' "$log" |
    grep -v 'Error closing a command socket' || true)
  [[ -z $bad ]] || die "ZooKeeper's log $log complains:"$'\n'"$bad"
  say "ZooKeeper's log $(basename "$log"): no digest mismatch, corruption or error"
}

# While ZooKeeper serves: its digest_mismatches_count (ServerMetrics), which loading a snapshot
# and replaying logged digests count, must be 0.
zk_digest_check() {
  local n
  n=$(real_zk_4lw "${ADDR##*:}" mntr | sed -n 's/^zk_digest_mismatches_count[[:space:]]*//p')
  [[ -n $n ]] || die "ZooKeeper at $ADDR reported no zk_digest_mismatches_count"
  ((n == 0)) || die "ZooKeeper at $ADDR counted $n digest mismatches loading the directory"
}

# keeper WORKLOAD_OUTPUT: the kept session's "ID PASSWORD_HEX".
keeper() { sed -n 's/^workload: keeper session //p' "$1"; }

# expect_resume "ID PASSWORD_HEX" WANT WHAT: resuming the session on $ADDR is WANT (resumed or
# refused). A resumed session is closed by the attempt, after the dumps that needed it.
expect_resume() {
  local out
  # shellcheck disable=SC2086 # ID and PASSWORD are two words on purpose
  out=$(py resume "$ADDR" $1 2>/dev/null) || die "$3: resume failed to run"
  say "$3: $out"
  [[ $out == "resume: $2 "* ]] || die "$3: want the session $2"
}

same_tree() { # DUMP_A DUMP_B WHAT
  py compare "$1" "$2" || die "$3: the trees differ"
}

# ---------------------------------------------------------------- (a) Shepherd -> ZooKeeper

# A few writes, stopped before any snapCount snapshot: ZooKeeper refuses logs with no snapshot
# at or before them (FileTxnSnapLog.restore), so a fresh directory must start with one.
f=$WORK/few
shepherd_start "$f" shepherd-few
py few "$ADDR"
py dump "$ADDR" "$WORK/few.jsonl"
stop "$PID" TERM
cp -a "$f" "$f-zk"
zk_start "$f-zk" zk-few
py dump "$ADDR" "$WORK/few-zk.jsonl"
stop "$PID" TERM
same_tree "$WORK/few.jsonl" "$WORK/few-zk.jsonl" "(a) ZooKeeper on Shepherd's dir before its first snapCount snapshot"
zk_log_check "$WORK/zk-few.log"

SHEPHERD_DIRS=("$f")
for sig in TERM KILL; do
  a=$WORK/a-$sig b=$WORK/b-$sig
  shepherd_start "$a" "shepherd-a-$sig"
  py workload "$ADDR" "$a" "$SNAP_COUNT" | tee "$WORK/a-$sig.out"
  py dump "$ADDR" "$WORK/a-$sig.jsonl"
  stop "$PID" "$sig"
  say "(a) shepherd stopped with SIG$sig"
  ls "$a/version-2"
  cp -a "$a" "$b"

  zk_start "$b" "zk-b-$sig"
  py dump "$ADDR" "$WORK/b-$sig.jsonl"
  zk_digest_check
  # ZooKeeper derives passwords from the session id alone, Shepherd with its secret.
  expect_resume "$(keeper "$WORK/a-$sig.out")" refused "(a) Shepherd's session on ZooKeeper"
  stop "$PID" TERM
  same_tree "$WORK/a-$sig.jsonl" "$WORK/b-$sig.jsonl" "(a) ZooKeeper on Shepherd's dir (SIG$sig)"
  zk_log_check "$WORK/zk-b-$sig.log"

  shepherd_start "$a" "shepherd-a-$sig-again"
  py dump "$ADDR" "$WORK/a-$sig-again.jsonl"
  expect_resume "$(keeper "$WORK/a-$sig.out")" resumed "(a) Shepherd's session after a restart (SIG$sig)"
  stop "$PID" TERM
  same_tree "$WORK/a-$sig.jsonl" "$WORK/a-$sig-again.jsonl" "(a) Shepherd restarted on its own dir (SIG$sig)"
  SHEPHERD_DIRS+=("$a")
done

# ---------------------------------------------------------------- (b) ZooKeeper -> Shepherd

c=$WORK/c c2=$WORK/c2
zk_start "$c" zk-c
py workload "$ADDR" "$c" "$SNAP_COUNT" | tee "$WORK/c.out"
py dump "$ADDR" "$WORK/c.jsonl"
stop "$PID" TERM
cp -a "$c" "$c2"

shepherd_start "$c2" shepherd-c2
py dump "$ADDR" "$WORK/c2.jsonl"
same_tree "$WORK/c.jsonl" "$WORK/c2.jsonl" "(b) Shepherd on ZooKeeper's dir"
expect_resume "$(keeper "$WORK/c.out")" refused "(b) ZooKeeper's session on Shepherd"
# Shepherd writes on in ZooKeeper's directory, past snapshots of its own, and hands it back.
py workload "$ADDR" "$c2" "$SNAP_COUNT" /dd-shepherd
py dump "$ADDR" "$WORK/c2-more.jsonl"
stop "$PID" TERM
zk_start "$c2" zk-c2
py dump "$ADDR" "$WORK/c2-back.jsonl"
zk_digest_check
stop "$PID" TERM
same_tree "$WORK/c2-more.jsonl" "$WORK/c2-back.jsonl" "(b) ZooKeeper on its dir after Shepherd wrote on"
zk_log_check "$WORK/zk-c2.log"

# ---------------------------------------------------------------- (c) ZooKeeper's tools

# Each file costs a JVM start, so only what Shepherd wrote is checked: whole directories it
# created, and in C2 the files that are not ZooKeeper's from C. ZooKeeper loaded every one of
# these directories above, so the tools check reads files only (--no-load).
mkdir -p "$WORK/c2-shepherd/version-2"
for file in "$c2"/version-2/*; do
  cmp -s "$file" "$c/version-2/$(basename "$file")" || ln "$file" "$WORK/c2-shepherd/version-2/"
done
SHEPHERD_DIRS+=("$WORK/c2-shepherd")
for dir in "${SHEPHERD_DIRS[@]}"; do
  bash .ci/zk-tools-check.sh "$dir" --no-load 2>&1 | grep -v 'ignored null byte' ||
    die "(c) ZooKeeper's tools reject files in $dir"
done

say "passed in $((SECONDS - STARTED))s: (a) SIGTERM and SIGKILL, (b) both ways, (c) ZooKeeper's tools, (d) ZooKeeper's logs"
