#!/usr/bin/python3
# The backend conformance suite driven from Python: per-check results arrive
# on the check-finished signal, and a driver that breaks the contract is
# reported as failing (the suite itself must be able to fail).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import sys
import unittest

import gi

from sandboxtest import CONFORMANCE_SCRIPT, GLib, Gio, Sandbox, SandboxTestCase

# The suite is its own library and namespace (libsandbox-conformance-1).
gi.require_version('SandboxConformance', '1')
from gi.repository import SandboxConformance  # noqa: E402


class ConformanceTests(SandboxTestCase):
    def run_suite(self, flags, **properties):
        suite = SandboxConformance.Conformance.new('memory', flags)
        for name, value in properties.items():
            suite.set_backend_property(name.replace('_', '-'), value)
        results = []
        suite.connect('check-finished',
                      lambda suite, number, name, outcome, detail:
                      results.append((number, name, outcome, detail)))
        tap = Gio.MemoryOutputStream.new_resizable()
        self.assertTrue(suite.run(tap, None))
        tap.close(None)
        return suite, results, bytes(tap.steal_as_bytes().get_data()).decode()

    def test_memory_driver_conforms(self):
        suite, results, tap = self.run_suite(SandboxConformance.ConformanceFlags.NONE,
                                             script_file=CONFORMANCE_SCRIPT)
        checks = SandboxConformance.Conformance.list_checks()
        self.assertEqual([name for _, name, _, _ in results], checks)
        self.assertEqual([number for number, _, _, _ in results], list(range(1, len(checks) + 1)))
        failed = [(name, detail) for _, name, outcome, detail in results
                  if outcome == SandboxConformance.ConformanceOutcome.FAIL]
        self.assertEqual(failed, [])
        self.assertEqual(suite.get_n_failed(), 0)
        self.assertEqual(suite.get_n_passed() + suite.get_n_skipped(), len(checks))
        self.assertIn('1..%d\n' % len(checks), tap)
        self.assertIn('ok 1 - backend/properties\n', tap)

    def test_unscripted_commands_fail_the_command_checks(self):
        # Without a script the memory driver answers every command with exit
        # status 127: the command checks must fail, the others still pass.
        suite, results, tap = self.run_suite(SandboxConformance.ConformanceFlags.NONE)
        failed = {name for _, name, outcome, _ in results
                  if outcome == SandboxConformance.ConformanceOutcome.FAIL}
        self.assertIn('command/run', failed)
        self.assertIn('limits/deadline', failed)
        self.assertNotIn('lifecycle/resume', failed)
        self.assertIn('not ok', tap)

    def test_no_commands_claim_is_checked(self):
        # The memory driver runs (scripted) commands, so claiming it runs none
        # is caught; the command checks are skipped.
        suite, results, tap = self.run_suite(SandboxConformance.ConformanceFlags.NO_COMMANDS,
                                             script_file=CONFORMANCE_SCRIPT)
        outcomes = {name: outcome for _, name, outcome, _ in results}
        self.assertEqual(outcomes['command/refused-without-commands'],
                         SandboxConformance.ConformanceOutcome.FAIL)
        self.assertEqual(outcomes['limits/output'], SandboxConformance.ConformanceOutcome.SKIP)
        self.assertIn('# SKIP', tap)

    def test_unknown_driver_cannot_run(self):
        suite = SandboxConformance.Conformance.new('no-such-driver',
                                                   SandboxConformance.ConformanceFlags.NONE)
        with self.assertRaises(GLib.Error) as raised:
            suite.run(None, None)
        self.assertSandboxError(raised, Sandbox.Error.UNAVAILABLE)
        with self.assertRaises(GLib.Error) as raised:
            suite.parse_backend_property('state-directory=/tmp')
        self.assertSandboxError(raised, Sandbox.Error.UNAVAILABLE)

    def test_suite_is_its_own_namespace(self):
        # libsandbox-1 (the Sandbox namespace) no longer carries the suite.
        self.assertFalse(hasattr(Sandbox, 'Conformance'))
        self.assertEqual(SandboxConformance.Conformance.__gtype__.name, 'SandboxConformance')

    def test_property_parsing(self):
        suite = SandboxConformance.Conformance.new('memory', SandboxConformance.ConformanceFlags.NONE)
        suite.parse_backend_property('max-concurrent-commands=4')
        for bad in ('no-equals', '=1', 'unknown-property=1', 'max-concurrent-commands=many',
                    'max-concurrent-commands=-1'):
            with self.subTest(assignment=bad), self.assertRaises(GLib.Error) as raised:
                suite.parse_backend_property(bad)
            self.assertSandboxError(raised, Sandbox.Error.INVALID)


if __name__ == '__main__':
    unittest.main(testRunner=unittest.TextTestRunner(stream=sys.stdout, verbosity=2))
