#!/usr/bin/env bash
# The worst request latency while a server writes a snapshot of a 1 M-node tree, Shepherd
# against ZooKeeper 3.8 (docs/bench/snapshot-latency.md).
#
#   bench/scripts/snapshot-latency.sh run shepherd|zookeeper OUT   fill, restart, measure
#   bench/scripts/snapshot-latency.sh analyse OUT/shepherd|OUT/zookeeper   the table rows again
#
# For each server: start it with a data directory and a snapCount above the fill (no snapshot
# while filling), create NODES nodes of 16 B, stop it, start it again on the same directory
# with snapCount=SNAPCOUNT (100000, ZooKeeper's default), then offer RATE requests/s of
# setData and getData in turn (open loop, latency from each request's scheduled time) for
# DURATION seconds, tracing every request. Writes are RATE/2 a second, so the snapshot rule
# (more than snapCount/2 + r txns, r in 0..snapCount/2) fires 50–100 s into the window, and
# may fire again 50–100 s after that. Each snapshot's start and end come from the server's
# log; its row (every request outstanding while it ran) is compared with an equal window
# just before it, and with the median and worst of all other such windows of the trace.
# forceSync=yes on both. Needs `cargo build --release --bin shepherd --bin shepherd-bench`
# first (or SHEPHERD=path for `shepherd serve`, SHEPHERD_BENCH=path for `shepherd-bench load`).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
SHEPHERD=${SHEPHERD:-$root/target/release/shepherd}
SHEPHERD_BENCH=${SHEPHERD_BENCH:-$root/target/release/shepherd-bench}
NODES=${NODES:-1000000}
RATE=${RATE:-2000}
DURATION=${DURATION:-150}
SESSIONS=${SESSIONS:-4}
SNAPCOUNT=${SNAPCOUNT:-100000}
FOLDER=/snapshot-latency
ZK_LOGGERS="org.apache.zookeeper.server.ZooKeeperServer org.apache.zookeeper.server.persistence.FileTxnSnapLog"

log() { echo "# $(date -u +%H:%M:%S) $*"; }

# The server running now, stopped however the script ends.
pid=
trap '[[ -z $pid ]] || stop_pid "$pid"' EXIT

# shepherd-bench load against HOST:PORT (server pid PID), the rest of the arguments appended.
bench() {
  local connect=$1 pid=$2
  shift 2
  "$SHEPHERD_BENCH" load --connect "$connect" --server-pid "$pid" --sessions "$SESSIONS" \
    --nodes "$NODES" --dir "$FOLDER" "$@"
}

fill() {
  local connect=$1 pid=$2 out=$3
  log "fill: $NODES nodes, load $(cut -d' ' -f1-3 /proc/loadavg)"
  bench "$connect" "$pid" --phases create --in-flight 64 --label fill | tee "$out/fill.txt"
}

measure() {
  local connect=$1 pid=$2 out=$3 label=$4
  log "measure: $RATE/s for $DURATION s, load $(cut -d' ' -f1-3 /proc/loadavg)"
  cut -d' ' -f1-3 /proc/loadavg >"$out/loadavg-before"
  bench "$connect" "$pid" --phases mixed --in-flight 256 --rate "$RATE" --duration "$DURATION" \
    --label "$label" --trace "$out/trace.csv" --csv "$out/summary.csv" | tee "$out/summary.txt"
  cut -d' ' -f1-3 /proc/loadavg >"$out/loadavg-after"
  log "measured, load $(cat "$out/loadavg-after")"
}

# Starts `shepherd serve` on DIR with CONFIG, its log in LOG; sets $port and $pid.
serve() {
  local dir=$1 config=$2 log_file=$3 line
  exec {fd}< <(RUST_LOG=info exec "$SHEPHERD" serve --data-dir "$dir" --config "$config" \
    --port 0 2>"$log_file")
  pid=$!
  # The only line on stdout: `shepherd listening on 127.0.0.1:PORT`, once it serves.
  read -r -t 900 line <&"$fd" || { echo "shepherd serve did not start; see $log_file" >&2; exit 1; }
  port=${line##*:}
}

stop_pid() {
  local pid=$1 i
  kill "$pid" 2>/dev/null || return 0
  for ((i = 0; i < 1200; i++)); do
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.1
  done
  kill -9 "$pid" 2>/dev/null || true
}

run_shepherd() {
  local out=$1 data=$1/data
  mkdir -p "$data"
  printf 'snapCount=%s\nforceSync=yes\n' $((NODES * 4)) >"$out/fill.cfg"
  printf 'snapCount=%s\nforceSync=yes\n' "$SNAPCOUNT" >"$out/measure.cfg"
  serve "$data" "$out/fill.cfg" "$out/serve-fill.log"
  fill "127.0.0.1:$port" "$pid" "$out"
  stop_pid "$pid"
  pid=
  log "restart (recovery and its clean snapshot, before serving)"
  serve "$data" "$out/measure.cfg" "$out/serve.log"
  log "serving on $port"
  measure "127.0.0.1:$port" "$pid" "$out" "shepherd serve"
  stop_pid "$pid"
  pid=
  git -C "$root" rev-parse --short HEAD >"$out/commit"
}

run_zookeeper() {
  local out=$1 started
  mkdir -p "$out"
  started=$(ZK_SNAPCOUNT=$((NODES * 4)) ZK_INFO_LOGGERS=$ZK_LOGGERS "$here/zk.sh" start "$out/zk" yes)
  read -r _ port _ pid <<<"$started"
  fill "127.0.0.1:$port" "$pid" "$out"
  "$here/zk.sh" stop "$out/zk"
  pid=
  log "restart (load and its clean snapshot, before serving)"
  started=$(ZK_SNAPCOUNT=$SNAPCOUNT ZK_INFO_LOGGERS=$ZK_LOGGERS "$here/zk.sh" start "$out/zk" yes)
  read -r _ port _ pid <<<"$started"
  log "serving on $port"
  measure "127.0.0.1:$port" "$pid" "$out" "ZooKeeper 3.8.0"
  "$here/zk.sh" stop "$out/zk"
  pid=
}

# The table rows from OUT's trace and the server's log.
analyse() {
  python3 - "$1" <<'PYEOF'
import csv, datetime as dt, pathlib, re, sys

out = pathlib.Path(sys.argv[1])
trace = []
with open(out / "trace.csv") as f:
    for row in csv.DictReader(f):
        trace.append((int(row["due_unix_us"]), int(row["latency_us"]), row["op"], row["ok"] == "1"))
trace.sort()
t0, t1 = trace[0][0], trace[-1][0]

def unix_us(text, fmt):
    return int(dt.datetime.strptime(text, fmt).replace(tzinfo=dt.timezone.utc).timestamp() * 1e6)

snaps = []  # (start, end, how the start was found)
if (out / "serve.log").exists():
    # `2026-…T07:30:01.123456Z  INFO …: snapshot written path=… ms=1234`: the end, and its
    # duration, so the start is end − ms.
    pat = re.compile(r"^(\S+T\d\d:\d\d:\d\d\.\d{1,6})\d*Z\s+INFO .*snapshot written .*\bms=(\d+)")
    for line in open(out / "serve.log"):
        m = pat.search(line)
        if m:
            end = unix_us(m.group(1), "%Y-%m-%dT%H:%M:%S.%f")
            snaps.append((end - int(m.group(2)) * 1000, end, "end − ms"))
else:
    # ZooKeeper: `Snapshotting: 0x… to …` when it starts, `Snapshot taken in N ms` at the end.
    start = None
    for line in open(out / "zk" / "zookeeper.log"):
        stamp = line[:23]
        if "Snapshotting: 0x" in line:
            start = unix_us(stamp, "%Y-%m-%d %H:%M:%S,%f")
        elif "Snapshot taken in" in line and start is not None:
            snaps.append((start, unix_us(stamp, "%Y-%m-%d %H:%M:%S,%f"), "log lines"))
            start = None
snaps = [s for s in snaps if t0 <= s[0] <= t1]

def stats(lo, hi):
    # Every request outstanding at some instant of [lo, hi): due before hi, answered after
    # lo, so that one due just before a stall and answered during it counts too.
    inside = [t for t in trace if t[0] < hi and t[0] + t[1] >= lo]
    lat = sorted(l for _, l, _, _ in inside)
    errors = sum(1 for *_, ok in inside if not ok)
    ops = {op: max((l for _, l, o, _ in inside if o == op), default=0) for op in ("set", "get")}
    if not lat:
        return None
    # Nearest rank, per mille: the ceil(q·n)-th smallest.
    rank = lambda permille: lat[min(len(lat), max(1, -(-permille * len(lat) // 1000))) - 1]
    return len(lat), errors, rank(500), rank(990), rank(999), lat[-1], ops

def utc(us):
    return dt.datetime.fromtimestamp(us / 1e6, dt.timezone.utc).strftime("%H:%M:%S.%f")[:-3]

ms = lambda us: f"{us / 1000:.2f}"
print(f"# {out}: trace {utc(t0)}–{utc(t1)} UTC, {len(trace)} requests, "
      f"{len(snaps)} snapshot(s) started inside it")
print("| window | UTC | s | requests | errors | p50 ms | p99 ms | p99.9 ms | max ms | max set / get ms |")
print("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|")
gap, warm = 2_000_000, 10_000_000
for start, end, how in snaps:
    length = end - start
    # The equal window before the snapshot (after warm-up), else the one after it.
    if start - gap - length >= t0 + warm:
        base = (start - gap - length, start - gap)
    else:
        base = (end + gap, end + gap + length)
        print("(the window before the snapshot is too short: the one after it is used)")
    # Every other window of that length with no snapshot near it, after warm-up: the one of
    # median max and the worst, to show what the machine does without a snapshot.
    others = []
    lo = t0 + warm
    while lo + length <= t1:
        if all(lo + length + gap <= s0 or lo >= e0 + gap for s0, e0, _ in snaps):
            others.append((stats(lo, lo + length)[5], lo))
        lo += length
    others.sort()
    rows = [(f"snapshot ({how})", (start, end)), ("no snapshot, just before", base)]
    if others:
        median, worst = others[len(others) // 2][1], others[-1][1]
        rows.append((f"no snapshot, median of {len(others)} windows", (median, median + length)))
        rows.append((f"no snapshot, worst of {len(others)} windows", (worst, worst + length)))
    for name, (lo, hi) in rows:
        s = stats(lo, hi)
        if s is None or hi > t1:
            print(f"| {name} | {utc(lo)}–{utc(hi)} | {(hi - lo) / 1e6:.1f} | outside the trace |")
            continue
        n, errors, p50, p99, p999, top, ops = s
        print(f"| {name} | {utc(lo)}–{utc(hi)} | {(hi - lo) / 1e6:.1f} | {n} | {errors} | "
              f"{ms(p50)} | {ms(p99)} | {ms(p999)} | {ms(top)} | {ms(ops['set'])} / {ms(ops['get'])} |")
n, errors, p50, p99, p999, top, ops = stats(t0, t1 + 1)
print(f"| whole trace | {utc(t0)}–{utc(t1)} | {(t1 - t0) / 1e6:.1f} | {n} | {errors} | {ms(p50)} | "
      f"{ms(p99)} | {ms(p999)} | {ms(top)} | {ms(ops['set'])} / {ms(ops['get'])} |")
PYEOF
}

case ${1:-} in
run)
  case ${2:-} in
  shepherd | zookeeper)
    "$SHEPHERD_BENCH" load --help | grep -q -- --trace ||
      { echo "$SHEPHERD_BENCH has no load --trace: build it from this tree" >&2; exit 1; }
    "run_$2" "$3/$2"
    analyse "$3/$2" | tee "$3/$2/table.md"
    ;;
  *) echo "usage: $0 run shepherd|zookeeper OUT" >&2; exit 2 ;;
  esac
  ;;
analyse) analyse "$2" ;;
*)
  echo "usage: $0 run shepherd|zookeeper OUT | analyse OUT/SERVER" >&2
  exit 2
  ;;
esac
