#!/usr/bin/python3
"""No include runs from the core up into the gateway, the drivers or any
other layer built on it. Reports TAP.

    test-layering.py SRCDIR

Every `#include` of libsandbox-core/*.c and *.h is read. One that names a
header of a layer above the core (gateway/, drivers/, conformance/, tools/,
lib/ — lib/sandbox.h is the umbrella, which includes the gateway's header) or
a path into one of them fails. A quoted include must be a core header, a
header the core's build generates, or config.h.

The check proves it can fail: it plants each kind of upward include in a
scratch copy of the core and expects a report. To see the first case fail on
the tree, add `#include "sandbox-gateway.h"` (or `#include <sandbox.h>`) to
any file of libsandbox-core/.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import os
import re
import shutil
import sys
import tempfile

SRCDIR = sys.argv[1]
CORE = "libsandbox-core"
UPPER_LAYERS = ["gateway", "drivers", "conformance", "tools", "lib"]
# What the core's build generates (libsandbox-core/meson.build) and the
# project's config.h.
GENERATED = {"config.h", "sandbox-enums.h", "sandbox-version.h"}

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def upper_headers(srcdir):
    """Maps each header name of the layers above the core to where it is."""
    found = {}
    for layer in UPPER_LAYERS:
        for root, _dirs, files in os.walk(os.path.join(srcdir, layer)):
            for name in files:
                if name.endswith(".h"):
                    found.setdefault(name, os.path.relpath(os.path.join(root, name), srcdir))
    return found


def findings(srcdir, core_dir):
    """Every include of the core that runs upward, as 'file:line: why'."""
    upper = upper_headers(srcdir)
    core_files = set(os.listdir(core_dir))
    result = []
    for name in sorted(core_files):
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(core_dir, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if not match:
                    continue
                quote, target = match.groups()
                where = "%s/%s:%d" % (CORE, name, number)
                parts = os.path.normpath(target).split(os.sep)
                base = parts[-1]
                if parts[0] == ".." or parts[0] in UPPER_LAYERS:
                    result.append("%s: includes %s, a path out of the core" % (where, target))
                elif base in upper and base not in core_files:
                    result.append("%s: includes %s (%s), a layer above the core"
                                  % (where, target, upper[base]))
                elif quote == '"' and target not in core_files and target not in GENERATED:
                    result.append("%s: includes \"%s\", which is no core header" % (where, target))
    return result


def planted(srcdir, line):
    """The findings on a scratch copy of the core with `line` added to one file."""
    with tempfile.TemporaryDirectory(prefix="sandbox-layering-") as work:
        core_copy = os.path.join(work, CORE)
        shutil.copytree(os.path.join(srcdir, CORE), core_copy)
        with open(os.path.join(core_copy, "sandbox-path.c"), "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return findings(srcdir, core_copy)


def main():
    cases = []
    tree = findings(SRCDIR, os.path.join(SRCDIR, CORE))
    cases.append(("no core file includes a header of a layer above it", not tree, tree))
    # (what is planted, the line, what the report must say)
    plants = [
        ("the gateway's public header", '#include "sandbox-gateway.h"', "a layer above"),
        ("a gateway private header", '#include "sandbox-gateway-loop-private.h"',
         "a layer above"),
        ("a driver's header", '#include "sandbox-memory-store.h"', "a layer above"),
        ("the umbrella <sandbox.h>", "#include <sandbox.h>", "a layer above"),
        ("a relative path into the gateway", '#include "../gateway/sandbox-gateway.h"',
         "a path out of the core"),
        ("an unknown quoted header", '#include "sandbox-nowhere.h"', "no core header"),
    ]
    for description, line, says in plants:
        found = planted(SRCDIR, line)
        cases.append(("planted %s is reported" % description,
                      any(finding.startswith(CORE + "/sandbox-path.c:") and says in finding
                          for finding in found), found))
    failed = 0
    for number, (description, holds, details) in enumerate(cases, 1):
        print(("ok %d - %s" if holds else "not ok %d - %s") % (number, description))
        if not holds:
            failed += 1
            for detail in details:
                print("# " + detail)
    print("1..%d" % len(cases))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
