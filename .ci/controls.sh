#!/usr/bin/env bash
# The test controls over HTTP (docs/test-controls.md) from two other languages: kazoo
# (tests/interop/controls_kazoo.py) and Apache Curator 5.4 (tests/interop/curator/
# ControlsExpiry.java), each expiring its own session on the server and seeing a second client
# take its lock over.
#
#   bash .ci/controls.sh SHEPHERD_BIN
#
# Starts its own `SHEPHERD_BIN serve --test-controls` on free loopback ports, reads the client
# address and the test controls' address and token from its stdout, runs both, and stops it.
# Prints `controls: N passed`; exits 1 if anything failed, after running everything. Needs
# kazoo, javac and the libcurator-{client,framework,recipes}-java packages.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if (($# != 1)); then
  echo "usage: $0 SHEPHERD_BIN" >&2
  exit 2
fi
bin=$1

work=$(mktemp -d "${TMPDIR:-/tmp}/controls.XXXXXX")
pid=''
cleanup() {
  if [[ -n $pid ]]; then
    kill "$pid" 2>/dev/null
    wait "$pid" 2>/dev/null
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# shellcheck source=tests/interop/curator/build.sh
# CURATOR_BUILD, when set, is a build directory shared with .ci/curator.sh: compiled once.
if ! source tests/interop/curator/build.sh "${CURATOR_BUILD:-$work/classes}"; then
  echo "controls: the Curator classes did not compile" >&2
  exit 1
fi

"$bin" serve --port 0 --test-controls >"$work/serve.out" 2>"$work/serve.log" </dev/null &
pid=$!
# The two lines `shepherd serve` prints at start (docs/test-controls.md): the client address,
# then the test controls' URL and token.
addr='' url='' token=''
deadline=$((SECONDS + 30))
while [[ -z $token ]] && ((SECONDS < deadline)); do
  read -r url token < <(sed -n 's/^shepherd test controls on \(http:[^ ]*\) token \([0-9a-f]*\)$/\1 \2/p' "$work/serve.out")
  if ! kill -0 "$pid" 2>/dev/null; then
    echo "controls: shepherd serve exited early:" >&2
    cat "$work/serve.log" >&2
    exit 1
  fi
  [[ -n $token ]] || sleep 0.1
done
# The address line comes first, so it is there once the token is.
addr=$(sed -n 's/^shepherd listening on \([0-9.]*:[0-9]*\)$/\1/p' "$work/serve.out")
if [[ -z $addr || -z $token ]]; then
  echo "controls: shepherd serve printed no address and token within 30 s" >&2
  exit 1
fi
echo "shepherd serve at $addr, test controls at $url"
export SHEPHERD_CONTROLS_TOKEN=$token

passed=0 status=0
count() { # reads a suite's output, echoes it, adds its `...: N passed` to $passed
  local line n
  while IFS= read -r line; do
    echo "$line"
    if [[ $line =~ ^controls\ [a-z]+:\ ([0-9]+)\ passed$ ]]; then
      n=${BASH_REMATCH[1]}
      echo "$n" >>"$work/passed"
    fi
  done
}

echo "--- kazoo"
python3 tests/interop/controls_kazoo.py "$addr" "$url" | count
((PIPESTATUS[0] == 0)) || status=1
echo "--- Curator"
# A test JVM wants a quick start, not peak throughput.
java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 -cp "$CURATOR_CP" \
  ControlsExpiry "$addr" "$url" | count
((PIPESTATUS[0] == 0)) || status=1

if [[ -f $work/passed ]]; then
  while read -r n; do passed=$((passed + n)); done <"$work/passed"
fi
if ((status != 0)); then
  echo "--- shepherd serve log tail:" >&2
  tail -n 30 "$work/serve.log" >&2
fi
echo "controls: $passed passed"
exit "$status"
