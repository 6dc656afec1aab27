#!/usr/bin/python3
"""Writes Sandbox.pyi, the type stubs editors and type checkers read for
`from gi.repository import Sandbox`: the introspected API as the PyGObject
overrides present it.

    stubgen.py OUTPUT

Run with GI_TYPELIB_PATH at the built typelib and PYTHONPATH at the
overrides (as the build does). It imports the module and describes what
it finds, so the stubs cannot drift from the binding:

 - every class, interface, enum, flags, boxed type, function and constant
   of the typelib, each method typed from its introspection data (out
   arguments returned as a tuple, closures, destroy notifiers and array
   lengths left out, a trailing nullable argument optional);
 - the overrides' view of them: bytes wherever GLib.Bytes is, a path (str
   or os.PathLike) wherever a Gio.File is taken, a trailing cancellable
   optional, and what the overrides define themselves (Backend.new,
   Command(argv, ...), Session.run(..., on_stdout=...), the exception
   classes, ...) from their own annotations.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import enum
import inspect
import sys

import gi

gi.require_version('Sandbox', '1')
from gi._gi import (ArgInfo, CallbackInfo, ConstantInfo, Direction,  # noqa: E402
                    EnumInfo, FunctionInfo, InterfaceInfo, ObjectInfo,
                    Repository, StructInfo, TypeTag)
from gi.repository import GLib, Sandbox  # noqa: E402

NAMESPACE = 'Sandbox'
OVERRIDES = 'gi.overrides.Sandbox'
REPOSITORY = Repository.get_default()

SCALARS = {
    TypeTag.BOOLEAN: 'bool',
    TypeTag.INT8: 'int', TypeTag.UINT8: 'int', TypeTag.INT16: 'int', TypeTag.UINT16: 'int',
    TypeTag.INT32: 'int', TypeTag.UINT32: 'int', TypeTag.INT64: 'int', TypeTag.UINT64: 'int',
    TypeTag.FLOAT: 'float', TypeTag.DOUBLE: 'float',
    TypeTag.GTYPE: 'GObject.GType',
    TypeTag.UTF8: 'str', TypeTag.FILENAME: 'str', TypeTag.UNICHAR: 'str',
    TypeTag.ERROR: 'GLib.Error',
}

PATH_LIKE = 'Gio.File | str | os.PathLike[str]'


class Place(enum.Enum):
    ARGUMENT = 1
    RESULT = 2


def overridden(name):
    """Whether the module's `name` is not the typelib's own (an override)."""
    value = getattr(Sandbox, name, None)
    return getattr(value, '__module__', None) == OVERRIDES and not hasattr(value, '__info__')


def interface_name(info, place):
    namespace, name = info.get_namespace(), info.get_name()
    if isinstance(info, CallbackInfo):
        return 'Callable[..., Any]'
    if (namespace, name) == ('GLib', 'Bytes'):
        return 'bytes'
    if (namespace, name) == ('Gio', 'File') and place is Place.ARGUMENT:
        return PATH_LIKE
    if namespace != NAMESPACE:
        return '%s.%s' % (namespace, name)
    if isinstance(info, EnumInfo) and overridden(name):
        return 'int'   # the enum's name now holds the override (Sandbox.Error)
    return name


def type_name(type_info, place):
    tag = type_info.get_tag()
    if tag in SCALARS:
        return SCALARS[tag]
    if tag == TypeTag.VOID:
        return 'object' if type_info.is_pointer() else 'None'
    if tag == TypeTag.ARRAY:
        element = type_info.get_param_type(0)
        if element.get_tag() == TypeTag.UINT8:
            return 'bytes'
        container = 'Sequence' if place is Place.ARGUMENT else 'list'
        return '%s[%s]' % (container, type_name(element, place))
    if tag in (TypeTag.GLIST, TypeTag.GSLIST):
        container = 'Sequence' if place is Place.ARGUMENT else 'list'
        return '%s[%s]' % (container, type_name(type_info.get_param_type(0), place))
    if tag == TypeTag.GHASH:
        return 'dict[%s, %s]' % (type_name(type_info.get_param_type(0), place),
                                 type_name(type_info.get_param_type(1), place))
    if tag == TypeTag.INTERFACE:
        return interface_name(type_info.get_interface(), place)
    return 'Any'


def nullable(name, may_be_null):
    return name + ' | None' if may_be_null and name not in ('Any', 'None', 'object') else name


def hidden_arguments(function_info):
    """Indexes of arguments Python never passes: user data and destroy
    notifiers of callbacks, and the lengths of arrays."""
    hidden = set()
    arguments = function_info.get_arguments()
    for argument in arguments:
        if argument.get_closure() >= 0 and argument.get_closure() < len(arguments):
            # The callback names its user data; user data names its callback.
            if isinstance(argument.get_type().get_interface(), CallbackInfo) \
                    if argument.get_type().get_tag() == TypeTag.INTERFACE else False:
                hidden.add(argument.get_closure())
        if argument.get_destroy() >= 0:
            hidden.add(argument.get_destroy())
        if argument.get_type().get_tag() == TypeTag.ARRAY \
                and argument.get_type().get_array_length() >= 0:
            hidden.add(argument.get_type().get_array_length())
    return_type = function_info.get_return_type()
    if return_type.get_tag() == TypeTag.ARRAY and return_type.get_array_length() >= 0:
        hidden.add(return_type.get_array_length())
    return hidden


def keyword(name):
    return name + '_' if name in ('async', 'from', 'in', 'is', 'lambda', 'print', 'self') else name


def signature(function_info):
    """(parameters, result) of a function as Python calls it."""
    hidden = hidden_arguments(function_info)
    inputs, outputs = [], []
    for index, argument in enumerate(function_info.get_arguments()):
        if index in hidden:
            continue
        direction = argument.get_direction()
        if direction in (Direction.IN, Direction.INOUT):
            inputs.append(argument)
        if direction in (Direction.OUT, Direction.INOUT):
            outputs.append(nullable(type_name(argument.get_type(), Place.RESULT),
                                    argument.may_be_null()))
    # PyGObject lets trailing nullable arguments be left out.
    optional_from = len(inputs)
    while optional_from > 0 and (inputs[optional_from - 1].may_be_null()
                                 or inputs[optional_from - 1].is_optional()):
        optional_from -= 1
    parameters = []
    for position, argument in enumerate(inputs):
        text = '%s: %s' % (keyword(argument.get_name()),
                           nullable(type_name(argument.get_type(), Place.ARGUMENT),
                                    argument.may_be_null()))
        parameters.append(text + (' = ...' if position >= optional_from else ''))
    results = []
    return_type = function_info.get_return_type()
    if not function_info.skip_return() and type_name(return_type, Place.RESULT) != 'None':
        results.append(nullable(type_name(return_type, Place.RESULT),
                                function_info.may_return_null()))
    results += outputs
    if function_info.get_name().endswith('_async'):
        result = 'Any'   # an asyncio future when called without a callback
    elif not results:
        result = 'None'
    elif len(results) == 1:
        result = results[0]
    else:
        result = 'tuple[%s]' % ', '.join(results)
    return parameters, result


def function_lines(function_info, indent, owner=None):
    parameters, result = signature(function_info)
    name = keyword(function_info.get_name()) if function_info.get_name() != 'print' else 'print_'
    decorator = []
    if owner is not None and function_info.is_constructor():
        decorator = ['@classmethod']
        parameters = ['cls'] + parameters
        result = owner
    elif owner is not None and function_info.is_method():
        parameters = ['self'] + parameters
    elif owner is not None:
        decorator = ['@staticmethod']
    return [indent + line for line in decorator] + [
        '%sdef %s(%s) -> %s: ...' % (indent, name, ', '.join(parameters), result)]


def python_annotation(annotation):
    if annotation is inspect.Parameter.empty:
        return 'Any'
    return annotation if isinstance(annotation, str) else getattr(annotation, '__name__', 'Any')


def python_function_lines(name, function, indent, kind='method'):
    """A function the overrides define, from its own annotations."""
    text_parameters = []
    parameters = list(inspect.signature(function).parameters.values())
    for parameter in parameters:
        annotation = ('' if parameter.name in ('self', 'cls')
                      else ': ' + python_annotation(parameter.annotation))
        prefix = {inspect.Parameter.VAR_POSITIONAL: '*',
                  inspect.Parameter.VAR_KEYWORD: '**'}.get(parameter.kind, '')
        default = '' if parameter.default is inspect.Parameter.empty else ' = ...'
        text_parameters.append(prefix + parameter.name + annotation + default)
    result = python_annotation(inspect.signature(function).return_annotation)
    lines = []
    if kind == 'static':
        lines.append(indent + '@staticmethod')
    elif kind == 'property':
        lines.append(indent + '@property')
    asynchronous = 'async ' if inspect.iscoroutinefunction(function) else ''
    lines.append('%s%sdef %s(%s) -> %s: ...' % (indent, asynchronous, name,
                                                ', '.join(text_parameters), result))
    return lines


def class_bases(info):
    bases = []
    if isinstance(info, ObjectInfo):
        parent = info.get_parent()
        bases.append('%s.%s' % (parent.get_namespace(), parent.get_name())
                     if parent.get_namespace() != NAMESPACE else parent.get_name())
    else:
        bases.append('GObject.GInterface')
    for interface in info.get_interfaces() if isinstance(info, ObjectInfo) else ():
        bases.append(interface.get_name() if interface.get_namespace() == NAMESPACE
                     else '%s.%s' % (interface.get_namespace(), interface.get_name()))
    return bases


def override_members(name):
    """What the override class of `name` defines itself, by member name:
    its own functions, properties and static methods (not the generic
    wrappers of introspected methods, which keep their introspected types)."""
    value = getattr(Sandbox, name, None)
    if value is None or getattr(value, '__module__', None) != OVERRIDES:
        return {}
    members = {}
    for member, attribute in vars(value).items():
        if member.startswith('_') and member not in ('__init__', '__enter__', '__exit__',
                                                     '__aenter__', '__aexit__'):
            continue
        if isinstance(attribute, staticmethod):
            members[member] = python_function_lines(member, attribute.__func__, '    ', 'static')
        elif isinstance(attribute, property):
            members[member] = python_function_lines(member, attribute.fget, '    ', 'property')
        elif inspect.isfunction(attribute) and not hasattr(attribute, '__wrapped__'):
            members[member] = python_function_lines(member, attribute, '    ')
    return members


def class_lines(info):
    name = info.get_name()
    lines = ['class %s(%s):' % (name, ', '.join(class_bases(info)))]
    own = override_members(name)
    for method in sorted(info.get_methods(), key=lambda method: method.get_name()):
        if method.get_name() not in own:
            lines += function_lines(method, '    ', owner=name)
    for member in sorted(own):
        lines += own[member]
    if len(lines) == 1:
        lines.append('    ...')
    return lines


def enum_lines(info):
    base = 'GObject.GFlags' if info.get_g_type().is_a(GObject_TYPE_FLAGS) else 'GObject.GEnum'
    lines = ['class %s(%s):' % (info.get_name(), base)]
    for value in info.get_values():
        lines.append('    %s: %s' % (value.get_name().upper(), info.get_name()))
    for method in sorted(info.get_methods(), key=lambda method: method.get_name()):
        lines += function_lines(method, '    ', owner=info.get_name())
    return lines


def struct_lines(info):
    # A class or interface structure (a driver's vtable) is no boxed type.
    base = 'GObject.GPointer' if info.is_gtype_struct() else 'GObject.GBoxed'
    lines = ['class %s(%s):' % (info.get_name(), base)]
    for method in sorted(info.get_methods(), key=lambda method: method.get_name()):
        lines += function_lines(method, '    ', owner=info.get_name())
    if len(lines) == 1:
        lines.append('    ...')
    return lines


def python_class_lines(name, cls):
    """A class the overrides define from scratch (the exception classes,
    the output iterator)."""
    bases = []
    for base in cls.__bases__:
        if base.__module__ == OVERRIDES:
            bases.append(base.__name__)
        elif base.__module__ == 'builtins':
            bases.append('builtins.' + base.__name__)   # the overrides reuse the names
        else:
            bases.append('%s.%s' % (base.__module__.split('.')[-1], base.__name__))
    lines = ['class %s(%s):' % (name, ', '.join(bases))]
    for member, attribute in sorted(vars(cls).items()):
        if isinstance(attribute, GObject_GEnum):
            lines.append('    %s: ClassVar[int]' % member)
        elif isinstance(attribute, property):
            lines += python_function_lines(member, attribute.fget, '    ', 'property')
        elif inspect.isfunction(attribute) and (not member.startswith('_')
                                                or (member.startswith('__')
                                                    and member.endswith('__')
                                                    and member != '__init__')):
            lines += python_function_lines(member, attribute, '    ')
    for member, annotation in getattr(cls, '__annotations__', {}).items():
        lines.append('    %s: %s' % (member, python_annotation(annotation)))
    if len(lines) == 1:
        lines.append('    ...')
    return lines


def constant_lines(info):
    value = getattr(Sandbox, info.get_name(), None)
    kind = type(value).__name__ if isinstance(value, (bool, int, float, str)) else 'Any'
    return ['%s: %s' % (info.get_name(), kind)]


def module_lines():
    lines = ['# Generated by introspection/stubgen.py from the typelib and the',
             '# PyGObject overrides; do not edit.',
             '',
             'import builtins',
             'import os',
             'from collections.abc import Callable, Iterable, Mapping, Sequence',
             'from typing import Any, ClassVar',
             '',
             'from gi.repository import GLib, GObject, Gio',
             '']
    infos = sorted(REPOSITORY.get_infos(NAMESPACE), key=lambda info: info.get_name())
    seen = set()
    # Classes the overrides make from scratch come first: the exception
    # hierarchy, which typelib signatures do not name.
    scratch = [(name, value) for name, value in sorted(vars(sys.modules[OVERRIDES]).items())
               if inspect.isclass(value) and value.__module__ == OVERRIDES
               and not hasattr(value, '__info__')]
    scratch.sort(key=lambda item: len(item[1].__mro__))
    for name, cls in scratch:
        lines += python_class_lines(name, cls) + ['']
        seen.add(name)
    for info in infos:
        name = info.get_name()
        if name in seen or name.startswith('_'):
            continue
        if isinstance(info, (ObjectInfo, InterfaceInfo)):
            lines += class_lines(info)
        elif isinstance(info, EnumInfo):
            if overridden(name):
                continue
            lines += enum_lines(info)
        elif isinstance(info, StructInfo):
            if name.endswith('Private'):
                continue
            lines += struct_lines(info)
        elif isinstance(info, FunctionInfo):
            if name in vars(sys.modules[OVERRIDES]) and inspect.isfunction(getattr(Sandbox, name)):
                lines += python_function_lines(name, getattr(Sandbox, name), '', 'function')
            else:
                lines += function_lines(info, '')
        elif isinstance(info, ConstantInfo):
            lines += constant_lines(info)
        elif isinstance(info, CallbackInfo):
            lines.append('%s = Callable[..., Any]' % name)
        else:
            continue
        lines.append('')
        seen.add(name)
    return lines


from gi.repository import GObject  # noqa: E402

GObject_TYPE_FLAGS = GObject.TYPE_FLAGS
GObject_GEnum = GObject.GEnum


def main():
    if len(sys.argv) != 2:
        sys.exit('usage: stubgen.py OUTPUT')
    text = '\n'.join(module_lines()).rstrip('\n') + '\n'
    compile(text, sys.argv[1], 'exec')   # what is written is at least Python
    with open(sys.argv[1], 'w') as output:
        output.write(text)


if __name__ == '__main__':
    main()
