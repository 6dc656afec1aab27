#!/bin/sh
# Runs an example of the docs (examples/reference-flow.*) with a fresh state
# directory as its argument, and checks what it prints: "hello" from the
# command, then "hello" read back after the resume. Removes the directory.
set -eu

state=$(mktemp -d "${TMPDIR:-/tmp}/sandbox-example-XXXXXX")
trap 'rm -rf "$state"' EXIT

output=$("$@" "$state")
expected=$(printf 'hello\nhello')
if [ "$output" != "$expected" ]; then
  printf 'expected:\n%s\ngot:\n%s\n' "$expected" "$output" >&2
  exit 1
fi
echo "ok: $*"
