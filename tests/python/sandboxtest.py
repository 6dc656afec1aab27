# Shared helpers of the Python tests: the typelib from the build tree (via
# GI_TYPELIB_PATH), temporary state directories, and running async calls
# on a GLib main loop.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import os
import shutil
import tempfile
import unittest

import gi

gi.require_version('GLib', '2.0')
gi.require_version('GObject', '2.0')
gi.require_version('Gio', '2.0')
gi.require_version('Sandbox', '1')
from gi.repository import GLib, GObject, Gio, Sandbox  # noqa: E402

SRCDIR = os.path.dirname(os.path.abspath(__file__))
CONFORMANCE_SCRIPT = os.path.join(SRCDIR, '..', 'conformance', 'memory-script.json')


def new_backend(driver, **properties):
    """Construct a backend; keyword names use _ for - (state_directory=...).

    PyGObject turns the plain Python values into the GValues
    Sandbox.backend_newv() takes."""
    names = [name.replace('_', '-') for name in properties]
    return Sandbox.backend_newv(driver, names, list(properties.values()), None)


def run_async(start, finish, *args):
    """Call start(*args, None, callback) and run a main loop until the
    callback calls finish(result); return its value or raise its error."""
    loop = GLib.MainLoop()
    outcome = {}

    def done(source, result):
        try:
            outcome['value'] = finish(result)
        except Exception as error:  # GLib.Error, re-raised below
            outcome['error'] = error
        loop.quit()

    start(*args, None, done)
    GLib.timeout_add_seconds(60, loop.quit)
    loop.run()
    if 'error' in outcome:
        raise outcome['error']
    if 'value' not in outcome:
        raise AssertionError('the async call did not finish within 60 s')
    return outcome['value']


def bubblewrap_usable():
    """Why the bubblewrap driver can't be tested here, or None."""
    if 'bubblewrap' not in Sandbox.list_drivers():
        return 'the bubblewrap driver module is not on SANDBOX_DRIVER_PATH'
    if not os.path.exists('/usr/bin/bwrap'):
        return '/usr/bin/bwrap is not installed'
    return None


class SandboxTestCase(unittest.TestCase):
    """A test with a fresh state directory, removed afterwards."""

    def setUp(self):
        self.state_directory = tempfile.mkdtemp(prefix='sandbox-python-')
        self.addCleanup(shutil.rmtree, self.state_directory, True)

    def assertSandboxError(self, raised, code):
        error = raised.exception
        self.assertIsInstance(error, GLib.Error)
        self.assertTrue(error.matches(Sandbox.error_quark(), code),
                        '%s: expected %s, got %s %d (%s)'
                        % (error.message, Sandbox.error_code_name(code),
                           error.domain, error.code, error.message))


__all__ = ['GLib', 'GObject', 'Gio', 'Sandbox', 'CONFORMANCE_SCRIPT', 'new_backend',
           'run_async', 'bubblewrap_usable', 'SandboxTestCase']
