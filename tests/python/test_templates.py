#!/usr/bin/python3
# Templates from Python: executables, symbolic links and empty directories
# (their keys), an imported tree, the progress signal of a prewarm (in the
# caller's main context, counting up to the totals), the backend's
# create-progress signal when it copies a template, and the backend's
# listings of templates and sessions as Python lists of info objects.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import shutil
import tempfile
import threading
import unittest

from sandboxtest import (GLib, Gio, Sandbox, SandboxTestCase, bubblewrap_usable, new_backend,
                         run_async)

# The reference's hello.txt row (tests/vectors/template-keys.jsonl).
HELLO_KEY = '2cd46ef62e087c27188a23334a1530bc5e0a74316988fdf902ce12bbbcda0ccf'


class TemplatesTestCase(SandboxTestCase):

    def test_plain_file_keeps_the_reference_key(self):
        template = Sandbox.Template.new('agent-workspace')
        template.add_file_full('hello.txt', b'hello', Sandbox.TemplateFileFlags.NONE)
        self.assertEqual(template.compute_key('bubblewrap'), HELLO_KEY)

    def test_kinds_change_the_key(self):
        plain = Sandbox.Template.new('t')
        plain.add_file('run', b'#!/bin/sh\n')
        executable = Sandbox.Template.new('t')
        executable.add_file_full('run', b'#!/bin/sh\n', Sandbox.TemplateFileFlags.EXECUTABLE)
        self.assertNotEqual(plain.compute_key('b'), executable.compute_key('b'))
        self.assertEqual(executable.get_file_flags('run'), Sandbox.TemplateFileFlags.EXECUTABLE)

        executable.add_symlink('node_modules/.bin/x', '../x/bin/x.js')
        executable.add_empty_directory('build')
        self.assertEqual(executable.query_file_type('node_modules/.bin/x'),
                         Gio.FileType.SYMBOLIC_LINK)
        self.assertEqual(executable.lookup_symlink('node_modules/.bin/x'), '../x/bin/x.js')
        self.assertEqual(executable.list_paths(),
                         ['/workspace/build', '/workspace/node_modules/.bin/x', '/workspace/run'])

    def make_tree(self, files):
        root = tempfile.mkdtemp(prefix='sandbox-python-tree-')
        self.addCleanup(shutil.rmtree, root, True)
        for name, contents in files.items():
            path = os.path.join(root, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, 'wb') as f:
                f.write(contents)
        return root

    def test_listings_are_lists_of_infos(self):
        # Debian 12's PyGObject 3.42 took (transfer full) on a GPtrArray that
        # frees its elements to mean it owned the elements too: it handed out
        # objects the array then unreffed, and the first call on one crashed
        # the interpreter. The listings are (transfer container) now.
        backend = new_backend('memory', state_directory=self.state_directory)
        template = Sandbox.Template.new('python-listing')
        template.add_file('a.txt', GLib.Bytes.new(b'abc'))
        template.add_file('b.txt', GLib.Bytes.new(b'defgh'))
        key, reused = backend.prewarm(template, None)
        handle = backend.create(key, None, Sandbox.NetworkPolicy.new_deny_all(), None)
        try:
            templates = backend.list_templates(None)
            self.assertEqual([(info.get_key(), info.get_name(), info.get_n_files(),
                               info.get_n_bytes(), info.get_n_sessions()) for info in templates],
                             [(key, 'python-listing', 2, 8, 1)])
            sessions = backend.list_sessions(None)
            self.assertEqual([info.get_state().get_session_id() for info in sessions],
                             [handle.get_session().get_id()])
            self.assertEqual(sessions[0].get_state().get_template_key(), key)
            # The objects outlive the lists they came in.
            del templates, sessions
            import gc
            gc.collect()
            self.assertEqual(len(backend.list_templates(None)), 1)
        finally:
            handle.stop(None)

    def test_prewarm_reports_progress_in_the_callers_context(self):
        root = self.make_tree({'a.txt': b'a' * 100, 'sub/b.bin': b'b' * (300 * 1024)})
        os.chmod(os.path.join(root, 'a.txt'), 0o755)
        os.symlink('a.txt', os.path.join(root, 'link'))
        template = Sandbox.Template.new('python-progress')
        template.add_directory(Gio.File.new_for_path(root), None)
        self.assertEqual(template.get_file_flags('a.txt'), Sandbox.TemplateFileFlags.EXECUTABLE)
        self.assertEqual(template.load_bytes('a.txt', None), b'a' * 100)

        reports = []
        main_thread = threading.get_ident()
        template.connect('progress', lambda t, *counts: reports.append(
            (threading.get_ident() == main_thread,) + counts))
        backend = new_backend('memory', state_directory=self.state_directory)
        key, reused = run_async(backend.prewarm_async, backend.prewarm_finish, template)
        # Emissions merged before the result are delivered by now.
        context = GLib.MainContext.default()
        while context.iteration(False):
            pass
        self.assertFalse(reused)
        self.assertTrue(reports, 'no progress was reported')
        self.assertTrue(all(report[0] for report in reports),
                        'progress reported outside the caller\'s main context')
        total = 100 + 300 * 1024
        self.assertEqual(reports[-1][1:], (2, 2, total, total))
        done = [report[3] for report in reports]
        self.assertEqual(done, sorted(done))
        self.assertTrue(Sandbox.Template.key_is_valid(key))

    def test_copying_create_reports_progress_in_the_callers_context(self):
        reason = bubblewrap_usable()
        if reason is not None:
            self.skipTest(reason)
        backend = new_backend('bubblewrap', state_directory=self.state_directory,
                              layering='copy')
        template = Sandbox.Template.new('python-create-progress')
        for i in range(200):
            template.add_file('d%d/f%d.txt' % (i % 5, i), GLib.Bytes.new(b'x' * i))
        template.add_symlink('link', 'd0/f0.txt')
        key, reused = backend.prewarm(template, None)

        reports = []
        main_thread = threading.get_ident()
        backend.connect('create-progress', lambda b, *args: reports.append(
            (threading.get_ident() == main_thread,) + args))
        handle = run_async(backend.create_async, backend.create_finish, key, None,
                           Sandbox.NetworkPolicy.new_deny_all())
        try:
            # Every report is dispatched before the create's callback.
            self.assertTrue(reports, 'no progress was reported')
            self.assertTrue(all(report[0] for report in reports),
                            'progress reported outside the caller\'s main context')
            session_id = handle.get_session().get_id()
            self.assertEqual({report[1] for report in reports}, {session_id})
            [info] = backend.list_templates(None)
            files, size = info.get_n_files(), info.get_n_bytes()
            self.assertEqual((files, size), (201, sum(range(200))))
            self.assertEqual(reports[-1][2:], (files, files, size, size))
            self.assertEqual([report[2] for report in reports],
                             sorted(report[2] for report in reports))
            self.assertEqual([report[4] for report in reports],
                             sorted(report[4] for report in reports))
        finally:
            handle.delete(None)


if __name__ == '__main__':
    unittest.main()
