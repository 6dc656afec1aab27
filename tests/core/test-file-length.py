#!/usr/bin/python3
"""No C source of the library, the gateway, a driver or a tool is over
MAX_LINES lines (issue 32): a file that long holds more than one concept,
and is split along them. Reports TAP.

    test-file-length.py SRCDIR

Every .c under the directories of SOURCE_DIRS, at any depth, is counted.
The check proves it can fail: in a scratch tree a file of MAX_LINES + 1
lines must be reported, and one of MAX_LINES lines must not.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import os
import sys
import tempfile

import sandbox_tap

MAX_LINES = 900
SOURCE_DIRS = ["libsandbox-core", "gateway", "drivers", "lib", "tools", "conformance"]


def sources(root):
    """Every .c under @root's SOURCE_DIRS, as paths relative to @root."""
    found = []
    for top in SOURCE_DIRS:
        for directory, subdirectories, names in os.walk(os.path.join(root, top)):
            subdirectories.sort()
            found.extend(os.path.relpath(os.path.join(directory, name), root)
                         for name in sorted(names) if name.endswith(".c"))
    return found


def too_long(root):
    """Report lines for each source under @root over MAX_LINES lines."""
    found = []
    for path in sources(root):
        with open(os.path.join(root, path), "rb") as source:
            n_lines = sum(1 for _line in source)
        if n_lines > MAX_LINES:
            found.append("%s has %d lines (at most %d)" % (path, n_lines, MAX_LINES))
    return found


def planted(n_lines):
    """What too_long() reports of a scratch tree with one file of @n_lines."""
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "drivers", "scratch"))
        with open(os.path.join(root, "drivers", "scratch", "sandbox-scratch.c"), "w") as f:
            f.write("/* line */\n" * n_lines)
        return too_long(root)


def main():
    root = sys.argv[1]
    cases = []
    tree = sources(root)
    cases.append(("the tree holds the sources",
                  "libsandbox-core/sandbox-modules.c" in tree
                  and "drivers/bubblewrap/sandbox-bubblewrap-backend.c" in tree, tree[:5]))
    over = too_long(root)
    cases.append(("no .c is over %d lines" % MAX_LINES, not over, over))
    report = planted(MAX_LINES + 1)
    expected = "drivers/scratch/sandbox-scratch.c has %d lines" % (MAX_LINES + 1)
    cases.append(("a planted file of %d lines is reported" % (MAX_LINES + 1),
                  len(report) == 1 and report[0].startswith(expected), report))
    report = planted(MAX_LINES)
    cases.append(("a file of %d lines is not" % MAX_LINES, not report, report))
    return sandbox_tap.report(cases)


if __name__ == "__main__":
    sys.exit(main())
