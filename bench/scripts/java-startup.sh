#!/usr/bin/env bash
# Start to a connected Curator client: java/shepherd-testing's ShepherdServer against
# curator-test's TestingServer and TestingCluster(3), side by side (docs/java.md, "Startup").
#
#   bench/scripts/java-startup.sh
#
# Compiles the launcher and java/shepherd-testing/bench/StartupBench.java into a temporary
# directory (removed at exit), then runs three JVMs: the first ShepherdServer of a fresh JVM,
# the first TestingServer of a fresh JVM, and all cases in one JVM (1 discarded and 5 measured
# runs each). SHEPHERD_BIN (default target/release/shepherd; build it with
# `cargo build --release --bin shepherd`) is the server. Needs default-jdk-headless and
# libcurator-{client,framework,recipes,test}-java.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
export SHEPHERD_BIN=${SHEPHERD_BIN:-$here/target/release/shepherd}
[[ -x $SHEPHERD_BIN ]] || { echo "no $SHEPHERD_BIN: cargo build --release --bin shepherd" >&2; exit 2; }
work=$(mktemp -d "${TMPDIR:-/tmp}/java-startup.XXXXXX")
trap 'rm -rf "$work"' EXIT
J=/usr/share/java
cp=$work/classes
for jar in curator-test curator-recipes curator-framework curator-client zookeeper zookeeper-jute guava \
  slf4j-api slf4j-nop; do
  [[ -f $J/$jar.jar ]] || { echo "missing $J/$jar.jar" >&2; exit 2; }
  cp+=:$J/$jar.jar
done
javac --release 11 -nowarn -d "$work/classes" $(find "$here/java/shepherd-testing/src/main" -name '*.java') \
  "$here/java/shepherd-testing/bench/StartupBench.java" -cp "$cp"
java=(java -Xmx512m -cp "$cp" StartupBench)
echo "shepherd: $SHEPHERD_BIN ($("$SHEPHERD_BIN" --version)), commit $(git -C "$here" rev-parse --short HEAD)"
"${java[@]}" first
"${java[@]}" first-zk
"${java[@]}" all
