#!/usr/bin/env bash
# What one client's large state costs the others, Shepherd beside ZooKeeper 3.8
# (docs/bench/stall.md): the bystanders' worst latency and expired sessions while a connection
# holding a million (or three) data watches closes, or while `wchc`/`wchp` lists them, and the
# server's RSS before, with them and after.
#
#   bench/scripts/stall.sh [RUNS] [WATCHES…]
#
# RUNS (default 3) rounds, ZooKeeper first, then Shepherd, for each count of WATCHES (default
# 1000000 3000000); STALL_TRIGGER chooses what makes the server walk them: close (default),
# wchc or wchp. Both
# servers durable (forceSync=yes), on fresh data directories, with tickTime 2000 (so the
# bystanders' 4 s sessions are allowed). STALL_ONLY=shepherd (or zookeeper) runs one server
# only, e.g. an older build given as SHEPHERD. Every run's figures go to OUT/stall.csv (STALL_OUT, or
# a temporary directory), the medians to stdout.
#
# SHEPHERD and SHEPHERD_BENCH as for every script here (side-by-side.sh).
set -euo pipefail

runs=${1:-3}
shift || true
counts=("$@")
((${#counts[@]})) || counts=(1000000 3000000)
trigger=${STALL_TRIGGER:-close}
# shellcheck source=bench/scripts/side-by-side.sh
. "$(dirname "$0")/side-by-side.sh"
side_by_side stall "${STALL_OUT:-}"
csv=$out/stall.csv
echo "server,run,watches,trigger,read_before_s,write_before_s,read_s,write_s,expired,bystanders,trigger_s,rss_before_mib,rss_armed_mib,rss_end_mib" >"$csv"

pid=
trap '[[ -z $pid ]] || kill -9 "$pid" 2>/dev/null || true' EXIT

# Turns the benchmark's line into CSV fields (read_before_s … rss_end_mib).
fields() {
  python3 -c '
import re, sys
m = re.search(r"worst getData ([0-9.]+) s, setData ([0-9.]+) s \(before: ([0-9.]+) s, ([0-9.]+) s\); "
              r"([0-9]+) of ([0-9]+) sessions expired; trigger ([0-9.]+) s; "
              r"RSS ([0-9]+) → ([0-9]+) → ([0-9]+) MiB", sys.stdin.read())
if not m:
    sys.exit("stall.sh: the benchmark printed no figures")
g = m.groups()
print(",".join([g[2], g[3], g[0], g[1], *g[4:]]))'
}

measure() {
  local kind=$1 run=$2 dir=$out/$1-$2-$watches line
  [[ -z ${STALL_ONLY:-} || $STALL_ONLY == "$kind" ]] || return 0
  rm -rf "$dir"
  mkdir -p "$dir"
  if [[ $kind == shepherd ]]; then
    serve_shepherd "$dir" --set maxClientCnxns=0 --set '4lw.commands.whitelist=*'
    line=$("$bench" stall --connect "$addr" --server-pid "$pid" --label shepherd \
      --watches "$watches" --trigger "$trigger" | tee /dev/stderr | tail -n 1)
    kill "$pid"
    wait "$pid" 2>/dev/null || true
  else
    local port
    read -r _ port _ pid < <("$here/zk.sh" start "$dir" yes)
    line=$("$bench" stall --connect "127.0.0.1:$port" --server-pid "$pid" --label zookeeper \
      --watches "$watches" --trigger "$trigger" | tee /dev/stderr | tail -n 1)
    "$here/zk.sh" stop "$dir"
  fi
  pid=
  echo "$kind,$run,$watches,$trigger,$(fields <<<"$line")" >>"$csv"
  rm -rf "$dir/data"
}

echo "# stall.sh, $runs runs of ${counts[*]} watches, trigger $trigger, commit $commit, out $out" >&2
for watches in "${counts[@]}"; do
  alternate "$runs" measure
done

python3 - "$csv" "$commit" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
def show(values, fmt="{:.3f}"):
    return f"{fmt.format(statistics.median(values))} ({', '.join(fmt.format(v) for v in values)})"
print(f"commit {sys.argv[2]}: medians (every run)")
print("| watches | trigger | server | worst getData, s | worst setData, s | expired | RSS after, MiB |")
print("|---:|---|---|---:|---:|---:|---:|")
for watches in sorted({int(r["watches"]) for r in rows}):
    for kind in ("zookeeper", "shepherd"):
        rs = [r for r in rows if r["server"] == kind and int(r["watches"]) == watches]
        if not rs:
            continue
        col = lambda k: [float(r[k]) for r in rs]
        expired = "/".join(f'{r["expired"]}' for r in rs) + f' of {rs[0]["bystanders"]}'
        rss = show(col("rss_end_mib"), "{:.0f}") + f' (armed {show(col("rss_armed_mib"), "{:.0f}")})'
        print(f"| {watches:,} | {rs[0]['trigger']} | {kind} | {show(col('read_s'))} | "
              f"{show(col('write_s'))} | {expired} | {rss} |")
PY
