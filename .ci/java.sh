#!/usr/bin/env bash
# The Java launcher, java/shepherd-testing (docs/java.md): compiled with Debian's javac (no
# build tool) for Java 11, packed into a jar with BINARY bundled as its linux-x86_64 resource,
# and tested with Debian's JUnit 5 console launcher and Apache Curator 5.4, with SHEPHERD_BIN
# unset so that the bundled binary is the one extracted and run.
#
#   bash .ci/java.sh BINARY
#
# Everything built goes to a temporary directory, removed at exit (the repository only holds
# sources). Prints `java: N passed, M failed` from the launcher's own counts; exits 1 on any
# failure, on zero tests, or if the bundled binary was not the one used.
set -Eeuo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

if (($# != 1)) || [[ ! -x $1 ]]; then
  echo "usage: $0 SHEPHERD_BINARY (an executable)" >&2
  exit 2
fi
binary=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
J=/usr/share/java

need=()
command -v javac >/dev/null || need+=(default-jdk-headless)
[[ -f $J/junit-platform-console-standalone.jar && -f $J/junit-jupiter-api.jar ]] || need+=(junit5)
for p in client framework recipes; do
  [[ -f $J/curator-$p.jar ]] || need+=("libcurator-$p-java")
done
if ((${#need[@]} > 0)); then
  apt-get update -q
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${need[@]}"
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/shepherd-java.XXXXXX")
trap 'rm -rf "$work"' EXIT
src=java/shepherd-testing/src
lint=(-Xlint:all,-options,-path,-processing -Werror -encoding UTF-8 --release 11)

# 1. The library against the JDK alone, then the JUnit support against junit-jupiter-api alone.
javac "${lint[@]}" -d "$work/classes" $(find "$src/main" -name '*.java')
javac "${lint[@]}" -cp "$work/classes:$J/junit-jupiter-api.jar:$J/apiguardian-api.jar:$J/opentest4j.jar" \
  -d "$work/classes" $(find "$src/junit" -name '*.java')
# The public API's documentation, checked as javac checks the code.
javadoc -quiet -Xdoclint:all -Werror --release 11 -d "$work/javadoc" \
  -cp "$J/junit-jupiter-api.jar:$J/apiguardian-api.jar:$J/opentest4j.jar" \
  $(find "$src/main" "$src/junit" -name '*.java')
# 2. The jar, with the binary where BinaryLocator looks for it.
mkdir -p "$work/resources/shepherd/testing/linux-x86_64"
cp "$binary" "$work/resources/shepherd/testing/linux-x86_64/shepherd"
jar --create --file "$work/shepherd-testing.jar" -C "$work/classes" . -C "$work/resources" .
echo "java: built shepherd-testing.jar ($(du -h "$work/shepherd-testing.jar" | cut -f1), binary bundled)"
# 3. The tests, against the jar, Curator and the console launcher (which has the launcher API
#    ExtensionLifecycleTest drives).
curator=$J/curator-recipes.jar:$J/curator-framework.jar:$J/curator-client.jar:$J/zookeeper.jar:$J/zookeeper-jute.jar:$J/guava.jar:$J/slf4j-api.jar:$J/slf4j-nop.jar
cp_tests=$work/shepherd-testing.jar:$curator
javac "${lint[@]}" -cp "$cp_tests:$J/junit-platform-console-standalone.jar" -d "$work/tests" \
  $(find "$src/test" -name '*.java')

# 4. Run them with SHEPHERD_BIN unset and a cache of our own, so the bundled binary is used.
status=0
env -u SHEPHERD_BIN XDG_CACHE_HOME="$work/cache" \
  java -Xmx256m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 \
  -jar "$J/junit-platform-console-standalone.jar" --disable-banner --disable-ansi-colors --details=tree \
  --fail-if-no-tests --class-path "$work/tests:$cp_tests" --scan-class-path "$work/tests" \
  >"$work/junit.log" 2>&1 || status=$?
cat "$work/junit.log"
passed=$(sed -n 's/^\[ *\([0-9][0-9]*\) tests successful *\]$/\1/p' "$work/junit.log")
failed=$(sed -n 's/^\[ *\([0-9][0-9]*\) tests failed *\]$/\1/p' "$work/junit.log")
passed=${passed:-0} failed=${failed:-0}
if ! ls "$work"/cache/shepherd-testing/*/shepherd >/dev/null 2>&1; then
  echo "java: the bundled binary was not extracted, so it was not the one tested" >&2
  status=1
fi
echo "java: $passed passed, $failed failed"
if ((status != 0 || failed != 0 || passed == 0)); then
  exit 1
fi
