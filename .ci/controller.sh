#!/usr/bin/env bash
# ZooKeeper 3.8's own ControllerService (the HTTP test service in Debian's zookeeper.jar) and
# `shepherd serve --test-controls --test-controls-open-commands`, side by side: each
# /command/<action> sent to both, comparing status, content type, body and what a kazoo client
# sees (tests/interop/controller/compare.py; docs/test-controls.md, "ZooKeeper's command URLs").
#
#   bash .ci/controller.sh SHEPHERD_BIN
#
# ControllerService binds its HTTP and quorum listeners on the wildcard address, so everything
# runs in a network namespace of its own with only loopback up (`unshare -n`, which needs root;
# without it the comparison is reported as skipped). Prints one row per command and
# `controller: N passed, M failed`; exits 1 if any row differs or a server does not start.
# Needs zookeeper, libservlet-api-java, a JDK (java runs the single-file
# tests/interop/controller/ControllerMain.java), iproute2 and kazoo.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if (($# != 1)); then
  echo "usage: $0 SHEPHERD_BIN" >&2
  exit 2
fi
bin=$(realpath "$1")

if [[ -z ${CONTROLLER_NAMESPACE:-} ]]; then
  if ! unshare -n true 2>/dev/null; then
    echo "controller: skipped: unshare -n (a network namespace) needs root here"
    exit 0
  fi
  exec unshare -n env CONTROLLER_NAMESPACE=1 bash "$0" "$@"
fi
ip link set lo up

work=$(mktemp -d "${TMPDIR:-/tmp}/controller.XXXXXX")
zk_pid='' sh_pid=''
cleanup() {
  local pid
  for pid in $zk_pid $sh_pid; do
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  done
  rm -rf "$work"
}
trap cleanup EXIT

# The HTTP status of GET URL, or 000 when nothing answers.
http_status() {
  python3 -c '
import sys, urllib.error, urllib.request
try:
    print(urllib.request.urlopen(sys.argv[1], timeout=5).status)
except urllib.error.HTTPError as error:
    print(error.code)
except Exception:
    print("000")' "$1"
}

free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# ZooKeeper: a single peer whose myid is 0, as ControllerServerConfig wants, its client port on
# loopback and no AdminServer.
mkdir -p "$work/zk/data"
echo 0 >"$work/zk/data/myid"
zk_client=$(free_port)
zk_controller=$(free_port)
cat >"$work/zk/zoo.cfg" <<CFG
tickTime=2000
dataDir=$work/zk/data
clientPort=$zk_client
clientPortAddress=127.0.0.1
admin.enableServer=false
CFG
cat >"$work/zk/log4j.properties" <<'CFG'
log4j.rootLogger=INFO, CONSOLE
log4j.appender.CONSOLE=org.apache.log4j.ConsoleAppender
log4j.appender.CONSOLE.layout=org.apache.log4j.PatternLayout
log4j.appender.CONSOLE.layout.ConversionPattern=%d{ISO8601} %-5p [%t:%C{1}@%L] - %m%n
CFG
cp="$work/zk:/usr/share/java/zookeeper.jar:/usr/share/java/servlet-api.jar"
cp+=":/usr/share/java/slf4j-api.jar:/usr/share/java/slf4j-log4j12.jar:/usr/share/java/log4j-1.2.jar"
java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -Dzookeeper.controllerPort="$zk_controller" \
  -cp "$cp" tests/interop/controller/ControllerMain.java "$work/zk/zoo.cfg" >"$work/zk.log" 2>&1 &
zk_pid=$!

"$bin" serve --port 0 --ready-json --test-controls --test-controls-open-commands \
  >"$work/serve.out" 2>"$work/serve.log" </dev/null &
sh_pid=$!

# Both ready, or give up after 60 s: ZooKeeper answers ping with 500 until its peer serves.
deadline=$((SECONDS + 60))
zk_url=http://127.0.0.1:$zk_controller sh_url=''
until [[ $(http_status "$zk_url/command/ping") == 200 ]]; do
  if ((SECONDS >= deadline)) || ! kill -0 "$zk_pid" 2>/dev/null; then
    echo "controller: ZooKeeper's ControllerService did not start; its log:" >&2
    tail -n 30 "$work/zk.log" >&2
    echo "controller: 0 passed, 1 failed"
    exit 1
  fi
  sleep 0.2
done
while [[ -z $sh_url ]]; do
  sh_url=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["controls_url"])' \
    "$work/serve.out" 2>/dev/null)
  if [[ -z $sh_url ]] && { ((SECONDS >= deadline)) || ! kill -0 "$sh_pid" 2>/dev/null; }; then
    echo "controller: shepherd serve did not start; its log:" >&2
    tail -n 30 "$work/serve.log" >&2
    echo "controller: 0 passed, 1 failed"
    exit 1
  fi
  [[ -n $sh_url ]] || sleep 0.1
done
sh_client=$(python3 -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["connect_string"])' \
  "$work/serve.out")
echo "ZooKeeper 3.8 ControllerService: client 127.0.0.1:$zk_client, commands $zk_url"
echo "shepherd serve: client $sh_client, commands $sh_url"

python3 tests/interop/controller/compare.py "127.0.0.1:$zk_client" "$zk_url" "$zk_pid" \
  "$sh_client" "$sh_url" "$sh_pid"
