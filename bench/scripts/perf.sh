#!/usr/bin/env bash
# The side-by-side performance run behind the README's table (docs/bench/load.md, "Side by
# side, one run"): Shepherd against Debian's ZooKeeper 3.8, both durable (a data directory on
# the same disk, fsync before every acknowledgement), the same clients, one machine, one go.
#
#   bench/scripts/perf.sh [--no-build] [--with-scale] [--quick] [--out DIR]
#
# 1. builds the release binaries and the floor (cargo build --release --bin shepherd --bin
#    shepherd-bench, then cargo build --release --example loadgen_floor -p shepherd-bench)
#    unless --no-build; SHEPHERD, SHEPHERD_BENCH and FLOOR override them (default
#    target/release/shepherd, target/release/shepherd-bench,
#    target/release/examples/loadgen_floor), COMMIT the commit named in the output (default:
#    this tree's HEAD, marked when the tree has uncommitted changes);
# 2. starts ZooKeeper (zk.sh, forceSync=yes) and `shepherd serve --data-dir` (forceSync yes by
#    default), each on an empty data directory under one temporary directory (TMPDIR, /tmp);
# 3. warms ZooKeeper's JIT once (4 sessions, 20 000 nodes, every phase), results discarded;
# 4. closed loop: `shepherd-bench load` at 1, 4 and 64 sessions, each with 16, 64 and 256
#    requests in flight per session, phases create, set, get, delete; ZooKeeper then Shepherd
#    for each session count, so that both see the same machine. A server's *peak* at a session
#    count is its best window: writes/s is (creates + sets + deletes) / their time together;
#    reads/s is the get phase;
# 5. open loop: setData and getData offered at half of ZooKeeper's peak writes/s (over every
#    session count and window), with ZooKeeper's peak session count and 256 in flight allowed,
#    latency from each request's scheduled time; three runs per server, alternating (ZooKeeper,
#    Shepherd, ZooKeeper, …), since one 8-second run's p99 varies up to fourfold from run to
#    run on a 2-core machine, for either server; the medians of the p99s compare;
# 6. Debian's `load_gen` (the C client's pipelined create/set/get/delete loop) for LOADGEN_SECS
#    (default 8) seconds, three times per server on a fresh folder each, alternating
#    ZooKeeper, Shepherd and the floor (bench/examples/loadgen_floor.rs, a server that answers
#    load_gen with canned replies and does nothing else: the least CPU per request a server of
#    this shape spends under this client on this machine; docs/bench/load.md, "The floor under
#    `load_gen`"): server CPU (utime + stime from /proc/PID/stat, all threads) over the
#    requests the server counted (`srvr` Received), median of the three;
# 7. with --with-scale, memory per znode (1 M nodes of 16 B) and per idle session (10 000) from
#    `shepherd-bench scale` (docs/bench/scale.md), each on a fresh server: adds ≈ 4 minutes;
# 8. prints one markdown table (measure | ZooKeeper | Shepherd | ratio), the commit, and the
#    share of CPU time the host took from this virtual machine (steal) during each open-loop
#    and load_gen run (steal.csv): stalls the servers did not cause, which move the p99s.
#
# --quick runs fewer nodes (a smoke test of the script, ≈ 2 minutes; its figures are not
# stable). Every CSV and log stays in --out DIR (default: the temporary directory, removed
# at the end unless --out is given). The full run takes 10–13 minutes on a 2-core machine.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=1 with_scale=0 quick=0 out=
while (($#)); do
  case $1 in
  --no-build) build=0 ;;
  --with-scale) with_scale=1 ;;
  --quick) quick=1 ;;
  --out) out=$2; shift ;;
  *) echo "usage: $0 [--no-build] [--with-scale] [--quick] [--out DIR]" >&2; exit 2 ;;
  esac
  shift
done

shepherd=${SHEPHERD:-$root/target/release/shepherd}
bench=${SHEPHERD_BENCH:-$root/target/release/shepherd-bench}
# The benchmark command starts this same binary for its `shepherd serve` children.
export SHEPHERD_BIN=$shepherd
floor=${FLOOR:-$root/target/release/examples/loadgen_floor}
loadgen=${LOADGEN:-/usr/lib/zookeeper/bin/load_gen}
loadgen_secs=${LOADGEN_SECS:-8}
if ((quick)); then
  nodes_for() { echo 3000; }
  loadgen_secs=3
else
  # Enough nodes per session that the widest window (256) is a small part of each phase.
  nodes_for() { case $1 in 1) echo 30000 ;; 4) echo 50000 ;; *) echo 100000 ;; esac; }
fi
windows=16,64,256

if ((build)); then
  (cd "$root" && cargo build --release --bin shepherd --bin shepherd-bench &&
    cargo build --release --example loadgen_floor -p shepherd-bench)
fi
[[ -x $shepherd ]] || { echo "perf.sh: no $shepherd (build it, or set SHEPHERD)" >&2; exit 1; }
[[ -x $bench ]] || { echo "perf.sh: no $bench (build it, or set SHEPHERD_BENCH)" >&2; exit 1; }
[[ -x $floor ]] || { echo "perf.sh: no $floor (build it, or set FLOOR)" >&2; exit 1; }
[[ -x $loadgen ]] || { echo "perf.sh: no $loadgen (apt-get install zookeeper-bin)" >&2; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/perf.XXXXXX")
results=${out:-$work}
mkdir -p "$results"
zk_pid= sh_pid= fl_pid=
cleanup() {
  # A server killed by the signal makes `wait` fail, which must not fail the run (set -e).
  [[ -n $sh_pid ]] && { kill "$sh_pid" && wait "$sh_pid"; } 2>/dev/null || true
  [[ -n $fl_pid ]] && stop_floor
  [[ -n $zk_pid ]] && { "$here/zk.sh" stop "$work/zk" || true; }
  # Scratch only: with --out the results are in that directory, else they are not kept.
  rm -rf "$work"
}
trap cleanup EXIT

# COMMIT names what was measured when the binaries come from elsewhere (SHEPHERD,
# SHEPHERD_BENCH, --no-build).
commit=${COMMIT:-$(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)}
if [[ -z ${COMMIT:-} && -n $(git -C "$root" status --porcelain --untracked-files=no 2>/dev/null) ]]; then
  commit="$commit (with uncommitted changes)"
fi
echo "perf.sh: commit $commit, results in $results" >&2

start_zk() {
  local line
  line=$("$here/zk.sh" start "$work/zk" yes)
  zk_port=$(awk '{print $2}' <<<"$line")
  zk_pid=$(awk '{print $4}' <<<"$line")
  zk_addr=127.0.0.1:$zk_port
}

start_shepherd() {
  local line
  echo "maxClientCnxns=0" >"$work/shepherd.cfg"
  # The first line on stdout is `shepherd listening on ADDR`.
  coproc SERVE { RUST_LOG=warn exec "$shepherd" serve --port 0 --config "$work/shepherd.cfg" \
    --data-dir "$work/shepherd-data" 2>>"$results/shepherd-serve.log"; }
  sh_pid=$SERVE_PID
  read -r line <&"${SERVE[0]}"
  sh_addr=${line#shepherd listening on }
}

# The floor prints `listening on ADDR` first, read through a FIFO (one coproc is SERVE's).
start_floor() {
  local line= out
  mkfifo "$work/floor.fifo"
  "$floor" >"$work/floor.fifo" 2>>"$results/floor.log" &
  fl_pid=$!
  exec {out}<"$work/floor.fifo"
  read -r -t 30 line <&"$out" || true
  exec {out}<&-
  rm -f "$work/floor.fifo"
  [[ $line == "listening on "* ]] ||
    { echo "perf.sh: the floor did not start (see $results/floor.log)" >&2; exit 1; }
  fl_addr=${line#listening on }
}

stop_floor() {
  { kill "$fl_pid" && wait "$fl_pid"; } 2>/dev/null || true
  fl_pid=
}

# point_at NAME: sets addr and pid to those of the server NAME (zookeeper, shepherd or floor).
point_at() {
  case $1 in
  zookeeper) addr=$zk_addr pid=$zk_pid ;;
  shepherd) addr=$sh_addr pid=$sh_pid ;;
  floor) addr=$fl_addr pid=$fl_pid ;;
  *) echo "perf.sh: no server called $1" >&2; exit 1 ;;
  esac
}

# load NAME ADDR PID CSV ARGS…: one `shepherd-bench load` against a running server.
load() {
  local name=$1 addr=$2 pid=$3 csv=$4
  shift 4
  echo "perf.sh: bench load, $name $*" >&2
  "$bench" load --connect "$addr" --server-pid "$pid" --label "$name" --csv "$csv" "$@" \
    >>"$results/bench-load.txt"
}

start_zk
start_shepherd
echo "perf.sh: ZooKeeper $zk_addr (pid $zk_pid), Shepherd $sh_addr (pid $sh_pid)" >&2

# The JIT's first pass is not ZooKeeper's steady state (its 1-session phases run 45 % slower).
load zookeeper "$zk_addr" "$zk_pid" "$work/warm.csv" --sessions 4 --in-flight 64 \
  --nodes "$( ((quick)) && echo 3000 || echo 20000)"

for s in 1 4 64; do
  k=$(nodes_for "$s")
  load zookeeper "$zk_addr" "$zk_pid" "$results/closed-zookeeper-$s.csv" \
    --sessions "$s" --in-flight "$windows" --nodes "$k"
  load shepherd "$sh_addr" "$sh_pid" "$results/closed-shepherd-$s.csv" \
    --sessions "$s" --in-flight "$windows" --nodes "$k"
done

# Half of ZooKeeper's peak writes/s, at the session count it peaked with.
read -r half_rate open_sessions < <(python3 - "$results" <<'EOF'
import csv, glob, sys
best = (0.0, 1)
for path in glob.glob(f"{sys.argv[1]}/closed-zookeeper-*.csv"):
    rows = list(csv.DictReader(open(path)))
    for w in {r["in_flight"] for r in rows}:
        writes = [r for r in rows if r["in_flight"] == w and r["phase"] in ("create", "set", "delete")]
        ops = sum(int(r["ops"]) + int(r["errors"]) for r in writes)
        secs = sum(float(r["seconds"]) for r in writes)
        if secs > 0 and ops / secs > best[0]:
            best = (ops / secs, int(writes[0]["sessions"]))
print(f"{best[0] / 2:.0f} {best[1]}")
EOF
)
open_secs=$( ((quick)) && echo 2 || echo 8)
open_nodes=$( ((quick)) && echo 3000 || echo 20000)
for server in zookeeper shepherd; do
  point_at "$server"
  load "$server" "$addr" "$pid" "$work/open-fill-$server.csv" --sessions "$open_sessions" \
    --in-flight 256 --nodes "$open_nodes" --dir "/perf-open" --phases create
done
# The host's share of this machine's CPU time (steal) since BEFORE, "STEAL TOTAL" ticks from
# /proc/stat's first line: on a virtual machine the host's other guests take CPU from both
# servers alike, in stalls of tens of milliseconds, and a run's tail shows them. TOTAL sums
# user to steal: guest time is already counted in user and nice.
host_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= 9; i++) t += $i; print $9, t }' /proc/stat; }
steal_since() {
  local s0 t0 s1 t1
  read -r s0 t0 <<<"$1"
  read -r s1 t1 < <(host_ticks)
  awk -v s="$((s1 - s0))" -v t="$((t1 - t0))" 'BEGIN { printf "%.1f\n", 100 * s / (t > 0 ? t : 1) }'
}
echo "kind,server,run,steal_percent" >"$results/steal.csv"
for run in 1 2 3; do
  for server in zookeeper shepherd; do
    point_at "$server"
    h0=$(host_ticks)
    load "$server" "$addr" "$pid" "$results/open-$server-$run.csv" --sessions "$open_sessions" \
      --in-flight 256 --nodes "$open_nodes" --dir "/perf-open" --phases set,get \
      --rate "$half_rate" --duration "$open_secs"
    echo "open,$server,$run,$(steal_since "$h0")" >>"$results/steal.csv"
  done
done

# srvr's Received counter of the server at ADDR.
received() {
  local port=${1##*:}
  timeout 5 bash -c 'exec 3<>"/dev/tcp/127.0.0.1/$1" && printf srvr >&3 && cat <&3' _ "$port" |
    awk -F': ' '/^Received/ {print $2}'
}
# utime + stime of PID, in clock ticks.
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }

echo "server,run,seconds,requests,server_cpu_ticks,requests_per_sec,server_cpu_us_per_request" \
  >"$results/loadgen.csv"
start_floor
# Alternating, as the open loop does: a burst of the host's steal falls on all three alike.
for run in 1 2 3; do
  for server in zookeeper shepherd floor; do
    point_at "$server"
    echo "perf.sh: load_gen, $server run $run" >&2
    r0=$(received "$addr") c0=$(cpu_ticks "$pid") t0=$(date +%s.%N) h0=$(host_ticks)
    timeout "$loadgen_secs" "$loadgen" "$addr" "/loadgen-$run" 10000 >/dev/null 2>&1 || true
    t1=$(date +%s.%N) c1=$(cpu_ticks "$pid") r1=$(received "$addr")
    echo "loadgen,$server,$run,$(steal_since "$h0")" >>"$results/steal.csv"
    awk -v s="$server" -v run="$run" -v t0="$t0" -v t1="$t1" -v r0="$r0" -v r1="$r1" \
      -v c0="$c0" -v c1="$c1" -v hz="$(getconf CLK_TCK)" 'BEGIN {
        n = r1 - r0; secs = t1 - t0; cpu = c1 - c0
        printf "%s,%d,%.2f,%d,%d,%.0f,%.2f\n", s, run, secs, n, cpu, n / secs, cpu * 1e6 / hz / (n > 0 ? n : 1)
      }' >>"$results/loadgen.csv"
  done
done
stop_floor

if ((with_scale)); then
  # Fresh servers: the durable pair above is stopped first, so that they hold no memory.
  kill "$sh_pid" && wait "$sh_pid" 2>/dev/null || true
  sh_pid=
  "$here/zk.sh" stop "$work/zk"
  zk_pid=
  echo "perf.sh: bench scale, shepherd" >&2
  "$bench" scale --nodes 1000000 --value-sizes 16 --sessions 10000 \
    --label shepherd --csv "$results/scale-shepherd.csv" >>"$results/bench-scale.txt"
  : >"$results/scale-zookeeper.csv"
  for m in "--value-sizes 16 --sessions 0" "--nodes 0 --sessions 10000"; do
    echo "perf.sh: bench scale, zookeeper $m" >&2
    rm -rf "$work/zk-scale"
    read -r _ port _ pid < <(ZK_SNAPCOUNT=3000000 "$here/zk.sh" start "$work/zk-scale" yes)
    # shellcheck disable=SC2086 # $m is a list of options
    "$bench" scale --connect "127.0.0.1:$port" --server-pid "$pid" \
      --before-reading "jcmd $pid GC.run" --label zookeeper $m \
      --csv "$work/scale-zk-part.csv" >>"$results/bench-scale.txt" || true
    # One header for the whole file.
    if [[ -s $results/scale-zookeeper.csv ]]; then
      tail -n +2 "$work/scale-zk-part.csv" >>"$results/scale-zookeeper.csv"
    else
      cat "$work/scale-zk-part.csv" >>"$results/scale-zookeeper.csv"
    fi
    "$here/zk.sh" stop "$work/zk-scale"
    rm -rf "$work/zk-scale"
  done
fi

python3 - "$results" "$commit" "$half_rate" "$open_sessions" "$with_scale" <<'EOF'
import csv, glob, statistics, sys
results, commit, half_rate, open_sessions, with_scale = sys.argv[1:6]

def rows(path):
    try:
        return list(csv.DictReader(open(path)))
    except FileNotFoundError:
        return []

def peak(server, sessions):
    """(writes/s, W), (reads/s, W), writes' server CPU µs/op at the writes' peak W."""
    data = rows(f"{results}/closed-{server}-{sessions}.csv")
    best_w, best_r = (0.0, "-", None), (0.0, "-")
    for w in sorted({r["in_flight"] for r in data}, key=int):
        writes = [r for r in data if r["in_flight"] == w and r["phase"] in ("create", "set", "delete")]
        ops = sum(int(r["ops"]) + int(r["errors"]) for r in writes)
        secs = sum(float(r["seconds"]) for r in writes)
        cpu = [float(r["server_cpu_us_per_op"]) * (int(r["ops"]) + int(r["errors"])) for r in writes
               if r["server_cpu_us_per_op"]]
        if secs > 0 and ops / secs > best_w[0]:
            best_w = (ops / secs, w, sum(cpu) / ops if cpu and ops else None)
        for r in data:
            if r["in_flight"] == w and r["phase"] == "get" and float(r["ops_per_sec"]) > best_r[0]:
                best_r = (float(r["ops_per_sec"]), w)
    return best_w, best_r

def ratio(z, s, higher_better=True):
    if not z or not s:
        return "-"
    return f"**{s / z:.1f}×**" if higher_better else f"**1/{z / s:.1f}**"

out = ["| measure | ZooKeeper 3.8 | Shepherd | ratio |", "|---|---:|---:|---:|"]
for s in ("1", "4", "64"):
    (zw, zww, zcpu), (zr, zrw) = peak("zookeeper", s)
    (sw, sww, scpu), (sr, srw) = peak("shepherd", s)
    label = "session" if s == "1" else "sessions"
    out.append(f"| `bench load` writes/s, {s} {label}, peak over W (best W) | "
               f"{zw:,.0f} (W={zww}) | {sw:,.0f} (W={sww}) | {ratio(zw, sw)} |")
    out.append(f"| `bench load` getData/s, {s} {label}, peak over W (best W) | "
               f"{zr:,.0f} (W={zrw}) | {sr:,.0f} (W={srw}) | {ratio(zr, sr)} |")
    if zcpu and scpu:
        out.append(f"| server CPU µs per write at that peak, {s} {label} | "
                   f"{zcpu:.1f} | {scpu:.1f} | {ratio(zcpu, scpu, False)} |")
for phase in ("set", "get"):
    p99, runs = {}, {}
    for server in ("zookeeper", "shepherd"):
        mine = [int(r["p99_us"]) / 1000 for run in (1, 2, 3)
                for r in rows(f"{results}/open-{server}-{run}.csv") if r["phase"] == phase]
        p99[server] = statistics.median(mine) if mine else None
        runs[server] = ", ".join(f"{v:.2f}" for v in mine)
    name = "setData" if phase == "set" else "getData"
    out.append(f"| p99 ms, {name} offered at {float(half_rate):,.0f}/s (half ZooKeeper's peak "
               f"writes/s), {open_sessions} sessions, median of 3 ({runs['zookeeper']} / "
               f"{runs['shepherd']}) | {p99['zookeeper']:.2f} | "
               f"{p99['shepherd']:.2f} | {ratio(p99['zookeeper'], p99['shepherd'], False)} |")
lg = rows(f"{results}/loadgen.csv")
med = {}
for server in ("zookeeper", "shepherd"):
    mine = [r for r in lg if r["server"] == server]
    med[server] = (statistics.median(float(r["server_cpu_us_per_request"]) for r in mine),
                   statistics.median(float(r["requests_per_sec"]) for r in mine),
                   ", ".join(f'{float(r["server_cpu_us_per_request"]):.1f}' for r in mine))
z, s = med["zookeeper"], med["shepherd"]
out.append(f"| Debian `load_gen`: server CPU µs per request, median of 3 ({z[2]} / {s[2]}) | "
           f"{z[0]:.1f} | {s[0]:.1f} | {ratio(z[0], s[0], False)} |")
out.append(f"| Debian `load_gen`: requests/s, median of 3 | {z[1]:,.0f} | {s[1]:,.0f} | "
           f"{ratio(z[1], s[1])} |")
floor = [float(r["server_cpu_us_per_request"]) for r in lg if r["server"] == "floor"]
floor_line = (f"The floor under load_gen (bench/examples/loadgen_floor.rs: canned replies, nothing "
              f"else, one thread), server CPU µs per request, median of 3 "
              f"({', '.join(f'{v:.1f}' for v in floor)}): {statistics.median(floor):.1f}, "
              f"against 1/20 of ZooKeeper's: {med['zookeeper'][0] / 20:.1f}") if floor else None
if with_scale == "1":
    def per_item(server, what):
        r = [r for r in rows(f"{results}/scale-{server}.csv") if r["what"] == what and r["bytes_per_item"]]
        return float(r[0]["bytes_per_item"]) if r else None
    for what, label in (("nodes", "RSS per znode, 1 M nodes of 16 B, fresh server (B)"),
                        ("sessions", "RSS per idle session, 10 000 sessions (B)")):
        z, s = per_item("zookeeper", what), per_item("shepherd", what)
        fmt = lambda v: f"{v:,.0f}" if v else "-"
        out.append(f"| {label} | {fmt(z)} | {fmt(s)} | {ratio(z, s, False)} |")
steal = rows(f"{results}/steal.csv")
def stolen(kind, server):
    return ", ".join(r["steal_percent"] for r in steal if r["kind"] == kind and r["server"] == server)
print()
print("\n".join(out))
print()
print(f"Commit {commit}; forceSync=yes on both servers, data directories on the same disk.")
print(f"CPU time taken by the host (steal, % of the machine's), run by run: open loop "
      f"{stolen('open', 'zookeeper')} / {stolen('open', 'shepherd')}; load_gen "
      f"{stolen('loadgen', 'zookeeper')} / {stolen('loadgen', 'shepherd')}.")
if floor_line:
    print(f"{floor_line}; steal {stolen('loadgen', 'floor')}.")
EOF
