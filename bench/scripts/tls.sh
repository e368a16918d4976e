#!/usr/bin/env bash
# The TLS handshake benchmark of docs/bench/tls.md: `shepherd-bench connect` against Debian's
# ZooKeeper 3.8 (Netty, TLS on secureClientPort) and then against `shepherd serve` (release),
# with the same certificates and zoo.cfg keys, one server at a time so that neither competes
# with the other for the CPU. Modes: plain TCP, TLS 1.3, TLS 1.3 with a client certificate;
# 1 and 8 sessions at once; every session a fresh connection (TCP, TLS, ConnectRequest,
# closeSession).
#
#   bench/scripts/tls.sh [--no-build] [OUT_DIR]
#
# Builds the release binaries first (cargo build --release --bin shepherd --bin shepherd-bench)
# unless --no-build; SHEPHERD overrides the server binary (`shepherd serve`, and the test
# certificates' `shepherd tls make-test-certs`), SHEPHERD_BENCH the benchmark's. Writes
# OUT_DIR/zookeeper.csv, OUT_DIR/shepherd.csv and OUT_DIR/table.md (default OUT_DIR: a fresh
# directory under /tmp, printed). SESSIONS (default 1000) sessions are measured per mode and
# concurrency after WARMUP (default 500) uncounted ones. Neither server fsyncs (see below).
# ZooKeeper's JVM runs with the JVM's defaults, as Debian's package runs
# it (not .ci/real-zk.sh's quick-start options). Takes about 2 minutes after the build.
set -euo pipefail

root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
build=1
if [[ ${1:-} == --no-build ]]; then build=0; shift; fi
shepherd=${SHEPHERD:-$root/target/release/shepherd}
shepherd_bench=${SHEPHERD_BENCH:-$root/target/release/shepherd-bench}
sessions=${SESSIONS:-1000}
warmup=${WARMUP:-500}
out=${1:-$(mktemp -d "${TMPDIR:-/tmp}/bench-tls.XXXXXX")}
mkdir -p "$out"
out=$(cd "$out" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bench-tls-work.XXXXXX")

if ((build)); then (cd "$root" && cargo build --release --bin shepherd --bin shepherd-bench); fi

# Real ZooKeeper's start and its secure keys come from the CI script, so that both servers and
# the interop tests share one configuration (docs/security.md).
SHEPHERD_BIN=$shepherd REAL_ZK_NO_START=1 source "$root/.ci/real-zk-secure.sh"
REAL_ZK_JAVA_OPTS=()
# ssl.clientAuth=want instead of need: the `tls` mode connects without a client certificate.
eval "$(declare -f real_zk_secure_keys | sed '1s/^real_zk_secure_keys/_bench_keys_need/')"
# ssl.protocol, ssl.enabledProtocols and ssl.ciphersuites: ZooKeeper 3.8 defaults to TLSv1.2
# and to TLS 1.2 cipher suites only (`X509Util.java`); the benchmark measures TLS 1.3 on both.
real_zk_secure_keys() {
  _bench_keys_need "$@" | sed 's/^ssl\.clientAuth=need$/ssl.clientAuth=want/'
  printf '%s\n' ssl.protocol=TLSv1.3 ssl.enabledProtocols=TLSv1.3 \
    ssl.ciphersuites=TLS_AES_128_GCM_SHA256,TLS_AES_256_GCM_SHA384,TLS_CHACHA20_POLY1305_SHA256
}
# forceSync=no on ZooKeeper, and Shepherd without --data-dir: createSession and closeSession
# are transactions, and two fsyncs per session (tens of ms on this disk) would hide the
# handshake this benchmark is about.
eval "$(declare -f _real_zk_secure_cfg | sed '1s/^_real_zk_secure_cfg/_bench_zk_cfg/')"
_real_zk_secure_cfg() { _bench_zk_cfg "$@"; echo forceSync=no >>"$1"; }

SHEPHERD_SECURE_DIR=$work/certs
SHEPHERD_BIN=$shepherd real_zk_secure_material "$SHEPHERD_SECURE_DIR"

shepherd_pid=
cleanup() {
  real_zk_stop 2>/dev/null || true
  if [[ -n $shepherd_pid ]]; then kill "$shepherd_pid" 2>/dev/null || true; wait "$shepherd_pid" 2>/dev/null || true; fi
  rm -rf "$work"
}
trap cleanup EXIT

bench() { # LABEL PLAIN TLS
  "$shepherd_bench" connect --label "$1" --connect "$2" --tls-connect "$3" \
    --certs "$SHEPHERD_SECURE_DIR" --concurrency 1,8 --sessions "$sessions" --warmup "$warmup" \
    --csv "$out/$1.csv"
}

real_zk_secure_start >/dev/null
bench zookeeper "$SHEPHERD_REAL_ZK" "$SHEPHERD_REAL_ZK_TLS"
real_zk_secure_stop >/dev/null

tls_port=$(_real_zk_free_port)
{
  echo "secureClientPort=$tls_port"
  echo "secureClientPortAddress=127.0.0.1"
  real_zk_secure_keys "$SHEPHERD_SECURE_DIR"
} >"$work/shepherd.cfg"
"$shepherd" serve --bind 127.0.0.1 --port 0 --config "$work/shepherd.cfg" \
  >"$work/shepherd.out" 2>"$work/shepherd.log" </dev/null &
shepherd_pid=$!
plain=
for ((i = 0; i < 300; i++)); do
  plain=$(sed -n 's/^shepherd listening on \([0-9.]*:[0-9]*\)$/\1/p' "$work/shepherd.out" | head -n 1)
  [[ -n $plain ]] && _real_zk_secure_accepts "$tls_port" && break
  kill -0 "$shepherd_pid" 2>/dev/null || break
  sleep 0.1
done
if [[ -z $plain ]] || ! _real_zk_secure_accepts "$tls_port"; then
  echo "tls.sh: shepherd serve did not listen on both ports; its log:" >&2
  tail -n 20 "$work/shepherd.log" >&2
  exit 1
fi
bench shepherd "$plain" "127.0.0.1:$tls_port"

commit=$(cd "$root" && git rev-parse --short HEAD)
# The side-by-side table: connects/s (higher is better) and latency (lower is better); the
# ratio is how many times better Shepherd is on that line.
awk -F, -v commit="$commit" '
  FNR == 1 { next }
  FILENAME ~ /zookeeper.csv$/ { zr[$2 " x" $3] = $6; zp50[$2 " x" $3] = $7; zp99[$2 " x" $3] = $8; order[++n] = $2 " x" $3; next }
  { sr[$2 " x" $3] = $6; sp50[$2 " x" $3] = $7; sp99[$2 " x" $3] = $8 }
  END {
    print "| measure | ZooKeeper 3.8 | Shepherd | ratio |"
    print "|---|---:|---:|---:|"
    for (i = 1; i <= n; i++) {
      k = order[i]
      printf "| %s connects/s | %.0f | %.0f | %.2f |\n", k, zr[k], sr[k], (zr[k] > 0 ? sr[k] / zr[k] : 0)
      printf "| %s p50 ms | %.2f | %.2f | %.2f |\n", k, zp50[k] / 1000, sp50[k] / 1000, (sp50[k] > 0 ? zp50[k] / sp50[k] : 0)
      printf "| %s p99 ms | %.2f | %.2f | %.2f |\n", k, zp99[k] / 1000, sp99[k] / 1000, (sp99[k] > 0 ? zp99[k] / sp99[k] : 0)
    }
    print ""
    print "commit " commit
  }' "$out/zookeeper.csv" "$out/shepherd.csv" | tee "$out/table.md"
echo "tls.sh: results in $out"
