#!/usr/bin/python3
# Snapshots from Python over real bubblewrap overlays: snapshot (the GLib
# callback form on a GLib.MainLoop), a fork (a create from the snapshot's
# key) that sees exactly the snapshot while its writes stay its own, and a
# restore after the workspace was wiped (blocking, and awaited on gbulb's
# asyncio loop); the errors are the library's, as Python exceptions.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import asyncio
import unittest

from sandboxtest import Sandbox, SandboxTestCase, bubblewrap_usable, new_backend, run_async

try:
    import gbulb
except ImportError:  # Debian: python3-gbulb (./dev deps installs it)
    gbulb = None

# Every entry of /workspace a guest can tell apart: type, mode, path (a
# link's target), then each file's digest (tests/bubblewrap/test-snapshot.c).
TREE_DIGEST = ("cd /workspace && find . -printf '%y %m %p -> %l\\n' | LC_ALL=C sort && "
               "find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum")


class SnapshotsTestCase(SandboxTestCase):

    def setUp(self):
        super().setUp()
        reason = bubblewrap_usable()
        if reason is not None:
            self.skipTest(reason)
        self.backend = new_backend('bubblewrap', state_directory=self.state_directory)
        self.policy = Sandbox.NetworkPolicy.new_deny_all()
        template = Sandbox.Template.new('python-snapshots')
        template.add_file('hello.txt', b'hello\n')
        template.add_file('src/main.c', b'int main;\n')
        template.add_symlink('latest', 'src/main.c')
        template.add_empty_directory('build')
        self.template_key, _reused = self.backend.prewarm(template)
        self.handle = self.create(self.template_key)
        self.session = self.handle.get_session()

    def create(self, key):
        handle = self.backend.create(key, None, self.policy)
        self.addCleanup(self.delete, handle)
        return handle

    @staticmethod
    def delete(handle):
        if not handle.is_deleted():
            handle.delete()

    def tree(self, session):
        result = session.run(Sandbox.Command(['/bin/sh', '-c', TREE_DIGEST]))
        self.assertEqual(result.exit_status, 0, result.stderr)
        return result.stdout

    def change_workspace(self):
        self.session.write_bytes('hello.txt', b'edited\n')
        self.session.write_bytes('notes/todo.txt', b'fork me\n')
        self.session.remove_path('src/main.c')
        result = self.session.run(Sandbox.Command(['/bin/sh', '-c',
                                                   'ln -s notes/todo.txt todo && chmod 0700 notes']))
        self.assertEqual(result.exit_status, 0, result.stderr)
        return self.tree(self.session)

    def test_snapshot_fork_restore(self):
        snapshotted = self.change_workspace()
        key = run_async(self.handle.snapshot_async, self.handle.snapshot_finish)
        self.assertRegex(key, '^[0-9a-f]{64}$')
        self.assertNotEqual(key, self.template_key)
        self.assertEqual(self.handle.snapshot(), key, 'the same changes are the same key')

        fork = self.create(key)
        forked = fork.get_session()
        self.assertNotEqual(forked.get_id(), self.session.get_id())
        self.assertEqual(fork.capture_state().get_template_key(), key)
        self.assertEqual(self.tree(forked), snapshotted)
        self.assertEqual(forked.read_bytes('notes/todo.txt'), b'fork me\n')
        with self.assertRaises(FileNotFoundError):
            forked.read_bytes('src/main.c')
        forked.write_bytes('hello.txt', b'the fork\n')
        self.assertEqual(self.session.read_bytes('hello.txt'), b'edited\n',
                         "a fork's writes are its own")

        result = self.session.run(Sandbox.Command(['/bin/sh', '-c', 'rm -rf /workspace/*']))
        self.assertEqual(result.exit_status, 0, result.stderr)
        self.assertTrue(run_async(self.handle.restore_async, self.handle.restore_finish, key))
        self.assertEqual(self.tree(self.session), snapshotted)
        self.assertEqual(self.tree(forked).count(b'\n'), snapshotted.count(b'\n'))

        self.assertTrue(self.handle.restore(self.template_key))
        self.assertEqual(self.session.read_bytes('src/main.c'), b'int main;\n')
        self.assertEqual(self.session.read_bytes('hello.txt'), b'hello\n')

    @unittest.skipIf(gbulb is None, 'python3-gbulb is not installed')
    def test_awaited(self):
        snapshotted = self.change_workspace()
        loop = gbulb.GLibEventLoopPolicy().new_event_loop()
        self.addCleanup(loop.close)

        async def flow():
            key = await self.handle.snapshot_async()
            fork = await self.backend.create_async(key, None, self.policy)
            self.addCleanup(self.delete, fork)
            await self.session.write_bytes_async('hello.txt', b'broken\n')
            await self.handle.restore_async(key)
            return key, fork

        key, fork = loop.run_until_complete(asyncio.wait_for(flow(), 60))
        self.assertEqual(self.tree(self.session), snapshotted)
        self.assertEqual(self.tree(fork.get_session()), snapshotted)

    def test_errors(self):
        with self.assertRaises(Sandbox.InvalidError):
            self.handle.restore('not-a-key')
        with self.assertRaises(Sandbox.NotFoundError):
            self.handle.restore('e' * 64)
        with self.assertRaises(Sandbox.NotFoundError):
            self.backend.create('e' * 64, None, self.policy)
        process = self.session.spawn(Sandbox.Command(['/usr/bin/sleep', '30']))
        try:
            with self.assertRaises(Sandbox.BusyError):
                self.handle.snapshot()
            with self.assertRaises(Sandbox.BusyError):
                self.handle.restore(self.template_key)
        finally:
            process.stop()
        key = self.handle.snapshot()
        fork = self.create(key)
        with self.assertRaises(Sandbox.BusyError):
            self.backend.delete_template(key)
        fork.delete()
        self.handle.stop()
        with self.assertRaises(Sandbox.StoppedError):
            self.handle.snapshot()


if __name__ == '__main__':
    unittest.main()
