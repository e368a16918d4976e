# Sourced by the scripts that run a benchmark against both servers and keep every run's
# figures (tree.sh, watches.sh, generate-load.sh): where the binaries are, the output folder
# and the commit it is for, and a `shepherd serve` child on a data directory.

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

# serve_shepherd DIR [ARG…]: starts `shepherd serve --port 0 --data-dir DIR/data ARG…`, its
# log appended to DIR/serve.log, and sets $pid and $addr once it listens (its first line).
serve_shepherd() {
  local dir=$1 line
  shift
  mkdir -p "$dir"
  exec {fd}< <(exec "$shepherd" serve --port 0 --data-dir "$dir/data" "$@" 2>>"$dir/serve.log")
  pid=$!
  read -r -t 1800 line <&"$fd" || { echo "shepherd serve did not start; see $dir/serve.log" >&2; exit 1; }
  addr=${line#shepherd listening on }
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
