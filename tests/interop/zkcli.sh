#!/usr/bin/env bash
# Drives Debian's zkCli.sh (the Java client shipped with ZooKeeper 3.8) against any
# ZooKeeper-compatible server and greps what it prints.
#
#   tests/interop/zkcli.sh HOST:PORT
#
# Each JVM start costs about half a second, so commands are piped to one zkCli per phase.
# In that mode zkCli does not echo commands, so each expected line names a unique path or
# value and can only come from the command that produced it.
set -uo pipefail

server=${1:?usage: zkcli.sh HOST:PORT}
ZKCLI=${ZKCLI:-/usr/share/zookeeper/bin/zkCli.sh}
[[ -x $ZKCLI ]] || { echo "zkcli: $ZKCLI not found (apt-get install -y zookeeper)" >&2; exit 2; }

R=/zkcli-$$-$RANDOM$RANDOM # unique root, so runs never collide
V1=first-$RANDOM V2=second-$RANDOM
passed=0 failed=0 out='' failures='' run=0 dumped=0

# One zkCli session fed from stdin (or one command as arguments). SLF4J's complaints
# about a missing logging binding are noise; the status is zkCli's own.
zkcli() {
  local status=0
  run=$((run + 1))
  out=$(timeout 60 "$ZKCLI" -server "$server" "$@" 2>&1) || status=$?
  out=$(grep -v '^SLF4J:' <<<"$out")
  return "$status"
}

pass() { passed=$((passed + 1)); echo "ok   $1"; }
fail() {
  failed=$((failed + 1))
  echo "FAIL $1"
  if ((dumped != run)); then # each zkCli run's output once, however many checks it fails
    failures+=$'\n'"--- zkCli run $run, first failing: $1"$'\n'"$out"
    dumped=$run
  fi
}
check() { # check NAME grep-args...: passes when the last output matches
  local name=$1
  shift
  if grep -q "$@" <<<"$out"; then pass "$name"; else fail "$name (expected grep $*)"; fi
}

# Phase 1: create, read, update, errors, ephemeral and sequential nodes in one session.
# It must end with quit: at end of input zkCli exits without closing its session, which
# would keep the ephemerals alive until the session times out.
zkcli <<EOF
create $R root
create $R/child $V1
get $R/child
set $R/child $V2
get $R/child
stat $R/child
create $R/nodata
get $R/nodata
create $R/child again
create $R/missing/x x
set -v 7 $R/child bad
delete $R
create -s $R/seq- s
create -s $R/seq- s
create -e $R/eph e
create -e -s $R/eseq- e
getEphemerals $R
ls $R
get $R/missing
quit
EOF
check "create persistent" -x "Created $R/child"
check "get returns data" -x "$V1"
check "set then get returns new data" -x "$V2"
check "stat after one set: dataVersion = 1" -x 'dataVersion = 1'
check "stat: dataLength matches" -x "dataLength = ${#V2}"
check "create without data, get shows null" -x 'null'
check "create existing: NodeExists" -x "Node already exists: $R/child"
check "create under missing parent: NoNode" -x "Node does not exist: $R/missing/x"
check "set with wrong version: BadVersion" -x "version No is not valid : $R/child"
check "delete non-empty: NotEmpty" -x "Node not empty: $R"
seqs=$(grep -Ex "Created $R/seq-[0-9]{10}" <<<"$out" | sort -u | wc -l)
if ((seqs == 2)); then pass "create -s twice: two distinct 10-digit names"; else
  fail "create -s twice: $seqs distinct 10-digit names"
fi
check "create -e" -x "Created $R/eph"
check "create -e -s" -Ex "Created $R/eseq-[0-9]{10}"
check "getEphemerals lists the session's ephemerals" \
  -Ex "\[($R/eph, $R/eseq-[0-9]{10}|$R/eseq-[0-9]{10}, $R/eph)\]"
check "ls lists children sorted" -Ex "\[child, eph, eseq-[0-9]{10}, nodata, seq-[0-9]{10}, seq-[0-9]{10}\]"
check "get missing: NoNode" -x "Node does not exist: $R/missing"

# Phase 2: a single command as arguments; the exit status carries the result.
if zkcli get "$R/child" </dev/null; then check "one-shot get: exit 0 and data" -x "$V2"; else
  fail "one-shot get: non-zero exit"
fi
if zkcli get "$R/missing" </dev/null; then fail "one-shot get missing: exit 0"; else
  check "one-shot get missing: non-zero exit and NoNode" -x "Node does not exist: $R/missing"
fi

# Phase 3: a new session; the first session's ephemerals went with its close.
zkcli <<EOF
ls $R
delete -v 0 $R/child
delete $R/child
delete $R/nodata
ls $R
deleteall $R
stat $R
quit
EOF
check "ephemerals gone after their session closed" -Ex "\[child, nodata, seq-[0-9]{10}, seq-[0-9]{10}\]"
check "delete with stale version: BadVersion" -x "version No is not valid : $R/child"
check "delete: children gone from ls" -Ex "\[seq-[0-9]{10}, seq-[0-9]{10}\]"
check "deleteall then stat: NoNode" -x "Node does not exist: $R"

if ((failed > 0)); then
  echo "--- output of the zkCli runs with failures:$failures"
fi
echo "zkcli: $passed passed, $failed failed"
((failed == 0))
