# Sandbox.backend_newv() with what a Python caller can get wrong: every
# mistake is a GLib.Error in the Sandbox domain naming the property, never
# a crash, a CRITICAL (G_DEBUG=fatal-criticals makes one abort the test) or
# a silently dropped setting.
#
# Before the fix, backend_newv('memory', ['state-directory'], [None], None)
# crashed the interpreter (a C array of GValues cannot hold None: PyGObject
# failed inside its own marshalling), and lists of different lengths were
# cut to the shorter one or read past the end as "(null)".
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import unittest

from sandboxtest import GLib, GObject, Gio, Sandbox, SandboxTestCase


class BackendNewvTests(SandboxTestCase):
    def assertInvalid(self, names, values, *fragments):
        with self.assertRaises(GLib.Error) as raised:
            Sandbox.backend_newv('memory', names, values, None)
        self.assertSandboxError(raised, Sandbox.Error.INVALID)
        for fragment in fragments:
            self.assertIn(fragment, raised.exception.message)

    def test_none_value_is_invalid(self):
        self.assertInvalid(['state-directory'], [None], '"state-directory"', 'no value')
        self.assertInvalid(['name', 'max-concurrent-commands'], ['mine', None],
                           '"max-concurrent-commands"')

    def test_unset_gvalue_is_invalid(self):
        self.assertInvalid(['state-directory'], [GObject.Value()], '"state-directory"')

    def test_lengths_must_agree(self):
        # More names than values: the extra name was silently dropped.
        self.assertInvalid(['state-directory', 'name'], [self.state_directory],
                           '2 property names but 1 values')
        # More values than names: the missing name was read as NULL.
        self.assertInvalid(['name'], ['mine', 3], '1 property names but 2 values')
        self.assertInvalid([], [3], '0 property names but 1 values')

    def test_unknown_property_is_invalid(self):
        self.assertInvalid(['no-such-property'], [1], '"no-such-property"')

    def test_repeated_property_is_invalid(self):
        self.assertInvalid(['name', 'name'], ['a', 'b'], '"name"', 'twice')
        self.assertInvalid(['state-directory', 'state_directory'], ['/a', '/b'], 'twice')

    def test_wrong_type_is_invalid(self):
        self.assertInvalid(['max-concurrent-commands'], ['eight'], '"max-concurrent-commands"')
        # A number is not a path (GLib would transform it to "3").
        self.assertInvalid(['state-directory'], [3], '"state-directory"')
        self.assertInvalid(['max-concurrent-commands'], [2.5], '"max-concurrent-commands"')

    def test_out_of_range_is_invalid(self):
        # GLib's own transform would wrap -1 to 4294967295 (then clamp with a
        # warning); 2 ** 40 does not fit a guint, 2 ** 70 no integer type.
        for value in (-1, 2 ** 40, -2 ** 40, 2 ** 70):
            with self.subTest(value=value):
                self.assertInvalid(['max-concurrent-commands'], [value],
                                   '"max-concurrent-commands"', 'out of range')
        # 0 and 2000 fit the property's type; the backend refuses them.
        for value in (0, 2000):
            with self.subTest(value=value):
                self.assertInvalid(['max-concurrent-commands'], [value],
                                   'max-concurrent-commands')

    def test_valid_properties(self):
        backend = Sandbox.backend_newv('memory',
                                       ['state-directory', 'max-concurrent-commands', 'name'],
                                       [self.state_directory, 3, 'mine'], None)
        self.assertEqual(backend.get_max_concurrent_commands(), 3)
        self.assertEqual(backend.get_name(), 'mine')
        self.assertEqual(backend.dup_state_directory(), self.state_directory)

        # A value of the property's own type, and a float that is an integer.
        backend = Sandbox.backend_newv('memory', ['max-concurrent-commands', 'name'],
                                       [GObject.Value(GObject.TYPE_UINT, 5), 'x'], None)
        self.assertEqual(backend.get_max_concurrent_commands(), 5)
        backend = Sandbox.backend_newv('memory', ['max-concurrent-commands'], [7.0], None)
        self.assertEqual(backend.get_max_concurrent_commands(), 7)

        backend = Sandbox.backend_newv('memory', [], [], None)
        self.assertEqual(backend.get_name(), 'memory')


class BackendParsePropertyTests(SandboxTestCase):
    """Sandbox.backend_parse_property(), the text form sandboxctl and the
    conformance tool use, as a Python caller reaches it: the value comes
    back converted (caller-allocates GValue), a mistake is a GLib.Error."""

    def memory_gtype(self):
        self.assertIn('memory', Sandbox.list_drivers())   # loads the modules
        point = Gio.IOExtensionPoint.lookup(Sandbox.BACKEND_EXTENSION_POINT_NAME)
        return point.get_extension_by_name('memory').get_type()

    def test_text_becomes_the_property_type(self):
        gtype = self.memory_gtype()
        self.assertEqual(Sandbox.backend_parse_property(gtype, 'max-concurrent-commands', '3'),
                         (True, 3))
        self.assertEqual(Sandbox.backend_parse_property(gtype, 'state-directory', '/x,y'),
                         (True, '/x,y'))
        _, value = Sandbox.backend_parse_property(gtype, 'max-concurrent-commands', '5')
        backend = Sandbox.backend_newv('memory', ['max-concurrent-commands'], [value], None)
        self.assertEqual(backend.get_max_concurrent_commands(), 5)

    def test_bad_text_is_invalid(self):
        gtype = self.memory_gtype()
        for name, text in (('max-concurrent-commands', '-1'), ('max-concurrent-commands', ''),
                           ('max-concurrent-commands', '3 '), ('no-such-property', '1')):
            with self.subTest(name=name, text=text), self.assertRaises(GLib.Error) as raised:
                Sandbox.backend_parse_property(gtype, name, text)
            self.assertSandboxError(raised, Sandbox.Error.INVALID)
            self.assertIn(name, raised.exception.message)


if __name__ == '__main__':
    unittest.main(verbosity=2)
