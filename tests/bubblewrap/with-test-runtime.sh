#!/bin/sh
# with-test-runtime.sh CACHE COMMAND… — makes the tiny runtime the runtime
# tests import (test-runtime.c), once per build directory, then runs
# COMMAND. The runtime is Debian's busybox-static, as `apt-get download`
# fetches it (no root needed, but the machine's apt lists), unpacked with
# `dpkg-deb -x` into CACHE/busybox with a merged /usr (bin -> usr/bin, …),
# the applets the tests and the driver run (/usr/bin/sh, /usr/bin/true, …)
# as links to busybox and an etc/os-release of its own. It is made under a
# lock (tests run side by side) in a temporary directory renamed into
# place, world-readable, so that the unprivileged variant, which runs as
# another user through run-unprivileged.sh, reads what root made here.
set -eu

cache=$1
shift
mkdir -p "$cache"
chmod 0755 "$cache"

(
  flock 9
  if [ ! -d "$cache/busybox" ]; then
    work=$(mktemp -d "$cache/make-XXXXXX")
    trap 'rm -rf "$work"' EXIT
    # apt-get drops to _apt for downloads, which must be able to write here.
    chmod 0777 "$work"
    # A machine whose apt lists were never fetched (a fresh container)
    # cannot download: fetch them once, where that is allowed (root).
    if ! (cd "$work" && apt-get download -q busybox-static >"$work/apt.log" 2>&1) &&
       ! { [ "$(id -u)" = 0 ] && apt-get update -qq >>"$work/apt.log" 2>&1 &&
           (cd "$work" && apt-get download -q busybox-static >>"$work/apt.log" 2>&1); }; then
      cat "$work/apt.log" >&2
      echo "with-test-runtime.sh: apt-get download busybox-static failed (no apt lists? run apt-get update)" >&2
      exit 1
    fi
    dpkg-deb -x "$work"/busybox-static_*.deb "$work/root"
    root="$work/root"
    mkdir -p "$root/usr/bin" "$root/usr/sbin" "$root/etc"
    mv "$root/bin/busybox" "$root/usr/bin/busybox"
    rmdir "$root/bin"
    ln -s usr/bin "$root/bin"
    ln -s usr/sbin "$root/sbin"
    for applet in sh cat true false ls echo id test stat touch wc grep; do
      ln -s busybox "$root/usr/bin/$applet"
    done
    cat >"$root/etc/os-release" <<'OS'
ID=libsandbox-test-runtime
NAME="libsandbox test runtime (busybox-static)"
OS
    chmod -R a+rX,go-w "$root"
    mv "$root" "$cache/busybox"
  fi
) 9>"$cache/lock"

exec "$@"
