#!/usr/bin/python3
# Runtimes from Python over real bubblewrap (issue 35): import the test
# runtime (busybox-static, which tests/bubblewrap/with-test-runtime.sh makes
# once per build directory, and meson runs this test through), list it, a
# template naming it, a command on it; the errors are the library's, as
# Python exceptions.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import unittest

from sandboxtest import GLib, Gio, Sandbox, SandboxTestCase, bubblewrap_usable, new_backend, \
    run_async


def busybox_runtime():
    return os.path.join(os.environ['G_TEST_BUILDDIR'], 'runtime-cache', 'busybox')


class RuntimeTestCase(SandboxTestCase):

    def setUp(self):
        super().setUp()
        reason = bubblewrap_usable()
        if reason is not None:
            self.skipTest(reason)
        self.backend = new_backend('bubblewrap', state_directory=self.state_directory)
        self.policy = Sandbox.NetworkPolicy.new_deny_all()

    def test_import_prewarm_run(self):
        source = Gio.File.new_for_path(busybox_runtime())
        reports = []
        self.backend.connect('import-progress',
                             lambda _backend, entries, size: reports.append((entries, size)))
        key, reused = run_async(self.backend.import_runtime_async,
                                self.backend.import_runtime_finish, source)
        self.assertRegex(key, '^[0-9a-f]{64}$')
        self.assertFalse(reused)
        # Delivered on this thread's loop before the callback: the totals last.
        self.assertGreater(len(reports), 0)
        self.assertGreater(reports[-1][1], 1000000)
        self.assertEqual(self.backend.import_runtime(source), (key, True))

        template = Sandbox.Template.new('python-runtime')
        template.add_file('hello.txt', b'hello\n')
        template.set_runtime(key)
        self.assertEqual(template.get_runtime(), key)
        template_key, _reused = self.backend.prewarm(template)

        [info] = self.backend.list_runtimes()
        self.assertEqual(info.get_key(), key)
        self.assertEqual(info.get_n_templates(), 1)
        self.assertGreater(info.get_n_bytes(), 1000000)

        handle = self.backend.create(template_key, None, self.policy)
        try:
            result = handle.get_session().run(Sandbox.Command(
                ['/bin/sh', '-c', 'cat /etc/os-release hello.txt; test ! -e /usr/bin/python3']))
            self.assertEqual(result.exit_status, 0, result.stderr)
            self.assertIn(b'ID=libsandbox-test-runtime\n', result.stdout)
            self.assertTrue(result.stdout.endswith(b'hello\n'))
            tools = Sandbox.CodingTools.new(handle)
            self.assertEqual(tools.probe_runtime(), (True, key))
        finally:
            handle.delete()

        with self.assertRaises(GLib.Error) as raised:
            self.backend.delete_runtime(key)
        self.assertSandboxError(raised, Sandbox.Error.BUSY)
        self.backend.delete_template(template_key)
        self.backend.delete_runtime(key)
        self.assertEqual(self.backend.list_runtimes(), [])

    def test_writable_runtime(self):
        key, _reused = self.backend.import_runtime(Gio.File.new_for_path(busybox_runtime()))
        template = Sandbox.Template.new('python-writable-runtime')
        template.set_runtime(key)
        template.set_runtime_writable(True)
        self.assertTrue(template.get_runtime_writable())
        template_key, _reused = self.backend.prewarm(template)
        if self.backend.get_property('workspace-layering') != 'overlay':
            with self.assertRaises(GLib.Error) as raised:
                self.backend.create(template_key, None, self.policy)
            self.assertTrue(raised.exception.matches(Gio.io_error_quark(),
                                                     Gio.IOErrorEnum.NOT_SUPPORTED))
            return
        handle = self.backend.create(template_key, None, self.policy)
        try:
            session = handle.get_session()
            result = session.run(Sandbox.Command(['/bin/sh', '-c', 'echo mine > /usr/bin/mine']))
            self.assertEqual(result.exit_status, 0, result.stderr)
            result = session.run(Sandbox.Command(['/bin/cat', '/usr/bin/mine']))
            self.assertEqual(result.stdout, b'mine\n')
        finally:
            handle.delete()

    def test_not_a_directory(self):
        with self.assertRaises(GLib.Error) as raised:
            self.backend.import_runtime(Gio.File.new_for_path('/nonexistent/runtime'))
        self.assertSandboxError(raised, Sandbox.Error.INVALID)


if __name__ == '__main__':
    unittest.main()
