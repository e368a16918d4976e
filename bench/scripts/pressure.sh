#!/usr/bin/env bash
# Memory under a slow disk (docs/bench/pressure.md): the resident set a durable server grows by
# while one client pipelines 150 setData of 1 MB, then 300 getData of that 1 MB node, with every
# fsync and fdatasync of the server delayed by 200 ms (strace's fault injection, the same for
# ZooKeeper's JVM and for Shepherd).
#
#   bench/scripts/pressure.sh [RUNS]
#   bench/scripts/pressure.sh throughput [RUNS]
#
# Each run measures, in turn, ZooKeeper 3.8 (bench/scripts/zk.sh, forceSync=yes), each earlier
# Shepherd named in SHEPHERD_BEFORE (space-separated LABEL=BINARY pairs, or one BINARY, labelled
# shepherd-before) and Shepherd "after" (SHEPHERD, default target/release/shepherd), each on a
# fresh data directory with default settings; RUNS (default 3) runs. Every row goes to OUT
# (default pressure.csv), then the medians are printed.
# `throughput` instead measures what the backpressure costs when the disk keeps up: durable
# write throughput of SHEPHERD_BEFORE (one BINARY) and SHEPHERD, alternating, RUNS (default 3) runs each,
# with no delay injected: `shepherd-bench load` closed loop at 1 session (W=256, 30 000 nodes)
# and 64 sessions (W=64, 100 000 nodes), each run on a fresh `shepherd serve --data-dir`;
# writes/s is (creates + sets + deletes) over their time together, as perf.sh computes it.
# SHEPHERD_BENCH (default target/release/shepherd-bench) is the client; build both with
# `cargo build --release --bin shepherd --bin shepherd-bench`. Needs strace 5.3 or later
# (--seccomp-bpf: only the two calls stop the server, not every system call).
set -euo pipefail

runs=${1:-3}
here=$(cd "$(dirname "$0")" && pwd)
shepherd=${SHEPHERD:-$here/../../target/release/shepherd}
before=${SHEPHERD_BEFORE:-}
bench=${SHEPHERD_BENCH:-$here/../../target/release/shepherd-bench}
out=${OUT:-pressure.csv}
delay_us=${PRESSURE_DELAY_US:-200000}
wrap="strace -f -qq -o /dev/null --seccomp-bpf -e trace=fdatasync,fsync -e inject=fdatasync,fsync:delay_exit=$delay_us"
dir=$(mktemp -d "${TMPDIR:-/tmp}/pressure.XXXXXX")
server_pid=
wrapper_pid=
serve_args=
trap 'stop_shepherd; rm -rf "$dir"' EXIT

stop_shepherd() {
  [[ -n $server_pid ]] || return 0
  kill "$server_pid" 2>/dev/null || true
  wait "$wrapper_pid" 2>/dev/null || true
  server_pid=
}

# shepherd LABEL BINARY RUN: one measurement of a `shepherd serve` under the delay.
shepherd() {
  local label=$1 binary=$2 run=$3
  # shellcheck disable=SC2086 # $wrap is a command line, split on purpose.
  start_shepherd "$label" "$binary" $wrap
  # A failed burst is a row too (its error column says why); the runs go on.
  { "$bench" pressure --connect "$addr" --server-pid "$server_pid" --label "$label" || true; } |
    tail -n +2 | sed "s/^/$run,/" | tee -a "$out"
  stop_shepherd
}

# zookeeper RUN: one measurement of ZooKeeper 3.8 under the delay.
zookeeper() {
  local run=$1 started port pid
  rm -rf "$dir/zk"
  started=$(ZK_WRAP=$wrap "$here/zk.sh" start "$dir/zk" yes)
  port=$(awk '{print $2}' <<<"$started")
  pid=$(awk '{print $4}' <<<"$started")
  { "$bench" pressure --connect "127.0.0.1:$port" --server-pid "$pid" --label zookeeper-3.8 || true; } |
    tail -n +2 | sed "s/^/$run,/" | tee -a "$out"
  "$here/zk.sh" stop "$dir/zk"
}

# start_shepherd LABEL BINARY [WRAP…]: `shepherd serve` on a fresh data directory, under WRAP;
# sets addr and server_pid.
start_shepherd() {
  local label=$1 binary=$2 line i
  shift 2
  rm -rf "$dir/data" "$dir/serve.out"
  # shellcheck disable=SC2086 # $serve_args is a list of options, split on purpose.
  "$@" "$binary" serve --port 0 --data-dir "$dir/data" $serve_args >"$dir/serve.out" 2>>"$dir/serve.log" &
  wrapper_pid=$!
  for ((i = 0; i < 600; i++)); do
    line=$(grep -m1 '^shepherd listening on ' "$dir/serve.out" || true)
    [[ -z $line ]] || break
    kill -0 "$wrapper_pid" 2>/dev/null || { echo "pressure.sh: $label exited; see $dir/serve.log" >&2; exit 1; }
    sleep 0.05
  done
  [[ -n $line ]] || { echo "pressure.sh: $label did not listen within 30 s" >&2; exit 1; }
  addr=${line#shepherd listening on }
  if (($# > 0)); then server_pid=$(pgrep -P "$wrapper_pid" | head -n 1); else server_pid=$wrapper_pid; fi
}

if [[ ${1:-} == throughput ]]; then
  runs=${2:-3}
  [[ -n $before ]] || { echo "pressure.sh: throughput needs SHEPHERD_BEFORE" >&2; exit 2; }
  out=${OUT:-throughput.csv}
  # 64 sessions from one address: past the default maxClientCnxns (60), as perf.sh allows them.
  echo maxClientCnxns=0 >"$dir/throughput.cfg"
  serve_args="--config $dir/throughput.cfg"
  rm -f "$out"
  for ((run = 1; run <= runs; run++)); do
    for side in before after; do
      binary=$shepherd
      [[ $side == after ]] || binary=$before
      for shape in "1 256 30000" "64 64 100000"; do
        read -r sessions window nodes <<<"$shape"
        start_shepherd "$side" "$binary"
        "$bench" load --connect "$addr" --server-pid "$server_pid" --label "$side-$run" \
          --sessions "$sessions" --in-flight "$window" --nodes "$nodes" --csv "$dir/load.csv" >/dev/null
        tail -n +2 "$dir/load.csv" >>"$out.rows"
        head -n 1 "$dir/load.csv" >"$out.head"
        stop_shepherd
      done
    done
  done
  cat "$out.head" "$out.rows" >"$out"
  rm -f "$out.head" "$out.rows"
  python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
runs = {}
for r in rows:
    if r["phase"] in ("create", "set", "delete"):
        key = (r["server"].rsplit("-", 1)[0], r["sessions"], r["server"].rsplit("-", 1)[1])
        ops, secs = runs.get(key, (0, 0.0))
        runs[key] = (ops + int(r["ops"]) + int(r["errors"]), secs + float(r["seconds"]))
for side in ("before", "after"):
    for sessions in ("1", "64"):
        rates = [ops / secs for (s, n, _), (ops, secs) in sorted(runs.items()) if (s, n) == (side, sessions)]
        shown = " ".join(f"{x:,.0f}" for x in rates)
        print(f"{side:6} {sessions:>2} sessions: median {statistics.median(rates):,.0f} writes/s   runs: {shown}")
PY
  exit 0
fi

echo "run,server,burst,count,size,rss_before,rss_peak,growth_mib,source,seconds,error" | tee "$out"
for ((run = 1; run <= runs; run++)); do
  zookeeper "$run"
  for pair in $before; do
    [[ $pair == *=* ]] || pair=shepherd-before=$pair
    shepherd "${pair%%=*}" "${pair#*=}" "$run"
  done
  shepherd shepherd "$shepherd" "$run"
done

echo
echo "median growth (MiB) over $runs runs, fsync delayed ${delay_us} us:"
python3 - "$out" <<'PY'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
keys = sorted({(r["server"], r["burst"]) for r in rows})
for server, burst in keys:
    mine = [r for r in rows if (r["server"], r["burst"]) == (server, burst)]
    growth = [float(r["growth_mib"]) for r in mine]
    runs = " ".join(f"{float(r['growth_mib']):.1f}" + ("(failed)" if r["error"] else "") for r in mine)
    print(f"{server:16} {burst:4} median {statistics.median(growth):7.1f}   runs: {runs}")
PY
