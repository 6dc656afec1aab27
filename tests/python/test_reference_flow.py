#!/usr/bin/python3
# The reference guide's example flow from Python, with the bubblewrap driver
# and with the memory driver: prewarm, create, run, capture state, stop,
# resume, read text, delete — in blocking and in async (main loop) form — and
# the errors an application matches by domain and code.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import sys
import time
import unittest

from sandboxtest import (GLib, Gio, Sandbox, SandboxTestCase, bubblewrap_usable, new_backend,
                         run_async)

MEMORY_SCRIPT = json.dumps({
    'commands': [
        {'match': {'executable': '/usr/bin/cat', 'args': ['hello.txt']},
         'stdout-from-file-arg': True},
        {'match': {'executable': '/usr/bin/sh', 'args': ['-c', 'echo one; sleep 0.3; echo two']},
         'chunks': [{'stdout': 'one\n'}, {'stdout': 'two\n', 'delay-ms': 300}]},
        {'match': {'executable': '/usr/bin/sleep', 'args': ['30']}, 'fault': 'never-ends'},
        {'match': {'executable': '/usr/bin/yes'}, 'fault': 'output-flood'},
    ],
})


class FlowTests:
    """The tests, for a driver named by the subclass."""

    driver = None

    def make_backend(self, **properties):
        raise NotImplementedError

    def setUp(self):
        super().setUp()
        self.backend = self.make_backend()
        self.template = Sandbox.Template.new('agent-workspace')
        self.template.add_file('hello.txt', GLib.Bytes.new(b'hello'))
        self.deny_all = Sandbox.NetworkPolicy.new_deny_all()

    def prewarm(self):
        key, reused = self.backend.prewarm(self.template, None)
        return key

    def cat_hello(self):
        command = Sandbox.Command.new('/usr/bin/cat')
        command.add_arg('hello.txt')
        return command

    # The flow ------------------------------------------------------------

    def test_reference_flow_blocking(self):
        key, reused = self.backend.prewarm(self.template, None)
        self.assertFalse(reused)
        self.assertTrue(Sandbox.Template.key_is_valid(key))
        again, reused = self.backend.prewarm(self.template, None)
        self.assertEqual((again, reused), (key, True))

        handle = self.backend.create(key, None, self.deny_all, None)
        try:
            result = handle.get_session().run(self.cat_hello(), None)
            self.assertEqual(result.get_exit_status(), 0)
            self.assertEqual(result.dup_stdout_text(), 'hello')
            self.assertEqual(result.get_stdout_bytes().get_data(), b'hello')

            # Persist the descriptor as the host would: it is plain JSON.
            saved = handle.capture_state().to_json()
            self.assertEqual(set(json.loads(saved)), {'backend', 'sessionId', 'templateKey'})
            handle.stop(None)
            self.assertTrue(handle.is_stopped())

            state = Sandbox.State.new_from_json(saved)
            resumed = self.backend.create(key, state, self.deny_all, None)
            try:
                self.assertEqual(resumed.get_session().read_text('hello.txt', None), 'hello')
                self.assertEqual(resumed.get_session().get_id(), state.get_session_id())
            finally:
                resumed.delete(None)
            with self.assertRaises(GLib.Error) as raised:
                resumed.capture_state()
            self.assertSandboxError(raised, Sandbox.Error.STOPPED)
        finally:
            handle.shutdown(None)

    def test_reference_flow_async(self):
        key, reused = run_async(self.backend.prewarm_async, self.backend.prewarm_finish,
                                self.template)
        self.assertFalse(reused)
        handle = run_async(self.backend.create_async, self.backend.create_finish,
                           key, None, self.deny_all)
        session = handle.get_session()
        result = run_async(session.run_async, session.run_finish, self.cat_hello())
        self.assertEqual(result.dup_stdout_text(), 'hello')

        run_async(session.write_text_async, session.write_text_finish, 'notes/todo.txt', 'ship it')
        state = handle.capture_state()
        run_async(handle.stop_async, handle.stop_finish)

        resumed = run_async(self.backend.create_async, self.backend.create_finish,
                            key, state, self.deny_all)
        session = resumed.get_session()
        self.assertEqual(run_async(session.read_text_async, session.read_text_finish,
                                   'hello.txt'), 'hello')
        data = run_async(session.read_bytes_async, session.read_bytes_finish, 'notes/todo.txt')
        self.assertEqual(data.get_data(), b'ship it')
        run_async(session.remove_path_async, session.remove_path_finish, 'notes')
        run_async(resumed.delete_async, resumed.delete_finish)
        self.assertTrue(resumed.is_deleted())
        run_async(handle.shutdown_async, handle.shutdown_finish)

        # An async failure arrives as GLib.Error from the _finish call.
        with self.assertRaises(GLib.Error) as raised:
            run_async(session.read_text_async, session.read_text_finish, 'hello.txt')
        self.assertSandboxError(raised, Sandbox.Error.STOPPED)

    # Errors ----------------------------------------------------------------

    def test_lease_is_exclusive(self):
        key = self.prewarm()
        handle = self.backend.create(key, None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        with self.assertRaises(GLib.Error) as raised:
            self.backend.create(key, handle.capture_state(), self.deny_all, None)
        self.assertSandboxError(raised, Sandbox.Error.BUSY)
        self.assertEqual(Sandbox.error_code_name(raised.exception.code), 'SANDBOX_BUSY')

    def test_state_errors(self):
        key = self.prewarm()
        with self.assertRaises(GLib.Error) as raised:
            self.backend.create('0' * 64, None, self.deny_all, None)
        self.assertSandboxError(raised, Sandbox.Error.NOT_FOUND)

        handle = self.backend.create(key, None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        state = handle.capture_state()
        handle.stop(None)
        foreign = Sandbox.State.new('another-backend', state.get_session_id(), key)
        with self.assertRaises(GLib.Error) as raised:
            self.backend.create(key, foreign, self.deny_all, None)
        self.assertSandboxError(raised, Sandbox.Error.STATE_MISMATCH)

        with self.assertRaises(GLib.Error) as raised:
            Sandbox.State.new_from_json('{"backend": "x", "sessionId": "y"}')
        self.assertSandboxError(raised, Sandbox.Error.INVALID)

    def test_path_and_text_errors(self):
        handle = self.backend.create(self.prewarm(), None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        session = handle.get_session()
        for path in ('../escape', '/etc/passwd', 'a\\b', 'a//b'):
            with self.subTest(path=path), self.assertRaises(GLib.Error) as raised:
                session.read_text(path, None)
            self.assertSandboxError(raised, Sandbox.Error.PATH)
        with self.assertRaises(GLib.Error) as raised:
            session.remove_path('/workspace', None)
        self.assertSandboxError(raised, Sandbox.Error.PATH)

        with self.assertRaises(GLib.Error) as raised:
            session.read_bytes('missing.txt', None)
        self.assertTrue(raised.exception.matches(Gio.io_error_quark(), Gio.IOErrorEnum.NOT_FOUND))

        session.write_bytes('bad.txt', GLib.Bytes.new(b'\xff'), None)
        with self.assertRaises(GLib.Error) as raised:
            session.read_text('bad.txt', None)
        self.assertTrue(raised.exception.matches(GLib.convert_error_quark(),
                                                 GLib.ConvertError.ILLEGAL_SEQUENCE))
        session.write_bytes('bom.txt', GLib.Bytes.new(b'\xef\xbb\xbfhi'), None)
        self.assertEqual(session.read_text('bom.txt', None), 'hi')

        with self.assertRaises(GLib.Error) as raised:
            Sandbox.Command.new_from_json('{"executable": "/usr/bin/true", "timeoutMs": 0}')
        self.assertSandboxError(raised, Sandbox.Error.INVALID)

    # Commands --------------------------------------------------------------

    def test_live_stdout_data(self):
        handle = self.backend.create(self.prewarm(), None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        command = Sandbox.Command.new('/usr/bin/sh')
        command.set_args(['-c', 'echo one; sleep 0.3; echo two'])
        process = handle.get_session().spawn(command, None)
        chunks = []
        arrivals = []
        process.connect('stdout-data', lambda process, data: (chunks.append(data.get_data()),
                                                              arrivals.append(time.monotonic())))
        result = run_async(process.wait_async, process.wait_finish)
        self.assertEqual(b''.join(chunks), b'one\ntwo\n')
        self.assertEqual(result.get_stdout_bytes().get_data(), b'one\ntwo\n')
        # Delivered live: the two lines came in separate signals, apart in time.
        self.assertGreaterEqual(len(chunks), 2)
        self.assertGreater(arrivals[-1] - arrivals[0], 0.15)

    def test_limits_and_cancellation(self):
        handle = self.backend.create(self.prewarm(), None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        session = handle.get_session()

        sleep = Sandbox.Command.new('/usr/bin/sleep')
        sleep.add_arg('30')
        sleep.set_timeout_ms(200)
        with self.assertRaises(GLib.Error) as raised:
            session.run(sleep, None)
        self.assertSandboxError(raised, Sandbox.Error.LIMIT)

        yes = Sandbox.Command.new('/usr/bin/yes')
        yes.set_max_output_bytes(1000)
        with self.assertRaises(GLib.Error) as raised:
            run_async(session.run_async, session.run_finish, yes)
        self.assertSandboxError(raised, Sandbox.Error.LIMIT)

        sleep.set_timeout_ms(30000)
        cancellable = Gio.Cancellable()
        process = session.spawn(sleep, cancellable)
        GLib.timeout_add(100, lambda: cancellable.cancel() or False)
        with self.assertRaises(GLib.Error) as raised:
            run_async(process.wait_async, process.wait_finish)
        self.assertTrue(raised.exception.matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED))

    def test_admission(self):
        backend = self.make_backend(max_concurrent_commands=1)
        handle = backend.create(self.prewarm(), None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        session = handle.get_session()
        sleep = Sandbox.Command.new('/usr/bin/sleep')
        sleep.add_arg('30')
        first = session.spawn(sleep, None)
        with self.assertRaises(GLib.Error) as raised:
            session.spawn(sleep, None)
        self.assertSandboxError(raised, Sandbox.Error.BUSY)
        first.stop(None)
        self.assertTrue(first.is_finished())


class BubblewrapFlowTests(FlowTests, SandboxTestCase):
    driver = 'bubblewrap'

    def setUp(self):
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        super().setUp()

    def make_backend(self, **properties):
        return new_backend('bubblewrap', state_directory=self.state_directory, **properties)


class MemoryFlowTests(FlowTests, SandboxTestCase):
    driver = 'memory'

    def make_backend(self, **properties):
        return new_backend('memory', state_directory=self.state_directory,
                           script=MEMORY_SCRIPT, **properties)


    def test_checkpoint_not_supported(self):
        # A GLib.Error in GIO's domain, not Sandbox's: the memory driver has
        # no checkpoints (the cluster driver does).
        handle = self.backend.create(self.prewarm(), None, self.deny_all, None)
        with self.assertRaises(GLib.Error) as raised:
            handle.checkpoint(None)
        error = raised.exception
        self.assertTrue(error.matches(Gio.io_error_quark(), Gio.IOErrorEnum.NOT_SUPPORTED),
                        '%s %d: %s' % (error.domain, error.code, error.message))
        self.assertEqual(error.message, 'Checkpoints are not supported by the memory driver')
        with self.assertRaises(GLib.Error) as raised:
            run_async(handle.checkpoint_async, handle.checkpoint_finish)
        self.assertTrue(raised.exception.matches(Gio.io_error_quark(),
                                                 Gio.IOErrorEnum.NOT_SUPPORTED))
        handle.stop(None)


class BackendConstructionTests(SandboxTestCase):
    def test_unknown_driver_is_unavailable(self):
        with self.assertRaises(GLib.Error) as raised:
            new_backend('no-such-driver')
        self.assertSandboxError(raised, Sandbox.Error.UNAVAILABLE)
        self.assertIn('no-such-driver', raised.exception.message)

    def test_drivers_listed(self):
        self.assertIn('memory', Sandbox.list_drivers())


if __name__ == '__main__':
    unittest.main(testRunner=unittest.TextTestRunner(stream=sys.stdout, verbosity=2))
