#!/usr/bin/python3
# The PyGObject overrides (introspection/overrides/Sandbox.py): keyword
# backend construction validated against the driver's properties, bytes in
# and out, the environment as a dict, handles as context managers, str() of
# errors naming the code, and awaitable _async methods on gbulb's asyncio
# loop (and on PyGObject >= 3.50's own loop where that is installed).
#
# Each test names the part of the override it exercises; taking that part
# out of Sandbox.py makes the test fail (the plain binding raises TypeError
# "Expected GLib.Bytes", returns GLib.Bytes, has no __enter__, prints
# "sandbox-error-quark: ... (0)", needs a callback, ...).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import asyncio
import errno
import json
import pathlib
import unittest

import gi

from sandboxtest import GLib, Gio, Sandbox, SandboxTestCase, bubblewrap_usable

try:
    import gbulb
except ImportError:  # Debian: python3-gbulb (./dev deps installs it)
    gbulb = None

MEMORY_SCRIPT = json.dumps({
    'commands': [
        {'match': {'executable': '/usr/bin/cat'}, 'stdout-from-stdin': True},
        {'match': {'executable': '/usr/bin/echo', 'args': ['hello']}, 'stdout': 'hello\n'},
        {'match': {'executable': '/usr/bin/sleep', 'args': ['30']}, 'fault': 'never-ends'},
    ],
})


class OverridesTestCase(SandboxTestCase):

    def setUp(self):
        super().setUp()
        # Without the overrides on PYTHONPATH every test here would fail on
        # the plain binding; say so plainly instead.
        self.assertEqual(Sandbox.Backend.__module__, 'gi.overrides.Sandbox',
                         'the Sandbox overrides are not loaded (PYTHONPATH)')
        self.template = Sandbox.Template.new('overrides')
        self.template.add_file('hello.txt', b'hello')
        self.deny_all = Sandbox.NetworkPolicy.new_deny_all()

    def memory_backend(self, **properties):
        return Sandbox.Backend.new('memory', state_directory=self.state_directory,
                                   script=MEMORY_SCRIPT, **properties)

    def create_handle(self, backend=None):
        backend = backend or self.memory_backend()
        key, reused = backend.prewarm(self.template, None)
        handle = backend.create(key, None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        return handle

    def assertInvalid(self, error):
        self.assertIsInstance(error, GLib.Error)
        self.assertTrue(error.matches(Sandbox.error_quark(), Sandbox.Error.INVALID), str(error))


class BackendNewTests(OverridesTestCase):
    """Backend.new(driver, **properties) (Backend.new in the override)."""

    def test_python_spellings_reach_the_driver(self):
        backend = Sandbox.Backend.new('memory', state_directory=self.state_directory,
                                      max_concurrent_commands=3, name='spelled')
        self.assertEqual(backend.get_max_concurrent_commands(), 3)
        self.assertEqual(backend.get_name(), 'spelled')
        self.assertEqual(backend.dup_state_directory(), self.state_directory)

    def test_path_objects_are_strings(self):
        backend = Sandbox.Backend.new('memory', state_directory=pathlib.Path(self.state_directory))
        self.assertEqual(backend.dup_state_directory(), self.state_directory)

    def test_typed_driver_properties(self):
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        backend = Sandbox.Backend.new('bubblewrap', state_directory=self.state_directory,
                                      seccomp=False, durable=True, max_processes=2 ** 40)
        self.assertIs(backend.props.seccomp, False)
        self.assertIs(backend.props.durable, True)
        self.assertEqual(backend.props.max_processes, 2 ** 40)

    def test_unknown_property_is_a_type_error_and_invalid(self):
        with self.assertRaises(TypeError) as raised:
            Sandbox.Backend.new('memory', stat_directory=self.state_directory)
        self.assertInvalid(raised.exception)
        self.assertIn('"stat_directory"', raised.exception.message)
        self.assertIsInstance(raised.exception, Sandbox.PropertyTypeError)

    def test_wrong_types_are_type_errors(self):
        cases = [
            ('state_directory', 5),
            ('max_concurrent_commands', '8'),
            ('max_concurrent_commands', 2.5),
            ('max_concurrent_commands', True),   # a bool is an int in Python
            ('name', b'bytes'),
        ]
        for keyword, value in cases:
            properties = {'state_directory': self.state_directory, keyword: value}
            with self.subTest(keyword=keyword, value=value), \
                    self.assertRaises(TypeError) as raised:
                Sandbox.Backend.new('memory', **properties)
            self.assertInvalid(raised.exception)
            self.assertIn('"%s"' % keyword.replace('_', '-'), raised.exception.message)

    def test_bool_property_refuses_ints(self):
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        with self.assertRaises(TypeError) as raised:
            Sandbox.Backend.new('bubblewrap', state_directory=self.state_directory, seccomp=1)
        self.assertInvalid(raised.exception)

    def test_out_of_range_is_a_value_error_and_invalid(self):
        # Passed to GObject unchecked, -1 or 2**32 for a guint would be
        # wrapped or clamped with a warning: the override refuses it first.
        for value in (-1, 2 ** 32, 2 ** 70):
            with self.subTest(value=value), self.assertRaises(ValueError) as raised:
                Sandbox.Backend.new('memory', state_directory=self.state_directory,
                                    max_concurrent_commands=value)
            self.assertInvalid(raised.exception)
            self.assertIn('max-concurrent-commands', raised.exception.message)

    def test_driver_validation_still_applies(self):
        # In range for the GParamSpec, refused by the driver's own init.
        with self.assertRaises(GLib.Error) as raised:
            Sandbox.Backend.new('memory', state_directory=self.state_directory,
                                max_concurrent_commands=0)
        self.assertInvalid(raised.exception)

    def test_unknown_driver_is_unavailable(self):
        with self.assertRaises(GLib.Error) as raised:
            Sandbox.Backend.new('no-such-driver', state_directory=self.state_directory)
        self.assertSandboxError(raised, Sandbox.Error.UNAVAILABLE)
        self.assertIn('no-such-driver', raised.exception.message)


class BytesTests(OverridesTestCase):
    """bytes in wherever GLib.Bytes is taken, bytes out (_bytes_method)."""

    def test_template_takes_bytes_like_values(self):
        template = Sandbox.Template.new('bytes')
        template.add_file('a', b'a')
        template.add_file('b', bytearray(b'b'))
        template.add_file('c', memoryview(b'c'))
        template.add_file('d', GLib.Bytes.new(b'd'))   # the plain form still works
        for path in 'abcd':
            data = template.lookup_file(path)
            self.assertIsInstance(data, bytes)
            self.assertEqual(data, path.encode())

    def test_session_bytes_round_trip(self):
        session = self.create_handle().get_session()
        session.write_bytes('data.bin', b'\x00\xffbinary', None)
        data = session.read_bytes('data.bin', None)
        self.assertIsInstance(data, bytes)
        self.assertEqual(data, b'\x00\xffbinary')
        # Code written against the plain binding keeps working.
        self.assertEqual(data.get_data(), b'\x00\xffbinary')
        self.assertEqual(data.get_size(), 8)
        self.assertEqual(session.read_bytes('hello.txt', None), b'hello')

    def test_keyword_bytes(self):
        session = self.create_handle().get_session()
        session.write_bytes(path='kw.bin', contents=b'keyword', cancellable=None)
        self.assertEqual(session.read_bytes('kw.bin'), b'keyword')

    def test_stdin_and_result_bytes(self):
        session = self.create_handle().get_session()
        command = Sandbox.Command.new('/usr/bin/cat')
        command.set_stdin(b'from stdin')
        self.assertEqual(command.get_stdin(), b'from stdin')
        result = session.run(command, None)
        self.assertEqual(result.exit_status, 0)
        self.assertIsInstance(result.stdout, bytes)
        self.assertEqual(result.stdout, b'from stdin')
        self.assertEqual(result.stderr, b'')
        self.assertEqual(result.get_stdout_bytes().get_data(), b'from stdin')

    def test_empty_bytes(self):
        session = self.create_handle().get_session()
        session.write_bytes('empty', b'', None)
        self.assertEqual(session.read_bytes('empty', None), b'')

    def test_bubblewrap_stdin(self):
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        backend = Sandbox.Backend.new('bubblewrap', state_directory=self.state_directory)
        session = self.create_handle(backend).get_session()
        result = session.run(Sandbox.Command(['/usr/bin/cat'], stdin=b'real\x00bytes'))
        self.assertEqual((result.exit_status, result.stdout), (0, b'real\x00bytes'))

    def test_wrong_type_is_still_refused(self):
        session = self.create_handle().get_session()
        with self.assertRaises(TypeError):
            session.write_bytes('text.txt', 'a str is not bytes', None)


class CommandTests(OverridesTestCase):
    """Command(argv, environment=..., stdin=...) and the environment dict."""

    def test_constructor(self):
        command = Sandbox.Command(['/usr/bin/env', '-0'], cwd='src', timeout_ms=5000,
                                  environment={'LANG': 'C.UTF-8', 'EMPTY': ''},
                                  stdin=b'input')
        self.assertEqual(command.get_executable(), '/usr/bin/env')
        self.assertEqual(command.get_args(), ['-0'])
        self.assertEqual(command.get_cwd(), 'src')
        self.assertEqual(command.get_timeout_ms(), 5000)
        self.assertEqual(command.get_stdin(), b'input')
        self.assertEqual(command.environment, {'LANG': 'C.UTF-8', 'EMPTY': ''})
        self.assertTrue(command.validate())

    def test_environment_dict(self):
        command = Sandbox.Command.new('/usr/bin/env')
        self.assertEqual(command.environment, {})
        command.update_environment({'A': '1'}, B='x=y')
        command.update_environment([('A', '2')])
        self.assertEqual(command.environment, {'A': '2', 'B': 'x=y'})
        self.assertEqual(command.get_environment(), ['A=2', 'B=x=y'])
        # A copy: changing it changes nothing.
        command.environment['C'] = '3'
        self.assertNotIn('C', command.environment)

    def test_empty_argv(self):
        with self.assertRaises(ValueError):
            Sandbox.Command([])

    def test_string_argv_is_a_type_error(self):
        # A str is a sequence: without _argv_list() this ran ['/', 'b', ...].
        with self.assertRaises(TypeError) as raised:
            Sandbox.Command('/bin/true')
        self.assertIn("['/bin/true']", str(raised.exception))
        with self.assertRaises(TypeError) as raised:
            Sandbox.Command('ls -l')
        self.assertIn('shlex.split', str(raised.exception))

    def test_no_argv_is_a_type_error(self):
        # Without the check it failed only at run(), in the reference's words.
        with self.assertRaises(TypeError) as raised:
            Sandbox.Command(None)
        self.assertIn('needs an argv', str(raised.exception))
        self.assertEqual(Sandbox.Command(executable='/bin/true').get_executable(), '/bin/true')

    def test_argv_items(self):
        command = Sandbox.Command([pathlib.PurePosixPath('/usr/bin/cat'), 'a'])
        self.assertEqual(command.get_executable(), '/usr/bin/cat')
        with self.assertRaises(TypeError) as raised:
            Sandbox.Command(['/usr/bin/cat', 3])
        self.assertIn('argv[1]', str(raised.exception))


class HandleContextTests(OverridesTestCase):
    """with/async with on handles (Handle.__exit__/__aexit__)."""

    def test_with_stops_on_exit(self):
        backend = self.memory_backend()
        key, reused = backend.prewarm(self.template, None)
        with backend.create(key, None, self.deny_all, None) as handle:
            self.addCleanup(handle.delete, None)
            self.assertEqual(handle.get_session().read_bytes('hello.txt'), b'hello')
            self.assertFalse(handle.is_stopped())
        self.assertTrue(handle.is_stopped())
        # The lease is released: the session resumes, from its state alone.
        resumed = backend.resume(handle.capture_state(), self.deny_all)
        self.assertEqual(resumed.get_session().read_bytes('hello.txt'), b'hello')
        resumed.stop()

    def test_with_stops_when_the_block_raises(self):
        handle = self.create_handle()
        with self.assertRaises(KeyError):
            with handle:
                raise KeyError('inside')
        self.assertTrue(handle.is_stopped())

    def test_with_after_delete(self):
        handle = self.create_handle()
        with handle:
            handle.delete(None)
        self.assertTrue(handle.is_deleted())


class ErrorStringTests(OverridesTestCase):
    """str() of a Sandbox error names the code (_sandbox_error_str)."""

    def test_sandbox_error_names_the_code(self):
        backend = self.memory_backend()
        key, reused = backend.prewarm(self.template, None)
        handle = backend.create(key, None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        with self.assertRaises(GLib.Error) as raised:
            backend.create(key, handle.capture_state(), self.deny_all, None)
        self.assertEqual(str(raised.exception),
                         'SANDBOX_BUSY: Sandbox session already has an owner')
        with self.assertRaises(GLib.Error) as raised:
            handle.get_session().read_bytes('../escape', None)
        self.assertTrue(str(raised.exception).startswith('SANDBOX_PATH: '))

    def test_other_domains_keep_pygobject_format(self):
        session = self.create_handle().get_session()
        with self.assertRaises(GLib.Error) as raised:
            session.read_bytes('missing.txt', None)
        error = raised.exception
        self.assertTrue(error.matches(Gio.io_error_quark(), Gio.IOErrorEnum.NOT_FOUND))
        self.assertEqual(str(error), '%s: %s (%d)' % (error.domain, error.message, error.code))


class ErrorClassTests(OverridesTestCase):
    """Errors as Python exceptions (Error, _python_error, _friendly_method):
    one class per code, the matching built-in where one fits, still
    GLib.Error with the same domain, code and message."""

    def test_one_class_per_code(self):
        backend = self.memory_backend()
        key, reused = backend.prewarm(self.template, None)
        handle = backend.create(key, None, self.deny_all, None)
        self.addCleanup(handle.delete, None)
        with self.assertRaises(Sandbox.BusyError) as raised:
            backend.create(key, handle.capture_state(), self.deny_all, None)
        error = raised.exception
        self.assertIsInstance(error, Sandbox.Error)
        self.assertIsInstance(error, GLib.Error)
        self.assertTrue(error.matches(Sandbox.error_quark(), Sandbox.Error.BUSY))
        self.assertEqual(str(error), 'SANDBOX_BUSY: Sandbox session already has an owner')
        with self.assertRaises(ValueError) as raised:
            handle.get_session().read_bytes('../escape')
        self.assertIsInstance(raised.exception, Sandbox.PathError)
        self.assertEqual(raised.exception.code, Sandbox.Error.PATH)

    def test_codes_stay_on_error(self):
        self.assertEqual(int(Sandbox.Error.BUSY), 0)
        self.assertEqual(Sandbox.error_code_name(Sandbox.Error.NOT_FOUND), 'SANDBOX_NOT_FOUND')
        self.assertTrue(issubclass(Sandbox.NetworkDeniedError, PermissionError))
        self.assertTrue(issubclass(Sandbox.NotFoundError, LookupError))

    def test_missing_file_is_file_not_found(self):
        session = self.create_handle().get_session()
        with self.assertRaises(FileNotFoundError) as raised:
            session.read_bytes('nope.txt')
        error = raised.exception
        self.assertEqual(error.errno, errno.ENOENT)
        self.assertTrue(error.matches(Gio.io_error_quark(), Gio.IOErrorEnum.NOT_FOUND))
        self.assertIn('nope.txt', error.message)

    def test_async_finish_raises_the_class(self):
        session = self.create_handle().get_session()
        loop = GLib.MainLoop()
        outcome = {}

        def done(source, result):
            try:
                source.read_bytes_finish(result)
            except Exception as error:  # noqa: BLE001 (the test looks at it)
                outcome['error'] = error
            loop.quit()

        session.read_bytes_async('nope.txt', None, done)
        loop.run()
        self.assertIsInstance(outcome['error'], FileNotFoundError)


class FileArgumentTests(OverridesTestCase):
    """str and os.PathLike where a Gio.File is taken, and a trailing
    cancellable that may be left out (_friendly_method)."""

    def test_add_directory_takes_a_path(self):
        directory = pathlib.Path(self.state_directory) / 'source'
        (directory / 'sub').mkdir(parents=True)
        (directory / 'sub' / 'a.txt').write_bytes(b'a')
        for given in (str(directory), directory):
            template = Sandbox.Template.new('from-path')
            self.assertTrue(template.add_directory(given))
            self.assertEqual(template.get_n_files(), 1)


class OutputChunkTests(OverridesTestCase):
    """process.stdout_chunks() and run(on_stdout=) (_OutputChunks), over
    bubblewrap, where output really comes in pieces."""

    TWO_LINES = ['/bin/sh', '-c', 'echo one; sleep 0.5; echo two; echo err >&2']

    def setUp(self):
        super().setUp()
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        backend = Sandbox.Backend.new('bubblewrap', state_directory=self.state_directory)
        self.session = self.create_handle(backend).get_session()

    def test_for_chunk_in_stdout_chunks(self):
        process = self.session.spawn(Sandbox.Command(self.TWO_LINES))
        chunks = list(process.stdout_chunks())
        self.assertEqual(chunks, [b'one\n', b'two\n'])
        self.assertTrue(process.is_finished())

    def test_output_chunks_pairs(self):
        process = self.session.spawn(Sandbox.Command(self.TWO_LINES))
        pairs = list(process.output_chunks())
        self.assertIn((Sandbox.OutputStream.STDERR, b'err\n'), pairs)
        self.assertEqual([data for stream, data in pairs
                          if stream == Sandbox.OutputStream.STDOUT], [b'one\n', b'two\n'])

    def test_chunks_raise_the_command_error_at_the_end(self):
        command = Sandbox.Command(['/bin/sh', '-c', 'echo first; exec sleep 30'], timeout_ms=500)
        chunks = self.session.spawn(command).stdout_chunks()
        self.assertEqual(next(chunks), b'first\n')
        with self.assertRaises(Sandbox.LimitError):
            next(chunks)

    def test_chunks_left_early_let_go_of_the_process(self):
        import gc
        import weakref
        process = self.session.spawn(Sandbox.Command(self.TWO_LINES))
        chunks = process.stdout_chunks()
        self.assertEqual(next(chunks), b'one\n')
        watched = weakref.ref(chunks)
        del chunks                 # left before its end
        process.wait(None)         # the command ends: the handlers go
        context = GLib.MainContext.default()
        while context.iteration(False):
            pass
        gc.collect()
        self.assertIsNone(watched())
        with process.stdout_chunks() as closed:
            pass
        self.assertEqual(list(closed), [])

    def test_run_with_callbacks(self):
        seen = []
        result = self.session.run(Sandbox.Command(self.TWO_LINES),
                                  on_stdout=lambda data: seen.append(('out', data)),
                                  on_stderr=lambda data: seen.append(('err', data)))
        self.assertEqual(result.exit_status, 0)
        self.assertEqual([data for kind, data in seen if kind == 'out'], [b'one\n', b'two\n'])
        self.assertIn(('err', b'err\n'), seen)
        self.assertEqual(result.stdout, b'one\ntwo\n')

    def test_run_without_callbacks_raises_the_class(self):
        with self.assertRaises(Sandbox.InvalidError):
            self.session.run(Sandbox.Command(['/bin/true'], timeout_ms=0))

    @unittest.skipIf(gbulb is None, 'python3-gbulb is not installed')
    def test_async_for(self):
        loop = gbulb.GLibEventLoopPolicy().new_event_loop()
        self.addCleanup(loop.close)

        async def collect():
            process = self.session.spawn(Sandbox.Command(self.TWO_LINES))
            return [chunk async for chunk in process.stdout_chunks()]

        self.assertEqual(loop.run_until_complete(asyncio.wait_for(collect(), 60)),
                         [b'one\n', b'two\n'])


@unittest.skipIf(gbulb is None, 'python3-gbulb is not installed')
class GbulbAwaitableTests(OverridesTestCase):
    """await on _async methods with gbulb (_awaitable_method)."""

    def run_coroutine(self, coroutine):
        loop = gbulb.GLibEventLoopPolicy().new_event_loop()
        self.addCleanup(loop.close)
        return loop.run_until_complete(asyncio.wait_for(coroutine, 60))

    def test_flow(self):
        backend = self.memory_backend()

        async def flow():
            key, reused = await backend.prewarm_async(self.template)
            self.assertFalse(reused)
            handle = await backend.create_async(key, None, self.deny_all)
            async with handle:
                session = handle.get_session()
                await session.write_bytes_async('notes.txt', b'async bytes')
                self.assertEqual(await session.read_bytes_async('notes.txt'), b'async bytes')
                self.assertEqual(await session.read_text_async('hello.txt'), 'hello')
                result = await session.run_async(Sandbox.Command(['/usr/bin/echo', 'hello']))
                self.assertEqual((result.exit_status, result.stdout), (0, b'hello\n'))
                # Concurrent awaits complete independently.
                texts = await asyncio.gather(session.read_text_async('hello.txt'),
                                             session.read_text_async('notes.txt'))
                self.assertEqual(texts, ['hello', 'async bytes'])
            self.assertTrue(handle.is_stopped())
            await handle.delete_async()
            return handle

        handle = self.run_coroutine(flow())
        self.assertTrue(handle.is_deleted())

    def test_errors_are_raised_by_await(self):
        handle = self.create_handle()
        session = handle.get_session()

        async def read_escape():
            await session.read_text_async('../escape')

        with self.assertRaises(GLib.Error) as raised:
            self.run_coroutine(read_escape())
        self.assertSandboxError(raised, Sandbox.Error.PATH)

    def test_callback_form_is_unchanged(self):
        session = self.create_handle().get_session()
        loop = GLib.MainLoop()
        outcome = []

        def done(session, result):
            outcome.append(session.read_bytes_finish(result))
            loop.quit()

        session.read_bytes_async('hello.txt', None, done)
        GLib.timeout_add_seconds(60, loop.quit)
        loop.run()
        self.assertEqual(outcome, [b'hello'])

    def test_cancelling_the_task_cancels_the_operation(self):
        session = self.create_handle().get_session()
        finished = []
        plain_finish = session.run_finish

        async def run_and_cancel():
            finish_called = asyncio.Event()

            # The override calls the instance's run_finish: record what the
            # operation ended with once the task is cancelled.
            def spy_finish(result):
                finish_called.set()
                try:
                    return plain_finish(result)
                except GLib.Error as error:
                    finished.append(error)
                    raise

            session.run_finish = spy_finish
            task = asyncio.ensure_future(
                session.run_async(Sandbox.Command(['/usr/bin/sleep', '30'])))
            await asyncio.sleep(0)   # one loop turn: the task starts the command
            task.cancel()
            with self.assertRaises(asyncio.CancelledError):
                await task
            await finish_called.wait()

        # Without the cancellable the override passes, the never-ending
        # command runs until the 60 s guard below.
        self.run_coroutine(run_and_cancel())
        self.assertEqual(len(finished), 1)
        self.assertTrue(finished[0].matches(Gio.io_error_quark(), Gio.IOErrorEnum.CANCELLED),
                        str(finished[0]))

    def test_plain_asyncio_loop_is_refused_clearly(self):
        session = self.create_handle().get_session()

        async def read():
            return await session.read_text_async('hello.txt')

        loop = asyncio.new_event_loop()
        self.addCleanup(loop.close)
        with self.assertRaises(RuntimeError) as raised:
            loop.run_until_complete(read())
        self.assertIn('GLib main context', str(raised.exception))


@unittest.skipUnless(gi.version_info >= (3, 50),
                     'PyGObject %d.%d has no asyncio loop of its own (3.50 has)'
                     % gi.version_info[:2])
class PyGObjectLoopAwaitableTests(OverridesTestCase):
    """The same awaitables on PyGObject >= 3.50's gi.events loop."""

    def test_flow(self):
        import gi.events
        backend = self.memory_backend()

        async def flow():
            key, reused = await backend.prewarm_async(self.template)
            async with await backend.create_async(key, None, self.deny_all) as handle:
                self.addCleanup(handle.delete, None)
                result = await handle.get_session().run_async(
                    Sandbox.Command(['/usr/bin/echo', 'hello']))
                return result.stdout

        loop = gi.events.GLibEventLoopPolicy().new_event_loop()
        self.addCleanup(loop.close)
        self.assertEqual(loop.run_until_complete(flow()), b'hello\n')


if __name__ == '__main__':
    unittest.main(verbosity=2)
