#!/usr/bin/env bash
# Restart-to-serving time with NODES nodes in the data directory (docs/bench/recovery.md).
#
#   bench/scripts/recovery.sh shepherd|zookeeper NODES [VALUE_SIZE]
#
# 1. start the server on an empty data directory (forceSync=yes for ZooKeeper, --data-dir for
#    Shepherd);
# 2. fill it: `shepherd-bench load --phases create` writes NODES nodes of VALUE_SIZE bytes
#    (default 16) under /shepherd-bench-load, 4 sessions with 256 creates in flight each;
# 3. stop it cleanly (SIGTERM) and print the data directory's size;
# 4. start it again on the same port and print the time from the start command to the first
#    successful `shepherd get /shepherd-bench-load` (polled every 20 ms; each attempt is a
#    short-lived client process).
#
# SHEPHERD (default target/release/shepherd) is the binary used as server and client,
# SHEPHERD_BENCH (default target/release/shepherd-bench) the one that fills the directory;
# build both with `cargo build --release --bin shepherd --bin shepherd-bench`.
set -euo pipefail

kind=${1:?usage: $0 shepherd|zookeeper NODES [VALUE_SIZE]}
nodes=${2:?usage: $0 shepherd|zookeeper NODES [VALUE_SIZE]}
value=${3:-16}
here=$(cd "$(dirname "$0")" && pwd)
shepherd=${SHEPHERD:-$here/../../target/release/shepherd}
bench=${SHEPHERD_BENCH:-$here/../../target/release/shepherd-bench}
dir=$(mktemp -d "${TMPDIR:-/tmp}/recovery.XXXXXX")
trap 'stop_server; rm -rf "$dir"' EXIT

now() { date +%s.%N; }

server_pid=
start_server() {
  case $kind in
  shepherd)
    local port=${1:-0} line
    # The first line on stdout is `shepherd listening on ADDR`.
    coproc SERVE { exec "$shepherd" serve --port "$port" --data-dir "$dir/data" 2>>"$dir/serve.log"; }
    server_pid=$SERVE_PID
    read -r line <&"${SERVE[0]}"
    addr=${line#shepherd listening on }
    ;;
  zookeeper)
    local out
    out=$("$here/zk.sh" start "$dir" yes)
    server_pid=$(awk '{print $4}' <<<"$out")
    addr=127.0.0.1:$(awk '{print $2}' <<<"$out")
    ;;
  esac
}

stop_server() {
  [[ -n $server_pid ]] || return 0
  kill "$server_pid" 2>/dev/null || true
  while kill -0 "$server_pid" 2>/dev/null; do sleep 0.05; done
  server_pid=
}

start_server
echo "filling $nodes nodes of $value B into $kind at $addr"
"$bench" load --connect "$addr" --sessions 4 --in-flight 256 --nodes "$nodes" \
  --value-size "$value" --phases create
stop_server
port=${addr##*:}
echo "data directory: $(du -sh "$dir/data" | cut -f1)"

t0=$(now)
if [[ $kind == shepherd ]]; then
  start_server "$port"
else
  # zk.sh returns once `srvr` shows a mode; the get below is then the first request.
  start_server
fi
until "$shepherd" get --server "$addr" /shepherd-bench-load >/dev/null 2>&1; do
  kill -0 "$server_pid" 2>/dev/null || { echo "server exited; see $dir" >&2; trap - EXIT; exit 1; }
  sleep 0.02
done
t1=$(now)
echo "restart to first getData: $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.2f", b - a }') s ($kind, $nodes nodes of $value B)"
echo "server RSS after recovery: $(awk '/VmRSS/ {print $2, $3}' "/proc/$server_pid/status")"
