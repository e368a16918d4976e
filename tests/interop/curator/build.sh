#!/usr/bin/env bash
# Compiles every *.java in tests/interop/curator/ against Debian's Apache Curator 5.4
# (libcurator-{client,framework,recipes}-java) with plain `javac`: no Maven, no Gradle.
# This script is the one place that knows Curator's classpath.
#
#   source tests/interop/curator/build.sh OUT   compile into OUT; exports CURATOR_CP
#                                               (OUT plus the jars) for `java -cp "$CURATOR_CP"`
#   bash tests/interop/curator/build.sh OUT     the same, and prints the classpath on stdout
#
# OUT may instead come from $CURATOR_BUILD. Compiles only when the set of sources changed or one
# is newer than OUT's stamp, so sourcing it twice costs nothing. Classes are in the default
# package: `java -cp "$CURATOR_CP" ClassName ARGS`. Fails (nonzero) if a jar is missing or javac fails.

_curator_build() {
  local here out java_dir jar missing=() sources=()
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  out=${1:-${CURATOR_BUILD:-}}
  if [[ -z $out ]]; then
    echo "curator build: give the build directory as \$1 or \$CURATOR_BUILD" >&2
    return 2
  fi
  java_dir=${CURATOR_JAVA_DIR:-/usr/share/java}
  # Each Debian jar's manifest names its own dependencies (Class-Path), but `javac` and a
  # reader of this file both want them spelled out. slf4j-nop: Curator and the ZooKeeper client
  # log through slf4j; without a binding slf4j prints a warning on every run.
  local jars=(curator-recipes curator-framework curator-client zookeeper zookeeper-jute
    guava slf4j-api slf4j-nop)
  local cp=''
  for jar in "${jars[@]}"; do
    [[ -f $java_dir/$jar.jar ]] || missing+=("$jar.jar")
    cp+=":$java_dir/$jar.jar"
  done
  if ((${#missing[@]} > 0)); then
    echo "curator build: missing ${missing[*]} in $java_dir" >&2
    echo "  (apt-get install -y libcurator-recipes-java libcurator-framework-java libcurator-client-java libslf4j-java)" >&2
    return 1
  fi
  if ! command -v javac >/dev/null; then
    echo "curator build: javac not found (apt-get install -y default-jdk-headless)" >&2
    return 1
  fi
  mkdir -p "$out" || return 1
  out=$(cd "$out" && pwd)
  shopt -s nullglob
  sources=("$here"/*.java)
  shopt -u nullglob
  if ((${#sources[@]} == 0)); then
    echo "curator build: no .java files in $here" >&2
    return 1
  fi
  # The stamp holds the source list, so that a file added with an old mtime (or removed)
  # still forces a rebuild; a removed file's classes go with the rebuild.
  local stale=1 src list
  list=$(printf '%s\n' "${sources[@]}")
  if [[ -f $out/.stamp && $(<"$out/.stamp") == "$list" ]]; then
    stale=0
    for src in "${sources[@]}" "${BASH_SOURCE[0]}"; do
      [[ $src -nt $out/.stamp ]] && stale=1
    done
  fi
  if ((stale)); then
    rm -f "$out/.stamp" "$out"/*.class
    # -Xlint:all with -Werror keeps the suite's own code clean; the path lint is off: the jars'
    # manifests name optional jars (jline, jetty...) that the client never loads.
    javac -Xlint:all,-options,-processing,-path -Werror -encoding UTF-8 --release 11 \
      -cp "${cp#:}" -d "$out" "${sources[@]}" || return 1
    printf '%s\n' "$list" >"$out/.stamp"
  fi
  export CURATOR_CP="$out$cp"
}

if [[ ${BASH_SOURCE[0]} != "$0" ]]; then
  _curator_build "$@"
else
  set -euo pipefail
  _curator_build "$@"
  echo "$CURATOR_CP"
fi
