"""The TAP report of the core's Python checks (test-layering.py,
test-call-cycles.py): each case is (description, holds, details), details
being the lines printed under a case that fails.

SPDX-License-Identifier: LGPL-2.1-or-later
"""


def report(cases):
    """Prints @cases as TAP; returns the exit status (1 if any failed)."""
    failed = 0
    for number, (description, holds, details) in enumerate(cases, 1):
        print(("ok %d - %s" if holds else "not ok %d - %s") % (number, description))
        if not holds:
            failed += 1
            for detail in details:
                print("# " + detail)
    print("1..%d" % len(cases))
    return 1 if failed else 0
