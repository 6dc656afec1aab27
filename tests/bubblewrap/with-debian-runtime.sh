#!/bin/sh
# with-debian-runtime.sh CACHE COMMAND… — makes the Debian runtime the
# pytest test imports (test-debian-runtime.c), once per build directory,
# then runs COMMAND. The runtime is a Debian 12 (bookworm) root file system
# with python3, pytest and pip, as mmdebstrap builds it from the machine's
# own apt sources (/etc/apt/sources.list and /etc/apt/sources.list.d/), in
# CACHE/debian-pytest:
#
#   mmdebstrap --mode=root --variant=essential \
#     --include=python3-pytest,python3-pip \
#     --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr …
#
# The essential variant (no apt: the sessions never install into a
# read-only runtime) and the merged-/usr hook (without it the usrmerge
# package and the whole of perl come in) keep the download near 45 MB
# (some 10 MB of package lists, 36 MB of packages) and the tree near
# 135 MB; documentation, manual pages and translations are not unpacked.
#
# Like with-test-runtime.sh it is made under a lock (tests run side by side)
# in a temporary directory renamed into place, world-readable, so that the
# unprivileged variant, which runs as another user through
# run-unprivileged.sh, reads what root made here. mmdebstrap runs as root
# (--mode=root; CI runs as root): anyone else gets a skip (77).
set -eu

cache=$1
shift
mkdir -p "$cache"
chmod 0755 "$cache"

(
  flock 9
  if [ ! -d "$cache/debian-pytest" ]; then
    if ! command -v mmdebstrap >/dev/null 2>&1; then
      echo "with-debian-runtime.sh: mmdebstrap is not installed (apt-get install mmdebstrap; ./dev installs it)" >&2
      exit 1
    fi
    if [ "$(id -u)" != 0 ]; then
      echo "with-debian-runtime.sh: not root: mmdebstrap --mode=root cannot make the runtime" >&2
      exit 77
    fi
    # The machine's own sources, so that a mirror or a snapshot configured
    # there is the one used; mmdebstrap pastes each file (one-line or
    # deb822) into the runtime's sources.
    set --
    for sources in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
                   /etc/apt/sources.list.d/*.sources; do
      [ -s "$sources" ] && set -- "$@" "$sources"
    done
    if [ $# -eq 0 ]; then
      echo "with-debian-runtime.sh: no apt sources in /etc/apt/sources.list{,.d/}: nowhere to download Debian from" >&2
      exit 1
    fi
    work=$(mktemp -d "$cache/make-XXXXXX")
    # apt drops to _apt for downloads where it can reach the tree.
    chmod 0755 "$work"
    # mmdebstrap mounts /proc, /sys and the host's device nodes into the
    # tree while it works: a removal after an interrupted run must never
    # go down into them.
    trap 'rm -rf --one-file-system "$work"' EXIT
    root="$work/root"
    started=$(date +%s)
    if ! mmdebstrap --mode=root --variant=essential \
           --include=python3-pytest,python3-pip \
           --hook-dir=/usr/share/mmdebstrap/hooks/merged-usr \
           --aptopt='Acquire::Languages "none"' \
           --dpkgopt='path-exclude=/usr/share/doc/*' \
           --dpkgopt='path-exclude=/usr/share/man/*' \
           --dpkgopt='path-exclude=/usr/share/info/*' \
           --dpkgopt='path-exclude=/usr/share/locale/*' \
           bookworm "$root" "$@" >"$work/mmdebstrap.log" 2>&1 </dev/null; then
      tail -n 40 "$work/mmdebstrap.log" >&2
      echo "with-debian-runtime.sh: mmdebstrap could not make the Debian runtime from $*" \
           "(can this machine download from its apt mirror?)" >&2
      exit 1
    fi
    # What the runtime must not carry into the build directory: the device
    # nodes mmdebstrap made (a world-readable console after the chmod
    # below), setuid and setgid programs (root's, runnable by anyone from
    # here) and the host's resolv.conf and hostname, which it copied in.
    find "$root" -xdev \( -type b -o -type c -o -type p -o -type s \) -delete
    find "$root" -xdev -type f -perm /6000 -exec chmod ug-s {} +
    rm -f "$root/etc/resolv.conf" "$root/etc/hostname"
    chmod -R a+rX,go-w "$root"
    echo "with-debian-runtime.sh: made $cache/debian-pytest in $(($(date +%s) - started)) s," \
         "$(du -sm "$root" | cut -f1) MB" >&2
    mv "$root" "$cache/debian-pytest"
  fi
) 9>"$cache/debian-pytest.lock"

exec "$@"
