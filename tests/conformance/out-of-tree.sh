#!/bin/sh
# Installs this build into a temporary root, builds a program against that
# root's sandbox-conformance-1.pc, builds examples/out-of-tree-driver against
# its sandbox-1.pc (with meson, and with the plain Makefile), and runs the
# installed sandbox-conformance program on the result.
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
conformance_pc="$(dirname "$pc")/sandbox-conformance-1.pc"
test -f "$conformance_pc" || { echo "sandbox-conformance-1.pc was not installed"; exit 1; }
sed "s|^prefix=.*|prefix=$work/root$prefix|" "$conformance_pc" \
  >"$work/pkgconfig/sandbox-conformance-1.pc"
export PKG_CONFIG_PATH="$work/pkgconfig"
export LD_LIBRARY_PATH="$libdir"

# The suite as a library: a program built with pkg-config
# sandbox-conformance-1 alone lists the checks the installed program lists.
cat >"$work/list.c" <<'EOF'
#include <stdio.h>
#include <sandbox-conformance.h>

int
main (void)
{
  g_auto(GStrv) checks = sandbox_conformance_list_checks ();

  for (guint i = 0; checks[i] != NULL; i++)
    puts (checks[i]);
  return 0;
}
EOF
# A sanitized build (.ci/sanitize) installs instrumented libraries, whose
# runtime must come first in a program that loads them: build it alike.
sanitize=""
if ldd "$bindir/sandbox-conformance" | grep -q libasan; then
  sanitize="-fsanitize=address,undefined"
fi
# shellcheck disable=SC2046,SC2086
cc $sanitize -o "$work/list" "$work/list.c" $(pkg-config --cflags --libs sandbox-conformance-1) \
  >"$work/cc.log" 2>&1 || { cat "$work/cc.log"; exit 1; }
"$work/list" >"$work/list.txt"
"$bindir/sandbox-conformance" --list | cmp -s - "$work/list.txt" \
  || { echo "libsandbox-conformance-1 and sandbox-conformance list different checks"; exit 1; }

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
