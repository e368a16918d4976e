#!/usr/bin/env bash
# A tree in a production shape, Shepherd beside ZooKeeper 3.8 (docs/bench/tree.md): memory per
# node, the snapshot's size and write time, and the time to serve again after kill -9.
#
#   bench/scripts/tree.sh NODES [RUNS] [OUT]
#
# For each run (default 3), ZooKeeper first, then Shepherd, each:
# 1. starts on an empty data directory, durable (forceSync=yes, snapCount=SNAPCOUNT on both,
#    default 100000: each server's default), ZooKeeper with the JVM's default heap (a quarter
#    of the RAM) unless ZK_HEAP sets its -Xmx;
# 2. `shepherd-bench tree --nodes NODES` creates the tree (4 sessions, 256 creates in flight
#    each) and reads the server's RSS before and after (ZooKeeper's after `jcmd PID GC.run`,
#    with the heap in use after that collection, `GC.heap_info`, recorded too);
# 3. is killed with SIGKILL; the data directory is measured: its size, and the newest snapshot
#    written during the fill (both servers snapshot every snapCount/2 + r transactions): its
#    size, the nodes in it (the low 32 bits of the zxid in its name: one transaction per
#    create) and its write time, from the server's log (ZooKeeper's `Snapshot taken in N ms`,
#    Shepherd's `snapshot written … ms=N`);
# 4. starts on a copy of it (cp -a); the time from the start command to the first successful
#    getData of /clickhouse/tables (a short-lived `shepherd get` every 20 ms) is the recovery
#    time; RSS after recovery is read;
# 5. the other server starts on another copy of the same directory (both read ZooKeeper's
#    format) and is timed the same way: so every directory is recovered by both servers, and
#    the two times compare them on the same files (the same snapshot, the same log after it).
# Every run's figures go to OUT/tree.csv (default: a temporary directory, printed), one row per
# server and run, and the medians to stdout.
#
# SHEPHERD (default target/release/shepherd) is the server and the probing client,
# SHEPHERD_BENCH (default target/release/shepherd-bench) fills the tree; build both with
# `cargo build --release --bin shepherd --bin shepherd-bench`. Needs Debian's zookeeper and a
# JDK (jcmd). Disk: about NODES × 2 KiB per server and run at the default snapCount, twice
# that while a copy is recovered (every snapshot of the growing tree is kept, as both servers
# keep them by default); a larger SNAPCOUNT writes fewer snapshots, e.g. SNAPCOUNT=2000000
# ZK_HEAP=16g for ten million nodes.
set -euo pipefail

nodes=${1:?usage: $0 NODES [RUNS] [OUT]}
runs=${2:-3}
# shellcheck source=bench/scripts/side-by-side.sh
. "$(dirname "$0")/side-by-side.sh"
side_by_side tree "${3:-}"
csv=$out/tree.csv
echo "server,run,nodes,rss_before,rss_after,bytes_per_node,fill_s,data_dir_bytes,snapshot_bytes,snapshot_nodes,snapshot_ms,recovery_s,rss_recovered,heap_bytes_per_node,other_recovery_s" >"$csv"
snap_count=${SNAPCOUNT:-100000}
export ZK_SNAPCOUNT=$snap_count
ZK_LOGGERS="org.apache.zookeeper.server.ZooKeeperServer org.apache.zookeeper.server.persistence.FileTxnSnapLog"

now() { date +%s.%N; }
pid=
trap '[[ -z $pid ]] || kill -9 "$pid" 2>/dev/null || true' EXIT

# Starts KIND on DIR (a data directory for Shepherd, zk.sh's directory for ZooKeeper); sets
# $pid and $addr.
start() {
  local kind=$1 dir=$2
  if [[ $kind == shepherd ]]; then
    # Its `snapshot written … ms=N` lines are INFO.
    RUST_LOG=info serve_shepherd "$dir" --set "snapCount=$snap_count"
  else
    read -r _ port _ pid < <(ZK_INFO_LOGGERS=$ZK_LOGGERS "$here/zk.sh" start "$dir" yes)
    addr=127.0.0.1:$port
  fi
}

kill9() {
  kill -9 "$pid"
  while kill -0 "$pid" 2>/dev/null; do sleep 0.05; done
  pid=
}

# %.0f, not %d: mawk (Debian's awk) prints any %d above 2^31 - 1 as 2147483647.
rss() { awk '/VmRSS/ { printf "%.0f\n", $2 * 1024 }' "/proc/$1/status"; }

# The newest snapshot in DATA (ZooKeeper's layout: version-2/snapshot.ZXID): its size and the
# nodes in it (the zxid's counter: one transaction per create).
newest_snapshot() {
  local line
  line=$(find "$1" -name 'snapshot.*' -printf '%T@ %s %f\n' | sort -n | tail -n 1)
  read -r _ size name <<<"$line"
  echo "$size,$((0x${name#snapshot.} & 0xffffffff))"
}

# The write time, ms, of the last snapshot KIND logged in DIR.
snapshot_ms() {
  local kind=$1 dir=$2
  if [[ $kind == shepherd ]]; then
    grep -o 'snapshot written .*ms=[0-9]*' "$dir/serve.log" | tail -n 1 | sed 's/.*ms=//'
  else
    grep -o 'Snapshot taken in [0-9]* ms' "$dir/zookeeper.log" | tail -n 1 | awk '{ print $4 }'
  fi
}

# Starts KIND on a copy of the data directory SRC and waits until it serves: sets $recovery_s,
# the seconds from the start command to the first successful getData of /clickhouse/tables,
# and $recovered_rss, RSS after recovery in bytes.
recover_copy() {
  local kind=$1 src=$2 copy=$out/recovering t0 t1
  rm -rf "$copy"
  mkdir -p "$copy"
  cp -a "$src" "$copy/data"
  t0=$(now)
  start "$kind" "$copy"
  until "$shepherd" get --server "$addr" /clickhouse/tables >/dev/null 2>&1; do
    kill -0 "$pid" 2>/dev/null || { echo "$kind exited on recovery; see $copy" >&2; exit 1; }
    sleep 0.02
  done
  t1=$(now)
  recovered_rss=$(rss "$pid")
  kill9
  rm -rf "$copy"
  recovery_s=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
}

measure() {
  local kind=$1 run=$2 dir=$out/$1-$2 count per fill_s before after
  rm -rf "$dir"
  start "$kind" "$dir"
  echo "# run $run, $kind at $addr: filling $nodes nodes" >&2
  local reading=()
  [[ $kind == zookeeper ]] &&
    reading=(--before-reading "jcmd $pid GC.run && jcmd $pid GC.heap_info >>$dir.heap.txt")
  "$bench" tree --nodes "$nodes" --connect "$addr" --server-pid "$pid" --label "$kind" \
    "${reading[@]}" --csv "$dir.fill.csv" >&2
  IFS=, read -r _ count before after per fill_s < <(tail -n 1 "$dir.fill.csv")
  # ZooKeeper's heap in use after the full GC before each reading: before, then after.
  local heap=
  if [[ $kind == zookeeper ]]; then
    heap=$(grep 'heap  ' "$dir.heap.txt" | grep -o 'used [0-9]*K' | tr -dc '0-9\n' |
      paste -sd' ' | awk -v n="$count" '{ printf "%.1f", ($2 - $1) * 1024 / n }')
  fi
  kill9
  local data_bytes snap snap_ms recovery recovered other
  snap=$(newest_snapshot "$dir/data")
  snap_ms=$(snapshot_ms "$kind" "$dir")
  data_bytes=$(du -sb "$dir/data" | cut -f1)
  [[ $kind == shepherd ]] && other=zookeeper || other=shepherd
  recover_copy "$kind" "$dir/data"
  recovery=$recovery_s recovered=$recovered_rss
  recover_copy "$other" "$dir/data"
  rm -rf "$dir"
  echo "$kind,$run,$count,$before,$after,$per,$fill_s,$data_bytes,$snap,${snap_ms:-},$recovery,$recovered,$heap,$recovery_s" | tee -a "$csv"
}

echo "# tree.sh $nodes nodes, $runs runs, snapCount $snap_count, commit $commit, out $out" >&2
alternate "$runs" measure

python3 - "$csv" "$commit" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def med(kind, key):
    values = [float(r[key]) for r in rows if r["server"] == kind and r[key]]
    return statistics.median(values) if values else float("nan"), values
print(f"commit {sys.argv[2]}, {rows[0]['nodes'] if rows else '?'} nodes; medians (every run)")
print("| measure | ZooKeeper 3.8 | Shepherd | ratio |")
print("|---|---:|---:|---:|")
for key, name, scale in [
    ("bytes_per_node", "RSS per node, B", 1),
    ("rss_after", "RSS after the fill, MiB", 1 / 1048576),
    ("fill_s", "fill, s", 1),
    ("data_dir_bytes", "data directory after kill -9, MiB", 1 / 1048576),
    ("snapshot_bytes", "the fill's last snapshot, MiB", 1 / 1048576),
    ("snapshot_nodes", "nodes in it", 1),
    ("snapshot_ms", "its write time, ms", 1),
    ("recovery_s", "start to serving after kill -9, s", 1),
    ("rss_recovered", "RSS after recovery, MiB", 1 / 1048576),
]:
    (zk, zks), (sh, shs) = med("zookeeper", key), med("shepherd", key)
    fmt = lambda v: f"{v * scale:,.1f}"
    if not zk or not sh or zk != zk or sh != sh:  # a zero, or no figure (NaN)
        ratio = "-"
    else:
        ratio = f"1/{zk / sh:.1f}" if zk >= sh else f"{sh / zk:.2f}×"
    print(f"| {name} | {fmt(zk)} ({', '.join(fmt(v) for v in zks)}) | "
          f"{fmt(sh)} ({', '.join(fmt(v) for v in shs)}) | {ratio} |")
# Each directory recovered by both servers: ZooKeeper's time against Shepherd's on the same files.
names = {"zookeeper": "ZooKeeper", "shepherd": "Shepherd"}
for writer in ("zookeeper", "shepherd"):
    pairs = [(float(r["recovery_s"]), float(r["other_recovery_s"])) for r in rows
             if r["server"] == writer and r["other_recovery_s"]]
    if not pairs:
        continue
    zk = [own if writer == "zookeeper" else other for own, other in pairs]
    sh = [other if writer == "zookeeper" else own for own, other in pairs]
    ratios = [z / max(s, 1e-3) for z, s in zip(zk, sh)]
    r = statistics.median(ratios)
    print(f"| start to serving on {names[writer]}'s directory after kill -9, s | "
          f"{statistics.median(zk):,.2f} ({', '.join(f'{v:,.2f}' for v in zk)}) | "
          f"{statistics.median(sh):,.2f} ({', '.join(f'{v:,.2f}' for v in sh)}) | "
          f"{f'1/{r:.1f}' if r >= 1 else f'{1 / r:.2f}×'} (median of the runs' ratios) |")
heap, heaps = med("zookeeper", "heap_bytes_per_node")
if heaps:
    sh, _ = med("shepherd", "bytes_per_node")
    print(f"| ZooKeeper's heap in use after a full GC, per node, B | {heap:,.1f} "
          f"({', '.join(f'{v:,.1f}' for v in heaps)}) | (RSS) {sh:,.1f} | 1/{heap / sh:.1f} |")
EOF
