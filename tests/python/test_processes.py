#!/usr/bin/python3
# A running command's streamed standard input, as Python writes it: a
# Command made with stdin_stream=True, the process's Gio.OutputStream
# written with plain Gio calls (blocking and async), output seen live
# before the input ends, and close() as the command's end of file; a
# command on a terminal (typed input, resize, Ctrl-D on close) and signals
# — over the memory and the bubblewrap drivers alike.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import signal
import socket
import time
import unittest

from sandboxtest import GLib, Gio, Sandbox, SandboxTestCase, bubblewrap_usable

MEMORY_SCRIPT = json.dumps({
    'commands': [
        {'match': {'executable': '/bin/sh'}, 'stdout-from-stdin': True},
        {'match': {'executable': '/bin/sleep'}, 'fault': 'never-ends'},
    ],
})
# What the bubblewrap guest runs; the memory driver echoes its stdin.
ECHO = ['/bin/sh', '-c', 'cat']
SLEEP = ['/bin/sleep', '30']


class StreamedStdinTests:
    """The cases, for a driver: self.session."""

    def spawn(self):
        command = Sandbox.Command(ECHO, stdin_stream=True)
        self.assertTrue(command.props.stdin_stream)
        process = self.session.spawn(command, None)
        self.seen = bytearray()
        process.connect('stdout-data', lambda _p, data: self.seen.extend(data.get_data()))
        return process

    def wait_until_seen(self, wanted):
        context = GLib.MainContext.default()
        deadline = GLib.get_monotonic_time() + 20 * 1000 * 1000
        while bytes(self.seen) != wanted and GLib.get_monotonic_time() < deadline:
            context.iteration(False) or GLib.usleep(1000)
        self.assertEqual(bytes(self.seen), wanted)

    def test_input_reaches_the_command_as_it_is_written(self):
        process = self.spawn()
        stdin = process.get_stdin_stream()
        self.assertIsInstance(stdin, Gio.OutputStream)
        stdin.write_all(b'one\n', None)
        self.wait_until_seen(b'one\n')
        loop = GLib.MainLoop()
        stdin.write_bytes_async(GLib.Bytes(b'two\n'), GLib.PRIORITY_DEFAULT, None,
                                lambda stream, result: (stream.write_bytes_finish(result),
                                                        loop.quit()))
        loop.run()
        stdin.close(None)
        result = process.wait(None)
        self.assertEqual(result.get_exit_status(), 0)
        self.assertEqual(result.get_stdout_bytes().get_data(), b'one\ntwo\n')

    def test_no_stream_unless_asked(self):
        process = self.session.spawn(Sandbox.Command(ECHO, stdin=b'x'), None)
        self.assertIsNone(process.get_stdin_stream())
        self.assertEqual(process.wait(None).get_stdout_bytes().get_data(), b'x')

    def test_bytes_and_stream_refused(self):
        with self.assertRaises(GLib.Error) as raised:
            self.session.spawn(Sandbox.Command(ECHO, stdin=b'x', stdin_stream=True), None)
        self.assertSandboxError(raised, Sandbox.Error.INVALID)

    def test_run_ends_an_unwritten_stream(self):
        result = self.session.run(Sandbox.Command(ECHO, stdin_stream=True), None)
        self.assertEqual(result.get_exit_status(), 0)
        self.assertEqual(result.get_stdout_bytes().get_data(), b'')


class TerminalTests:
    """A terminal and signals, as Python uses them: self.session."""

    def test_typed_input_shows_and_ctrl_d_ends_it(self):
        command = Sandbox.Command(ECHO, terminal=True, terminal_rows=40, terminal_columns=100)
        self.assertTrue(command.props.terminal)
        process = self.session.spawn(command, None)
        self.assertTrue(process.has_terminal())
        self.seen = bytearray()
        process.connect('stdout-data', lambda _p, data: self.seen.extend(data.get_data()))
        stdin = process.get_stdin_stream()
        stdin.write_all(b'typed\n', None)
        context = GLib.MainContext.default()
        deadline = GLib.get_monotonic_time() + 20 * 1000 * 1000
        while b'typed' not in self.seen and GLib.get_monotonic_time() < deadline:
            context.iteration(False) or GLib.usleep(1000)
        self.assertIn(b'typed', bytes(self.seen))
        process.resize_terminal(50, 132)
        stdin.close(None)
        result = process.wait(None)
        self.assertEqual(result.get_exit_status(), 0)
        with self.assertRaises(Sandbox.StoppedError):
            process.resize_terminal(24, 80)

    def test_signal_ends_a_command(self):
        process = self.session.spawn(Sandbox.Command(SLEEP), None)
        with self.assertRaises(Sandbox.InvalidError):
            process.send_signal(0)
        process.send_signal(signal.SIGTERM)
        self.assertEqual(process.wait(None).get_exit_status(), 128 + signal.SIGTERM)

    def test_background_command_is_kept_and_found(self):
        process = self.session.spawn_background(Sandbox.Command(SLEEP))
        ident = process.get_background_id()
        del process
        listed = self.session.list_background()
        self.assertEqual([p.get_background_id() for p in listed], [ident])
        found = self.session.lookup_background(ident)
        self.assertEqual(list(found.get_argv()), SLEEP)
        self.assertFalse(found.is_finished())
        data, position, skipped = found.read_output()
        self.assertEqual((data, position, skipped), (b'', 0, 0))
        found.send_signal(signal.SIGTERM)
        self.assertEqual(found.wait(None).get_exit_status(), 128 + signal.SIGTERM)
        self.assertIsNone(self.session.lookup_background('bg-0'))

    def test_background_output_read_as_bytes(self):
        process = self.session.spawn_background(Sandbox.Command(ECHO, stdin_stream=True))
        stdin = process.get_stdin_stream()
        stdin.write_all(b'kept\n', None)
        stdin.close(None)
        self.assertEqual(process.wait(None).get_exit_status(), 0)
        data, position, skipped = process.read_output()
        self.assertEqual((data, position, skipped), (b'kept\n', 5, 0))
        self.assertEqual(process.read_output(position), (b'', 5, 0))

    def test_terminal_refuses_stdin_bytes(self):
        with self.assertRaises(Sandbox.InvalidError):
            self.session.spawn(Sandbox.Command(ECHO, terminal=True, stdin=b'x'), None)


class ProcessesTestCase(SandboxTestCase):

    def create_session(self, backend):
        template = Sandbox.Template.new('processes')
        template.add_file('hello.txt', b'hello\n')
        key, _reused = backend.prewarm(template, None)
        handle = backend.create(key, None, Sandbox.NetworkPolicy.new_deny_all(), None)
        self.addCleanup(handle.delete, None)
        return handle.get_session()


class MemoryTestCase(ProcessesTestCase):

    def setUp(self):
        super().setUp()
        self.session = self.create_session(
            Sandbox.Backend.new('memory', state_directory=self.state_directory,
                                script=MEMORY_SCRIPT))


class BubblewrapTestCase(ProcessesTestCase):

    def setUp(self):
        super().setUp()
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        self.session = self.create_session(
            Sandbox.Backend.new('bubblewrap', state_directory=self.state_directory))


class MemoryStreamedStdinTests(StreamedStdinTests, MemoryTestCase):
    pass


class MemoryTerminalTests(TerminalTests, MemoryTestCase):
    pass


class BubblewrapStreamedStdinTests(StreamedStdinTests, BubblewrapTestCase):
    pass


class BubblewrapTerminalTests(TerminalTests, BubblewrapTestCase):
    pass


SERVER = ['/usr/bin/python3', '-m', 'http.server', '8472', '--bind', '127.0.0.1',
          '--directory', '/workspace']
FETCH = ('import time, urllib.request\n'
         'for attempt in range(200):\n'
         '    try:\n'
         '        print(urllib.request.urlopen("http://127.0.0.1:8472/hello.txt").read()'
         '.decode(), end=""); break\n'
         '    except OSError:\n'
         '        time.sleep(0.05)\n')


class BubblewrapLoopbackTests(BubblewrapTestCase):
    """The session's commands share one loopback, reachable from the host."""

    def test_server_answers_next_command(self):
        self.session.spawn_background(Sandbox.Command(SERVER))
        result = self.session.run(Sandbox.Command(['/usr/bin/python3', '-c', FETCH]), None)
        self.assertEqual(result.get_stdout_bytes().get_data(), b'hello\n')

    def get_through(self, path):
        for _attempt in range(200):
            with socket.socket(socket.AF_UNIX) as client:
                client.connect(path)
                answer = b''
                try:
                    client.sendall(b'GET /hello.txt HTTP/1.0\r\n\r\n')
                    while chunk := client.recv(4096):
                        answer += chunk
                except OSError:
                    pass
            if answer:
                return answer
            time.sleep(0.05)
        return b''

    def test_expose_port(self):
        self.session.spawn_background(Sandbox.Command(SERVER))
        path = self.session.expose_port(8472, None)
        self.assertIsInstance(path, str)
        answer = self.get_through(path)
        self.assertTrue(answer.startswith(b'HTTP/1.0 200'), answer)
        self.assertTrue(answer.endswith(b'\r\n\r\nhello\n'), answer)

    def test_expose_port_refuses_a_bad_port(self):
        with self.assertRaises(GLib.Error) as raised:
            self.session.expose_port(0, None)
        self.assertSandboxError(raised, Sandbox.Error.INVALID)


class MemoryLoopbackTests(MemoryTestCase):

    def test_expose_port_not_supported(self):
        with self.assertRaises(GLib.Error) as raised:
            self.session.expose_port(8472, None)
        self.assertTrue(raised.exception.matches(Gio.io_error_quark(),
                                                 Gio.IOErrorEnum.NOT_SUPPORTED))


if __name__ == '__main__':
    unittest.main(verbosity=2)
