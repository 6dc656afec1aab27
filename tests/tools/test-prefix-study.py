#!/usr/bin/python3
"""The user study of docs/guide/building.md, run as a new user would: a
build configured with only `--prefix` (as "Under a prefix" shows), installed
there, then the docs' own examples run from that install with only the
variables "Using a prefix install" names, and nothing of the build tree:

 - C: examples/reference-flow.c compiled with `cc … $(pkg-config --cflags
   --libs sandbox-1)`, then run;
 - Python: examples/reference-flow.py with Debian's /usr/bin/python3;
 - sandboxctl from PATH: the quick session of docs/sandboxctl.md, as
   written there (prewarm, create, run make, read, delete);
 - nothing installed outside the prefix.

    test-prefix-study.py SOURCEDIR

Reports TAP. Slow (a whole build of its own), so it is in the `slow` suite.
Drop a variable from the page's list and its consumer fails here.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import glob
import os
import shutil
import subprocess
import sys
import tempfile

from tap import Tap  # beside this script

SOURCE = os.path.abspath(sys.argv[1])


tap = Tap()


def run(*argv, env=None, cwd=None, timeout=900):
    return subprocess.run(argv, env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout)


def user_environment(prefix, home):
    """What a user has, plus exactly the page's variables."""
    libdir = os.path.join(prefix, 'lib', 'x86_64-linux-gnu')
    return {
        'HOME': home,
        'TMPDIR': os.environ.get('TMPDIR', '/tmp'),
        'LANG': 'C.UTF-8',
        'PKG_CONFIG_PATH': os.path.join(libdir, 'pkgconfig'),
        'LD_LIBRARY_PATH': libdir,
        'GI_TYPELIB_PATH': os.path.join(libdir, 'girepository-1.0'),
        'PYTHONPATH': os.path.join(prefix, 'lib', 'python3', 'dist-packages'),
        'PATH': os.path.join(prefix, 'bin') + ':/usr/local/bin:/usr/bin:/bin',
    }


def expect_hello_twice(result, description):
    tap.check(result.returncode == 0 and result.stdout == 'hello\nhello\n', description,
              'exit %d\n%s%s' % (result.returncode, result.stdout, result.stderr))


# Where an install that escaped its prefix would land.
OUTSIDE = ('/usr/local', '/usr/share/bash-completion', '/usr/lib/python3/dist-packages/gi',
           '/usr/lib/x86_64-linux-gnu/girepository-1.0', '/usr/share/man/man1')


def installed_outside():
    found = set()
    for top in OUTSIDE:
        found |= set(glob.glob(os.path.join(top, '**', '*andbox*'), recursive=True))
    return found


def check_c_example(env, work):
    app = os.path.join(work, 'reference-flow')
    flags = run('pkg-config', '--cflags', '--libs', 'sandbox-1', env=env)
    if not tap.check(flags.returncode == 0, 'pkg-config finds sandbox-1 under the prefix',
                     flags.stderr):
        return
    result = run('sh', '-c', 'cc "$1" -o "$2" $(pkg-config --cflags --libs sandbox-1)', 'cc',
                 os.path.join(SOURCE, 'examples', 'reference-flow.c'), app, env=env)
    if not tap.check(result.returncode == 0, 'the C example compiles against the install',
                     result.stderr):
        return
    expect_hello_twice(run(app, os.path.join(work, 'state-c'), env=env),
                       'the C example runs from the install')


def check_python_example(env, work):
    expect_hello_twice(run('/usr/bin/python3',
                           os.path.join(SOURCE, 'examples', 'reference-flow.py'),
                           os.path.join(work, 'state-python'), env=env),
                       'the Python example runs from the install, with the overrides')


def check_sandboxctl(env, work):
    which = shutil.which('sandboxctl', path=env['PATH'])
    tap.check(which is not None and which.startswith(os.path.dirname(env['PKG_CONFIG_PATH'])
                                                     .rsplit('/lib/', 1)[0]),
              'sandboxctl is found on PATH, in the prefix', which)
    project = os.path.join(work, 'project')
    os.makedirs(os.path.join(project, 'src'))
    with open(os.path.join(project, 'src', 'Makefile'), 'w') as f:
        f.write('all:\n\techo built > build.log\n')
    env = dict(env, SANDBOX_STATE_DIR=os.path.join(work, 'state-cli'))
    # docs/sandboxctl.md's quick session, line by line.
    script = '''set -e
key=$(sandboxctl prewarm --template my-project --dir ./src)
sandboxctl create --template "$key" --output session.json
sandboxctl run --state session.json -- /usr/bin/make -j2
sandboxctl read --state session.json build.log
sandboxctl delete --state session.json
'''
    result = run('sh', '-c', script, env=env, cwd=project)
    # make echoes its recipe, read prints the file, delete says so.
    tap.check(result.returncode == 0 and 'built\n' in result.stdout.splitlines(keepends=True)
              and 'deleted: session' in result.stdout,
              "sandboxctl's quick session works as its page shows it",
              'exit %d\n%s%s' % (result.returncode, result.stdout, result.stderr))


def main():
    work = tempfile.mkdtemp(prefix='sandbox-prefix-study-')
    try:
        prefix = os.path.join(work, 'prefix')
        build = os.path.join(work, 'build')
        home = os.path.join(work, 'home')
        os.makedirs(home)
        # "Under a prefix": meson setup --prefix, ninja, meson install (the
        # tests are not what a user installs).
        result = run('meson', 'setup', build, SOURCE, '--prefix=' + prefix, '-Dtests=false')
        if not tap.check(result.returncode == 0, 'meson setup --prefix', result.stdout):
            return tap.finish()
        result = run('ninja', '-C', build, timeout=1800)
        if not tap.check(result.returncode == 0, 'the prefix build builds', result.stdout):
            return tap.finish()
        before = installed_outside()
        result = run('meson', 'install', '-C', build, '--quiet')
        if not tap.check(result.returncode == 0, 'meson install into the prefix',
                         result.stdout + result.stderr):
            return tap.finish()
        outside = installed_outside() - before
        tap.check(not outside, 'nothing is installed outside the prefix', sorted(outside))
        shutil.rmtree(build)   # nothing of a build tree from here on

        env = user_environment(prefix, home)
        check_c_example(env, work)
        check_python_example(env, work)
        check_sandboxctl(env, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tap.finish()


if __name__ == '__main__':
    sys.exit(main())
