#!/usr/bin/env bash
# A million data watches, Shepherd beside ZooKeeper 3.8 (docs/bench/watches.md): memory per
# million watches and the time to fire them all.
#
#   bench/scripts/watches.sh [RUNS] [OUT]
#
# For each run (default 3), ZooKeeper first, then Shepherd, each on a fresh empty data
# directory (durable: forceSync=yes on both; ZooKeeper with the JVM's default heap, a quarter of
# the RAM, and maxClientCnxns=0), `shepherd-bench watches` with its defaults: 100 000 nodes of
# 16 B, 1 000 sessions each setting a data watch on 1 000 of them, the server's RSS read before
# and after; then one setData of every node fires them all. For ZooKeeper each reading follows
# `jcmd PID GC.run`, and the heap in use after that collection (`GC.heap_info`) is recorded
# too: the JVM keeps the heap it has grown to, so its RSS overstates what the watches hold.
# Every run's figures go to OUT/watches.csv (default: a temporary directory), the medians to
# stdout.
#
# SHEPHERD (default target/release/shepherd) and SHEPHERD_BENCH (default
# target/release/shepherd-bench): `cargo build --release --bin shepherd --bin shepherd-bench`.
set -euo pipefail

runs=${1:-3}
# shellcheck source=bench/scripts/side-by-side.sh
. "$(dirname "$0")/side-by-side.sh"
side_by_side watches "${2:-}"
csv=$out/watches.csv
echo "server,run,watches,rss_before,rss_after,mib_per_million,arm_s,fire_s,heap_before_kib,heap_after_kib" >"$csv"

pid=
trap '[[ -z $pid ]] || kill -9 "$pid" 2>/dev/null || true' EXIT

# Turns the benchmark's line into CSV fields (watches … fire_s).
fields() {
  sed -E 's/.*: ([0-9]+) watches set in ([0-9.]+) s, RSS ([0-9.]+) → ([0-9.]+) MiB, ([0-9.]+) MiB per million; all fired in ([0-9.]+) s/\1,\3,\4,\5,\2,\6/'
}

measure() {
  local kind=$1 run=$2 dir=$out/$1-$2 line heap_before= heap_after=
  rm -rf "$dir"
  mkdir -p "$dir"
  if [[ $kind == shepherd ]]; then
    serve_shepherd "$dir" --set maxClientCnxns=0
    line=$("$bench" watches --connect "$addr" --server-pid "$pid" \
      --label shepherd | tee /dev/stderr | tail -n 1)
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  else
    local port
    read -r _ port _ pid < <("$here/zk.sh" start "$dir" yes)
    line=$("$bench" watches --connect "127.0.0.1:$port" --server-pid "$pid" --label zookeeper \
      --before-reading "jcmd $pid GC.run && jcmd $pid GC.heap_info >>$dir/heap.txt" |
      tee /dev/stderr | tail -n 1)
    "$here/zk.sh" stop "$dir"
    # `garbage-first heap   total 397312K, used 20330K`: before, then after.
    heap_before=$(grep 'heap  ' "$dir/heap.txt" | grep -o 'used [0-9]*K' | sed -n '1s/[^0-9]//gp')
    heap_after=$(grep 'heap  ' "$dir/heap.txt" | grep -o 'used [0-9]*K' | sed -n '2s/[^0-9]//gp')
  fi
  pid=
  echo "$kind,$run,$(fields <<<"$line"),$heap_before,$heap_after" >>"$csv"
  rm -rf "$dir/data"
}

echo "# watches.sh, $runs runs, commit $commit, out $out" >&2
alternate "$runs" measure

python3 - "$csv" "$commit" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def col(kind, key):
    return [float(r[key]) for r in rows if r["server"] == kind and r[key]]
def show(values):
    return f"{statistics.median(values):,.1f} ({', '.join(f'{v:,.1f}' for v in values)})"
print(f"commit {sys.argv[2]}: medians (every run)")
print("| measure | ZooKeeper 3.8 | Shepherd | ratio |")
print("|---|---:|---:|---:|")
for key, name in [("mib_per_million", "RSS per million watches, MiB"),
                  ("arm_s", "setting them, s"), ("fire_s", "firing them all, s")]:
    zk, sh = col("zookeeper", key), col("shepherd", key)
    z, s = statistics.median(zk), statistics.median(sh)
    ratio = f"1/{z / s:.1f}" if s and z >= s else f"{s / z:.2f}×"
    print(f"| {name} | {show(zk)} | {show(sh)} | {ratio} |")
heap = [(float(r["heap_after_kib"]) - float(r["heap_before_kib"])) / 1024 * 1e6 / float(r["watches"])
        for r in rows if r["server"] == "zookeeper" and r["heap_after_kib"]]
if heap:
    sh = statistics.median(col("shepherd", "mib_per_million"))
    z = statistics.median(heap)
    print(f"| ZooKeeper's heap in use after a full GC, per million watches, MiB | {show(heap)} | "
          f"(RSS) {sh:,.1f} | 1/{z / sh:.1f} |")
EOF
