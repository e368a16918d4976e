#!/usr/bin/env bash
# zk-latencies' synchronous phases against ZooKeeper 3.8 and Shepherd, side by side
# (docs/bench/latencies.md): `shepherd-bench latencies` (one session, one call at a time:
# create, set, get, delete, ephemeral create, exists watch, ephemeral delete, notification),
# COUNT nodes of 100 B per phase, RUNS runs, ZooKeeper then Shepherd in each run, both durable
# (bench/scripts/zk.sh with forceSync=yes; `shepherd serve --data-dir`), each on a fresh data
# directory.
#
#   bench/scripts/latencies.sh [RUNS] [COUNT]      RUNS default 3, COUNT default 2000
#
# Every row goes to OUT (default latencies.csv, with a run column); then, per phase, the median
# over the runs of each server's p50 and p99 (µs), every run's figure, and the ratio
# ZooKeeper ÷ Shepherd (above 1: Shepherd is faster). SHEPHERD (default
# target/release/shepherd) and SHEPHERD_BENCH (default target/release/shepherd-bench): build
# them with `cargo build --release --bin shepherd --bin shepherd-bench`.
#
# Each run also measures the floor (FLOOR, default target/release/examples/loadgen_floor; build
# it with `cargo build --release --example loadgen_floor -p shepherd-bench`), a server that
# answers create, set, get and delete with canned replies, in the four persistent phases
# (`--persistent-only`): its p50 is what one call costs when the server does no work, and each
# server's p50 less it is printed. On a virtual machine that is not a lower bound for a read:
# an idle call's cost depends on how the processors wake (docs/bench/latencies.md, "The floor").
# Without the binary the floor is left out, and said so; FLOOR= (empty) leaves it out too.
set -euo pipefail

runs=${1:-3}
count=${2:-2000}
here=$(cd "$(dirname "$0")" && pwd)
shepherd=${SHEPHERD:-$here/../../target/release/shepherd}
bench=${SHEPHERD_BENCH:-$here/../../target/release/shepherd-bench}
floor=${FLOOR-$here/../../target/release/examples/loadgen_floor}
out=${OUT:-latencies.csv}
dir=$(mktemp -d "${TMPDIR:-/tmp}/latencies.XXXXXX")
pid=
[[ -z $floor || -x $floor ]] || { echo "latencies.sh: no floor at $floor: measured without it" >&2; floor=; }
trap 'stop_server; "$here/zk.sh" stop "$dir/zk" >/dev/null 2>&1 || true; rm -rf "$dir"' EXIT

stop_server() {
  [[ -n $pid ]] || return 0
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  pid=
}

# measure RUN LABEL ADDR [OPTION]: one run of every phase (or of those OPTION leaves), its rows
# appended with the run number.
measure() {
  "$bench" latencies --connect "$3" --count "$count" --size 100 --label "$2" ${4:+"$4"} |
    tail -n +2 | sed "s/^/$1,/" | tee -a "$out"
}

# serve_shepherd and serve_listening: start a server and wait for its address.
# shellcheck source=bench/scripts/side-by-side.sh
. "$here/side-by-side.sh"

echo "run,server,phase,count,size,p50_us,p99_us,p999_us,mean_us,total_ms" | tee "$out"
for ((run = 1; run <= runs; run++)); do
  echo "# run $run: load average $(cut -d' ' -f1 /proc/loadavg)" >&2
  rm -rf "$dir/zk"
  started=$("$here/zk.sh" start "$dir/zk" yes)
  measure "$run" zookeeper-3.8 "127.0.0.1:$(awk '{print $2}' <<<"$started")"
  "$here/zk.sh" stop "$dir/zk" >/dev/null

  rm -rf "$dir/data"
  serve_shepherd "$dir"
  measure "$run" shepherd "$addr"
  stop_server

  if [[ -n $floor ]]; then
    # Two workers: `shepherd serve`'s shape.
    serve_listening "$dir/serve.log" "$floor" 2
    measure "$run" floor "$addr" --persistent-only
    stop_server
  fi
done

echo
echo "commit $(git -C "$here" rev-parse --short HEAD 2>/dev/null || echo unknown); $count nodes of 100 B per phase; µs"
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
phases = list(dict.fromkeys(r["phase"] for r in rows))
print(f"{'phase':17} {'ZooKeeper p50 (runs)':>34} {'Shepherd p50 (runs)':>34} {'ratio':>6}   "
      f"{'ZooKeeper p99 (runs)':>34} {'Shepherd p99 (runs)':>34} {'ratio':>6}")
floor = {}
for phase in phases:
    cells = []
    for q in ("p50_us", "p99_us"):
        medians = []
        for server in ("zookeeper-3.8", "shepherd"):
            xs = [float(r[q]) for r in rows if r["phase"] == phase and r["server"] == server]
            m = statistics.median(xs)
            medians.append(m)
            cells.append(f"{m:9.1f} ({' '.join(f'{x:.0f}' for x in xs)})")
        ratio = medians[0] / medians[1] if medians[1] else float("inf")
        cells.append(f"{ratio:6.1f}")
    print(f"{phase:17} {cells[0]:>34} {cells[1]:>34} {cells[2]:>6}   {cells[3]:>34} {cells[4]:>34} {cells[5]:>6}")
    xs = [float(r["p50_us"]) for r in rows if r["phase"] == phase and r["server"] == "floor"]
    if xs:
        floor[phase] = (statistics.median(xs), xs)
if floor:
    print()
    print("the floor (canned replies, no work), p50 µs, and each server's p50 less the floor's")
    print(f"{'phase':17} {'floor p50 (runs)':>34} {'ZooKeeper above':>16} {'Shepherd above':>15}")
    for phase, (m, xs) in floor.items():
        above = []
        for server in ("zookeeper-3.8", "shepherd"):
            ys = [float(r["p50_us"]) for r in rows if r["phase"] == phase and r["server"] == server]
            above.append(statistics.median(ys) - m)
        cell = f"{m:9.1f} ({' '.join(f'{x:.0f}' for x in xs)})"
        print(f"{phase:17} {cell:>34} {above[0]:16.1f} {above[1]:15.1f}")
PY
