#!/usr/bin/env bash
# The crate boundaries the architecture promises, read off `cargo tree` (normal dependencies):
# the deterministic core and storage pull in no async runtime; the library facade pulls in no
# CLI, chart, progress or JSON crate; the test kit none of the tools' crates. Prints each check and
# fails on the first broken one.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

fail=0
# forbid PACKAGE CRATE...: fails when any CRATE is in PACKAGE's normal dependency tree.
forbid() {
  local package=$1 tree found=()
  shift
  tree=$(cargo tree -q -p "$package" -e normal --prefix none)
  for crate in "$@"; do
    if grep -qE "^$crate v" <<<"$tree"; then found+=("$crate"); fi
  done
  if ((${#found[@]})); then
    echo "layers: FAIL $package depends on ${found[*]}" >&2
    fail=1
  else
    echo "layers: ok   $package has none of: $*"
  fi
}

forbid shepherd-zk-core tokio tokio-util mio
forbid shepherd-zk-storage tokio tokio-util mio
forbid shepherd-zk clap plotters indicatif serde_json hyper
# The test kit is test support only: the tools (the oracle, the proof) live in shepherd-verify.
forbid shepherd-testkit clap serde_json plotters hyper
exit "$fail"
