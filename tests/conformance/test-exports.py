#!/usr/bin/python3
"""What the built shared libraries export (nm -D --defined-only), as TAP.

    test-exports.py LIBSANDBOX LIBSANDBOX_CONFORMANCE

libsandbox-1 exports only sandbox_* symbols, all at the version node of its
version script (lib/libsandbox-1.map), and none of the conformance suite's
sandbox_conformance_*: the suite is libsandbox-conformance-1, which exports
only those. Put conformance/sandbox-conformance.c back into libsandbox-1's
sources in lib/meson.build and the first check fails; drop the version script
from its link_args and the version-node check fails.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import subprocess
import sys

count = failed = 0


def check(holds, description, detail=None):
    global count, failed
    count += 1
    print(("ok %d - %s" if holds else "not ok %d - %s") % (count, description))
    if not holds:
        failed += 1
        for line in str(detail or '').splitlines():
            print("# " + line)


def exports(library):
    """{symbol: version node} of the defined dynamic symbols of @library."""
    out = subprocess.run(["nm", "-D", "--defined-only", "--with-symbol-versions", library],
                         capture_output=True, text=True, check=True).stdout
    symbols = {}
    for line in out.splitlines():
        fields = line.split()
        if len(fields) < 3:
            continue
        name, _, version = fields[2].partition("@")
        symbols[name] = version.lstrip("@")
    return symbols


def main():
    core = exports(sys.argv[1])
    conformance = exports(sys.argv[2])
    # The version nodes themselves are defined absolute symbols.
    core_functions = {s: v for s, v in core.items() if s != "LIBSANDBOX_1_0"}
    conformance_functions = {s: v for s, v in conformance.items()
                             if s != "LIBSANDBOX_CONFORMANCE_1_0"}

    leaked = sorted(s for s in core_functions if s.startswith("sandbox_conformance_"))
    check(not leaked, "libsandbox-1 exports no sandbox_conformance_* symbol", "\n".join(leaked))
    foreign = sorted(s for s in core_functions if not s.startswith("sandbox_"))
    check(not foreign, "libsandbox-1 exports only sandbox_* symbols", "\n".join(foreign[:20]))
    check("sandbox_backend_new" in core_functions and "sandbox_gateway_new" in core_functions,
          "libsandbox-1 exports the core and the gateway")
    unversioned = sorted(s for s, v in core_functions.items() if v != "LIBSANDBOX_1_0")
    check(core_functions and not unversioned,
          "every libsandbox-1 symbol is at version LIBSANDBOX_1_0", "\n".join(unversioned[:20]))

    check("sandbox_conformance_run" in conformance_functions,
          "libsandbox-conformance-1 exports the suite")
    foreign = sorted(s for s in conformance_functions if not s.startswith("sandbox_conformance_"))
    check(not foreign, "libsandbox-conformance-1 exports only sandbox_conformance_* symbols",
          "\n".join(foreign[:20]))
    unversioned = sorted(s for s, v in conformance_functions.items()
                         if v != "LIBSANDBOX_CONFORMANCE_1_0")
    check(not unversioned, "every libsandbox-conformance-1 symbol is at version "
          "LIBSANDBOX_CONFORMANCE_1_0", "\n".join(unversioned[:20]))

    print("1..%d" % count)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
