#!/usr/bin/env bash
# ZooKeeper's own load generator swept over write percentages, Shepherd beside ZooKeeper 3.8
# (docs/bench/generate-load.md).
#
#   bench/scripts/generate-load.sh [RUNS] [OUT]
#
# For each run (default 3), ZooKeeper first, then Shepherd, each on a fresh empty data
# directory, durable (forceSync=yes on both; ZooKeeper with the JVM's default heap, as Debian
# runs it): bench/java/GenerateLoadSweep.java starts CLIENTS (default 30) instances of
# GenerateLoad.GeneratorInstance from Debian's zookeeper-it jar in one JVM (each one session,
# asynchronous getData/setData of its own node, REQUEST_BYTES (default 1024) of data, at most
# 100 outstanding), and for each write percentage of 0, 10, 30, 50, 70, 90 and 100 lets them
# run WARMUP (default 5) seconds, then counts MEASURE (default 10) seconds of completed
# operations and the server's CPU time (utime + stime of /proc/PID/stat). Every figure goes to
# OUT/generate-load.csv (default: a temporary directory), the medians and ratios to stdout.
#
# SHEPHERD (default target/release/shepherd): `cargo build --release --bin shepherd`. Needs
# Debian's zookeeper and libzookeeper-java (zookeeper-it.jar) and a JDK (javac).
set -euo pipefail

runs=${1:-3}
# shellcheck source=bench/scripts/side-by-side.sh
. "$(dirname "$0")/side-by-side.sh"
side_by_side generate-load "${2:-}"
clients=${CLIENTS:-30} bytes=${REQUEST_BYTES:-1024} warmup=${WARMUP:-5} measure=${MEASURE:-10}
percents=0,10,30,50,70,90,100
mkdir -p "$out/classes"
csv=$out/generate-load.csv
echo "server,run,percent,ops_per_s,server_cpu_us_per_op,errors" >"$csv"

jars=/usr/share/java
cp="$out/classes:$jars/zookeeper.jar:$jars/zookeeper-jute.jar:$jars/zookeeper-it.jar"
cp+=":$jars/slf4j-api.jar:$jars/slf4j-log4j12.jar:$jars/log4j-1.2.jar:$out"
javac -nowarn -cp "$cp" -d "$out/classes" "$root/bench/java/GenerateLoadSweep.java"
printf 'log4j.rootLogger=ERROR, E\nlog4j.appender.E=org.apache.log4j.ConsoleAppender\nlog4j.appender.E.layout=org.apache.log4j.SimpleLayout\n' \
  >"$out/log4j.properties"

pid=
trap '[[ -z $pid ]] || kill -9 "$pid" 2>/dev/null || true' EXIT

sweep() { # KIND RUN ADDR: the sweep against the server $pid at ADDR
  local kind=$1 run=$2 addr=$3 percent ops cpu errs
  echo "# run $run, $kind at $addr, $(cut -d' ' -f1-3 /proc/loadavg)" >&2
  # The instances write a "trace" file into the working directory.
  (cd "$out" && java -cp "$cp" GenerateLoadSweep "$addr" "$pid" "$clients" "$bytes" \
    "$warmup" "$measure" "$percents" 2>>"$out/$kind-$run.stderr") |
    while read -r percent ops cpu errs; do
      echo "$kind,$run,$percent,$ops,$cpu,$errs" | tee -a "$csv"
    done
}

for run in $(seq "$runs"); do
  dir=$out/zookeeper-$run
  read -r _ port _ pid < <("$here/zk.sh" start "$dir" yes)
  sweep zookeeper "$run" "127.0.0.1:$port"
  "$here/zk.sh" stop "$dir"
  rm -rf "$dir/data"

  dir=$out/shepherd-$run
  serve_shepherd "$dir" --set maxClientCnxns=0
  sweep shepherd "$run" "$addr"
  kill "$pid"
  wait "$pid" 2>/dev/null || true
  rm -rf "$dir/data"
done
pid=

python3 - "$csv" "$commit" "$clients" "$bytes" <<'EOF'
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
print(f"commit {sys.argv[2]}, {sys.argv[3]} GeneratorInstances, {sys.argv[4]} B; medians (every run)")
print("| writes | ZooKeeper ops/s | Shepherd ops/s | ops ratio | ZooKeeper CPU µs/op | Shepherd CPU µs/op | CPU ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|")
for p in sorted({int(r["percent"]) for r in rows}):
    def col(kind, key):
        return [float(r[key]) for r in rows if r["server"] == kind and int(r["percent"]) == p]
    zo, so, zc, sc = col("zookeeper", "ops_per_s"), col("shepherd", "ops_per_s"), \
        col("zookeeper", "server_cpu_us_per_op"), col("shepherd", "server_cpu_us_per_op")
    m = statistics.median
    show = lambda v, f: f"{f.format(m(v))} ({', '.join(f.format(x) for x in v)})"
    print(f"| {p} % | {show(zo, '{:,.0f}')} | {show(so, '{:,.0f}')} | {m(so) / m(zo):.2f}× | "
          f"{show(zc, '{:.1f}')} | {show(sc, '{:.1f}')} | 1/{m(zc) / m(sc):.1f} |")
errors = sum(int(r["errors"]) for r in rows)
print(f"errors reported by the instances: {errors}")
EOF
