#!/usr/bin/python3
"""Runs `sandboxctl demo` as a user would on a fresh machine and reports TAP:
it exits 0, and it removes its state directory (with the workspaces the
guests wrote) afterwards, leaving nothing in its TMPDIR.

    test-demo.py SANDBOXCTL

To see the second case fail, make remove_state_directory() in
tools/sandboxctl-demo.c return TRUE without removing anything.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import os
import shutil
import subprocess
import sys
import tempfile

SANDBOXCTL = os.path.abspath(sys.argv[1])


def main():
    cases = []
    scratch = tempfile.mkdtemp(prefix="sandboxctl-demo-test-")
    try:
        # Guests may run as another uid than ours: they must reach the state
        # directory the demo makes in here, as they reach one in /tmp.
        os.chmod(scratch, 0o755)
        env = dict(os.environ, TMPDIR=scratch)
        result = subprocess.run([SANDBOXCTL, "demo"], env=env, capture_output=True, text=True,
                                timeout=280)
        cases.append(("sandboxctl demo exits 0", result.returncode == 0,
                      "exit %d\n%s%s" % (result.returncode, result.stdout, result.stderr)))
        left = sorted(os.listdir(scratch))
        cases.append(("the demo removed its state directory", result.returncode == 0 and not left,
                      "left in TMPDIR: %s\n%s" % (left, result.stderr)))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)

    failed = 0
    for number, (description, holds, detail) in enumerate(cases, 1):
        print(("ok %d - %s" if holds else "not ok %d - %s") % (number, description))
        if not holds:
            failed += 1
            for line in detail.splitlines():
                print("# " + line)
    print("1..%d" % len(cases))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
