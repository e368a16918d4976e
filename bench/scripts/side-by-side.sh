# Sourced by the scripts that run a benchmark against both servers and keep every run's
# figures (tree.sh, watches.sh, generate-load.sh; latencies.sh for its servers alone): where the
# binaries are, the output folder and the commit it is for, and a `shepherd serve` child on a
# data directory.

# side_by_side NAME [OUT]: sets $here, $root, $shepherd (SHEPHERD, default
# target/release/shepherd), $bench (SHEPHERD_BENCH, default target/release/shepherd-bench),
# $out (OUT, created, or a new temporary directory named after NAME) and $commit.
side_by_side() {
  here=$(cd "$(dirname "${BASH_SOURCE[1]}")" && pwd)
  root=$(cd "$here/../.." && pwd)
  shepherd=${SHEPHERD:-$root/target/release/shepherd}
  bench=${SHEPHERD_BENCH:-$root/target/release/shepherd-bench}
  out=${2:-$(mktemp -d "${TMPDIR:-/tmp}/$1.XXXXXX")}
  mkdir -p "$out"
  out=$(cd "$out" && pwd)
  commit=$(git -C "$root" rev-parse --short HEAD)
}

# serve_listening LOG COMMAND [ARG…]: starts COMMAND, its stderr appended to LOG, and sets $pid
# and $addr once its first line of output, `… listening on ADDR`, has come (`shepherd serve`
# prints one, and so does the load_gen floor).
serve_listening() {
  local log=$1 line
  shift
  exec {fd}< <(exec "$@" 2>>"$log")
  pid=$!
  if ! read -r -t 1800 line <&"$fd"; then
    echo "$1 did not start; its log ($log):" >&2
    tail -n 20 "$log" >&2
    exit 1
  fi
  addr=${line##*listening on }
  addr=${addr%% *}
}

# serve_shepherd DIR [ARG…]: starts `shepherd serve --port 0 --data-dir DIR/data ARG…`, its
# log appended to DIR/serve.log, and sets $pid and $addr once it listens.
serve_shepherd() {
  local dir=$1
  shift
  mkdir -p "$dir"
  serve_listening "$dir/serve.log" "$shepherd" serve --port 0 --data-dir "$dir/data" "$@"
}

# alternate RUNS FUNCTION: FUNCTION zookeeper RUN, then FUNCTION shepherd RUN, for RUN = 1 ..
# RUNS, so that both servers see the machine as it is at each run.
alternate() {
  local run
  for run in $(seq "$1"); do
    "$2" zookeeper "$run"
    "$2" shepherd "$run"
  done
}
