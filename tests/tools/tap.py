# TAP output for the tools' test scripts (test-sandboxctl.py, test-install.py,
# test-prefix-study.py): each imports it from beside itself.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys


class Tap:
    def __init__(self):
        self.count = 0
        self.failed = 0

    def check(self, holds, description, detail=None):
        """Reports one check; on failure, @detail's last 40 lines as comments."""
        self.count += 1
        print(('ok %d - %s' if holds else 'not ok %d - %s') % (self.count, description))
        if not holds:
            self.failed += 1
            for line in str(detail or '').splitlines()[-40:]:
                print('# ' + line)
        sys.stdout.flush()
        return holds

    def skip(self, description, reason):
        self.count += 1
        print('ok %d - %s # SKIP %s' % (self.count, description, reason))
        sys.stdout.flush()

    def finish(self):
        print('1..%d' % self.count)
        return 1 if self.failed else 0
