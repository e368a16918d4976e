#!/usr/bin/env bash
# The Go test helper, go/shepherdtest (docs/go.md), tested with Debian's Go 1.19 and its
# go-zookeeper package (golang-github-samuel-go-zookeeper-dev), in GOPATH mode and offline:
# the module proxy is never asked for anything.
#
#   bash .ci/go.sh BINARY
#
# The package is linked into a temporary GOPATH, and Go's build cache is a temporary
# directory, removed at exit. Prints `go: N passed, M failed` from `go test -v`'s own results;
# exits 1 on any failure or on zero tests.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if (($# != 1)) || [[ ! -x $1 ]]; then
  echo "usage: $0 SHEPHERD_BINARY (an executable)" >&2
  exit 2
fi
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")

need=()
command -v go >/dev/null || need+=(golang-go)
[[ -d /usr/share/gocode/src/github.com/samuel/go-zookeeper/zk ]] || need+=(golang-github-samuel-go-zookeeper-dev)
if ((${#need[@]} > 0)); then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/shepherd-go.XXXXXX")
trap 'rm -rf "$work"' EXIT
# The import path is the module path of go/shepherdtest/go.mod.
pkg=example.invalid/shepherd/go/shepherdtest
mkdir -p "$work/gopath/src/$(dirname "$pkg")"
ln -s "$(pwd)/go/shepherdtest" "$work/gopath/src/$pkg"

export GO111MODULE=off GOPATH=/usr/share/gocode:$work/gopath GOCACHE=$work/cache GOPROXY=off \
  GOFLAGS= SHEPHERD_BIN=$binary
go version
status=0
(cd "$work/gopath/src/$pkg" && go vet . && go test -v -count=1 -timeout 300s .) >"$work/go.log" 2>&1 || status=$?
cat "$work/go.log"
passed=$(grep -c '^\(    \)*--- PASS: ' "$work/go.log" || true)
failed=$(grep -c '^\(    \)*--- FAIL: ' "$work/go.log" || true)
echo "go: $passed passed, $failed failed"
if ((status != 0 || failed != 0 || passed == 0)); then
  exit 1
fi
