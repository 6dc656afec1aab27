#!/usr/bin/python3
"""Compiles small programs against <sandbox.h> to check the version macros
as an application sees them: SANDBOX_VERSION_MIN_REQUIRED/MAX_ALLOWED
bounds, SANDBOX_DEPRECATED_IN_x warnings and SANDBOX_DISABLE_DEPRECATION_
WARNINGS, SANDBOX_UNAVAILABLE. Reports TAP.

    test-version-macros.py SRCDIR BUILDDIR CC [CC-ARG...]

Take the #error checks or the G_DEPRECATED out of
libsandbox-core/sandbox-version-macros.h and the matching case fails.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import os
import subprocess
import sys
import tempfile

SRCDIR, BUILDDIR = sys.argv[1:3]
CC = sys.argv[3:]

CASES = [
    # (description, defines, body, should compile, text in the diagnostics)
    ("<sandbox.h> and the 0.1 API compile without a warning", [],
     "return sandbox_check_version (0, 1, 0) ? 0 : 1;", True, None),
    ("API deprecated in 0.1 warns when 0.1 is the minimum required", [],
     "old_api (); return 0;", False, "sandbox_check_version"),
    ("SANDBOX_DISABLE_DEPRECATION_WARNINGS silences it", ["SANDBOX_DISABLE_DEPRECATION_WARNINGS"],
     "old_api (); return 0;", True, None),
    ("API of a later version warns as unavailable", [],
     "newer_api (); return 0;", False, "Not available before 0.2"),
    ("SANDBOX_VERSION_MIN_REQUIRED above the current stable version is an error",
     ["SANDBOX_VERSION_MIN_REQUIRED=SANDBOX_ENCODE_VERSION(0,2)"],
     "return 0;", False, "SANDBOX_VERSION_MIN_REQUIRED must be <="),
    ("SANDBOX_VERSION_MAX_ALLOWED below the minimum is an error",
     ["SANDBOX_VERSION_MIN_REQUIRED=SANDBOX_VERSION_0_1",
      "SANDBOX_VERSION_MAX_ALLOWED=SANDBOX_ENCODE_VERSION(0,0)"],
     "return 0;", False, "SANDBOX_VERSION_MAX_ALLOWED must be >="),
    ("an explicit SANDBOX_VERSION_MIN_REQUIRED of 0.1 is fine",
     ["SANDBOX_VERSION_MIN_REQUIRED=SANDBOX_VERSION_0_1"],
     "return SANDBOX_VERSION_MAX_ALLOWED == SANDBOX_VERSION_0_1 ? 0 : 1;", True, None),
]

PROGRAM = """#include <sandbox.h>
SANDBOX_DEPRECATED_IN_0_1_FOR (sandbox_check_version) void old_api (void);
SANDBOX_UNAVAILABLE (0, 2) void newer_api (void);
int main (void) { %s }
"""


def cflags():
    # Only gio-2.0: the public headers use no json-glib (it is in the .pc's
    # Requires.private), so <sandbox.h> must compile without it.
    result = subprocess.run(["pkg-config", "--cflags", "gio-2.0"],
                            capture_output=True, text=True, check=True)
    return result.stdout.split()


def main():
    includes = ["-I" + os.path.join(SRCDIR, "lib"),
                "-I" + os.path.join(SRCDIR, "libsandbox-core"),
                "-I" + os.path.join(BUILDDIR, "libsandbox-core"),
                "-I" + os.path.join(SRCDIR, "gateway"),
                "-I" + os.path.join(SRCDIR, "conformance")]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="sandbox-version-macros-") as work:
        for number, (description, defines, body, compiles, says) in enumerate(CASES, 1):
            source = os.path.join(work, "case%d.c" % number)
            with open(source, "w") as f:
                f.write(PROGRAM % body)
            command = CC + ["-fsyntax-only", "-Werror", "-Wall"] + includes + cflags() + \
                ["-D" + define for define in defines] + [source]
            result = subprocess.run(command, capture_output=True, text=True)
            holds = (result.returncode == 0) == compiles and \
                (says is None or says in result.stderr)
            print(("ok %d - %s" if holds else "not ok %d - %s") % (number, description))
            if not holds:
                failed += 1
                for line in (" ".join(command) + "\n" + result.stderr).splitlines():
                    print("# " + line)
    print("1..%d" % len(CASES))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
