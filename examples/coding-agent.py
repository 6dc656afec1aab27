#!/usr/bin/python3
# coding-agent.py — mounting the coding tools for an agent loop, from Python
#
# SPDX-License-Identifier: LGPL-2.1-or-later
#
# A scripted fake "model" drives the tools the way an LLM with function
# calling would: the host sends it the tool definitions, the model answers
# with tool calls (a name and JSON arguments), the host runs each call with
# invoke() and sends the result JSON back.
#
# Run from a build tree:
#   GI_TYPELIB_PATH=build/introspection LD_LIBRARY_PATH=build/lib \
#   SANDBOX_DRIVER_PATH=build/drivers/bubblewrap /usr/bin/python3 examples/coding-agent.py

import json
import shutil
import sys
import tempfile

import gi

gi.require_version("Sandbox", "1")
from gi.repository import GLib, Sandbox  # noqa: E402

CALC = b"def add(a, b):\n    return a - b\n\nprint(add(2, 2))\n"

# What the model "answers", one tool call per turn.
SCRIPT = [
    ("list_files", {}),
    ("read_file", {"path": "calc.py"}),
    ("shell", {"command": "python3 calc.py || echo 'no python here'; echo $((6 * 7))"}),
    ("edit_file", {"path": "calc.py", "old_string": "a - b", "new_string": "a + b"}),
    ("write_file", {"path": "notes/README.md", "content": "Fixed add().\n"}),
    ("read_file", {"path": "../../etc/passwd"}),           # refused: outside
    ("shell", {"command": "curl -s https://example.com"}),  # refused by the host
    ("shell", {"command": "grep -n 'a + b' calc.py", "cwd": "."}),
]


def authorize(tools, operation):
    """The host's policy: everything inside the workspace, but no curl."""
    command = operation.get_command()
    return command is None or "curl" not in command


def tool_error(tools, tool, cause):
    """Refusal causes are for the host's log, never for the model."""
    print(f"host log: {tool or '(adapter)'} refused: {cause.message}", file=sys.stderr)


def main():
    state_directory = tempfile.mkdtemp(prefix="coding-agent-")
    handle = None
    try:
        backend = Sandbox.backend_newv("bubblewrap", ["state-directory"], [state_directory], None)
        template = Sandbox.Template.new("agent-workspace")
        template.add_file("calc.py", GLib.Bytes.new(CALC))
        key, _reused = backend.prewarm(template, None)
        handle = backend.create(key, None, Sandbox.NetworkPolicy.new_deny_all(), None)

        # Mount the tools: authorization is deny-by-default, so connect it.
        tools = Sandbox.CodingTools.new(handle)
        tools.props.shell_timeout_ms = 10_000
        tools.props.max_shell_output_bytes = 65_536
        tools.connect("authorize", authorize)
        tools.connect("tool-error", tool_error)

        # This is what goes into the model's request.
        definitions = json.loads(tools.get_definitions_json())
        print("tools for the model:", ", ".join(d["name"] for d in definitions))

        refused = 0
        for name, arguments in SCRIPT:
            print(f"\nmodel → {name} {json.dumps(arguments)}")
            result = tools.invoke(name, json.dumps(arguments), None)
            print(f"host  → {result}")
            if not json.loads(result)["ok"]:
                refused += 1

        # The host checks the agent's work directly.
        fixed = handle.get_session().read_text("calc.py", None)
        if "return a + b" not in fixed or refused != 2:
            print(f"unexpected outcome ({refused} refused calls):\n{fixed}", file=sys.stderr)
            return 1
        print("\ncalc.py is fixed; 2 calls were refused as expected")
        return 0
    finally:
        if handle is not None:
            handle.delete(None)
        shutil.rmtree(state_directory, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
