#!/usr/bin/env bash
# The Python package shepherd-zk (python/, docs/python.md), as a Python user gets it: the wheel
# built with maturin, installed with pip into a fresh virtual environment beside pytest and kazoo
# from PyPI, and then
#   1. the package's own tests (python/tests): prints `python: N passed, M failed`;
#   2. test modules of kazoo 2.11's own suite (from its sdist, fetched by pip into a temp dir)
#      with only `from kazoo.testing import` rewritten to `from shepherd_zk.kazoo import`:
#      prints `kazoo-harness: N passed, M failed`;
#   3. the herd example (python/examples/herd.py), a smoke run with a short contender list.
#
#   bash .ci/python.sh
#
# Counts come from pytest's JUnit XML; skips are reported as skipped, never as passed, and a
# run that collected no test (pytest's exit code 5) fails. Exits 1 if anything failed, after
# running everything. Needs python3 with venv and pip, and a Rust toolchain (maturin builds the
# extension from this checkout).
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$(pwd)

work=$(mktemp -d "${TMPDIR:-/tmp}/python-ci.XXXXXX")
trap 'rm -rf "$work"' EXIT
failed=0
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_ROOT_USER_ACTION=ignore RUST_BACKTRACE=0

# Debian's python3 has venv in its own package.
if ! python3 -m venv "$work/venv"; then
  apt-get install -y -q python3-venv && python3 -m venv "$work/venv" || exit 1
fi
py=$work/venv/bin/python

echo "--- maturin build --release (the abi3 wheel)"
"$py" -m pip install -q 'maturin>=1.5,<2' || exit 1
(cd python && "$work/venv/bin/maturin" build --release --out "$work/wheels") || exit 1
ls -l "$work"/wheels/shepherd_zk-*.whl

echo "--- a fresh virtual environment: the wheel, pytest and kazoo from PyPI"
"$py" -m venv --clear "$work/venv" || exit 1
# objgraph: kazoo's test_cache imports it.
"$py" -m pip install -q "$work"/wheels/shepherd_zk-*.whl pytest kazoo==2.11.0 objgraph || exit 1
"$py" -m pip list 2>/dev/null | grep -Ei '^(shepherd-zk|kazoo|pytest) '
command -v "$work/venv/bin/shepherd" >/dev/null || {
  echo "python: the wheel installed no shepherd command" >&2
  failed=1
}

# Runs pytest in directory $2 on the remaining arguments and prints `$1: N passed, M failed`
# (and the skips) from its JUnit XML.
run_pytest() {
  local name=$1 dir=$2 xml=$work/$1.xml rc
  shift 2
  (cd "$dir" && "$py" -m pytest -p no:cacheprovider -q -rs --junitxml="$xml" "$@")
  rc=$?
  if ((rc == 5)) || [[ ! -f $xml ]]; then
    echo "$name: pytest collected no test (exit $rc)" >&2
    echo "$name: 0 passed, 1 failed"
    failed=1
    return
  fi
  "$py" - "$xml" "$name" <<'PY'
import sys
import xml.etree.ElementTree as ET

root = ET.parse(sys.argv[1]).getroot()
suites = [root] if root.tag == "testsuite" else list(root)
count = lambda key: sum(int(s.get(key, 0)) for s in suites)
tests, failures, errors, skipped = (count(k) for k in ("tests", "failures", "errors", "skipped"))
extra = f", {skipped} skipped" if skipped else ""
print(f"{sys.argv[2]}: {tests - failures - errors - skipped} passed, {failures + errors} failed{extra}")
PY
  ((rc == 0)) || failed=1
}

echo "--- the package's tests"
run_pytest python "$root/python/tests" .

echo "--- kazoo 2.11's own test modules on shepherd_zk.kazoo"
"$py" -m pip download -q --no-binary :all: --no-deps kazoo==2.11.0 -d "$work/sdist" || exit 1
tar -xzf "$work"/sdist/kazoo-2.11.0.tar.gz -C "$work" || exit 1
kz=$work/kazoo-2.11.0
modules=(lock counter barrier queue election party lease watchers partitioner cache client connection
  interrupt)
# What Shepherd does not do, or does as real ZooKeeper does where kazoo's harness fakes it
# (docs/python.md, "A drop-in for kazoo's harness"): these are left out, not counted as passed.
known=(
  kazoo/tests/test_client.py::TestReconfig
  kazoo/tests/test_connection.py::TestReadOnlyMode
  kazoo/tests/test_client.py::TestClientTransitions::test_connection_and_disconnection
)
paths=()
for m in "${modules[@]}"; do
  paths+=("kazoo/tests/test_$m.py")
  sed -i 's/^from kazoo\.testing import /from shepherd_zk.kazoo import /' "$kz/kazoo/tests/test_$m.py"
  grep -q '^from shepherd_zk.kazoo import ' "$kz/kazoo/tests/test_$m.py" || {
    echo "kazoo-harness: test_$m.py has no kazoo.testing import to rewrite" >&2
    failed=1
  }
done
# kazoo's pytest settings turn on live logging: thousands of lines CI does not need.
run_pytest kazoo-harness "$kz" -o log_cli=false "${paths[@]}" "${known[@]/#/--deselect=}"

echo "--- the herd example (docs/python.md)"
if ! "$py" python/examples/herd.py --contenders 2,10; then
  echo "python: the herd example failed" >&2
  failed=1
fi

exit "$failed"
