#!/bin/sh
# Installs this build into a temporary root, builds examples/out-of-tree-driver
# against that root's pkg-config file (with meson, and with the plain
# Makefile), and runs the installed sandbox-conformance program on the result.
#
#   out-of-tree.sh BUILD_ROOT SOURCE_ROOT
#
# SPDX-License-Identifier: LGPL-2.1-or-later
set -eu

build_root=$1
source_root=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/sandbox-out-of-tree-XXXXXX")
trap 'rm -rf "$work"' EXIT

meson install -C "$build_root" --no-rebuild --quiet --destdir "$work/root" >"$work/install.log" 2>&1 \
  || { cat "$work/install.log"; exit 1; }

pc=$(find "$work/root" -name sandbox-1.pc | head -n 1)
test -n "$pc" || { echo "sandbox-1.pc was not installed"; exit 1; }
libdir=$(dirname "$(dirname "$pc")")
bindir=$(dirname "$(find "$work/root" -type f -name sandbox-conformance | head -n 1)")

# The .pc file names the real prefix: point a copy at the temporary root.
mkdir "$work/pkgconfig"
prefix=$(sed -n 's/^prefix=//p' "$pc")
sed "s|^prefix=.*|prefix=$work/root$prefix|" "$pc" >"$work/pkgconfig/sandbox-1.pc"
export PKG_CONFIG_PATH="$work/pkgconfig"
export LD_LIBRARY_PATH="$libdir"

meson setup "$work/build" "$source_root/examples/out-of-tree-driver" >"$work/setup.log" 2>&1 \
  || { cat "$work/setup.log"; exit 1; }
ninja -C "$work/build" >"$work/ninja.log" 2>&1 || { cat "$work/ninja.log"; exit 1; }

# The plain Makefile builds the same module with pkg-config alone.
example="$source_root/examples/out-of-tree-driver"
mkdir "$work/make"
make -s -C "$work/make" -f "$example/Makefile" VPATH="$example" >"$work/make.log" 2>&1 \
  || { cat "$work/make.log"; exit 1; }
test -f "$work/make/libsandbox-directory.so"

# Only the example's module: not the in-tree drivers the test environment lists.
export SANDBOX_DRIVER_PATH="$work/build"
exec "$bindir/sandbox-conformance" --no-commands directory
