#!/bin/sh
# Runs a test binary as the unprivileged user sandbox-test, keeping the
# variables the tests need. Skips (77) unless run as root.
set -eu

if [ "$(id -u)" != 0 ]; then
  echo "not root: cannot switch to an unprivileged user" >&2
  exit 77
fi

user=sandbox-test
# Tests run side by side: another may have created the user meanwhile.
if ! id -u "$user" >/dev/null 2>&1; then
  useradd --system --no-create-home --shell /usr/sbin/nologin "$user" ||
    id -u "$user" >/dev/null
fi
uid=$(id -u "$user")
gid=$(id -g "$user")

# An allow-all guest's slirp4netns opens /dev/net/tun as the host's user.
# Debian's udev makes it mode 0666 (50-udev-default.rules); a container's
# /dev may not, so give it the mode a Debian host has.
if [ -c /dev/net/tun ] && [ "$(stat -c %a /dev/net/tun)" != 666 ]; then
  chmod 0666 /dev/net/tun
fi

scratch=$(mktemp -d /tmp/sandbox-unprivileged-XXXXXX)
trap 'rm -rf "$scratch"' EXIT
chown "$uid:$gid" "$scratch"
chmod 0700 "$scratch"

exec setpriv --reuid="$uid" --regid="$gid" --init-groups -- \
  env -i \
    PATH=/usr/bin:/bin \
    HOME="$scratch" \
    TMPDIR="$scratch" \
    G_DEBUG="${G_DEBUG:-}" \
    SANDBOX_DRIVER_PATH="${SANDBOX_DRIVER_PATH:-}" \
    SANDBOX_BUBBLEWRAP_STUB="${SANDBOX_BUBBLEWRAP_STUB:-}" \
    SANDBOX_CONFORMANCE_DIR="${SANDBOX_CONFORMANCE_DIR:-}" \
    SANDBOX_TEST_LAYERING="${SANDBOX_TEST_LAYERING:-}" \
    ASAN_OPTIONS="${ASAN_OPTIONS:-}" \
    LSAN_OPTIONS="${LSAN_OPTIONS:-}" \
    UBSAN_OPTIONS="${UBSAN_OPTIONS:-}" \
    G_SLICE="${G_SLICE:-}" \
    GI_TYPELIB_PATH="${GI_TYPELIB_PATH:-}" \
    LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}" \
    PYTHONPATH="${PYTHONPATH:-}" \
    PYTHONDONTWRITEBYTECODE="${PYTHONDONTWRITEBYTECODE:-}" \
    "$@"
