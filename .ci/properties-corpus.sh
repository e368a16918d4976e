#!/usr/bin/env bash
# Proves the zoo.cfg corpus's expected answers are Java's own: runs PropertiesDump.java (a JDK's
# java.util.Properties, trimmed as ZooKeeper trims) on every corpus file and fails on any
# difference from its .expected file, which server/tests/properties_corpus.rs holds Shepherd's
# reader to.
set -euo pipefail
dir=$(dirname "${BASH_SOURCE[0]}")/../server/tests/fixtures/properties
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# Compiled once, not per file (a single-file launch compiles every time).
javac -d "$out" "$dir/PropertiesDump.java"
passed=0 failed=0
for cfg in "$dir"/*.cfg; do
  name=$(basename "$cfg" .cfg)
  if java -cp "$out" PropertiesDump "$cfg" | diff -u "$dir/$name.expected" - >"$out/$name.diff"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1))
    echo "properties-corpus: $name: Java reads it otherwise than its .expected says:" >&2
    cat "$out/$name.diff" >&2
  fi
done
echo "properties-corpus: $passed passed, $failed failed"
((failed == 0 && passed > 0))
