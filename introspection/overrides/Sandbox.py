# PyGObject overrides for the Sandbox-1 namespace: what a Python user
# expects on top of the plain binding. Loaded by PyGObject whenever
# `from gi.repository import Sandbox` runs, installed beside the typelib in
# python3's gi/overrides directory.
#
#  - Sandbox.Backend.new(driver, **properties) with Python spellings
#    (state_directory=...), validated against the driver's own GParamSpecs;
#  - plain bytes wherever GLib.Bytes is taken, and bytes returned wherever
#    the C API returns a GBytes (a bytes subclass that still answers
#    get_data()/get_size(), so code written against the plain binding runs);
#  - awaitable _async methods: called without a callback they return an
#    asyncio future, for a loop that runs the GLib main context (gbulb on
#    PyGObject 3.42, gi.events on PyGObject >= 3.50);
#  - handles as (async) context managers that stop on exit;
#  - str(error) of a Sandbox error naming its code: "SANDBOX_BUSY: ...";
#  - Command(argv, environment={...}, stdin=b'...') and a dict view of a
#    command's environment.
#
# SPDX-License-Identifier: LGPL-2.1-or-later

from __future__ import annotations

import asyncio
import collections
import errno
import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence

from gi._gi import Direction, InterfaceInfo, ObjectInfo, Repository
from gi.repository import GLib, GObject, Gio

from ..module import get_introspection_module
from . import override

Sandbox = get_introspection_module('Sandbox')

__all__ = []

_ERROR_DOMAIN = GLib.quark_to_string(Sandbox.error_quark())


# Errors --------------------------------------------------------------------

def _sandbox_error_str(self, _plain_str=GLib.Error.__str__):
    if self.domain == _ERROR_DOMAIN:
        return '%s: %s' % (Sandbox.error_code_name(self.code), self.message)
    return _plain_str(self)


# PyGObject 3.42 turns every GError into the one GLib.Error class and offers no
# per-domain hook, so the only way to make str() name our codes is to give
# GLib.Error a __str__ that handles our domain and defers to the original for
# every other domain. Guarded so a second import does not stack it.
if not getattr(GLib.Error.__str__, '_sandbox_error_str', False):
    _sandbox_error_str._sandbox_error_str = True
    GLib.Error.__str__ = _sandbox_error_str


_ERROR_CODES = Sandbox.Error   # the introspected enum; Error below carries its values
_IO_ERROR_DOMAIN = GLib.quark_to_string(Gio.io_error_quark())


class Error(GLib.Error):
    """Every error of libsandbox's own domain, as raised from Python: one
    subclass per code (Sandbox.BusyError, Sandbox.PathError, ...), each
    also the built-in exception that fits where one does (a PathError is a
    ValueError, a NetworkDeniedError a PermissionError). Still a
    GLib.Error: error.matches(Sandbox.error_quark(), Sandbox.Error.BUSY),
    .domain, .code and .message work as before, and so do the codes
    themselves, Sandbox.Error.BUSY and the rest."""


for _code in _ERROR_CODES.__enum_values__.values():
    setattr(Error, _code.value_name[len('SANDBOX_ERROR_'):], _code)
del _code

_CODE_CLASSES = {}


def _code_class(code, name, builtins, doc):
    cls = type(name, (Error,) + builtins, {'__doc__': doc, '__module__': __name__})
    _CODE_CLASSES[int(code)] = cls
    globals()[name] = cls
    return cls


_code_class(_ERROR_CODES.BUSY, 'BusyError', (),
            'SANDBOX_BUSY: another owner, the admission limit, or live commands.')
_code_class(_ERROR_CODES.PATH, 'PathError', (ValueError,),
            'SANDBOX_PATH: not a canonical workspace path.')
_code_class(_ERROR_CODES.LIMIT, 'LimitError', (),
            'SANDBOX_LIMIT: a deadline, output, file or body limit.')
_code_class(_ERROR_CODES.UNAVAILABLE, 'UnavailableError', (),
            'SANDBOX_UNAVAILABLE: isolation or a driver is not available.')
_code_class(_ERROR_CODES.STOPPED, 'StoppedError', (),
            'SANDBOX_STOPPED: the session is stopped or deleted.')
_code_class(_ERROR_CODES.STATE_MISMATCH, 'StateMismatchError', (ValueError,),
            'SANDBOX_STATE_MISMATCH: a saved state that does not match.')
_code_class(_ERROR_CODES.NETWORK_DENIED, 'NetworkDeniedError', (PermissionError,),
            'SANDBOX_NETWORK_DENIED: the network policy does not allow it.')
_code_class(_ERROR_CODES.INVALID, 'InvalidError', (ValueError,),
            'SANDBOX_INVALID: an input rejected by validation.')
_code_class(_ERROR_CODES.NOT_FOUND, 'NotFoundError', (LookupError,),
            'SANDBOX_NOT_FOUND: an unknown template or session.')

# The host-side file API reports GIOErrorEnum codes: those with a built-in
# OSError of their own become one (with its errno), still a GLib.Error.
_IO_CLASSES = {}
for _io_code, _builtin, _errno in (
        (Gio.IOErrorEnum.NOT_FOUND, FileNotFoundError, errno.ENOENT),
        (Gio.IOErrorEnum.EXISTS, FileExistsError, errno.EEXIST),
        (Gio.IOErrorEnum.IS_DIRECTORY, IsADirectoryError, errno.EISDIR),
        (Gio.IOErrorEnum.NOT_DIRECTORY, NotADirectoryError, errno.ENOTDIR),
        (Gio.IOErrorEnum.PERMISSION_DENIED, PermissionError, errno.EACCES),
        (Gio.IOErrorEnum.TIMED_OUT, TimeoutError, errno.ETIMEDOUT)):
    _IO_CLASSES[int(_io_code)] = (type(_builtin.__name__, (GLib.Error, _builtin),
                                       {'__module__': __name__,
                                        '__doc__': 'A Gio.IOErrorEnum error that is also a '
                                                   'Python %s.' % _builtin.__name__}),
                                  _errno)
    globals()[_builtin.__name__] = _IO_CLASSES[int(_io_code)][0]
del _io_code, _builtin, _errno


def _python_error(error):
    """error as the subclass that names its code, or error itself."""
    if type(error) is not GLib.Error:
        return error
    if error.domain == _ERROR_DOMAIN and error.code in _CODE_CLASSES:
        return _CODE_CLASSES[error.code](error.message, error.domain, error.code)
    if error.domain == _IO_ERROR_DOMAIN and error.code in _IO_CLASSES:
        cls, number = _IO_CLASSES[error.code]
        translated = cls(error.message, error.domain, error.code)
        translated.errno = number
        translated.strerror = error.message
        return translated
    return error


def _sandbox_error(code, message):
    return _CODE_CLASSES[int(code)](message, _ERROR_DOMAIN, int(code))


class PropertyTypeError(Error, TypeError):
    """An unknown or unsettable backend property, or a value of the wrong
    type: a Sandbox.Error.INVALID error that is also a TypeError, as
    PyGObject raises for a bad keyword to a GObject constructor."""


class PropertyValueError(InvalidError):  # noqa: F821 (made by _code_class)
    """A backend property value outside its range: a Sandbox.Error.INVALID
    error that is also a ValueError."""


__all__ += ['Error'] + [cls.__name__ for cls in _CODE_CLASSES.values()]
__all__ += [cls.__name__ for cls, _number in _IO_CLASSES.values()]
__all__ += ['PropertyTypeError', 'PropertyValueError']


# Bytes ---------------------------------------------------------------------

class Bytes(bytes):
    """The bytes the overrides return where C returns a GBytes.

    A real bytes object; get_data() and get_size() are kept so that code
    written against the plain binding (result.get_stdout_bytes().get_data())
    keeps working."""

    def get_data(self) -> bytes:
        return bytes(self)

    def get_size(self) -> int:
        return len(self)


__all__ += ['Bytes']

_BYTES_LIKE = (bytes, bytearray, memoryview)


def _to_glib_bytes(value):
    if isinstance(value, _BYTES_LIKE):
        return GLib.Bytes.new(bytes(value))
    return value


def _from_glib_bytes(value):
    if isinstance(value, GLib.Bytes):
        return Bytes(value.get_data() or b'')
    if isinstance(value, tuple):
        return tuple(_from_glib_bytes(item) for item in value)
    return value


def _is_glib_bytes(type_info):
    interface = type_info.get_interface()
    return (interface is not None and interface.get_namespace() == 'GLib'
            and interface.get_name() == 'Bytes')


def _python_arguments(function_info):
    """The arguments Python callers pass, in order (PyGObject hides array
    lengths, user data and destroy notifies)."""
    arguments = function_info.get_arguments()
    hidden = set()
    for argument in arguments:
        for index in (argument.get_closure(), argument.get_destroy(),
                      argument.get_type().get_array_length()):
            if index >= 0:
                hidden.add(index)
    return [argument for index, argument in enumerate(arguments)
            if index not in hidden and argument.get_direction() != Direction.OUT]



def _takes_or_returns_bytes(function_info):
    return (_is_glib_bytes(function_info.get_return_type())
            or any(_is_glib_bytes(argument.get_type())
                   for argument in function_info.get_arguments()))


def _bytes_method(method, function_info):
    """Wraps a method taking or returning GLib.Bytes to take bytes too and
    return bytes."""
    names = [argument.get_name() for argument in _python_arguments(function_info)]
    bytes_names = {argument.get_name() for argument in _python_arguments(function_info)
                   if _is_glib_bytes(argument.get_type())}

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        args = [_to_glib_bytes(value) if index < len(names) and names[index] in bytes_names
                else value
                for index, value in enumerate(args)]
        kwargs = {name: _to_glib_bytes(value) if name in bytes_names else value
                  for name, value in kwargs.items()}
        return _from_glib_bytes(method(self, *args, **kwargs))

    return wrapper


# Files, optional cancellables and errors ------------------------------------

def _is_gio_file(type_info):
    interface = type_info.get_interface()
    return (interface is not None and interface.get_namespace() == 'Gio'
            and interface.get_name() == 'File')


def _to_gio_file(value):
    if isinstance(value, (str, os.PathLike)):
        return Gio.File.new_for_path(os.fspath(value))
    return value


def _friendly_method(method, function_info):
    """Wraps a method, where it needs it, to take a str or os.PathLike
    wherever a Gio.File is taken, to let a trailing cancellable be left out,
    and to raise the Python error that names its code (see Error)."""
    names = [argument.get_name() for argument in _python_arguments(function_info)]
    file_names = {argument.get_name() for argument in _python_arguments(function_info)
                  if _is_gio_file(argument.get_type())}
    optional_cancellable = (bool(names) and names[-1] == 'cancellable'
                            and not function_info.get_name().endswith('_async'))
    throws = function_info.can_throw_gerror()
    if not (file_names or optional_cancellable or throws):
        return method

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        args = [_to_gio_file(value) if index < len(names) and names[index] in file_names
                else value
                for index, value in enumerate(args)]
        kwargs = {name: _to_gio_file(value) if name in file_names else value
                  for name, value in kwargs.items()}
        if optional_cancellable and len(args) == len(names) - 1 and 'cancellable' not in kwargs:
            args.append(None)
        try:
            return method(self, *args, **kwargs)
        except GLib.Error as error:
            translated = _python_error(error)
            if translated is error:
                raise
            raise translated.with_traceback(error.__traceback__) from None

    return wrapper


# Awaitables ----------------------------------------------------------------

def _glib_context_of(loop):
    """The GLib.MainContext an asyncio loop iterates, or None when it iterates
    none (a plain asyncio loop never dispatches a GTask callback).

    Both gbulb's GLibEventLoop and PyGObject >= 3.50's gi.events.GLibEventLoop
    keep it as _context: neither has a public accessor."""
    context = getattr(loop, '_context', None)
    return context if isinstance(context, GLib.MainContext) else None


def _await_async_call(start, finish, args, kwargs):
    """Starts start(*args, cancellable, callback) and returns an asyncio
    future resolved from finish(result) in the running loop.

    The GTask callback runs in the thread-default main context of the call,
    so the call is made with the loop's own context pushed as thread default.
    Cancelling the future cancels the operation through a GCancellable of our
    own when the caller passed none."""
    loop = asyncio.get_running_loop()
    context = _glib_context_of(loop)
    if context is None:
        raise RuntimeError('awaiting a Sandbox _async method needs an asyncio loop that runs '
                           'the GLib main context: gbulb (gbulb.install()) on PyGObject 3.42, '
                           'or gi.events.GLibEventLoopPolicy on PyGObject >= 3.50')
    future = loop.create_future()
    cancellable = kwargs.pop('cancellable', None)
    own_cancellable = cancellable is None
    if own_cancellable:
        cancellable = Gio.Cancellable()

    def done(source, result):
        try:
            value = finish(result)
        except GLib.Error as error:
            if not future.done():
                future.set_exception(error)
            return
        if not future.done():
            future.set_result(value)

    def cancel_operation(future):
        if future.cancelled() and own_cancellable:
            cancellable.cancel()

    context.push_thread_default()
    try:
        start(*args, cancellable, done, **kwargs)
    finally:
        context.pop_thread_default()
    future.add_done_callback(cancel_operation)
    return future


def _awaitable_method(method, finish_name, function_info):
    """Wraps an _async method: with a callback it is the plain method; without
    one it returns an awaitable future of the _finish method's value (the
    form PyGObject >= 3.50 gives natively)."""
    n_leading = [argument.get_name()
                 for argument in _python_arguments(function_info)].index('cancellable')

    @functools.wraps(method)
    def wrapper(self, *args, **kwargs):
        if len(args) > n_leading + 1 or 'callback' in kwargs:
            return method(self, *args, **kwargs)
        if len(args) == n_leading + 1:
            kwargs['cancellable'] = args[-1]
            args = args[:-1]
        return _await_async_call(functools.partial(method, self),
                                 getattr(self, finish_name), args, kwargs)

    return wrapper


# Applying the generic wrappers ---------------------------------------------

def _add_native_methods(cls):
    """Gives cls (an override of a Sandbox class or interface) the bytes and
    awaitable forms of its introspected methods, keeping what cls defines."""
    info = cls.__info__
    methods = {method.get_name(): method for method in info.get_methods() if method.is_method()}
    for name, function_info in methods.items():
        if name in cls.__dict__:
            continue
        method = getattr(cls.__mro__[1], name)
        wrapped = _friendly_method(method, function_info)
        if _takes_or_returns_bytes(function_info):
            wrapped = _bytes_method(wrapped, function_info)
        finish_name = name[:-len('_async')] + '_finish'
        if name.endswith('_async') and finish_name in methods:
            wrapped = _awaitable_method(wrapped, finish_name, function_info)
        if wrapped is not method:
            setattr(cls, name, wrapped)
    return cls


def _override(cls):
    global __all__
    cls = override(_add_native_methods(cls))
    __all__.append(cls.__name__)
    return cls


# Backends ------------------------------------------------------------------

def _driver_gtype(driver):
    """The GType the named driver registered, or None (loads the modules)."""
    try:
        return Sandbox.lookup_driver(driver)
    except GLib.Error:
        return None


_INTEGER_TYPES = {GObject.TYPE_INT, GObject.TYPE_UINT, GObject.TYPE_LONG, GObject.TYPE_ULONG,
                  GObject.TYPE_INT64, GObject.TYPE_UINT64, GObject.TYPE_CHAR, GObject.TYPE_UCHAR}


def _property_value(driver, pspec, value):
    """value as a GObject.Value of the property's own type, or a
    PropertyTypeError / PropertyValueError naming the property."""
    value_type = pspec.value_type
    wanted = None
    if value_type == GObject.TYPE_BOOLEAN:
        if not isinstance(value, bool):
            wanted = 'a bool'
    elif value_type in _INTEGER_TYPES:
        if isinstance(value, bool) or not isinstance(value, int):
            wanted = 'an int'
        elif not pspec.minimum <= value <= pspec.maximum:
            raise PropertyValueError(
                'Property "%s" of sandbox driver %s must be between %d and %d, not %d'
                % (pspec.name, driver, pspec.minimum, pspec.maximum, value),
                _ERROR_DOMAIN, int(Sandbox.Error.INVALID))
    elif value_type in (GObject.TYPE_DOUBLE, GObject.TYPE_FLOAT):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            wanted = 'a float'
    elif value_type == GObject.TYPE_STRING:
        if isinstance(value, os.PathLike):
            value = os.fspath(value)
        if not isinstance(value, str):
            wanted = 'a str'
    if wanted is None:
        try:
            return GObject.Value(value_type, value)
        except (TypeError, ValueError, OverflowError):
            wanted = 'a %s' % value_type.name
    raise PropertyTypeError('Property "%s" of sandbox driver %s takes %s, not %s'
                            % (pspec.name, driver, wanted, type(value).__name__),
                            _ERROR_DOMAIN, int(Sandbox.Error.INVALID))


class Backend(Sandbox.Backend):

    @staticmethod
    def new(driver: str, cancellable: Gio.Cancellable | None = None,
            **properties: object) -> Backend:
        """Creates a backend of the named driver.

        Properties are keywords as Python spells them (state_directory=...,
        max_concurrent_commands=8); each is checked against the driver's own
        property: an unknown or read-only name, or a value of the wrong type,
        raises PropertyTypeError (a Sandbox.Error.INVALID GLib.Error that is
        also a TypeError), a number out of range PropertyValueError. An
        unknown driver raises Sandbox.Error.UNAVAILABLE naming the
        directories searched."""
        gtype = _driver_gtype(driver)
        if gtype is None:
            # The library's own error names the driver and the directories.
            return Sandbox.backend_newv(driver, [], [], cancellable)
        pspecs = {pspec.name: pspec for pspec in GObject.list_properties(gtype)}
        names = []
        values = []
        for keyword, value in properties.items():
            name = keyword.replace('_', '-')
            pspec = pspecs.get(name)
            if pspec is None or not pspec.flags & GObject.ParamFlags.WRITABLE:
                raise PropertyTypeError('Sandbox driver %s has no settable property "%s"'
                                        % (driver, keyword),
                                        _ERROR_DOMAIN, int(Sandbox.Error.INVALID))
            names.append(name)
            values.append(_property_value(driver, pspec, value))
        return Sandbox.backend_newv(driver, names, values, cancellable)


Backend = _override(Backend)


def backend_newv(driver: str, names: Sequence[str], values: Sequence[object],
                 cancellable: Gio.Cancellable | None = None) -> Backend:
    """Sandbox.backend_newv() with the two lists checked before they reach
    PyGObject: it gives the C function one length for both (a longer list
    was cut, or read past its end), and it crashes on a None, or on an
    unset GObject.Value, in a GValue array (PyGObject 3.42 marshalling).
    Each of these raises a Sandbox.Error.INVALID GLib.Error naming the
    property; sandbox_backend_newv() checks the rest (the property exists
    and is settable, the value converts and is in range)."""
    names = list(names)
    values = list(values)
    if len(names) != len(values):
        raise _sandbox_error(Sandbox.Error.INVALID,
                             'Sandbox driver %s was given %d property names but %d values'
                             % (driver, len(names), len(values)))
    for position, (name, value) in enumerate(zip(names, values)):
        if not isinstance(name, str):
            raise _sandbox_error(Sandbox.Error.INVALID,
                                 'Property name %d of sandbox driver %s is not a string'
                                 % (position, driver))
        if value is None or (isinstance(value, GObject.Value)
                             and value.g_type == GObject.TYPE_INVALID):
            raise _sandbox_error(Sandbox.Error.INVALID,
                                 'Property "%s" of sandbox driver %s has no value'
                                 % (name, driver))
        # PyGObject makes a gint of an int, or raises OverflowError: a
        # 64-bit value lets C name the property and check its own range.
        if isinstance(value, int) and not isinstance(value, bool) \
                and not -2 ** 31 <= value < 2 ** 31:
            if not -2 ** 63 <= value < 2 ** 64:
                raise _sandbox_error(Sandbox.Error.INVALID,
                                     'Property "%s" of sandbox driver %s is out of range'
                                     % (name, driver))
            values[position] = GObject.Value(
                GObject.TYPE_INT64 if value < 2 ** 63 else GObject.TYPE_UINT64, value)
    return Sandbox.backend_newv(driver, names, values, cancellable)


# The same function is also reachable as a static method of the interface.
Backend.newv = staticmethod(backend_newv)
__all__ += ['backend_newv']


# Handles -------------------------------------------------------------------

class Handle(Sandbox.Handle):
    """`with backend.create(...) as handle:` stops the handle on exit, even
    when the block raises; `async with` awaits stop_async."""

    def __enter__(self) -> Handle:
        return self

    def __exit__(self, exc_type: object, exc_value: object, traceback: object) -> bool:
        self.stop(None)
        return False

    async def __aenter__(self) -> Handle:
        return self

    async def __aexit__(self, exc_type: object, exc_value: object, traceback: object) -> bool:
        await self.stop_async()
        return False


Handle = _override(Handle)


# Commands and results ------------------------------------------------------

def _argv_list(argv):
    """argv as a list of str, or a TypeError/ValueError saying what is wrong:
    a str is a sequence too, and Command('/bin/true') would otherwise run
    ['/', 'b', 'i', 'n', ...]."""
    if isinstance(argv, (str, bytes, os.PathLike)):
        raise TypeError('Sandbox.Command takes argv as a list, not %s: write [%r]%s'
                        % (type(argv).__name__, os.fspath(argv) if not isinstance(argv, bytes)
                           else argv,
                           ', or split a command line with shlex.split()'
                           if isinstance(argv, str) and ' ' in argv else ''))
    argv = list(argv)
    if not argv:
        raise ValueError('Sandbox.Command needs a non-empty argv')
    for index, item in enumerate(argv):
        if isinstance(item, os.PathLike):
            argv[index] = item = os.fspath(item)
        if not isinstance(item, str):
            raise TypeError('argv[%d] of a Sandbox.Command must be a str, not %s'
                            % (index, type(item).__name__))
    return argv


class Command(Sandbox.Command):
    """Sandbox.Command(['/usr/bin/cat', 'notes.txt'], cwd='src',
    environment={'LANG': 'C.UTF-8'}, timeout_ms=5000, stdin=b'...')."""

    def __init__(self, argv: Sequence[str | os.PathLike[str]] | None = None,
                 environment: Mapping[str, str] | None = None, stdin: bytes | None = None,
                 **properties: object) -> None:
        if argv is None and 'executable' not in properties:
            raise TypeError("Sandbox.Command needs an argv: a list such as ['/bin/true'] "
                            "or ['/bin/sh', '-c', 'echo hi']")
        if argv is not None:
            argv = _argv_list(argv)
            properties['executable'] = argv[0]
            properties['args'] = argv[1:]
        if stdin is not None:
            properties['stdin'] = _to_glib_bytes(stdin)
        super().__init__(**properties)
        self.update_environment(environment or {})

    @property
    def environment(self) -> dict[str, str]:
        """The command's environment as a dict (a copy)."""
        return dict(entry.split('=', 1) for entry in self.get_environment())

    def update_environment(self,
                           environment: Mapping[str, str] | Iterable[tuple[str, str]] = (),
                           **variables: str) -> None:
        """Sets each KEY=VALUE of a mapping (or pairs) and of the keywords."""
        for key, value in dict(environment, **variables).items():
            self.setenv(key, value)


Command = _override(Command)


class Result(Sandbox.Result):
    """A finished command: exit_status, exec_errno (0 unless the executable
    could not be executed), and stdout/stderr as bytes."""

    @property
    def exit_status(self) -> int:
        return self.get_exit_status()

    @property
    def exec_errno(self) -> int:
        return self.get_exec_errno()

    @property
    def stdout(self) -> bytes:
        return self.get_stdout_bytes()

    @property
    def stderr(self) -> bytes:
        return self.get_stderr_bytes()


Result = _override(Result)


# Processes and sessions ------------------------------------------------------

class _OutputChunks:
    """A running command's output as it comes: iterate it (`for`) to run
    the thread-default main context until each chunk arrives, or
    `async for` it on an asyncio loop that runs that context. Ends when the
    command does; a command that failed (deadline, output cap, ...) raises
    its error once the chunks before it are through. Output that came
    before it was made is not replayed: make it right after spawn()."""

    result: Result | None

    def __init__(self, process: Process, streams: tuple[OutputStream, ...]) -> None:
        self._process = process
        self._streams = streams
        self._queue = collections.deque()
        self._done = False
        self._error = None
        self._waiter = None
        self.result = None
        self._context = GLib.MainContext.ref_thread_default()
        self._handlers = [process.connect('stdout-data', self._on_data, OutputStream.STDOUT),
                          process.connect('stderr-data', self._on_data, OutputStream.STDERR)]
        process.wait_async(None, self._on_done)

    def _on_data(self, _process, data, stream):
        if stream in self._streams:
            self._queue.append((stream, bytes(data.get_data() or b'')))
            self._wake()

    def _on_done(self, process, result):
        try:
            self.result = process.wait_finish(result)
        except GLib.Error as error:
            self._error = error
        self._done = True
        # Every output signal came before this: the handlers have nothing
        # left to see, and must not outlive an iterator dropped early.
        self._disconnect()
        self._wake()

    def _disconnect(self):
        for handler in self._handlers:
            self._process.disconnect(handler)
        self._handlers = []

    def close(self) -> None:
        """Stops collecting chunks (the command runs on); for an iterator
        left before its end. Also what leaving a `with` block does."""
        self._disconnect()
        self._queue.clear()
        self._done = True

    def __enter__(self) -> _OutputChunks:
        return self

    def __exit__(self, *exc: object) -> bool:
        self.close()
        return False

    def _wake(self):
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _next_or_end(self):
        if self._queue:
            stream, data = self._queue.popleft()
            return data if len(self._streams) == 1 else (stream, data)
        self._disconnect()
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        return None

    def __iter__(self) -> _OutputChunks:
        return self

    def __next__(self) -> bytes | tuple[OutputStream, bytes]:
        while not self._queue and not self._done:
            self._context.iteration(True)
        chunk = self._next_or_end()
        if chunk is None:
            raise StopIteration
        return chunk

    def __aiter__(self) -> _OutputChunks:
        return self

    async def __anext__(self) -> bytes | tuple[OutputStream, bytes]:
        while not self._queue and not self._done:
            self._waiter = asyncio.get_running_loop().create_future()
            await self._waiter
        chunk = self._next_or_end()
        if chunk is None:
            raise StopAsyncIteration
        return chunk


OutputStream = Sandbox.OutputStream


class Process(Sandbox.Process):
    """A running command; its output also as iterators of bytes."""

    def stdout_chunks(self) -> _OutputChunks:
        """`for chunk in process.stdout_chunks():` (or `async for`): the
        command's stdout as bytes, as it comes; see _OutputChunks."""
        return _OutputChunks(self, (OutputStream.STDOUT,))

    def stderr_chunks(self) -> _OutputChunks:
        """The same for stderr."""
        return _OutputChunks(self, (OutputStream.STDERR,))

    def output_chunks(self) -> _OutputChunks:
        """Both, as (Sandbox.OutputStream, bytes) pairs in arrival order."""
        return _OutputChunks(self, (OutputStream.STDOUT, OutputStream.STDERR))

    def read_output(self, position: int = 0) -> tuple[bytes, int, int]:
        """A background command's output from position on, as
        (bytes, next_position, skipped): read from 0, then from each
        next_position; skipped counts bytes the log no longer keeps."""
        data, next_position, skipped = Sandbox.Process.read_output(self, position)
        return bytes(data.get_data() or b''), next_position, skipped


Process = _override(Process)


class Session(Sandbox.Session):
    """A live session; run() also takes callbacks for live output."""

    def run(self, command: Command, cancellable: Gio.Cancellable | None = None,
            on_stdout: Callable[[bytes], object] | None = None,
            on_stderr: Callable[[bytes], object] | None = None) -> Result:
        """Runs command to its end and returns its Result. on_stdout and
        on_stderr, when given, are called with each chunk (bytes) as it
        arrives, while the thread-default main context runs."""
        if on_stdout is None and on_stderr is None:
            try:
                return Sandbox.Session.run(self, command, cancellable)
            except GLib.Error as error:
                raise _python_error(error) from None
        process = self.spawn(command, cancellable)
        chunks = _OutputChunks(process, (OutputStream.STDOUT, OutputStream.STDERR))
        callbacks = {OutputStream.STDOUT: on_stdout, OutputStream.STDERR: on_stderr}
        for stream, data in chunks:
            if callbacks[stream] is not None:
                callbacks[stream](data)
        return chunks.result


Session = _override(Session)


# Everything else with bytes or async methods -------------------------------

def _remaining_type_names():
    for info in Repository.get_default().get_infos('Sandbox'):
        if isinstance(info, (ObjectInfo, InterfaceInfo)) and info.get_name() not in __all__:
            yield info.get_name()


for _name in list(_remaining_type_names()):
    _base = getattr(Sandbox, _name)
    _class = type(_name, (_base,), {'__module__': __name__, '__doc__': _base.__doc__})
    if any(key not in ('__module__', '__doc__') for key in vars(_add_native_methods(_class))):
        globals()[_name] = _override(_class)
del _name, _base, _class
