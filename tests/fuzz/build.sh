#!/usr/bin/env bash
# tests/fuzz/build.sh — build the libFuzzer targets with clang.
#
#   tests/fuzz/build.sh [BUILD_DIR]      (default: <repo>/build-fuzz)
#
# The library is configured in BUILD_DIR with CC=clang, -Db_sanitize=address,undefined
# and -fsanitize=fuzzer-no-link (coverage instrumentation without libFuzzer's main),
# and only its internal static archive is built. Each target in tests/fuzz/fuzz-*.c
# is then compiled and linked with -fsanitize=fuzzer,address,undefined against that
# archive into BUILD_DIR/fuzz/<name>. Nothing here touches the regular build.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
build="${1:-$repo/build-fuzz}"
jobs="${FUZZ_BUILD_JOBS:-2}"
sanitizers="address,undefined"
# UBSan findings must abort, not just print, or libFuzzer would not notice them.
ubsan_flags="-fno-sanitize-recover=undefined -fno-sanitize=function"

if [ ! -f "$build/build.ninja" ]; then
  CC=clang meson setup "$build" "$repo" \
    --buildtype=debugoptimized \
    -Db_sanitize="$sanitizers" -Db_lundef=false \
    -Dc_args="-fsanitize=fuzzer-no-link $ubsan_flags -g" \
    -Dintrospection=disabled -Dtests=false >/dev/null
fi
ninja -C "$build" -j "$jobs" lib/libsandbox-internal.a >/dev/null

mkdir -p "$build/fuzz"
# What libsandbox-internal.a links against (gateway_deps and sandbox_deps in
# the meson build): keep the two lists alike.
deps="gio-unix-2.0 gmodule-2.0 json-glib-1.0 libsoup-3.0 libcurl libcrypto libssl"
# shellcheck disable=SC2046
read -r -a pkg_cflags <<<"$(pkg-config --cflags $deps)"
read -r -a pkg_libs <<<"$(pkg-config --libs $deps)"

cflags=(
  -g -O1 -std=gnu11 -fno-omit-frame-pointer
  -fsanitize=fuzzer,$sanitizers $ubsan_flags
  -Wall -Wextra -Wno-unused-parameter -Werror
  -DSANDBOX_COMPILATION -D_GNU_SOURCE
  -DGLIB_VERSION_MIN_REQUIRED=GLIB_VERSION_2_74 -DGLIB_VERSION_MAX_ALLOWED=GLIB_VERSION_2_74
  -DSOUP_VERSION_MIN_REQUIRED=SOUP_VERSION_3_2 -DSOUP_VERSION_MAX_ALLOWED=SOUP_VERSION_3_2
  -DJSON_VERSION_MIN_REQUIRED=JSON_VERSION_1_6 -DJSON_VERSION_MAX_ALLOWED=JSON_VERSION_1_6
  -DG_LOG_DOMAIN=\"Sandbox-Fuzz\"
  -I"$build" -I"$build/libsandbox-core" -I"$repo/libsandbox-core" -I"$repo/gateway" -I"$repo/lib" -I"$repo/drivers/cluster"
  "${pkg_cflags[@]}"
)

# Up to date when newer than its source, the shared header, the archive and
# every driver source it compiles in (#include "../../drivers/…").
is_up_to_date() {
  local output=$1 source=$2 included
  [ -x "$output" ] || return 1
  for input in "$source" "$here/fuzz-common.h" "$build/lib/libsandbox-internal.a"; do
    [ "$output" -nt "$input" ] || return 1
  done
  while read -r included; do
    [ "$output" -nt "$here/$included" ] || return 1
  done < <(sed -n 's|^#include "\(\.\./\.\./[^"]*\)"|\1|p' "$source")
  return 0
}

pids=()
for source in "$here"/fuzz-*.c; do
  name=$(basename "$source" .c)
  output="$build/fuzz/$name"
  is_up_to_date "$output" "$source" && continue
  clang "${cflags[@]}" "$source" -o "$output" \
    "$build/lib/libsandbox-internal.a" "${pkg_libs[@]}" -lpthread &
  pids+=($!)
  if [ ${#pids[@]} -ge "$jobs" ]; then
    wait "${pids[0]}"
    pids=("${pids[@]:1}")
  fi
done
for pid in "${pids[@]}"; do
  wait "$pid"
done
echo "fuzz targets in $build/fuzz"
