#!/usr/bin/python3
# The coding tools from Python: definitions, blocking and async invoke, the
# authorize signal, structured refusals, and the explicit refusal of a backend
# without a host coding workspace — matched as GLib.Error by domain and code.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import json
import unittest

from sandboxtest import (GLib, Sandbox, SandboxTestCase, bubblewrap_usable,
                         new_backend, run_async)


def prewarm(backend, files):
    template = Sandbox.Template.new('agent-workspace')
    for path, data in files.items():
        template.add_file(path, GLib.Bytes.new(data))
    key, _reused = backend.prewarm(template, None)
    return key


class CodingToolsTest(SandboxTestCase):

    def setUp(self):
        super().setUp()
        reason = bubblewrap_usable()
        if reason:
            self.skipTest(reason)
        self.backend = new_backend('bubblewrap', state_directory=self.state_directory)
        key = prewarm(self.backend, {'hello.txt': b'hello\nworld\n'})
        self.handle = self.backend.create(key, None, Sandbox.NetworkPolicy.new_deny_all(), None)
        self.addCleanup(self.handle.delete, None)
        self.tools = Sandbox.CodingTools.new(self.handle)
        self.operations = []

        def authorize(tools, operation):
            self.operations.append((operation.get_tool(), operation.get_path(),
                                    operation.get_command()))
            return operation.get_command() is None or 'forbidden' not in operation.get_command()

        self.tools.connect('authorize', authorize)

    def invoke(self, name, **arguments):
        return json.loads(self.tools.invoke(name, json.dumps(arguments), None))

    def test_definitions_are_function_calling_shaped(self):
        definitions = json.loads(self.tools.get_definitions_json())
        names = sorted(d['name'] for d in definitions)
        self.assertEqual(names, ['edit_file', 'exec_command', 'kill_command', 'list_commands',
                                 'list_files', 'read_file', 'search_files', 'shell',
                                 'write_file', 'write_stdin'])
        for definition in definitions:
            self.assertIn('description', definition)
            self.assertEqual(definition['parameters']['type'], 'object')

    def test_blocking_invoke_reads_writes_and_runs(self):
        self.assertTrue(self.invoke('write_file', path='dir/a.txt', content='alpha\n')['ok'])
        read = self.invoke('read_file', path='dir/a.txt')
        self.assertTrue(read['ok'], read)
        self.assertIn('alpha', json.dumps(read))
        shell = self.invoke('shell', command='cat dir/a.txt; echo $((6 * 7))')
        self.assertTrue(shell['ok'], shell)
        self.assertIn('alpha', json.dumps(shell))
        self.assertIn('42', json.dumps(shell))
        self.assertIn(('write_file', '/workspace/dir/a.txt', None), self.operations)

    def test_async_invoke_on_a_main_loop(self):
        result = run_async(self.tools.invoke_async, self.tools.invoke_finish,
                           'read_file', json.dumps({'path': 'hello.txt'}))
        self.assertTrue(json.loads(result)['ok'])
        self.assertIn('world', result)

    def test_refusals_are_structured_results(self):
        outside = self.invoke('read_file', path='../../etc/passwd')
        self.assertFalse(outside['ok'])
        self.assertIn('code', outside['error'])
        denied = self.invoke('shell', command='echo forbidden')
        self.assertFalse(denied['ok'])
        bad = json.loads(self.tools.invoke('read_file', '{"no_such_argument": 1}', None))
        self.assertFalse(bad['ok'])
        self.assertNotIn(self.state_directory, json.dumps([outside, denied, bad]))

    def test_probe_reports_grade_restrictions_and_layering(self):
        grade, restrictions = self.tools.probe()
        self.assertEqual(grade, 'full')
        self.assertIn('network-denied', restrictions)
        full = self.tools.probe_full()
        self.assertEqual(full, (grade, restrictions, 'overlay'))
        report = self.tools.probe_report().unpack()
        self.assertEqual(report['grade'], grade)
        self.assertEqual(report['restrictions'], restrictions)
        self.assertEqual(report['workspace-layering'], 'overlay')
        self.assertEqual(report['landlock-abi'], self.backend.props.landlock_abi
                         if self.backend.props.landlock_abi >= 6 else 0)

        copying = new_backend('bubblewrap', state_directory=self.state_directory,
                              layering='copy')
        key = prewarm(copying, {'a.txt': b'a'})
        copied = copying.create(key, None, Sandbox.NetworkPolicy.new_deny_all(), None)
        self.addCleanup(copied.delete, None)
        _grade, _restrictions, layering = Sandbox.CodingTools.new(copied).probe_full()
        self.assertEqual(layering, 'copy')

    def test_tools_refuse_after_stop(self):
        self.handle.stop(None)
        stopped = self.invoke('read_file', path='hello.txt')
        self.assertFalse(stopped['ok'])
        self.assertEqual(stopped['error']['code'], 'SANDBOX_UNAVAILABLE')


class NoCodingWorkspaceTest(SandboxTestCase):

    def test_memory_backend_is_refused_explicitly(self):
        backend = new_backend('memory')
        key = prewarm(backend, {'a.txt': b'a'})
        handle = backend.create(key, None, Sandbox.NetworkPolicy.new_deny_all(), None)
        self.addCleanup(handle.delete, None)
        with self.assertRaises(GLib.Error) as raised:
            Sandbox.CodingTools.new(handle)
        self.assertSandboxError(raised, Sandbox.Error.UNAVAILABLE)
        self.assertIn('Backend does not expose a host coding workspace', raised.exception.message)


if __name__ == '__main__':
    unittest.main(verbosity=2)
