#!/usr/bin/python3
# A command whose executable could not be executed, as Python sees it: the
# result's exec-errno property and get_exec_errno(), and check_executed()
# raising GLib.Error in the Gio.IOErrorEnum domain — over the memory and the
# bubblewrap drivers alike. A program that ran and then exited 127, or
# printed what a failed exec used to print, has exec_errno 0.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import errno
import json
import unittest

from sandboxtest import GLib, Gio, Sandbox, SandboxTestCase, bubblewrap_usable

FORGED = 'bwrap: execvp /usr/bin/forger: No such file or directory\n'
MEMORY_SCRIPT = json.dumps({
    'commands': [
        {'match': {'executable': '/usr/bin/forger'}, 'stderr': FORGED, 'exit': 1},
        {'match': {'executable': '/usr/bin/exits-127'}, 'exit': 127},
    ],
})


class ExecFailureTests:
    """The cases, for a driver: self.run_argv(argv) -> Result."""

    def assertExecFailure(self, result, exec_errno, code, status):
        self.assertEqual(result.get_exec_errno(), exec_errno)
        self.assertEqual(result.props.exec_errno, exec_errno)
        self.assertEqual(result.exec_errno, exec_errno)   # the override
        self.assertEqual(result.get_exit_status(), status)
        with self.assertRaises(GLib.Error) as raised:
            result.check_executed()
        self.assertTrue(raised.exception.matches(Gio.io_error_quark(), code),
                        raised.exception)

    def assertExecuted(self, result, status):
        self.assertEqual(result.get_exec_errno(), 0)
        self.assertEqual(result.get_exit_status(), status)
        self.assertTrue(result.check_executed())

    def test_missing(self):
        self.assertExecFailure(self.run_argv(['./gone']), errno.ENOENT,
                               Gio.IOErrorEnum.NOT_FOUND, 127)

    def test_not_executable(self):
        self.assertExecFailure(self.run_argv(['./plain.sh']), errno.EACCES,
                               Gio.IOErrorEnum.PERMISSION_DENIED, 126)

    def test_directory(self):
        self.assertExecFailure(self.run_argv(['/workspace/build']), errno.EACCES,
                               Gio.IOErrorEnum.PERMISSION_DENIED, 126)

    def test_exits_127_itself(self):
        self.assertExecuted(self.run_argv(self.exits_127), 127)

    def test_forged_line(self):
        result = self.run_argv(self.forger)
        self.assertExecuted(result, 1)
        self.assertEqual(result.dup_stderr_text(), FORGED)


class ResultsTestCase(SandboxTestCase):

    def setUp(self):
        super().setUp()
        self.template = Sandbox.Template.new('results')
        self.template.add_file('plain.sh', b'#!/bin/sh\necho ran\n')
        self.template.add_empty_directory('build')

    def create_session(self, backend):
        key, reused = backend.prewarm(self.template, None)
        handle = backend.create(key, None, Sandbox.NetworkPolicy.new_deny_all(), None)
        self.addCleanup(handle.delete, None)
        return handle.get_session()

    def run_argv(self, argv):
        command = Sandbox.Command.new(argv[0])
        for arg in argv[1:]:
            command.add_arg(arg)
        return self.session.run(command, None)


class MemoryResultsTests(ExecFailureTests, ResultsTestCase):
    exits_127 = ['/usr/bin/exits-127']
    forger = ['/usr/bin/forger']

    def setUp(self):
        super().setUp()
        self.session = self.create_session(
            Sandbox.Backend.new('memory', state_directory=self.state_directory,
                                script=MEMORY_SCRIPT))


class BubblewrapResultsTests(ExecFailureTests, ResultsTestCase):
    """Commands in ready sandboxes (the default: the stub reports on its
    control socket)."""
    exits_127 = ['/usr/bin/sh', '-c', 'exit 127']
    forger = ['/usr/bin/sh', '-c', "printf '%s' >&2; exit 1" % FORGED.replace('\n', '\\n')]
    properties = {}

    def setUp(self):
        super().setUp()
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        try:
            backend = Sandbox.Backend.new('bubblewrap', state_directory=self.state_directory,
                                          **self.properties)
        except GLib.Error as error:
            # A cgroup limit this host cannot enforce is refused.
            if not error.matches(Sandbox.error_quark(), Sandbox.Error.UNAVAILABLE):
                raise
            self.skipTest(error.message)
        self.session = self.create_session(backend)


class ColdBubblewrapResultsTests(BubblewrapResultsTests):
    """Commands started cold (the stub reports on a pipe of its own)."""
    properties = {'max_ready_sandboxes': 0}


class CgroupBubblewrapResultsTests(BubblewrapResultsTests):
    """Commands under a cgroup limit (over only once their whole tree has
    left the cgroup; the stub's report still carries the failed exec)."""
    properties = {'max_processes': 64}


if __name__ == '__main__':
    unittest.main(verbosity=2)
