#!/usr/bin/python3
"""Installs the build tree into a temporary DESTDIR and checks what an
operator gets: sandboxctl, its man page (rendered by man -l without
warnings), its bash completion (loaded into bash and asked to complete),
and the PyGObject overrides (with their type stubs) beside the typelib, found by PyGObject from the
installed tree. Reports TAP.

    test-install.py BUILDDIR

Remove the install: of sandboxctl.1 or of the completion in tools/meson.build
and the checks of the files fail; break md2man.py's roff and man -l warns.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

from tap import Tap  # beside this script

BUILD = os.path.abspath(sys.argv[1])


tap = Tap()


def run(*command, env=None, **kwargs):
    environment = dict(os.environ)
    environment.update(env or {})
    return subprocess.run(command, capture_output=True, text=True, env=environment,
                          timeout=120, **kwargs)


def build_option(name):
    result = run('meson', 'introspect', '--buildoptions', BUILD)
    for option in json.loads(result.stdout):
        if option['name'] == name:
            return option['value']
    raise KeyError(name)


def main():
    destdir = tempfile.mkdtemp(prefix='sandbox-install-')
    try:
        result = run('meson', 'install', '-C', BUILD, '--destdir', destdir, '--no-rebuild',
                     '--quiet')
        if not tap.check(result.returncode == 0, 'meson install into a DESTDIR',
                         result.stdout + result.stderr):
            return tap.finish()
        prefix = destdir + build_option('prefix')

        def installed(relative):
            return os.path.join(prefix, relative)

        sandboxctl = installed(os.path.join(build_option('bindir'), 'sandboxctl'))
        tap.check(os.access(sandboxctl, os.X_OK), 'sandboxctl is installed', sandboxctl)

        page = installed(os.path.join(build_option('mandir'), 'man1', 'sandboxctl.1'))
        tap.check(os.path.isfile(page), 'sandboxctl.1 is installed in man1', page)
        check_man_page(page)

        completions = glob.glob(os.path.join(destdir, '**', 'bash-completion', 'completions',
                                             'sandboxctl'), recursive=True)
        if tap.check(len(completions) == 1, 'the bash completion is installed', completions):
            check_completion(completions[0], os.path.join(BUILD, 'tools', 'sandboxctl'))

        check_python_overrides(destdir, prefix)
        check_pkg_config(glob.glob(os.path.join(prefix, '**', 'sandbox-1.pc'), recursive=True))
        check_install_options()

        result = run(os.path.join(BUILD, 'tools', 'sandboxctl'), '--help')
        tap.check('man sandboxctl' in result.stdout, '--help points at the man page',
                  result.stdout)
        result = run(os.path.join(BUILD, 'tools', 'sandboxctl'), 'run', '--help')
        tap.check('man sandboxctl' in result.stdout and 'docs/' not in result.stdout,
                  'a command\'s --help points at the man page, not a source path',
                  result.stdout)
    finally:
        shutil.rmtree(destdir, ignore_errors=True)
    return tap.finish()


def check_man_page(page):
    if not shutil.which('man'):
        tap.check(True, 'man -l renders the page # SKIP man is not installed')
        return
    result = run('man', '--warnings', '-l', page, env={'MANWIDTH': '80', 'MAN_KEEP_FORMATTING': '',
                                                        'LC_ALL': 'C.UTF-8', 'MANPAGER': 'cat',
                                                        'PAGER': 'cat'})
    text = result.stdout
    tap.check(result.returncode == 0 and 'SANDBOXCTL(1)' in text, 'man -l renders the page',
              result.stderr)
    tap.check(result.stderr.strip() == '', 'groff has no warning about the page', result.stderr)
    for heading in ('NAME', 'SYNOPSIS', 'GLOBAL OPTIONS', 'EXIT STATUS', 'ENVIRONMENT'):
        tap.check(('\n' + heading + '\n') in text, 'the page has its %s section' % heading)
    tap.check(re.search(r'sandboxctl\s+-\s+run\s+untrusted\s+commands', text) is not None,
              'the NAME line reads "sandboxctl - summary" (for whatis)', text[:400])
    tap.check('--driver-option KEY=VALUE' in text and '127' in text,
              'options and exit statuses are in the page')


def complete(script, program, words):
    """What the completion offers for the last of words."""
    line = ' '.join(words)
    shell = ('source "$1"; COMP_WORDS=(%s); COMP_CWORD=%d; COMP_LINE=%s; _sandboxctl; '
             'printf "%%s\\n" "${COMPREPLY[@]}"'
             % (' '.join("'%s'" % word for word in [program] + words[1:]), len(words) - 1,
                "'%s'" % line))
    result = run('bash', '-c', shell, 'bash', script)
    return result.stdout.split(), result.stderr


def check_completion(script, program):
    result = run('bash', '-n', script)
    tap.check(result.returncode == 0, 'the completion is valid bash', result.stderr)
    offered, errors = complete(script, program, ['sandboxctl', 'r'])
    tap.check(set(offered) == {'run', 'read', 'recover', 'restore', 'rm', 'rm-template', 'runtime'},
              'commands complete',
              (offered, errors))
    offered, errors = complete(script, program, ['sandboxctl', 'run', '--ev'])
    tap.check(offered == ['--events'], "a command's options complete from its --help",
              (offered, errors))
    offered, errors = complete(script, program, ['sandboxctl', '--ver'])
    tap.check(set(offered) == {'--version', '--verbose'}, 'global options complete',
              (offered, errors))
    offered, errors = complete(script, program, ['sandboxctl', '--state-dir', '/tmp', 'run',
                                                 '--driver', 'mem'])
    tap.check(offered == ['memory'], '--driver completes driver names', (offered, errors))
    offered, errors = complete(script, program, ['sandboxctl', 'run', '--ephemeral', 't',
                                                 '/usr/bin/grep', '--'])
    tap.check(offered == [], 'the guest command line is left alone', (offered, errors))
    offered, errors = complete(script, program, ['sandboxctl', 'help', 'cr'])
    tap.check(offered == ['create'], 'help completes command names', (offered, errors))
    check_store_completion(script, program)


def check_store_completion(script, program):
    """Session ids and template keys and names come from the store the
    typed --state-dir names (the bubblewrap driver's, a real one)."""
    state = tempfile.mkdtemp(prefix='sandboxctl-completion-')
    try:
        tree = os.path.join(state, 'tree')
        os.makedirs(tree)
        with open(os.path.join(tree, 'a.txt'), 'w') as f:
            f.write('a\n')
        key = run(program, '--state-dir', state, 'prewarm', '--template', 'comp-test',
                  '--dir', tree).stdout.strip()
        created = run(program, '--state-dir', state, 'create', '--template', key)
        session = json.loads(created.stdout or '{}').get('sessionId', '')
        if not tap.check(len(key) == 64 and len(session) == 64, 'a template and a session to '
                         'complete from', (key, created.stdout, created.stderr)):
            return
        offered, errors = complete(script, program, ['sandboxctl', '--state-dir', state,
                                                     'create', '--template', ''])
        tap.check(set(offered) == {key, 'comp-test'},
                  "create --template completes the store's keys and names", (offered, errors))
        offered, errors = complete(script, program, ['sandboxctl', '--state-dir', state, 'stop',
                                                     '--session', session[:3]])
        tap.check(offered == [session], '--session completes session ids', (offered, errors))
        offered, errors = complete(script, program, ['sandboxctl', '--state-dir', state,
                                                     'rm-template', 'comp'])
        tap.check(offered == ['comp-test'], 'rm-template completes names, not files',
                  (offered, errors))
        offered, errors = complete(script, program, ['sandboxctl', '--state-dir', state,
                                                     'fork', '--template', 'comp'])
        tap.check(offered == ['comp-test'], 'fork --template completes stored names',
                  (offered, errors))
        offered, errors = complete(script, program, ['sandboxctl', '--state-dir', state,
                                                     'restore', '--session', session, ''])
        tap.check(offered == [key], "restore's KEY completes the store's keys, not names",
                  (offered, errors))
        offered, errors = complete(script, program, ['sandboxctl', '--state-dir', state,
                                                     'prewarm', '--template', ''])
        tap.check(offered == [], "prewarm's --template is a new name: nothing offered",
                  (offered, errors))
        run(program, '--state-dir', state, 'delete', '--session', session)
    finally:
        shutil.rmtree(state, ignore_errors=True)


def check_pkg_config(files):
    if not tap.check(len(files) == 1, 'sandbox-1.pc is installed', files):
        return
    fields = {}
    with open(files[0]) as f:
        for line in f:
            key, colon, value = line.partition(':')
            if colon and '=' not in key:
                fields[key.strip()] = [name.strip().split()[0] for name in value.split(',')
                                       if name.strip()]
    tap.check('json-glib-1.0' not in fields.get('Requires', [])
              and 'json-glib-1.0' in fields.get('Requires.private', [])
              and set(fields.get('Requires', [])) == {'glib-2.0', 'gobject-2.0', 'gio-2.0'},
              'sandbox-1.pc: json-glib in Requires.private, only GLib/GIO in Requires', fields)


def installed_names(builddir):
    with open(os.path.join(builddir, 'meson-info', 'intro-installed.json')) as f:
        return {os.path.basename(path) for path in json.load(f).values()}


def check_install_options():
    """-Dinstall_memory_driver=false and -Dinstall_conformance_tool=false
    leave those two out (a configure-only build dir is enough to know)."""
    default = installed_names(BUILD)
    tap.check('libsandbox-memory.so' in default and 'sandbox-conformance' in default,
              'by default the memory driver and the conformance tool are installed',
              sorted(default))
    source = build_option_source()
    scratch = tempfile.mkdtemp(prefix='sandbox-options-')
    try:
        result = run('meson', 'setup', scratch, source, '-Dtests=false',
                     '-Dinstall_memory_driver=false', '-Dinstall_conformance_tool=false')
        if not tap.check(result.returncode == 0, 'configure with both install options off',
                         result.stdout[-2000:] + result.stderr):
            return
        names = installed_names(scratch)
        tap.check('libsandbox-memory.so' not in names and 'sandbox-conformance' not in names
                  and 'libsandbox-bubblewrap.so' in names and 'sandboxctl' in names,
                  'install_memory_driver=false and install_conformance_tool=false leave them out',
                  sorted(names))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def build_option_source():
    """The build directory's source tree, as meson-info records it."""
    with open(os.path.join(BUILD, 'meson-info', 'meson-info.json')) as f:
        return json.load(f)['directories']['source']


def check_python_overrides(destdir, prefix):
    overrides = glob.glob(os.path.join(destdir, '**', 'gi', 'overrides', 'Sandbox.py'),
                          recursive=True)
    if not os.path.exists(os.path.join(BUILD, 'introspection', 'Sandbox-1.typelib')):
        # A build without introspection (the sanitizer and valgrind builds)
        # has no typelib for the overrides to extend: none may be installed.
        tap.check(overrides == [], 'no PyGObject overrides without a typelib', overrides)
        return
    if not tap.check(len(overrides) == 1, 'the PyGObject overrides are installed', overrides):
        return
    typelibs = glob.glob(os.path.join(prefix, '**', 'Sandbox-1.typelib'), recursive=True)
    if not typelibs:
        tap.check(True, 'PyGObject loads the installed overrides # SKIP no typelib installed')
        return
    site = os.path.dirname(os.path.dirname(os.path.dirname(overrides[0])))
    libraries = glob.glob(os.path.join(prefix, '**', 'libsandbox-1.so.0'), recursive=True)
    result = run('/usr/bin/python3', '-c',
                 'import gi; gi.require_version("Sandbox", "1"); '
                 'from gi.repository import Sandbox; print(Sandbox.Backend.__module__)',
                 env={'PYTHONPATH': site, 'GI_TYPELIB_PATH': os.path.dirname(typelibs[0]),
                      'LD_LIBRARY_PATH': os.path.dirname(libraries[0]) if libraries else ''})
    tap.check(result.stdout.strip() == 'gi.overrides.Sandbox',
              'PyGObject loads the installed overrides from their site directory',
              result.stdout + result.stderr)
    stubs = glob.glob(os.path.join(site, 'gi-stubs', '**', '*.pyi'), recursive=True)
    tap.check(sorted(os.path.relpath(stub, site) for stub in stubs)
              == ['gi-stubs/__init__.pyi', 'gi-stubs/repository/Sandbox.pyi',
                  'gi-stubs/repository/__init__.pyi'],
              'the type stubs are installed beside the overrides (gi-stubs)', stubs)


if __name__ == '__main__':
    sys.exit(main())
