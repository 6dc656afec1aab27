#!/usr/bin/python3
# The type stubs (introspection/stubgen.py → build/introspection/Sandbox.pyi)
# as an editor's type checker meets them: installed as PEP 561's gi-stubs
# into a virtual environment's site-packages, mypy accepts the docs' kind
# of code and reports each wrong call at its line; and the stubs name
# every public name of the module and every method of its classes, so
# they cannot drift from what Python gets. To see the checks fail, drop
# the annotations of Session.run in the overrides (on_stdout is then Any,
# and the wrong callback passes), or a class from the generator.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import ast
import os
import shutil
import subprocess
import sys
import tempfile
import textwrap
import unittest

from sandboxtest import Sandbox

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCE_STUBS = os.path.join(HERE, '..', '..', 'introspection', 'stubs')
# The tests' GI_TYPELIB_PATH is the build's introspection directory, where
# the stubs are generated beside the typelib.
BUILT_STUB = os.path.join(os.environ['GI_TYPELIB_PATH'].split(':')[0], 'Sandbox.pyi')

GOOD = '''\
from gi.repository import Gio, Sandbox

backend = Sandbox.Backend.new('bubblewrap', state_directory='/tmp/state')
template = Sandbox.Template.new('app')
template.add_directory('/srv/app', None)
key, created = backend.prewarm(template)
handle = backend.create(key, None, Sandbox.NetworkPolicy.new_deny_all())
with handle:
    session = handle.get_session()
    session.write_bytes('notes.txt', b'hello')
    contents: bytes = session.read_bytes('notes.txt')
    command = Sandbox.Command(['/bin/cat', 'notes.txt'], environment={'LANG': 'C.UTF-8'})
    result = session.run(command, on_stdout=lambda chunk: print(chunk.decode()))
    status: int = result.exit_status
    output: bytes = result.stdout
    process = session.spawn(command)
    for chunk in process.stdout_chunks():
        print(chunk)
    snapshot: str = handle.snapshot()
    fork = backend.create(snapshot, None, Sandbox.NetworkPolicy.new_deny_all())
    restored: bool = handle.restore(snapshot)
try:
    backend.resume(handle.capture_state(), Sandbox.NetworkPolicy.new_allow_all())
except Sandbox.BusyError as error:
    code: int = error.code
    print(code == Sandbox.Error.BUSY)
'''

# Each line that must be refused, with the text mypy must say.
BAD = [
    ("Sandbox.Backend.new(42)", 'incompatible type "int"; expected "str"'),
    ("Sandbox.Command(['/bin/true'], environment=['A=b'])", 'Argument "environment"'),
    ("text: str = Sandbox.Result.new(0, b'', b'').stdout", 'variable has type "str"'),
    ("Sandbox.NetworkPolicy.new_from_json(b'{}')", 'incompatible type "bytes"'),
    ("Sandbox.Process.read_output(Sandbox.Command(['/bin/true']), 'start')",
     'incompatible type "str"; expected "int"'),
    ("def f(s: Sandbox.Session) -> None: s.run(Sandbox.Command(['/bin/true']), on_stdout='p')",
     'Argument "on_stdout"'),
    ("def g(h: Sandbox.Handle) -> None: h.restore(42)", 'incompatible type "int"; expected "str"'),
    ("def k(h: Sandbox.Handle) -> int: return h.snapshot()", 'Incompatible return value type (got "str"'),
]
# Not checked: assigning one Sandbox class to another. Without stubs for
# GObject itself (the pygobject-stubs project has them), every class's
# base is Any to a checker, and a subclass of Any is assignable to anything.


def mypy_available():
    return subprocess.run([sys.executable, '-m', 'mypy', '--version'],
                          capture_output=True).returncode == 0


@unittest.skipUnless(mypy_available(), 'mypy is not installed (./dev installs python3-mypy)')
class StubsTests(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.mkdtemp(prefix='sandbox-stubs-')
        venv = os.path.join(cls.directory, 'venv')
        subprocess.run([sys.executable, '-m', 'venv', '--without-pip',
                        '--system-site-packages', venv], check=True)
        cls.python = os.path.join(venv, 'bin', 'python')
        site = subprocess.run([cls.python, '-c', 'import site; print(site.getsitepackages()[0])'],
                              check=True, capture_output=True, text=True).stdout.strip()
        # The installed layout (introspection/meson.build).
        repository = os.path.join(site, 'gi-stubs', 'repository')
        os.makedirs(repository)
        shutil.copy(os.path.join(SOURCE_STUBS, '__init__.pyi'), os.path.join(site, 'gi-stubs'))
        shutil.copy(os.path.join(SOURCE_STUBS, '__init__.pyi'), repository)
        shutil.copy(BUILT_STUB, repository)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.directory)

    def mypy(self, name, text):
        path = os.path.join(self.directory, name)
        with open(path, 'w') as f:
            f.write(text)
        return subprocess.run([sys.executable, '-m', 'mypy', '--python-executable', self.python,
                               '--no-incremental', '--show-error-codes', path],
                              capture_output=True, text=True, cwd=self.directory)

    def test_the_docs_kind_of_code_checks(self):
        result = self.mypy('good.py', GOOD)
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)

    def test_each_wrong_call_is_reported_at_its_line(self):
        header = 'from gi.repository import Sandbox\n'
        text = header + ''.join(line + '\n' for line, _said in BAD)
        result = self.mypy('bad.py', text)
        self.assertNotEqual(result.returncode, 0, result.stdout)
        for number, (line, said) in enumerate(BAD, start=2):
            reports = [report for report in result.stdout.splitlines()
                       if report.startswith('bad.py:%d:' % number) or
                       ':%d: error' % number in report]
            self.assertTrue(any(said in report for report in reports),
                            'line %d (%s) is not reported with %r:\n%s'
                            % (number, line, said, result.stdout))


class CompletenessTests(unittest.TestCase):
    """Every public name of the module and every public method of its
    classes is in the stubs (whatever a checker is installed)."""

    @classmethod
    def setUpClass(cls):
        with open(BUILT_STUB) as f:
            cls.tree = ast.parse(f.read(), BUILT_STUB)
        cls.top = {}
        for node in cls.tree.body:
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
                cls.top[node.name] = node
            elif isinstance(node, ast.AnnAssign):
                cls.top[node.target.id] = node
            elif isinstance(node, ast.Assign):
                cls.top[node.targets[0].id] = node

    def test_every_public_name(self):
        names = [name for name in dir(Sandbox) if not name.startswith('_')]
        self.assertGreater(len(names), 50)
        missing = [name for name in names if name not in self.top]
        self.assertEqual(missing, [])

    def test_every_method_of_every_class(self):
        missing = []
        for name, node in self.top.items():
            if not isinstance(node, ast.ClassDef) or name.startswith('_'):
                continue
            runtime = getattr(Sandbox, name)
            stubbed = {item.name for item in node.body
                       if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))}
            stubbed |= {item.target.id for item in node.body if isinstance(item, ast.AnnAssign)}
            info = getattr(runtime, '__info__', None)
            if info is None or not hasattr(info, 'get_methods'):
                continue
            for method in info.get_methods():
                if method.get_name() not in stubbed:
                    missing.append('%s.%s' % (name, method.get_name()))
        self.assertEqual(missing, [])

    def test_overrides_keep_their_own_signatures(self):
        run = textwrap.dedent(ast.unparse(next(
            item for item in self.top['Session'].body
            if isinstance(item, ast.FunctionDef) and item.name == 'run')))
        self.assertIn('on_stdout: Callable[[bytes], object] | None', run)
        self.assertIn('-> Result', run)


if __name__ == '__main__':
    unittest.main(verbosity=2)
