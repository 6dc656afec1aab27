#!/usr/bin/python3
# reference-flow.py — the reference guide's example, in Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# The TypeScript sandbox's guide opens with one flow (see
# examples/reference-flow.c); this is it through PyGObject with libsandbox's
# overrides (introspection/overrides/Sandbox.py: keyword properties, bytes,
# handles as context managers). docs/meson.build runs it against real
# bubblewrap.
#
# Run from a build tree:
#   GI_TYPELIB_PATH=build/introspection LD_LIBRARY_PATH=build/libsandbox-core \
#   PYTHONPATH=build/introspection/python SANDBOX_DRIVER_PATH=build/drivers/bubblewrap \
#   /usr/bin/python3 examples/reference-flow.py /tmp/my-state-directory

import sys

import gi

gi.require_version('Sandbox', '1')
from gi.repository import Sandbox  # noqa: E402

state_directory = sys.argv[1] if len(sys.argv) > 1 else '/var/lib/my-app/sandboxes'

backend = Sandbox.Backend.new('bubblewrap', state_directory=state_directory,
                              max_concurrent_commands=8)
backend.connect('gateway-error',
                lambda backend, cause: print('Internal sandbox gateway error', cause, file=sys.stderr))
template = Sandbox.Template.new('agent-workspace')
template.add_file('hello.txt', b'hello')
key, reused = backend.prewarm(template)

deny_all = Sandbox.NetworkPolicy.new_deny_all()
with backend.create(key, None, deny_all) as handle:          # shutdown on exit
    result = handle.get_session().run(Sandbox.Command(['/usr/bin/cat', 'hello.txt']))
    print(result.stdout.decode())
    state = handle.capture_state()   # persist state.to_json() in the host's store
    handle.stop()
    with backend.create(key, state, deny_all) as resumed:
        try:
            print(resumed.get_session().read_text('hello.txt'))
        finally:
            resumed.delete()
