#!/usr/bin/python3
"""Runs the built sandboxctl through every subcommand's success and error
paths and reports TAP.

    test-sandboxctl.py SANDBOXCTL [quick|bubblewrap|cluster]

`quick` uses the memory driver (scripted commands, nothing executed);
`bubblewrap` runs real sandboxes; `cluster` runs every command through the
cluster driver on two "hosts" (state directories) sharing a real etcd it
starts on loopback and a checkpoint store. SANDBOX_DRIVER_PATH comes from meson.
"""

import base64
import fcntl
import http.server
import json
import os
import pty
import pwd
import re
import select
import shlex
import shutil
import signal
import socket
import subprocess
import struct
import sys
import tempfile
import termios
import threading
import time
import urllib.request

from tap import Tap  # beside this script

SANDBOXCTL = os.path.abspath(sys.argv[1])
SUITE = sys.argv[2] if len(sys.argv) > 2 else "quick"

EXIT_USAGE = 2
EXIT_BUSY, EXIT_PATH, EXIT_LIMIT, EXIT_UNAVAILABLE = 80, 81, 82, 83
EXIT_STOPPED, EXIT_STATE_MISMATCH, EXIT_NETWORK_DENIED = 84, 85, 86
EXIT_INVALID, EXIT_NOT_FOUND, EXIT_HOST_IO = 87, 88, 89
EXIT_INTERRUPTED = 130

tap = Tap()
work = tempfile.mkdtemp(prefix="test-sandboxctl-")
state_dir = os.path.join(work, "state")


def ctl(*args, stdin=None, env=None, timeout=60, state=True):
    command = [SANDBOXCTL]
    if state:
        command += ["--state-dir", state_dir]
    command += list(args)
    environment = dict(os.environ)
    environment.update(env or {})
    return subprocess.run(command, input=stdin, capture_output=True, env=environment,
                          timeout=timeout)


def describe(result):
    return (f"exit {result.returncode}\nstdout: {result.stdout[:2000]!r}\n"
            f"stderr: {result.stderr[:2000]!r}")


def expect(result, code, description, stderr_has=None, stdout_has=None):
    holds = result.returncode == code
    if stderr_has is not None:
        holds = holds and stderr_has.encode() in result.stderr
    if stdout_has is not None:
        holds = holds and stdout_has.encode() in result.stdout
    return tap.check(holds, description, describe(result))


def write_file(name, contents, mode=0o600):
    path = os.path.join(work, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        f.write(contents if isinstance(contents, bytes) else contents.encode())
    os.chmod(path, mode)
    return path


def is_key(text):
    return len(text) == 64 and all(c in "0123456789abcdef" for c in text)


# Usage and the global options --------------------------------------------

def test_usage():
    result = ctl(state=False)
    expect(result, EXIT_USAGE, "no command is a usage error", stderr_has="Commands:")
    result = ctl("--help", state=False)
    expect(result, 0, "--help lists every command", stdout_has="demo")
    for command in ["drivers", "prewarm", "create", "run", "read", "write", "rm", "stop",
                    "delete", "list", "templates", "rm-template", "demo", "bg", "snapshot",
                    "restore", "fork", "runtime"]:
        result = ctl(command, "--help", state=False)
        expect(result, 0, f"{command} --help", stdout_has=f"sandboxctl {command}")
    result = ctl("help", state=False)
    expect(result, 0, "help lists every command", stdout_has="prewarm")
    tap.check(b"\n  help " in result.stdout, "…and itself", describe(result))
    result = ctl("help", "create", state=False)
    expect(result, 0, "help COMMAND is COMMAND --help", stdout_has="sandboxctl create")
    tap.check(b"KEY|NAME" in result.stdout, "…with the command's options", describe(result))
    result = ctl("frobnicate", state=False)
    expect(result, EXIT_USAGE, "an unknown command is a usage error", stderr_has="frobnicate")
    result = ctl("list", "--no-such-option")
    expect(result, EXIT_USAGE, "an unknown option is a usage error", stderr_has="--no-such-option")


def test_drivers():
    result = ctl("drivers")
    names = result.stdout.decode().split()
    tap.check(result.returncode == 0 and "memory" in names and "bubblewrap" in names,
              "drivers lists memory and bubblewrap", describe(result))
    result = ctl("--json", "drivers")
    tap.check(result.returncode == 0 and set(json.loads(result.stdout)) >= {"memory", "bubblewrap"},
              "drivers --json is a JSON array (global option before the command)", describe(result))
    result = ctl("drivers", "extra")
    expect(result, EXIT_USAGE, "drivers refuses arguments")


def test_backend_errors():
    result = ctl("prewarm", "--driver", "no-such-driver", "--template", "t")
    expect(result, EXIT_UNAVAILABLE, "an unknown driver is SANDBOX_UNAVAILABLE",
           stderr_has="sandboxctl: SANDBOX_UNAVAILABLE: ")
    result = ctl("--json", "prewarm", "--driver", "no-such-driver", "--template", "t")
    error = json.loads(result.stdout or b"{}").get("error", {})
    tap.check(result.returncode == EXIT_UNAVAILABLE and error.get("code") == "SANDBOX_UNAVAILABLE"
              and error.get("exitCode") == EXIT_UNAVAILABLE,
              "--json reports errors as {error: {code, message, exitCode}}", describe(result))
    result = ctl("prewarm", "--driver", "memory", "--driver-option", "no-such-property=1",
                 "--template", "t")
    expect(result, EXIT_INVALID, "an unknown driver option is SANDBOX_INVALID",
           stderr_has="no-such-property")
    result = ctl("prewarm", "--driver", "memory", "--driver-option", "novalue", "--template", "t")
    expect(result, EXIT_USAGE, "--driver-option without = is a usage error")
    result = ctl("prewarm", "--driver", "memory", "--max-concurrent-commands", "5000",
                 "--template", "t")
    expect(result, EXIT_USAGE, "--max-concurrent-commands out of range is a usage error")


# prewarm -------------------------------------------------------------------

def test_prewarm_memory():
    host = write_file("host/hello.txt", "hello\n")
    result = ctl("prewarm", "--driver", "memory", "--template", "t", "--file", f"hello.txt={host}")
    key = result.stdout.decode().strip()
    tap.check(result.returncode == 0 and is_key(key), "prewarm prints the template key",
              describe(result))
    result = ctl("prewarm", "--driver", "memory", "--template", "t", "--file",
                 f"hello.txt={host}", "--json")
    parsed = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and parsed.get("templateKey") == key
              and parsed.get("reused") is False,
              "prewarm --json gives {templateKey, reused}; the key is content-addressed",
              describe(result))
    result = ctl("prewarm", "--driver", "memory", "--file", f"hello.txt={host}")
    expect(result, EXIT_USAGE, "prewarm without --template is a usage error",
           stderr_has="--template")
    result = ctl("prewarm", "--driver", "memory", "--template", "t", "--file", "nohost")
    expect(result, EXIT_USAGE, "--file without PATH=HOSTFILE is a usage error")
    result = ctl("prewarm", "--driver", "memory", "--template", "t", "--file",
                 f"x={work}/missing")
    expect(result, EXIT_HOST_IO, "a missing host file is a host I/O error",
           stderr_has="G_FILE_ERROR")
    result = ctl("prewarm", "--driver", "memory", "--template", "t", "--file", f"../x={host}")
    expect(result, EXIT_PATH, "a path escaping the workspace is SANDBOX_PATH",
           stderr_has="SANDBOX_PATH")
    result = ctl("prewarm", "--driver", "memory", "--template", "t", "--dir", f"{work}/missing")
    expect(result, EXIT_HOST_IO, "a missing host directory is a host I/O error")


# run over the memory driver (ephemeral sessions) ---------------------------

SCRIPT = {
    "commands": [
        {"match": {"executable": "/usr/bin/make"},
         "stdout": "step 1\n",
         "chunks": [{"stderr": "warning\n", "delay-ms": 50},
                    {"stdout": "step 2\n", "delay-ms": 400}],
         "exit": 2},
        {"match": {"executable": "/usr/bin/cat"}, "stdout-from-file-arg": True},
        {"match": {"executable": "/usr/bin/tee"}, "stdout-from-stdin": True},
        {"match": {"executable": "/bin/forever"}, "fault": "never-ends"},
        {"match": {"executable": "/bin/flood"}, "fault": "output-flood"},
        {"match": {"executable": "/bin/broken"}, "fault": "spawn-failure"},
        {"match": {"executable": "/bin/forger"},
         "stderr": "bwrap: execvp /bin/forger: No such file or directory\n", "exit": 1},
        {"match": {"executable": "/bin/exits-127"}, "stderr": "own\n", "exit": 127},
    ],
}


def memory_run(*args, stdin=None, timeout=60):
    script = write_file("script.json", json.dumps(SCRIPT))
    return ctl("run", "--driver", "memory", "--driver-option", f"script-file={script}",
               *args, stdin=stdin, timeout=timeout)


def test_run_memory():
    host = write_file("host/hello.txt", "hello from the host\n")
    result = memory_run("--ephemeral", "t", "--file", f"hello.txt={host}", "--",
                        "/usr/bin/cat", "hello.txt")
    expect(result, 0, "run --ephemeral runs in a fresh session from --file",
           stdout_has="hello from the host")
    result = memory_run("--ephemeral", "t", "/usr/bin/make", "-j2")
    tap.check(result.returncode == 2 and result.stdout == b"step 1\nstep 2\n"
              and result.stderr == b"warning\n",
              "run passes the command's stdout, stderr and exit status through", describe(result))
    result = memory_run("--ephemeral", "t", "--json", "/usr/bin/make")
    parsed = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 2 and parsed == {"exitStatus": 2, "stdout": "step 1\nstep 2\n",
                                                    "stderr": "warning\n"},
              "run --json prints {exitStatus, stdout, stderr}", describe(result))
    result = memory_run("--ephemeral", "t", "--stdin", "/usr/bin/tee", stdin=b"piped in\n")
    expect(result, 0, "run --stdin passes our stdin", stdout_has="piped in")
    result = memory_run("--ephemeral", "t", "--timeout-ms", "100", "/bin/forever")
    expect(result, EXIT_LIMIT, "a deadline is SANDBOX_LIMIT",
           stderr_has="sandboxctl: SANDBOX_LIMIT: Sandbox command deadline exceeded")
    result = memory_run("--ephemeral", "t", "--max-output-bytes", "1000", "/bin/flood")
    expect(result, EXIT_LIMIT, "the output cap is SANDBOX_LIMIT",
           stderr_has="Sandbox output limit exceeded")
    result = memory_run("--ephemeral", "t", "/bin/broken")
    expect(result, EXIT_UNAVAILABLE, "a spawn failure is SANDBOX_UNAVAILABLE")
    test_exec_failures_memory(host)


def test_exec_failures_memory(host):
    result = memory_run("--ephemeral", "t", "./gone")
    tap.check(result.returncode == 127 and result.stdout == b""
              and b"sandboxctl: COMMAND_NOT_FOUND: ./gone" in result.stderr,
              "memory: a missing workspace executable exits 127", describe(result))
    result = memory_run("--ephemeral", "t", "--file", f"hello.txt={host}", "./hello.txt")
    tap.check(result.returncode == 126 and b"COMMAND_NOT_EXECUTABLE" in result.stderr
              and b"Permission denied" in result.stderr,
              "memory: a workspace file without its execute bit exits 126", describe(result))
    result = memory_run("--ephemeral", "t", "--json", "./gone")
    tap.check(result.returncode == 127 and json_error(result).get("code") == "COMMAND_NOT_FOUND",
              "memory: run --json reports it as a JSON error", describe(result))
    result = memory_run("--ephemeral", "t", "/bin/forger")
    tap.check(result.returncode == 1
              and result.stderr == b"bwrap: execvp /bin/forger: No such file or directory\n",
              "memory: a command printing the old exec failure line is no exec failure",
              describe(result))
    result = memory_run("--ephemeral", "t", "/bin/exits-127")
    tap.check(result.returncode == 127 and result.stderr == b"own\n",
              "memory: a command that exits 127 itself is passed through", describe(result))


def test_run_streams_live():
    script = write_file("script.json", json.dumps(SCRIPT))
    process = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, "run", "--driver", "memory",
                                "--driver-option", f"script-file={script}", "--ephemeral", "t",
                                "/usr/bin/make"], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    first_at = time.monotonic()
    process.communicate(timeout=30)
    ended_at = time.monotonic()
    tap.check(first == b"step 1\n" and ended_at - first_at >= 0.3,
              "run streams output as it arrives (first line 400 ms before the end)",
              f"first line {first!r}, {ended_at - first_at:.3f} s before exit")


def test_run_usage():
    result = memory_run("--ephemeral", "t")
    expect(result, EXIT_USAGE, "run without EXECUTABLE is a usage error", stderr_has="EXECUTABLE")
    result = memory_run("--ephemeral", "t", "--env", "NOEQUALS", "/usr/bin/cat")
    expect(result, EXIT_USAGE, "--env without KEY=VALUE is a usage error")
    result = memory_run("--ephemeral", "t", "--timeout-ms", "-5", "/usr/bin/cat")
    expect(result, EXIT_USAGE, "a negative --timeout-ms is a usage error")
    result = memory_run("--ephemeral", "t", "--", "")
    expect(result, EXIT_INVALID, "an empty executable (rejected by the library) is SANDBOX_INVALID")
    result = memory_run("--dir", work, "/usr/bin/cat")
    expect(result, EXIT_USAGE, "--dir without --ephemeral is a usage error")
    result = memory_run("/usr/bin/cat")
    expect(result, EXIT_USAGE, "run without a session is a usage error",
           stderr_has="--state FILE or --session ID")


# Global options: --version, unknown options, --json usage errors, -v ------

def json_error(result):
    try:
        return json.loads(result.stdout).get("error", {})
    except ValueError:
        return {}


def test_global_options():
    result = ctl("--version", state=False)
    tap.check(result.returncode == 0 and result.stdout.startswith(b"sandboxctl ")
              and b"(libsandbox " in result.stdout, "--version prints both versions",
              describe(result))
    result = ctl("--json", "--version", state=False)
    parsed = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and set(parsed) == {"sandboxctl", "libsandbox"},
              "--json --version", describe(result))
    result = ctl("--bogus", "drivers", state=False)
    expect(result, EXIT_USAGE, "an unknown global option before the command is named",
           stderr_has="unknown option “--bogus”")
    # "--bogus VALUE drivers" once took VALUE for the command.
    result = ctl("--bogus", "value", "drivers", state=False)
    expect(result, EXIT_USAGE, "an unknown option is named, not its value taken for a command",
           stderr_has="--bogus")
    result = ctl("--bogus", state=False)
    expect(result, EXIT_USAGE, "an unknown option without a command is named",
           stderr_has="--bogus")
    result = ctl("--state-dir=" + state_dir, "drivers", state=False)
    expect(result, 0, "--global-option=VALUE before the command is understood")

    usage_errors = [
        (["--json"], "missing COMMAND"),
        (["--json", "frobnicate"], "frobnicate"),
        (["--json", "--bogus", "list"], "--bogus"),
        (["list", "--json", "--no-such-option"], "--no-such-option"),
        (["--json", "run", "--driver", "memory", "--ephemeral", "t"], "EXECUTABLE"),
        (["--json", "prewarm", "--driver", "memory", "--driver-option", "novalue",
          "--template", "t"], "novalue"),
    ]
    for args, named in usage_errors:
        result = ctl(*args)
        error = json_error(result)
        tap.check(result.returncode == EXIT_USAGE and error.get("code") == "USAGE"
                  and error.get("exitCode") == EXIT_USAGE and named in error.get("message", "")
                  and result.stderr == b"",
                  f"--json: the usage error of {' '.join(args)} is a JSON error on stdout",
                  describe(result))

    result = ctl("--help", state=False)
    expect(result, 0, "--help points at the man page", stdout_has="man sandboxctl")

    host = write_file("host/hello.txt", "hello\n")
    result = ctl("-v", "prewarm", "--driver", "memory", "--template", "t",
                 "--file", f"hello.txt={host}")
    tap.check(result.returncode == 0 and b"Opening the memory backend" in result.stderr
              and is_key(result.stdout.decode().strip()),
              "-v logs what sandboxctl does on stderr, stdout stays the output",
              describe(result))
    result = ctl("prewarm", "--driver", "memory", "--template", "t", "--file", f"hello.txt={host}",
                 env={"G_MESSAGES_DEBUG": ""})
    tap.check(result.returncode == 0 and b"Opening" not in result.stderr,
              "without -v nothing is logged", describe(result))


# --driver-option typed by the property ---------------------------------------

def test_typed_driver_options():
    # The bubblewrap backend is configured (not run) by prewarm: each value
    # goes through its property's own type.
    good = ["seccomp=false", "durable=yes", "max-processes=64", "cpu-percent=50",
            "memory-limit=268435456", "executable=/usr/bin/bwrap"]
    args = []
    for option in good:
        args += ["--driver-option", option]
    result = ctl("prewarm", *args, "--template", "typed")
    expect(result, 0, "bool, uint, uint64 and string driver options are accepted")
    bad = [("seccomp=maybe", "true or false"),
           ("cpu-percent=99999999", "from 0 to"),
           ("max-processes=-1", "from 0 to"),
           ("max-processes=12abc", "integer"),
           ("memory-limit=", "integer"),
           ("no-such-property=1", "seccomp")]   # the error lists what can be set
    for option, says in bad:
        result = ctl("prewarm", "--driver-option", option, "--template", "typed")
        expect(result, EXIT_INVALID, f"--driver-option {option} is SANDBOX_INVALID",
               stderr_has=says)


# run --events ------------------------------------------------------------

def events_of(result):
    events = []
    for line in result.stdout.decode().splitlines():
        events.append(json.loads(line))
    return events


def test_run_events():
    result = memory_run("--ephemeral", "t", "--events", "/usr/bin/make")
    try:
        events = events_of(result)
    except ValueError:
        events = []
    kinds = [event.get("event") for event in events]
    output = [(event["event"], event.get("text")) for event in events
              if event.get("event") in ("stdout", "stderr")]
    tap.check(result.returncode == 2 and kinds[0] == "start" and kinds[-1] == "exit"
              and events[-1].get("exitStatus") == 2
              and output == [("stdout", "step 1\n"), ("stderr", "warning\n"),
                             ("stdout", "step 2\n")],
              "run --events: start, one event per chunk in order, exit", describe(result))

    script = write_file("script.json", json.dumps(SCRIPT))
    process = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, "run", "--driver", "memory",
                                "--driver-option", f"script-file={script}", "--ephemeral", "t",
                                "--events", "/usr/bin/make"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = process.stdout.readline()
    second = process.stdout.readline()
    second_at = time.monotonic()
    process.communicate(timeout=30)
    ended_at = time.monotonic()
    tap.check(b'"start"' in first and b'"step 1\\n"' in second and ended_at - second_at >= 0.3,
              "run --events streams: each event is flushed as it happens",
              f"{first!r} {second!r}, {ended_at - second_at:.3f} s before exit")

    result = memory_run("--ephemeral", "t", "--events", "--timeout-ms", "100", "/bin/forever")
    events = events_of(result) if result.stdout else []
    tap.check(result.returncode == EXIT_LIMIT and events
              and events[-1].get("event") == "error"
              and events[-1]["error"].get("code") == "SANDBOX_LIMIT",
              "run --events ends with an error event when the library fails", describe(result))
    result = memory_run("--ephemeral", "t", "--events")
    events = events_of(result) if result.stdout else [{}]
    tap.check(result.returncode == EXIT_USAGE and events[-1].get("event") == "error"
              and events[-1].get("error", {}).get("code") == "USAGE",
              "run --events makes a usage error an error event too", describe(result))


# Session addressing and network options ------------------------------------

def test_session_options():
    state = write_file("memory-state.json", json.dumps(
        {"backend": "memory", "sessionId": "a" * 64, "templateKey": "b" * 64}))
    result = ctl("read", "--driver", "memory", "--state", state, "--session", "a" * 64, "x")
    expect(result, EXIT_USAGE, "--state and --session together are a usage error")
    result = ctl("read", "--driver", "memory", "--state", state, "x")
    expect(result, EXIT_NOT_FOUND, "an unknown session is SANDBOX_NOT_FOUND",
           stderr_has="SANDBOX_NOT_FOUND")
    bad = write_file("bad-state.json", '{"backend": "memory", "sessionId": ""}')
    result = ctl("read", "--driver", "memory", "--state", bad, "x")
    expect(result, EXIT_INVALID, "a malformed state file is SANDBOX_INVALID")
    result = ctl("read", "--driver", "memory", "--state", f"{work}/missing.json", "x")
    expect(result, EXIT_HOST_IO, "a missing state file is a host I/O error")
    result = ctl("read", "--driver", "memory", "--session", "../../etc", "x")
    expect(result, EXIT_INVALID, "a session id that is not 64 hex digits is SANDBOX_INVALID")
    traversal = write_file("traversal-state.json", json.dumps(
        {"backend": "bubblewrap", "sessionId": "../../../../tmp", "templateKey": "b" * 64}))
    result = ctl("stop", "--state", traversal)
    expect(result, EXIT_INVALID, "stop refuses a state whose session id is not 64 hex digits")
    result = ctl("read", "--driver", "memory", "--state", state)
    expect(result, EXIT_USAGE, "read without PATH is a usage error")
    result = ctl("create", "--driver", "memory")
    expect(result, EXIT_USAGE, "create without --template is a usage error")
    result = ctl("create", "--driver", "memory", "--template", "c" * 64)
    expect(result, EXIT_NOT_FOUND, "create from an unknown template is SANDBOX_NOT_FOUND")
    result = ctl("create", "--driver", "memory", "--template", "not-a-key")
    expect(result, EXIT_NOT_FOUND, "create --template with neither a key nor a stored name "
           "is SANDBOX_NOT_FOUND and points at the listing", stderr_has="sandboxctl templates")


def test_snapshot_usage():
    state = write_file("memory-state.json", json.dumps(
        {"backend": "memory", "sessionId": "a" * 64, "templateKey": "b" * 64}))
    result = ctl("snapshot", "--driver", "memory")
    expect(result, EXIT_USAGE, "snapshot without a session is a usage error")
    result = ctl("snapshot", "--driver", "memory", "--state", state, "extra")
    expect(result, EXIT_USAGE, "snapshot refuses arguments", stderr_has="extra")
    result = ctl("snapshot", "--driver", "memory", "--session", "a" * 64)
    expect(result, EXIT_NOT_FOUND, "snapshot of an unknown session is SANDBOX_NOT_FOUND")
    result = ctl("snapshot", "--driver", "memory", "--session", "../x", "--json")
    tap.check(result.returncode == EXIT_INVALID
              and json_error(result).get("code") == "SANDBOX_INVALID",
              "snapshot --json of a malformed id is a SANDBOX_INVALID error object",
              describe(result))
    result = ctl("restore", "--driver", "memory", "--state", state)
    expect(result, EXIT_USAGE, "restore without KEY is a usage error")
    result = ctl("fork", "--driver", "memory")
    expect(result, EXIT_USAGE, "fork without what to fork is a usage error",
           stderr_has="--template KEY|NAME, --state FILE or --session ID")
    result = ctl("fork", "--driver", "memory", "--template", "b" * 64, "--session", "a" * 64)
    expect(result, EXIT_USAGE, "fork of a template and a session at once is a usage error")
    for count in ("0", "1001", "x"):
        result = ctl("fork", "--driver", "memory", "--template", "b" * 64, "-n", count)
        expect(result, EXIT_USAGE, f"fork -n {count} is a usage error")
    result = ctl("fork", "--driver", "memory", "--template", "b" * 64, "-n", "3")
    expect(result, EXIT_NOT_FOUND, "fork of an unknown key is SANDBOX_NOT_FOUND and prints "
           "no session")
    tap.check(result.stdout == b"", "…no session", describe(result))


def test_network_options():
    secret = "s3cret-never-printed"
    literal = memory_run("--ephemeral", "t", "--allow", "http://127.0.0.1:9",
                         "--header", f"authorization={secret}", "/usr/bin/cat")
    expect(literal, EXIT_USAGE, "a literal header value is refused",
           stderr_has="literal header values are refused")
    tap.check(secret.encode() not in literal.stderr + literal.stdout,
              "the refused literal value is not echoed", describe(literal))
    result = memory_run("--ephemeral", "t", "--header", "authorization=@HOME", "/usr/bin/cat")
    expect(result, EXIT_USAGE, "--header before any --allow is a usage error",
           stderr_has="must follow")
    result = memory_run("--ephemeral", "t", "--allow", "http://127.0.0.1:9",
                        "--header", "authorization=@SANDBOXCTL_TEST_UNSET", "/usr/bin/cat")
    expect(result, EXIT_USAGE, "an unset credential variable is a usage error",
           stderr_has="SANDBOXCTL_TEST_UNSET is not set")
    token_file = write_file("token", secret + "\n")
    result = memory_run("--ephemeral", "t", "--allow", "http://127.0.0.1:9",
                        "--header", "bad header=<" + token_file, "/usr/bin/cat")
    expect(result, EXIT_INVALID, "an invalid header name is SANDBOX_INVALID")
    tap.check(secret.encode() not in result.stderr + result.stdout,
              "a header error does not print the value from the file", describe(result))
    result = memory_run("--ephemeral", "t", "--allow", "http://127.0.0.1:9",
                        "--header", "authorization=<" + token_file, "/usr/bin/cat")
    expect(result, EXIT_UNAVAILABLE, "the memory driver refuses an allow-list (SANDBOX_UNAVAILABLE)")
    tap.check(secret.encode() not in result.stderr + result.stdout,
              "that refusal does not print the credential", describe(result))
    result = memory_run("--ephemeral", "t", "--allow", "ftp://example.com", "/usr/bin/cat")
    expect(result, EXIT_INVALID, "a non-http origin is SANDBOX_INVALID")
    result = memory_run("--ephemeral", "t", "--network", "allow-all", "--allow",
                        "http://127.0.0.1:9", "/usr/bin/cat")
    expect(result, EXIT_USAGE, "--allow with --network allow-all is a usage error")
    result = memory_run("--ephemeral", "t", "--network", f"{work}/no-policy.json", "/usr/bin/cat")
    expect(result, EXIT_USAGE, "a missing --network policy file is a usage error")
    policy = write_file("policy.json", json.dumps({"allow": [{"origin": "http://x/", "extra": 1}]}))
    result = memory_run("--ephemeral", "t", "--network", policy, "/usr/bin/cat")
    expect(result, EXIT_INVALID, "a policy file the library rejects is SANDBOX_INVALID")
    result = memory_run("--ephemeral", "t", "--network", "allow-all", "/usr/bin/cat")
    expect(result, EXIT_UNAVAILABLE, "--network allow-all reaches the driver (memory refuses it)")


# list ----------------------------------------------------------------------

def test_list_errors():
    result = ctl("list", "--json", env={"SANDBOX_STATE_DIR": f"{work}/nothing-here"}, state=False)
    parsed = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and parsed.get("sessions") == []
              and parsed.get("stateDirectory") == f"{work}/nothing-here",
              "list honours SANDBOX_STATE_DIR; a missing state directory is empty",
              describe(result))
    not_a_dir = write_file("plain-file", "x")
    result = ctl("list", "--state-dir", not_a_dir, state=False)
    expect(result, EXIT_HOST_IO, "list over a file is a host I/O error")
    result = ctl("list", "--json", env={"XDG_STATE_HOME": f"{work}/xdg", "SANDBOX_STATE_DIR": ""},
                 state=False)
    parsed = json.loads(result.stdout or b"{}")
    tap.check(parsed.get("stateDirectory") == f"{work}/xdg/sandbox",
              "the default state directory is $XDG_STATE_HOME/sandbox", describe(result))


def test_store_memory():
    # The memory driver's store belongs to its process, so a fresh sandboxctl
    # finds nothing in it: what matters is that the driver was asked (a walk
    # of the bubblewrap layout would say nothing about whose store it read).
    result = ctl("list", "--driver", "memory", "--json")
    parsed = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and parsed.get("driver") == "memory"
              and parsed.get("sessions") == [] and parsed.get("templates") == [],
              "list --driver memory reports the memory driver's own store", describe(result))
    result = ctl("list", "--driver", "memory")
    expect(result, 0, "list says whose store it lists", stdout_has="Driver: memory")
    result = ctl("templates", "--driver", "memory", "--json")
    parsed = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and parsed.get("templates") == []
              and "sessions" not in parsed,
              "templates --driver memory lists the driver's templates only", describe(result))
    result = ctl("rm-template", "--driver", "memory", "c" * 64)
    expect(result, EXIT_NOT_FOUND, "rm-template of a template the driver does not store is "
           "SANDBOX_NOT_FOUND", stderr_has="Unknown sandbox template")
    result = ctl("rm-template", "--driver", "memory", "../../etc")
    expect(result, EXIT_NOT_FOUND, "rm-template of something neither a key nor a stored name "
           "(a path) is SANDBOX_NOT_FOUND", stderr_has="sandboxctl templates")
    result = ctl("rm-template", "--driver", "memory")
    expect(result, EXIT_USAGE, "rm-template without KEY is a usage error")
    result = ctl("stop", "--driver", "memory", "--session", "a" * 64)
    expect(result, EXIT_NOT_FOUND, "stop --session asks the memory driver, which does not know it",
           stderr_has="Unknown sandbox session")
    result = ctl("run", "--driver", "memory", "--session", "a" * 64, "/usr/bin/true")
    expect(result, EXIT_NOT_FOUND, "run --session over the memory driver is SANDBOX_NOT_FOUND")


# bubblewrap: the real thing --------------------------------------------------

class Upstream(http.server.BaseHTTPRequestHandler):
    seen = []

    def do_GET(self):
        Upstream.seen.append(self.headers.get("Authorization"))
        body = b"upstream saw a credential\n" if self.headers.get("Authorization") else b"none\n"
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def session_id_of(state_path):
    with open(state_path) as f:
        return json.load(f)["sessionId"]


def list_sessions():
    result = ctl("list", "--json")
    return {s["sessionId"]: s for s in json.loads(result.stdout or b"{}").get("sessions", [])}


def ctl_on_tty(*args):
    """Runs sandboxctl with its stderr on a pseudo-terminal; returns its exit
    status, stdout and what it wrote to the terminal."""
    master, slave = pty.openpty()
    process = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, *args],
                               stdout=subprocess.PIPE, stderr=slave, stdin=subprocess.DEVNULL)
    os.close(slave)
    terminal = b""
    while True:
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        terminal += chunk
    os.close(master)
    stdout = process.stdout.read()
    process.wait(timeout=60)
    return process.returncode, stdout, terminal


def test_prewarm_progress():
    """prewarm draws a progress bar on a terminal (stderr a tty), never
    into a pipe, and never with --json. Make sandboxctl_progress_bar_start_prewarm()
    skip its isatty() check and the pipe case sees the bar."""
    tree = os.path.join(work, "progress-tree")
    for i in range(20):
        write_file(f"progress-tree/f{i}.bin", "x" * 65536)

    result = ctl("prewarm", "--template", "progress-pipe", "--dir", tree)
    tap.check(result.returncode == 0 and b"\r" not in result.stderr
              and b"files" not in result.stderr,
              "prewarm draws no progress bar into a pipe", describe(result))

    status, stdout, terminal = ctl_on_tty("prewarm", "--template", "progress-tty", "--dir", tree)
    tap.check(status == 0 and is_key(stdout.decode().strip())
              and b"\r\x1b[K[" in terminal and b"100%  20/20 files" in terminal
              and terminal.rstrip().endswith(b"template stored"),
              "prewarm draws a progress bar on a terminal, to 100% of the files",
              f"status {status}\nterminal: {terminal[-600:]!r}")

    status, stdout, terminal = ctl_on_tty("prewarm", "--json", "--template", "progress-json",
                                          "--dir", tree)
    tap.check(status == 0 and b"files" not in terminal
              and json.loads(stdout or b"{}").get("reused") is False,
              "prewarm --json draws no progress bar, even on a terminal",
              f"status {status}\nterminal: {terminal[-600:]!r}")


def test_create_progress():
    """create draws a progress bar on a terminal while it copies the
    template (layering=copy), never into a pipe, never with --json, and not
    at all when it copies nothing (a layered workspace). Take the
    sandboxctl_progress_bar_start_create() call out of create and the
    terminal case sees no bar."""
    tree = os.path.join(work, "create-progress-tree")
    for i in range(20):
        write_file(f"create-progress-tree/f{i}.bin", "x" * 65536)
    result = ctl("prewarm", "--template", "create-progress", "--dir", tree)
    key = result.stdout.decode().strip()
    tap.check(result.returncode == 0 and is_key(key), "prewarm the create-progress tree",
              describe(result))
    copy = ("--driver-option", "layering=copy")

    def delete(stdout):
        path = os.path.join(work, "create-progress-state.json")
        with open(path, "wb") as f:
            f.write(stdout)
        ctl(*copy, "delete", "--state", path)

    result = ctl(*copy, "create", "--template", key)
    tap.check(result.returncode == 0 and b"\r" not in result.stderr
              and b"files" not in result.stderr,
              "create draws no progress bar into a pipe", describe(result))
    delete(result.stdout)

    status, stdout, terminal = ctl_on_tty(*copy, "create", "--template", key)
    created = json.loads(stdout or b"{}")
    tap.check(status == 0 and created.get("templateKey") == key
              and b"\r\x1b[K[" in terminal and b"100%  20/20 files" in terminal
              and terminal.endswith(b"\n"),
              "create draws a progress bar on a terminal while it copies, to 100% of the files",
              f"status {status}\nterminal: {terminal[-600:]!r}")
    delete(stdout)

    status, stdout, terminal = ctl_on_tty(*copy, "create", "--json", "--template", key)
    tap.check(status == 0 and b"files" not in terminal
              and json.loads(stdout or b"{}").get("templateKey") == key,
              "create --json draws no progress bar, even on a terminal",
              f"status {status}\nterminal: {terminal[-600:]!r}")
    delete(stdout)

    status, stdout, terminal = ctl_on_tty("create", "--template", key)
    tap.check(status == 0 and b"files" not in terminal,
              "a layered create copies nothing and draws no progress bar",
              f"status {status}\nterminal: {terminal[-600:]!r}")
    delete(stdout)


def test_bubblewrap():
    tree = os.path.join(work, "tree")
    os.makedirs(os.path.join(tree, "sub"))
    write_file("tree/hello.txt", "hello\n")
    write_file("tree/sub/deep.txt", "deep\n")

    result = ctl("prewarm", "--template", "cli-test", "--dir", tree)
    key = result.stdout.decode().strip()
    tap.check(result.returncode == 0 and is_key(key), "bubblewrap prewarm --dir prints a key",
              describe(result))
    result = ctl("prewarm", "--template", "cli-test", "--dir", tree, "--json")
    tap.check(json.loads(result.stdout or b"{}").get("reused") is True,
              "prewarming the same tree again reuses it", describe(result))

    state_path = os.path.join(work, "state.json")
    result = ctl("create", "--template", key, "--output", state_path)
    created = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and created.get("templateKey") == key
              and created.get("backend") == "bubblewrap",
              "create prints the state JSON", describe(result))
    tap.check(os.path.exists(state_path) and os.stat(state_path).st_mode & 0o777 == 0o600
              and json.load(open(state_path)) == created,
              "create --output saves it with mode 0600")
    session_id = created.get("sessionId", "")

    result = ctl("run", "--state", state_path, "/usr/bin/cat", "hello.txt", "sub/deep.txt")
    expect(result, 0, "run cats the template's files", stdout_has="hello\ndeep\n")
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c", "echo out; echo err >&2; exit 7")
    tap.check(result.returncode == 7 and result.stdout == b"out\n" and result.stderr == b"err\n",
              "run exits with the guest's status and splits its streams", describe(result))
    result = ctl("run", "--state", state_path, "/bin/sh", "-c", "kill -9 $$")
    expect(result, 137, "a guest killed by a signal exits 128+N")
    result = ctl("run", "--session", session_id, "--cwd", "sub", "--env", "GREETING=hi",
                 "/usr/bin/env")
    names = sorted(line.split("=")[0] for line in result.stdout.decode().splitlines())
    tap.check(result.returncode == 0 and names == ["GREETING", "HOME", "PATH", "PWD"],
              "run --session: the guest environment holds only PATH, HOME, PWD (bwrap) and --env",
              describe(result))
    result = ctl("run", "--state", state_path, "/bin/sh", "-c", "echo x > /usr/pwned")
    tap.check(result.returncode != 0 and not os.path.exists("/usr/pwned"),
              "the runtime is read-only inside", describe(result))
    # The guest's /etc is the curated one (issue 21), never the host's.
    result = ctl("run", "--state", state_path, "/usr/bin/test", "-e", "/etc/shadow")
    expect(result, 1, "the host's /etc is not visible inside")
    result = ctl("run", "--state", state_path, "--timeout-ms", "200", "/usr/bin/sleep", "5")
    expect(result, EXIT_LIMIT, "a real deadline is SANDBOX_LIMIT", stderr_has="deadline exceeded")
    result = ctl("run", "--state", state_path, "--max-output-bytes", "4096", "/usr/bin/yes")
    expect(result, EXIT_LIMIT, "a real output cap is SANDBOX_LIMIT",
           stderr_has="output limit exceeded")

    result = ctl("write", "--state", state_path, "notes/todo.txt", stdin=b"from stdin\n")
    expect(result, 0, "write from stdin creates parent directories")
    result = ctl("run", "--state", state_path, "/usr/bin/cat", "notes/todo.txt")
    expect(result, 0, "the guest sees the written file", stdout_has="from stdin")
    result = ctl("write", "--state", state_path, "--text", "text", "t.txt", "--json")
    tap.check(json.loads(result.stdout or b"{}") == {"path": "/workspace/t.txt", "size": 4},
              "write --text --json", describe(result))
    source = write_file("host/source.bin", bytes(range(256)))
    result = ctl("write", "--state", state_path, "--from", source, "/workspace/bin.dat")
    expect(result, 0, "write --from a host file, canonical /workspace path")
    result = ctl("read", "--session", session_id, "bin.dat")
    tap.check(result.returncode == 0 and result.stdout == bytes(range(256)),
              "read returns the bytes exactly", describe(result))
    result = ctl("read", "--state", state_path, "--json", "t.txt")
    tap.check(json.loads(result.stdout or b"{}").get("contentBase64") == "dGV4dA==",
              "read --json gives base64", describe(result))
    result = ctl("write", "--state", state_path, "--text", "a", "--from", source, "x")
    expect(result, EXIT_USAGE, "write --text with --from is a usage error")
    result = ctl("read", "--state", state_path, "../etc/passwd")
    expect(result, EXIT_PATH, "read outside the workspace is SANDBOX_PATH",
           stderr_has="SANDBOX_PATH")
    result = ctl("rm", "--state", state_path, "notes")
    expect(result, 0, "rm removes a directory")
    result = ctl("read", "--state", state_path, "notes/todo.txt")
    expect(result, EXIT_HOST_IO, "reading a removed file is G_IO_ERROR_NOT_FOUND",
           stderr_has="G_IO_ERROR_NOT_FOUND")
    result = ctl("rm", "--state", state_path, ".")
    expect(result, EXIT_PATH, "rm of the workspace root is SANDBOX_PATH",
           stderr_has="Cannot remove the workspace root")

    sessions = list_sessions()
    entry = sessions.get(session_id, {})
    tap.check(entry.get("lease") is None and entry.get("templateKey") == key
              and entry.get("workspaceBytes", 0) >= 256 + 4,
              "list shows the session: free lease, template, workspace size", json.dumps(entry))
    result = ctl("list")
    expect(result, 0, "list prints sessions and templates", stdout_has=key)
    test_list_never_follows_guest_links(state_path, session_id, entry)
    test_templates_bubblewrap(key, session_id)
    test_snapshots(key)

    test_busy_and_stop(state_path, session_id)
    test_stale_lease(state_path, session_id)
    test_allow_list(state_path)
    test_verbose_bwrap_argv(state_path)
    test_exec_failures(state_path)
    test_typed_limits(state_path)
    test_run_stdin_streams(state_path)
    test_shell(state_path)
    test_background(key)

    result = ctl("run", "--state", state_path, "--network", "deny-all", "/usr/bin/curl", "-sS",
                 "--max-time", "5", "http://127.0.0.1:9/")
    tap.check(result.returncode not in (0, EXIT_USAGE) and result.returncode < 80,
              "deny-all: the guest cannot reach host loopback", describe(result))

    result = ctl("delete", "--state", state_path)
    expect(result, 0, "delete removes the session", stdout_has="deleted")
    tap.check(session_id not in list_sessions(), "list no longer shows it")
    result = ctl("delete", "--state", state_path)
    expect(result, EXIT_NOT_FOUND, "deleting again is SANDBOX_NOT_FOUND")
    result = ctl("run", "--session", session_id, "/usr/bin/true")
    expect(result, EXIT_NOT_FOUND, "run --session of a deleted session is SANDBOX_NOT_FOUND")
    result = ctl("stop", "--state", state_path)
    expect(result, EXIT_NOT_FOUND, "stop of a deleted session is SANDBOX_NOT_FOUND")
    test_template_names_bubblewrap(key)
    test_rm_template_bubblewrap(key)

    result = ctl("run", "--ephemeral", "one-shot", "--dir", tree, "/usr/bin/cat", "hello.txt")
    expect(result, 0, "run --ephemeral over bubblewrap", stdout_has="hello")


# Background commands and their holder (sandboxctl-holder.c) --------------

# The holders' sockets go under a directory of the test's own, never the
# caller's $XDG_RUNTIME_DIR or /tmp, where other test runs keep theirs.
runtime_dir = os.path.join(work, "run")
holders_dir = os.path.join(runtime_dir, f"sandboxctl-{os.getuid()}")
holder_env = {"XDG_RUNTIME_DIR": runtime_dir}
TEST_USER = "sandbox-test"


def bg(*args, timeout=60):
    return ctl(*args, env=holder_env, timeout=timeout)


def lease_pid(session_id):
    return ((list_sessions().get(session_id) or {}).get("lease") or {}).get("pid")


def pid_alive(pid):
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[-1][0] != "Z"
    except OSError:
        return False


def host_command_lines():
    for pid in os.listdir("/proc"):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                yield f.read()
        except OSError:
            pass


def end_holder(pid):
    """Ends a holder the test started, by its pid, and waits until it is gone."""
    if pid and pid_alive(pid):
        os.kill(pid, signal.SIGTERM)
        wait_for(lambda: not pid_alive(pid))


def guest_fetch(session_id, port):
    return bg("run", "--session", session_id, "--", "/usr/bin/python3", "-c",
              "import urllib.request, sys; "
              f"sys.stdout.write(urllib.request.urlopen('http://127.0.0.1:{port}/', "
              "timeout=5).read().decode())")


def test_background(key):
    os.makedirs(runtime_dir, mode=0o700, exist_ok=True)
    result = ctl("create", "--template", key)
    session_id = json.loads(result.stdout or b"{}").get("sessionId", "")
    holders = set()
    try:
        test_background_commands(session_id, holders)
        test_background_stop(session_id, holders)
        test_stale_holder_socket(session_id, holders)
        test_holder_directory_attacks(session_id, holders)
        test_holder_other_user(session_id, holders)
    finally:
        for pid in holders:
            end_holder(pid)
        ctl("delete", "--session", session_id)


def test_background_commands(session_id, holders):
    result = bg("bg", "list", "--session", session_id)
    tap.check(result.returncode == 0 and result.stdout == b"",
              "bg list of a session without a holder is empty", describe(result))
    result = bg("bg", "output", "--session", session_id, "bg-1")
    expect(result, EXIT_HOST_IO, "bg output without a holder says none serves the session",
           stderr_has="No holder serves session")

    tap.check(not os.path.exists(holders_dir), "no holder directory before the first bg start")
    result = bg("bg", "start", "--session", session_id, "--", "/usr/bin/python3", "-m",
                "http.server", "8765", "--bind", "127.0.0.1")
    server_id = result.stdout.decode().strip()
    holder = lease_pid(session_id)
    holders.add(holder)
    tap.check(result.returncode == 0 and server_id == "bg-1" and holder is not None
              and pid_alive(holder),
              "bg start prints the id; sandboxctl exited and a holder holds the lease",
              describe(result))
    st = os.lstat(holders_dir)
    tap.check(st.st_uid == os.getuid() and st.st_mode & 0o777 == 0o700
              and os.path.exists(os.path.join(holders_dir, session_id)),
              "the holder's socket is in a 0700 directory of ours", oct(st.st_mode))

    answered = wait_for(lambda: guest_fetch(session_id, 8765).returncode == 0, timeout=20)
    result = guest_fetch(session_id, 8765)
    tap.check(answered and result.returncode == 0 and b"Directory listing" in result.stdout,
              "a later run (through the holder) reaches the background server on 127.0.0.1",
              describe(result))
    result = bg("bg", "list", "--session", session_id, "--json")
    entries = json.loads(result.stdout or b"[]")
    tap.check(result.returncode == 0 and len(entries) == 1 and entries[0]["id"] == server_id
              and entries[0]["state"] == "running" and entries[0]["argv"][:3]
              == ["/usr/bin/python3", "-m", "http.server"] and entries[0]["startTime"],
              "bg list shows it running, with its argv and start time", describe(result))

    result = bg("bg", "start", "--session", session_id, "--", "/bin/sh", "-c",
                "for i in $(seq 1 30); do echo line $i; sleep 0.1; done; exit 5")
    lines_id = result.stdout.decode().strip()
    tap.check(result.returncode == 0 and lines_id == "bg-2" and lease_pid(session_id) == holder,
              "a second bg start uses the same holder", describe(result))
    buffered = wait_for(lambda: b"line 2\n" in bg("bg", "output", "--session", session_id,
                                                  lines_id).stdout)
    result = bg("bg", "output", "--session", session_id, lines_id)
    tap.check(buffered and result.returncode == 0 and b"line 30" not in result.stdout,
              "bg output gives what is buffered so far and returns", describe(result))
    result = bg("bg", "output", "--session", session_id, "--follow", lines_id)
    expected = "".join(f"line {i}\n" for i in range(1, 31)).encode()
    tap.check(result.returncode == 5 and result.stdout == expected,
              "bg output --follow re-attaches: buffered, then live output until the end, "
              "and the command's exit status", describe(result))
    result = bg("bg", "start", "--session", session_id, "--", "/bin/sh", "-c", "sleep 0.5; exit 7")
    result = bg("bg", "wait", "--session", session_id, result.stdout.decode().strip())
    expect(result, 7, "bg wait exits with the command's status")

    result = bg("bg", "kill", "--session", session_id, server_id)
    expect(result, 0, "bg kill signals the server")
    result = bg("bg", "wait", "--session", session_id, server_id)
    expect(result, 128 + signal.SIGTERM, "bg wait: the server ended by SIGTERM (128+15)")
    result = guest_fetch(session_id, 8765)
    tap.check(result.returncode != 0 and result.returncode < 80,
              "the killed server no longer answers", describe(result))
    result = bg("bg", "list", "--session", session_id)
    tap.check(f"{server_id}\t".encode() in result.stdout and b"exited 143" in result.stdout,
              "bg list shows its exit status", describe(result))
    result = bg("bg", "kill", "--session", session_id, "bg-99")
    expect(result, EXIT_NOT_FOUND, "bg kill of an unknown id is SANDBOX_NOT_FOUND")
    result = bg("bg", "frobnicate", "--session", session_id)
    expect(result, EXIT_USAGE, "an unknown bg subcommand is a usage error")

    result = bg("delete", "--session", session_id)
    expect(result, EXIT_BUSY, "delete of a held session is SANDBOX_BUSY, names the holder "
           "and says to stop it", stderr_has=f"pid {holder}, the sandboxctl holding its "
           "background commands (`sandboxctl bg list`); `sandboxctl stop` ends it and them")
    tap.check(lease_pid(session_id) == holder, "…and leaves the holder alone")
    result = bg("read", "--session", session_id, "hello.txt")
    expect(result, EXIT_BUSY, "read of a held session is SANDBOX_BUSY naming the holder",
           stderr_has=f"pid {holder}, the sandboxctl holding its background commands")
    for command in (["snapshot"], ["fork"], ["restore", "0" * 64]):
        result = bg(*command, "--session", session_id)
        expect(result, EXIT_BUSY, f"{command[0]} of a held session is SANDBOX_BUSY naming the "
               "holder (its background commands are not snapshotted)",
               stderr_has=f"pid {holder}, the sandboxctl holding its background commands")


def test_stale_holder_socket(session_id, holders):
    result = bg("bg", "start", "--session", session_id, "--", "/bin/sleep", "600")
    holder = lease_pid(session_id)
    holders.add(holder)
    os.kill(holder, signal.SIGKILL)
    wait_for(lambda: not pid_alive(holder))
    socket_path = os.path.join(holders_dir, session_id)
    tap.check(result.returncode == 0 and os.path.exists(socket_path),
              "a holder killed outright leaves its socket behind", describe(result))
    result = bg("bg", "list", "--session", session_id)
    tap.check(result.returncode == 0 and result.stdout == b"",
              "bg list of a dead holder's socket: no background commands", describe(result))
    result = bg("recover", "--session", session_id)
    expect(result, 0, "recover takes the dead holder's stale lease over")
    result = bg("bg", "start", "--session", session_id, "--", "/bin/sleep", "600")
    holder = lease_pid(session_id)
    holders.add(holder)
    tap.check(result.returncode == 0 and holder is not None and pid_alive(holder)
              and bg("bg", "list", "--session", session_id).stdout.count(b"running") == 1,
              "bg start replaces the dead holder's socket with a new holder's", describe(result))
    end_holder(holder)
    tap.check(lease_pid(session_id) is None and not os.path.exists(socket_path),
              "the new holder ends on SIGTERM, releasing the lease and removing its socket")


def test_background_stop(session_id, holders):
    holder = lease_pid(session_id)
    result = bg("bg", "start", "--session", session_id, "--", "/bin/sleep", "611.25")
    result = bg("stop", "--session", session_id)
    expect(result, 0, "stop asks the holder to end", stdout_has=str(holder))
    tap.check(wait_for(lambda: not pid_alive(holder)) and lease_pid(session_id) is None
              and not os.path.exists(os.path.join(holders_dir, session_id))
              and os.listdir(holders_dir) == [],
              "the holder is gone, the lease free, its socket and log removed",
              str(os.listdir(holders_dir)))
    result = ctl("run", "--session", session_id, "/usr/bin/true")
    expect(result, 0, "a plain run resumes the session again")
    tap.check(not any(b"611.25" in cmdline for cmdline in host_command_lines()),
              "no background command survived the holder")

    result = bg("bg", "start", "--session", session_id, "--grace-s", "1", "--", "/bin/true")
    holder = lease_pid(session_id)
    holders.add(holder)
    tap.check(result.returncode == 0 and holder is not None
              and wait_for(lambda: not pid_alive(holder), timeout=15)
              and lease_pid(session_id) is None,
              "a holder whose commands ended leaves after its grace period", describe(result))


def held_start(session_id, watched):
    """bg start, returning its result and what @watched held then (before a
    holder it started is ended, which removes its socket)."""
    result = bg("bg", "start", "--session", session_id, "--", "/bin/sleep", "600")
    contents = os.listdir(watched)
    end_holder(lease_pid(session_id))
    return result, contents


def test_holder_directory_attacks(session_id, holders):
    shutil.rmtree(holders_dir, ignore_errors=True)
    elsewhere = os.path.join(work, "elsewhere")
    os.makedirs(elsewhere, mode=0o700)
    os.symlink(elsewhere, holders_dir)
    result, contents = held_start(session_id, elsewhere)
    expect(result, EXIT_HOST_IO, "a symlink planted at the holders' directory is refused",
           stderr_has="a symlink?")
    tap.check(contents == [], "…and nothing is put where it points", str(contents))
    os.unlink(holders_dir)

    os.mkdir(holders_dir, 0o755)
    os.chmod(holders_dir, 0o755)
    result, contents = held_start(session_id, holders_dir)
    expect(result, EXIT_HOST_IO, "a holders' directory others may enter is refused",
           stderr_has="mode 0700")
    tap.check(contents == [], "…and nothing is put there", str(contents))
    os.chmod(holders_dir, 0o700)

    if os.getuid() != 0:
        tap.skip("a holders' directory of another user is refused", "needs root to chown")
        return
    user = subprocess.run(["id", "-u", TEST_USER], capture_output=True)
    if user.returncode != 0:
        tap.skip("a holders' directory of another user is refused", f"no user {TEST_USER}")
        return
    os.chown(holders_dir, int(user.stdout), -1)
    result, contents = held_start(session_id, holders_dir)
    expect(result, EXIT_HOST_IO, "a holders' directory of another user is refused",
           stderr_has="must be ours")
    tap.check(contents == [], "…and nothing is put there", str(contents))
    os.chown(holders_dir, 0, -1)

    # A socket of another user where the holder's would be: never used, never replaced.
    planted, directory = socket.socket(socket.AF_UNIX), os.open(holders_dir, os.O_RDONLY)
    planted.bind(f"/proc/self/fd/{directory}/{session_id}")   # sun_path is short
    planted.close()
    os.close(directory)
    os.chown(os.path.join(holders_dir, session_id), int(user.stdout), -1)
    result = bg("bg", "list", "--session", session_id)
    expect(result, EXIT_HOST_IO, "a socket of another user at the holder's place is refused",
           stderr_has="not a socket of ours")
    result, _ = held_start(session_id, holders_dir)
    tap.check(result.returncode != 0 and b"not a socket of ours" in result.stderr
              and os.stat(os.path.join(holders_dir, session_id)).st_uid == int(user.stdout),
              "…and a new holder does not replace it", describe(result))
    os.unlink(os.path.join(holders_dir, session_id))


# Connects to a holder socket and lists; prints the error's message. From
# the socket's directory: its full path may pass sun_path's 108 bytes.
OTHER_USER_CLIENT = """
import os, sys
from gi.repository import Gio, GLib
try:
    os.chdir(os.path.dirname(sys.argv[1]))
    c = Gio.DBusConnection.new_for_address_sync(
        "unix:path=" + os.path.basename(sys.argv[1]), Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT, None, None)
    c.call_sync(None, "/org/libsandbox/Sandboxctl/Holder", "org.libsandbox.Sandboxctl.Holder1",
                "List", None, None, Gio.DBusCallFlags.NONE, 5000, None)
    print("listed")
except GLib.Error as e:
    print("refused:", e.message)
    sys.exit(1)
"""


def test_holder_other_user(session_id, holders):
    description = "another user connecting to a holder's socket is refused"
    try:
        user = pwd.getpwnam(TEST_USER)
    except KeyError:
        user = None
    if os.getuid() != 0 or user is None:
        tap.skip(description, "needs root and the user " + TEST_USER)
        return
    result = bg("bg", "start", "--session", session_id, "--", "/bin/sleep", "600")
    holder = lease_pid(session_id)
    holders.add(holder)
    socket_path = os.path.join(holders_dir, session_id)
    client = ["/usr/bin/python3", "-c", OTHER_USER_CLIENT, socket_path]
    ours = subprocess.run(client, capture_output=True, timeout=30)
    tap.check(result.returncode == 0 and ours.stdout == b"listed\n",
              "the holder's own user lists through the socket",
              describe(result) + "\n" + describe(ours))
    # Only the directory's mode keeps others out of the socket: open it
    # (and the socket) to the other user, to try the server's own check.
    modes = [(path, os.stat(path).st_mode & 0o777)
             for path in (work, runtime_dir, holders_dir, socket_path)]
    try:
        for path, _ in modes:
            os.chmod(path, 0o777 if path == socket_path else 0o711)
        other = subprocess.run(["setpriv", f"--reuid={user.pw_uid}", f"--regid={user.pw_gid}",
                                "--clear-groups", *client],
                               capture_output=True, timeout=30)
    finally:
        for path, mode in modes:
            os.chmod(path, mode)
    tap.check(other.returncode == 1 and other.stdout.startswith(b"refused:")
              and b"Could not connect" not in other.stdout, description,
              describe(other))
    end_holder(holder)


def test_list_never_follows_guest_links(state_path, session_id, before):
    # The guest plants links to the host's /usr and / in its workspace: the
    # store measures the workspace by descriptor and counts each link as one
    # file. Make measure_directory() in the bubblewrap store stat with
    # fstatat (…, 0) instead of AT_SYMLINK_NOFOLLOW and the bytes of /usr
    # show up here.
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c",
                 "ln -s /usr usr-link && ln -s / root-link && mkfifo fifo")
    expect(result, 0, "the guest plants links out of its workspace and a FIFO")
    entry = list_sessions().get(session_id, {})
    tap.check(entry.get("workspaceFiles") == before.get("workspaceFiles", 0) + 3
              and entry.get("workspaceBytes", 0) < before.get("workspaceBytes", 0) + 4096,
              "list counts planted links as files and never follows them", json.dumps(entry))
    result = ctl("run", "--state", state_path, "/bin/rm", "usr-link", "root-link", "fifo")
    expect(result, 0, "the planted entries are removed again")


def list_templates():
    result = ctl("templates", "--json")
    return {t["templateKey"]: t for t in json.loads(result.stdout or b"{}").get("templates", [])}


def test_templates_bubblewrap(key, session_id):
    entry = list_templates().get(key, {})
    tap.check(entry.get("sessions") == 1 and entry.get("files") == 2
              and entry.get("bytes") == len("hello\n") + len("deep\n")
              and entry.get("backend") == "bubblewrap" and entry.get("name") == "cli-test",
              "templates lists the template: its name, files, bytes and the session made from it",
              json.dumps(entry))
    result = ctl("templates")
    expect(result, 0, "templates shows the template's name", stdout_has="name:      cli-test")
    test_workspace_layering_report()
    result = ctl("rm-template", key)
    expect(result, EXIT_BUSY, "rm-template refuses a template a stored session was created from",
           stderr_has="delete them first")
    result = ctl("run", "--session", session_id, "/usr/bin/true")
    expect(result, 0, "the refused rm-template left the session resumable")


# Runtimes (issue 35): busybox-static, made once per build directory by
# tests/bubblewrap/with-test-runtime.sh (which meson runs this suite through),
# imported, named by a template, run on, listed and deleted.
def test_runtime_bubblewrap():
    busybox = os.path.join(os.path.dirname(SANDBOXCTL), "..", "tests", "runtime-cache",
                           "busybox")
    result = ctl("runtime", "import", busybox, "--json")
    imported = json.loads(result.stdout or b"{}")
    runtime_key = imported.get("runtimeKey", "")
    tap.check(result.returncode == 0 and is_key(runtime_key) and imported.get("reused") is False,
              "runtime import prints the runtime's key", describe(result))
    result = ctl("runtime", "import", busybox)
    tap.check(result.returncode == 0 and result.stdout.decode().strip() == runtime_key
              and b"reused" in result.stderr,
              "importing the same tree again reuses it", describe(result))
    write_file("runtime-tree/hello.txt", "on busybox\n")
    result = ctl("prewarm", "--template", "on-runtime", "--dir",
                 os.path.join(work, "runtime-tree"), "--runtime", runtime_key)
    key = result.stdout.decode().strip()
    tap.check(result.returncode == 0 and is_key(key), "prewarm --runtime prints a key",
              describe(result))
    state_path = os.path.join(work, "runtime-state.json")
    result = ctl("create", "--template", key, "--output", state_path)
    expect(result, 0, "create a session on the runtime")
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c",
                 "cat /etc/os-release hello.txt; test -e /usr/bin/bwrap || echo no-host-usr")
    expect(result, 0, "run: the runtime's /etc/os-release, the workspace, no host /usr",
           stdout_has="ID=libsandbox-test-runtime\nNAME=\"libsandbox test runtime "
                      "(busybox-static)\"\non busybox\nno-host-usr\n")
    result = ctl("runtime", "list", "--json")
    listed = {r["runtimeKey"]: r for r in json.loads(result.stdout or b"{}").get("runtimes", [])}
    entry = listed.get(runtime_key, {})
    tap.check(entry.get("templates") == 1 and entry.get("sessions") == 1
              and entry.get("bytes", 0) > 1000000,
              "runtime list --json: its size, the template and session on it", describe(result))
    result = ctl("runtime", "rm", runtime_key)
    expect(result, EXIT_BUSY, "runtime rm refuses a runtime a template names",
           stderr_has="delete them first")
    expect(ctl("delete", "--state", state_path), 0, "delete the session on the runtime")
    expect(ctl("rm-template", key), 0, "rm-template the template naming it")
    result = ctl("prewarm", "--template", "on-runtime", "--dir",
                 os.path.join(work, "runtime-tree"), "--runtime", runtime_key,
                 "--writable-runtime")
    writable_key = result.stdout.decode().strip()
    tap.check(result.returncode == 0 and is_key(writable_key) and writable_key != key,
              "prewarm --writable-runtime: another key", describe(result))
    result = ctl("create", "--template", writable_key, "--output", state_path)
    expect(result, 0, "create a session on the writable runtime")
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c", "echo mine > /usr/bin/mine")
    expect(result, 0, "a session writes into its writable runtime's /usr")
    result = ctl("run", "--state", state_path, "--", "/bin/cat", "/usr/bin/mine")
    expect(result, 0, "what it wrote there is there for its next command", stdout_has="mine\n")
    expect(ctl("delete", "--state", state_path), 0, "delete the session on the writable runtime")
    expect(ctl("rm-template", writable_key), 0, "rm-template the writable runtime's template")
    result = ctl("prewarm", "--template", "x", "--writable-runtime")
    expect(result, EXIT_USAGE, "--writable-runtime needs --runtime",
           stderr_has="--writable-runtime needs --runtime")
    result = ctl("runtime", "rm", runtime_key)
    expect(result, 0, "runtime rm once no template names it", stdout_has="deleted: runtime")
    result = ctl("runtime", "rm", runtime_key)
    expect(result, EXIT_NOT_FOUND, "runtime rm of a runtime not stored is SANDBOX_NOT_FOUND")
    result = ctl("runtime", "import", os.path.join(work, "runtime-tree", "hello.txt"))
    expect(result, EXIT_INVALID, "runtime import of a file is SANDBOX_INVALID",
           stderr_has="not a directory")
    result = ctl("runtime")
    expect(result, EXIT_USAGE, "runtime without a subcommand is a usage error")
    result = ctl("prewarm", "--template", "x", "--runtime", "../etc")
    expect(result, EXIT_USAGE, "prewarm --runtime takes a key", stderr_has="--runtime")


# Everything of /workspace a guest can tell apart: types, modes, link targets
# and file digests (tests/bubblewrap/test-snapshot.c's TREE_DIGEST).
TREE_DIGEST = ("cd /workspace && find . -printf '%y %m %p -> %l\\n' | LC_ALL=C sort && "
               "find . -type f -print0 | LC_ALL=C sort -z | xargs -0 -r sha256sum")


def tree_of(session_id):
    result = ctl("run", "--session", session_id, "/bin/sh", "-c", TREE_DIGEST)
    return result.stdout if result.returncode == 0 else describe(result)


def created_ids(result):
    lines = result.stdout.decode().splitlines() if result.returncode == 0 else []
    return [json.loads(line).get("sessionId") for line in lines]


def test_snapshots(key):
    """snapshot, fork and restore (sandboxctl-snapshot.c) over real overlays."""
    result = ctl("create", "--template", key)
    session_id = json.loads(result.stdout or b"{}").get("sessionId", "x" * 64)
    forks = []
    snapshots = []
    try:
        result = ctl("run", "--session", session_id, "/bin/sh", "-c",
                     "echo edited > hello.txt && rm -r sub && mkdir -p new/empty && "
                     "ln -s hello.txt link && chmod 0750 new")
        expect(result, 0, "the session edits, deletes a template directory, adds a link")
        before = tree_of(session_id)
        result = ctl("snapshot", "--session", session_id)
        snapshot = result.stdout.decode().strip()
        tap.check(result.returncode == 0 and is_key(snapshot) and snapshot != key,
                  "snapshot prints a new key", describe(result))
        snapshots.append(snapshot)
        result = ctl("snapshot", "--session", session_id, "--json")
        tap.check(result.returncode == 0 and json.loads(result.stdout or b"{}")
                  == {"sessionId": session_id, "snapshotKey": snapshot},
                  "snapshot --json: {sessionId, snapshotKey}; the same changes are the same key",
                  describe(result))

        result = ctl("fork", "--session", session_id, "-n", "3")
        ids = created_ids(result)
        states = [json.loads(line) for line in result.stdout.decode().splitlines()]
        forks += ids
        fork_state = states[2] if len(states) == 3 else {}
        tap.check(len(ids) == 3 and len(set(ids)) == 3 and session_id not in ids
                  and all(s.get("templateKey") == snapshot and s.get("backend") == "bubblewrap"
                          for s in states),
                  "fork --session -n 3 snapshots once and prints three sessions' state JSON, "
                  "a line each", describe(result))
        tap.check(all(tree_of(i) == before for i in ids),
                  "every fork sees exactly the snapshotted tree", before)
        result = ctl("write", "--session", ids[0], "--text", "fork 0", "hello.txt")
        expect(result, 0, "one fork writes")
        result = ctl("read", "--session", ids[1], "hello.txt")
        tap.check(result.stdout == b"edited\n" and tree_of(session_id) == before,
                  "…which the other forks and the parent do not see", describe(result))

        result = ctl("templates", "--json")
        listed = {t.get("templateKey"): t
                  for t in json.loads(result.stdout or b"{}").get("templates", [])}
        tap.check(result.returncode == 0
                  and listed.get(snapshot, {}).get("parentKey") == key
                  and listed.get(key, {}).get("parentKey", "") is None
                  and listed.get(key, {}).get("snapshots") == 1,
                  "templates --json gives the snapshot's parentKey and counts the snapshots over "
                  "the template", describe(result))
        result = ctl("templates")
        expect(result, 0, "templates says what a snapshot lies over",
               stdout_has=f"snapshot over: {key}")

        result = ctl("fork", "--template", snapshot, "--json")
        ids = created_ids(result)
        forks += ids
        tap.check(len(ids) == 1 and tree_of(ids[0]) == before,
                  "fork --template SNAPSHOT creates a session from a snapshot key",
                  describe(result))
        result = ctl("create", "--template", snapshot)
        forks += created_ids(result)
        tap.check(result.returncode == 0 and tree_of(forks[-1]) == before,
                  "create takes a snapshot key as a template key", describe(result))

        result = ctl("run", "--session", session_id, "/bin/sh", "-c",
                     "rm -rf /workspace/* && echo junk > junk")
        expect(result, 0, "the session wipes its workspace")
        result = ctl("restore", "--session", session_id, snapshot)
        expect(result, 0, "restore resets the session to its snapshot",
               stdout_has=f"restored: session {session_id} to {snapshot}")
        tap.check(tree_of(session_id) == before, "…giving back the exact tree")
        result = ctl("restore", "--session", session_id, key, "--json")
        tap.check(result.returncode == 0 and json.loads(result.stdout or b"{}")
                  == {"sessionId": session_id, "restoredTo": key},
                  "restore --json to the session's template", describe(result))
        result = ctl("read", "--session", session_id, "sub/deep.txt")
        expect(result, 0, "…brings the template's files back", stdout_has="deep")

        # A fork restored to its base's parent is moved onto that key: the
        # --state file follows.
        state_file = os.path.join(work, "rebased-state.json")
        with open(state_file, "w") as f:
            f.write(json.dumps(fork_state) + "\n")
        result = ctl("restore", "--state", state_file, key)
        with open(state_file) as f:
            rewritten = json.loads(f.read() or "{}")
        tap.check(result.returncode == 0 and rewritten.get("templateKey") == key
                  and rewritten.get("sessionId") == fork_state.get("sessionId"),
                  "restore further along the line rewrites the --state file to name the key",
                  describe(result))
        result = ctl("read", "--state", state_file, "sub/deep.txt")
        expect(result, 0, "…which resumes the session on the template's files",
               stdout_has="deep")

        test_snapshot_errors(key, session_id, snapshot)
        snapshots.append(test_snapshot_busy(session_id, snapshot))
    finally:
        for fork in forks:
            ctl("delete", "--session", fork)
        ctl("delete", "--session", session_id)
    for snapshot in reversed(snapshots):
        result = ctl("rm-template", snapshot)
        expect(result, 0, "a snapshot nothing depends on any more is deleted like a template")


def test_snapshot_errors(key, session_id, snapshot):
    unknown = "e" * 64
    result = ctl("restore", "--session", session_id, "not-a-key")
    expect(result, EXIT_INVALID, "restore to something not a key is SANDBOX_INVALID",
           stderr_has="64 lowercase hexadecimal")
    result = ctl("restore", "--session", session_id, unknown)
    expect(result, EXIT_NOT_FOUND, "restore to an unknown key is SANDBOX_NOT_FOUND")
    result = ctl("restore", "--session", session_id)
    expect(result, EXIT_USAGE, "restore without KEY is a usage error")
    result = ctl("snapshot", "--session", unknown)
    expect(result, EXIT_NOT_FOUND, "snapshot of an unknown session is SANDBOX_NOT_FOUND")
    result = ctl("fork", "--session", unknown)
    expect(result, EXIT_NOT_FOUND, "fork of an unknown session is SANDBOX_NOT_FOUND")
    result = ctl("fork", "--template", unknown, "-n", "2")
    expect(result, EXIT_NOT_FOUND, "fork of an unknown snapshot is SANDBOX_NOT_FOUND")
    result = ctl("rm-template", snapshot)
    expect(result, EXIT_BUSY, "a snapshot sessions were forked from is not deleted")
    other = os.path.join(work, "snapshot-other-tree")
    os.makedirs(other, exist_ok=True)
    write_file("snapshot-other-tree/x.txt", "x\n")
    other_key = ctl("prewarm", "--template", "snapshot-other", "--dir", other).stdout.decode().strip()
    result = ctl("restore", "--session", session_id, other_key)
    expect(result, EXIT_INVALID, "restore to another template is SANDBOX_INVALID")
    ctl("rm-template", other_key)


def test_snapshot_busy(session_id, snapshot):
    running = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, "run", "--session",
                                session_id, "/usr/bin/sleep", "60"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        wait_for(lambda: lease_pid(session_id) == running.pid)
        for args, what in ((["snapshot"], "snapshot"), (["restore", snapshot], "restore"),
                           (["fork"], "fork")):
            result = ctl(*args, "--session", session_id)
            expect(result, EXIT_BUSY, f"{what} of a session a run holds is SANDBOX_BUSY, "
                   "naming the owner", stderr_has=f"pid {running.pid}, a sandboxctl")
    finally:
        running.terminate()
        running.communicate(timeout=20)
    result = ctl("snapshot", "--session", session_id)
    tap.check(result.returncode == 0 and is_key(result.stdout.decode().strip()),
              "once released, the session snapshots again", describe(result))
    return result.stdout.decode().strip()


def test_workspace_layering_report():
    result = ctl("list", "--json")
    tap.check(json.loads(result.stdout or b"{}").get("workspaceLayering") == "overlay",
              "list --json reports overlay workspaces (the default, and this kernel allows them)",
              describe(result))
    result = ctl("--driver-option", "layering=copy", "list", "--json")
    tap.check(json.loads(result.stdout or b"{}").get("workspaceLayering") == "copy",
              "with layering=copy it reports copied workspaces", describe(result))
    result = ctl("list")
    expect(result, 0, "list says how workspaces are made", stdout_has="Workspaces: overlay")
    result = ctl("--driver", "memory", "list", "--json")
    tap.check(result.returncode == 0 and "workspaceLayering" not in json.loads(result.stdout or b"{}"),
              "a backend that does not say has no workspaceLayering", describe(result))


def test_template_names_bubblewrap(key):
    """create and rm-template take a template's name where one stored
    template has it (sandboxctl_resolve_template()); a shared name must be
    chosen by key."""
    result = ctl("create", "--template", "cli-test")
    created = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and created.get("templateKey") == key,
              "create --template takes the name the template was prewarmed with",
              describe(result))
    ctl("delete", "--session", created.get("sessionId", "x" * 64))
    other = os.path.join(work, "other-tree")
    os.makedirs(other, exist_ok=True)
    write_file("other-tree/other.txt", "other\n")
    result = ctl("prewarm", "--template", "cli-test", "--dir", other)
    other_key = result.stdout.decode().strip()
    result = ctl("create", "--template", "cli-test")
    expect(result, EXIT_INVALID, "a name two templates share is SANDBOX_INVALID naming both keys",
           stderr_has=other_key)
    tap.check(key.encode() in result.stderr, "…and the first key", describe(result))
    result = ctl("rm-template", other_key)
    expect(result, 0, "rm-template by key", stdout_has="deleted")


def test_rm_template_bubblewrap(key):
    result = ctl("rm-template", key)
    expect(result, 0, "rm-template deletes a template once no stored session needs it",
           stdout_has="deleted")
    tap.check(key not in list_templates(), "templates no longer lists it")
    result = ctl("create", "--template", key)
    expect(result, EXIT_NOT_FOUND, "create from a deleted template is SANDBOX_NOT_FOUND")
    result = ctl("rm-template", key)
    expect(result, EXIT_NOT_FOUND, "deleting it again is SANDBOX_NOT_FOUND")


def test_exec_failures(state_path):
    result = ctl("run", "--state", state_path, "/usr/bin/no-such-tool")
    tap.check(result.returncode == 127 and b"bwrap" not in result.stderr
              and b"sandboxctl: COMMAND_NOT_FOUND: /usr/bin/no-such-tool" in result.stderr,
              "a missing executable exits 127 with our message, not bwrap's", describe(result))
    result = ctl("run", "--state", state_path, "/usr")
    tap.check(result.returncode == 126 and b"bwrap" not in result.stderr
              and b"COMMAND_NOT_EXECUTABLE" in result.stderr,
              "a directory as executable exits 126", describe(result))
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c",
                 "printf '#!/bin/sh\\necho hi\\n' > script; chmod 644 script")
    result = ctl("run", "--state", state_path, "/workspace/script")
    expect(result, 126, "a file without execute permission exits 126",
           stderr_has="Permission denied")
    result = ctl("run", "--state", state_path, "--json", "/usr/bin/no-such-tool")
    tap.check(result.returncode == 127 and json_error(result).get("code") == "COMMAND_NOT_FOUND"
              and json_error(result).get("exitCode") == 127,
              "run --json: a missing executable is a JSON error", describe(result))
    result = ctl("run", "--state", state_path, "--events", "/usr/bin/no-such-tool")
    events = events_of(result) if result.stdout else []
    tap.check(result.returncode == 127 and events and events[-1].get("event") == "error"
              and not any(event.get("event") == "stderr" for event in events),
              "run --events: a missing executable is an error event, bwrap's line dropped",
              describe(result))
    result = ctl("run", "--state", state_path, "/workspace/script/x")
    expect(result, 127, "a path through a file (ENOTDIR) exits 127",
           stderr_has="COMMAND_NOT_FOUND")
    # What a guest that ran prints or exits with is its own: the failed exec is
    # data from the sandbox, never read from the output.
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c",
                 "echo 'bwrap: execvp /bin/sh: not really' >&2; echo more >&2; exit 1")
    tap.check(result.returncode == 1
              and result.stderr == b"bwrap: execvp /bin/sh: not really\nmore\n",
              "a guest's look-alike stderr is passed through untouched", describe(result))
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c",
                 "echo 'bwrap: execvp /bin/sh: x' >&2; exit 3")
    tap.check(result.returncode == 3 and result.stderr == b"bwrap: execvp /bin/sh: x\n",
              "a look-alike line with another status is the guest's own", describe(result))
    forged = b"bwrap: execvp /bin/sh: No such file or directory\n"
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c",
                 "printf 'bwrap: execvp /bin/sh: No such file or directory\\n' >&2; exit 1")
    tap.check(result.returncode == 1 and result.stderr == forged,
              "a guest forging the exact exec failure line is no exec failure",
              describe(result))
    result = ctl("run", "--state", state_path, "--json", "--", "/bin/sh", "-c",
                 "printf 'bwrap: execvp /bin/sh: No such file or directory\\n' >&2; exit 1")
    tap.check(result.returncode == 1 and json.loads(result.stdout or b"{}").get("stderr")
              == forged.decode(),
              "run --json: the forged line is the guest's stderr, not an error",
              describe(result))
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c", "echo own >&2; exit 127")
    tap.check(result.returncode == 127 and result.stderr == b"own\n",
              "a guest that exits 127 itself is passed through, not COMMAND_NOT_FOUND",
              describe(result))
    result = ctl("run", "--state", state_path, "--", "/bin/sh", "-c", "exit 126")
    tap.check(result.returncode == 126 and b"COMMAND_NOT_EXECUTABLE" not in result.stderr,
              "a guest that exits 126 itself is passed through", describe(result))


def test_run_stdin_streams(state_path):
    """run --stdin streams: the command answers the first line before the
    second is written (reading our stdin to its end first would block here
    until the timeout), and our end of file is the command's."""
    process = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, "run", "--state", state_path,
                                "--stdin", "--", "/bin/sh", "-c",
                                'read a; echo "got $a"; read b; echo "got $b"; cat; echo end'],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE)
    process.stdin.write(b"one\n")
    process.stdin.flush()
    ready, _, _ = select.select([process.stdout], [], [], 20)
    first = process.stdout.readline() if ready else b""
    process.stdin.write(b"two\nrest\n")
    process.stdin.close()
    rest = process.stdout.read()
    err = process.stderr.read()
    process.wait(timeout=30)
    tap.check(first == b"got one\n" and rest == b"got two\nrest\nend\n"
              and process.returncode == 0,
              "run --stdin streams our stdin as the command runs",
              f"first {first!r}, rest {rest!r}, exit {process.returncode}, stderr {err!r}")


def read_until(master, wanted, timeout=20):
    """What the terminal's master shows until @wanted appears (or EIO)."""
    shown = b""
    deadline = time.monotonic() + timeout
    while wanted not in shown and time.monotonic() < deadline:
        ready, _, _ = select.select([master], [], [], 0.5)
        if not ready:
            continue
        try:
            chunk = os.read(master, 4096)
        except OSError:  # EIO: sandboxctl is gone
            break
        if not chunk:
            break
        shown += chunk
    return shown


def test_shell(state_path):
    """shell relays our terminal: its size at the start, a window change
    (SIGWINCH) as a resize, our TERM, keys typed in raw mode (Ctrl-C reaches
    the command's terminal as a byte, not us as a signal), the exit status
    passed through, and our terminal's mode given back."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 21, 91, 0, 0))
    cooked = termios.tcgetattr(slave)
    process = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, "shell", "--state",
                                state_path, "--", "/bin/sh", "-c",
                                "stty size; echo \"term=$TERM\"; trap 'echo interrupted' INT; "
                                "read line; stty size; echo \"read=$line\"; exit 3"],
                               stdin=slave, stdout=slave, stderr=subprocess.PIPE,
                               env=dict(os.environ, TERM="vt220"))
    first = read_until(master, b"term=vt220")
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 33, 101, 0, 0))
    process.send_signal(signal.SIGWINCH)
    time.sleep(0.5)
    os.write(master, b"\x03typed\r")
    rest = read_until(master, b"read=typed")
    err = process.stderr.read()
    process.wait(timeout=30)
    restored = termios.tcgetattr(slave)
    os.close(slave)
    os.close(master)
    tap.check(b"21 91" in first and b"term=vt220" in first, "shell: our size and TERM",
              f"shown {first!r}, stderr {err!r}")
    tap.check(b"interrupted" in rest and b"33 101" in rest and b"read=typed" in rest
              and process.returncode == 3,
              "shell: Ctrl-C and keys reach the command, a window change resizes it, "
              "its status is ours", f"shown {rest!r}, exit {process.returncode}, stderr {err!r}")
    tap.check(restored == cooked, "shell: our terminal's mode is given back")
    result = ctl("run", "--state", state_path, "--tty", "--json", "--", "/bin/true")
    expect(result, 2, "run --tty refuses --json", stdout_has="--json")


def test_typed_limits(state_path):
    # An rlimit set through a typed --driver-option reaches the guest.
    result = ctl("run", "--state", state_path, "--driver-option", "max-open-files=48",
                 "--", "/bin/sh", "-c", "ulimit -n")
    tap.check(result.returncode == 0 and result.stdout.strip() == b"48",
              "--driver-option max-open-files=48 is the guest's RLIMIT_NOFILE", describe(result))


def wait_for(predicate, timeout=20):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return False


def test_busy_and_stop(state_path, session_id):
    result = ctl("stop", "--state", state_path)
    expect(result, 0, "stop of an idle session resumes and stops it", stdout_has="not running")

    holder = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, "run", "--state", state_path,
                               "/usr/bin/sleep", "60"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    held = wait_for(lambda: (list_sessions().get(session_id) or {}).get("lease") is not None)
    lease = (list_sessions().get(session_id) or {}).get("lease") or {}
    tap.check(held and lease.get("pid") == holder.pid and lease.get("alive") is True,
              "list shows the lease owner's pid and that it is alive", json.dumps(lease))
    result = ctl("run", "--state", state_path, "/usr/bin/true")
    expect(result, EXIT_BUSY, "a second run while the lease is held is SANDBOX_BUSY",
           stderr_has="sandboxctl: SANDBOX_BUSY: Sandbox session already has an owner")
    tap.check(f"pid {holder.pid}".encode() in result.stderr and b"sandboxctl stop" in result.stderr,
              "…naming the holder's pid and that `sandboxctl stop` asks it to end",
              describe(result))
    started = time.monotonic()
    result = ctl("stop", "--session", session_id)
    expect(result, 0, "stop asks the running sandboxctl to stop", stdout_has=str(holder.pid))
    try:
        _, holder_err = holder.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder_err = b""
    tap.check(holder.returncode == EXIT_INTERRUPTED and time.monotonic() - started < 15,
              "the stopped run exits 130 long before its sleep ends",
              f"exit {holder.returncode}, stderr {holder_err!r}")
    result = ctl("run", "--state", state_path, "/usr/bin/true")
    expect(result, 0, "the lease was released: the session runs again")

    holder = subprocess.Popen([SANDBOXCTL, "--state-dir", state_dir, "run", "--state", state_path,
                               "/usr/bin/sleep", "60"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    wait_for(lambda: (list_sessions().get(session_id) or {}).get("lease") is not None)
    holder.send_signal(signal.SIGINT)
    try:
        holder.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        holder.kill()
    tap.check(holder.returncode == EXIT_INTERRUPTED
              and (list_sessions().get(session_id) or {}).get("lease") is None,
              "Ctrl-C kills the command and releases the lease", f"exit {holder.returncode}")


def test_stale_lease(state_path, session_id):
    dead = subprocess.Popen(["/bin/true"])
    dead.wait()
    sessions_dir = None
    for root, dirs, _ in os.walk(state_dir):
        if os.path.basename(root) == "sessions" and session_id in dirs:
            sessions_dir = root
    lease = os.path.join(sessions_dir or work, session_id, "lease")
    with open(lease, "w") as f:
        f.write(str(dead.pid))
    try:
        entry = list_sessions().get(session_id) or {}
        tap.check(entry.get("lease") == {"pid": dead.pid, "alive": False},
                  "list marks a lease whose owner is gone as not alive", json.dumps(entry))
        result = ctl("stop", "--state", state_path)
        expect(result, EXIT_BUSY, "stop refuses a stale lease and says how to recover",
               stderr_has="sandboxctl recover")
        result = ctl("run", "--state", state_path, "/usr/bin/true")
        expect(result, EXIT_BUSY, "run still refuses a stale lease (nothing is taken over "
               "silently) and says how to recover", stderr_has="sandboxctl recover")
        result = ctl("recover", "--state", state_path)
        expect(result, 0, "recover takes over a stale lease whose owner left no processes")
        tap.check(not os.path.exists(lease) and
                  (list_sessions().get(session_id) or {}).get("lease") is None,
                  "after recover the lease is released again", json.dumps(list_sessions().get(session_id)))
        result = ctl("run", "--state", state_path, "/usr/bin/true")
        expect(result, 0, "the recovered session runs commands again")
    finally:
        if os.path.exists(lease):
            os.unlink(lease)


def test_allow_list(state_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Upstream)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    origin = f"http://127.0.0.1:{server.server_address[1]}"
    secret = "Bearer cli-test-secret-0123"
    try:
        result = ctl("run", "--state", state_path, "--allow", origin,
                     "--header", "authorization=@SANDBOXCTL_TEST_TOKEN",
                     "/usr/bin/curl", "-sS", "--max-time", "10",
                     "--unix-socket", "/run/sandbox-network.sock", f"{origin}/x",
                     env={"SANDBOXCTL_TEST_TOKEN": secret}, timeout=60)
        tap.check(result.returncode == 0 and b"upstream saw a credential" in result.stdout
                  and secret in Upstream.seen,
                  "--allow with --header @ENVVAR: the upstream receives the credential",
                  describe(result))
        tap.check(secret.encode() not in result.stdout + result.stderr,
                  "the guest's output does not contain the credential", describe(result))

        curl = ["/usr/bin/curl", "-sS", "--max-time", "10", "--unix-socket",
                "/run/sandbox-network.sock"]
        result = ctl("run", "--state", state_path, "--allow", origin,
                     "--header", "authorization=@SANDBOXCTL_TEST_TOKEN", "--audit", "--",
                     "/bin/sh", "-c", " ".join(curl + [f"{origin}/audited?q=1", ";"] +
                                               curl + ["http://denied.invalid/"]),
                     env={"SANDBOXCTL_TEST_TOKEN": secret}, timeout=60)
        tap.check(result.returncode == 0
                  and f"sandboxctl: audit: GET 127.0.0.1:{server.server_address[1]}/audited?q=1: allowed".encode()
                  in result.stderr
                  and b"sandboxctl: audit: GET denied.invalid/: denied" in result.stderr
                  and secret.encode() not in result.stdout + result.stderr,
                  "run --audit prints each gateway decision, never the credential",
                  describe(result))
        result = ctl("run", "--state", state_path, "--allow", origin, "--audit", "--events",
                     "--", *curl, f"{origin}/streamed", timeout=60)
        events = events_of(result) if result.stdout else []
        audits = [event["audit"] for event in events if event.get("event") == "audit"]
        tap.check(result.returncode == 0 and len(audits) == 1
                  and audits[0].get("decision") == "allowed"
                  and audits[0].get("path") == "/streamed" and audits[0].get("status") == 200
                  and audits[0].get("method") == "GET"
                  and [event["event"] for event in events].index("audit")
                  < [event["event"] for event in events].index("exit"),
                  "run --audit --events streams an audit event before the exit event",
                  describe(result))
    finally:
        server.shutdown()
        server.server_close()


BWRAP_ARGV_LINE = re.compile(r"Sandbox-DEBUG: [0-9:.]+: (/\S*bwrap --.*)$", re.MULTILINE)


def test_verbose_bwrap_argv(state_path):
    """-v shows the lifecycle events and each bwrap command line, quoted so
    that a shell reads it back as the same argument list; never a header
    value. Drop log_command_line() in sandbox-bubblewrap-args.c and the
    first check fails; log at message level and the last one does."""
    secret = "Bearer verbose-test-secret-4567"
    command = ["/bin/sh", "-c", 'echo "two words" $HOME']
    network = ["--allow", "http://127.0.0.1:9", "--header", "authorization=@SANDBOXCTL_TEST_TOKEN"]
    result = ctl("-v", "run", "--state", state_path, *network, "--", *command,
                 env={"SANDBOXCTL_TEST_TOKEN": secret, "G_MESSAGES_DEBUG": ""}, timeout=60)
    stderr = result.stderr.decode(errors="replace")
    # The command's line, and after it the line of the sandbox started
    # ready for the next command (which has no command yet).
    argvs = [shlex.split(line) for line in BWRAP_ARGV_LINE.findall(stderr)]
    argv = next((a for a in argvs if a[-4:] == ["--", *command]), [])
    tap.check(result.returncode == 0 and b"two words /workspace" in result.stdout
              and "--unshare-all" in argv and argv[-4:] == ["--", *command],
              "-v logs the bwrap command line, shell-quoted", describe(result))
    tap.check("Resumed bubblewrap session" in stderr and "Stopped session" in stderr
              and "Started the network gateway" in stderr,
              "-v logs the lifecycle events", describe(result))
    tap.check(secret not in stderr and "authorization" in stderr,
              "-v logs the header's name, never its value", describe(result))

    result = ctl("run", "--state", state_path, *network, "--", *command,
                 env={"SANDBOXCTL_TEST_TOKEN": secret, "G_MESSAGES_DEBUG": ""}, timeout=60)
    tap.check(result.returncode == 0 and b"bwrap" not in result.stderr
              and b"Sandbox-" not in result.stderr and result.stderr == b"",
              "without -v no event and no command line is logged", describe(result))


# The cluster driver ------------------------------------------------------

def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def start_etcd():
    """One etcd member on free loopback ports and a fresh data directory;
    returns (process, client URL), or (None, reason)."""
    etcd = shutil.which("etcd") or ("/usr/bin/etcd" if os.path.exists("/usr/bin/etcd") else None)
    if etcd is None:
        return None, "etcd is not installed (Debian: etcd-server; ./dev deps installs it)"
    client, peer = f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}"
    log = open(os.path.join(work, "etcd.log"), "wb")
    process = subprocess.Popen([etcd, "--name", "test", "--data-dir", os.path.join(work, "etcd"),
                                "--listen-client-urls", client, "--advertise-client-urls", client,
                                "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
                                "--initial-cluster", f"test={peer}"],
                               stdout=log, stderr=subprocess.STDOUT)
    def answers():
        try:
            with socket.create_connection(("127.0.0.1", int(client.rsplit(":", 1)[1])), 0.2):
                return True
        except OSError:
            return process.poll() is not None
    if not wait_for(answers, timeout=20) or process.poll() is not None:
        process.kill()
        return None, f"etcd did not start (see {log.name})"
    return process, client


def cluster_ctl(host, endpoint, *args, **kwargs):
    """sandboxctl on one host of the cluster: its own state directory, the
    shared checkpoint store, a short lease TTL."""
    return ctl("--state-dir", os.path.join(work, "host-" + host), "--driver", "cluster",
               "--driver-option", "endpoints=" + endpoint, "--driver-option", "host-id=" + host,
               "--driver-option", "checkpoint-store=" + os.path.join(work, "checkpoints"),
               "--driver-option", "lease-ttl=3", *args, state=False, **kwargs)


def test_cluster():
    etcd, endpoint = start_etcd()
    if etcd is None:
        tap.skip("sandboxctl --driver cluster", endpoint)
        return
    try:
        test_cluster_commands(endpoint)
    finally:
        etcd.terminate()
        etcd.wait(timeout=20)
    result = cluster_ctl("a", endpoint, "list")
    expect(result, EXIT_UNAVAILABLE, "etcd down: the cluster driver is SANDBOX_UNAVAILABLE, "
           "no local-only fallback", stderr_has=endpoint)


def etcd_call(endpoint, path, request):
    """One call of etcd's HTTP/JSON gateway; keys and values are base64."""
    body = json.dumps(request).encode()
    with urllib.request.urlopen(urllib.request.Request(endpoint + path, data=body),
                                timeout=10) as reply:
        return json.loads(reply.read())


def etcd_b64(text):
    return base64.b64encode(text if isinstance(text, bytes) else text.encode()).decode()


def template_record(endpoint, key):
    reply = etcd_call(endpoint, "/v3/kv/range", {"key": etcd_b64("/libsandbox/templates/" + key)})
    kvs = reply.get("kvs", [])
    return base64.b64decode(kvs[0]["value"]) if kvs else None


def set_template_record(endpoint, key, value):
    etcd_call(endpoint, "/v3/kv/put", {"key": etcd_b64("/libsandbox/templates/" + key),
                                       "value": etcd_b64(value)})


def host_templates(host, endpoint):
    result = cluster_ctl(host, endpoint, "templates", "--json")
    return [t.get("templateKey") for t in json.loads(result.stdout or b"{}").get("templates", [])]


def test_cluster_template_fetch(endpoint, key):
    """A host that never prewarmed creates from a published template; one whose
    etcd record names another template's files is refused, nothing kept."""
    other_tree = os.path.join(work, "cluster-other")
    write_file("cluster-other/other.txt", "other\n")
    result = cluster_ctl("a", endpoint, "prewarm", "--template", "cluster-other", "--dir", other_tree)
    other_key = result.stdout.decode().strip()
    original = template_record(endpoint, key)
    other = json.loads(template_record(endpoint, other_key) or b"{}")
    tap.check(result.returncode == 0 and original is not None and other.get("manifest"),
              "prewarm publishes each template's record to etcd", describe(result))

    forged = json.dumps({"name": "cluster-cli", "manifest": other.get("manifest")})
    set_template_record(endpoint, key, forged)
    result = cluster_ctl("c", endpoint, "create", "--template", key)
    expect(result, EXIT_UNAVAILABLE, "a template record naming another template's files is "
           "SANDBOX_UNAVAILABLE", stderr_has="is another template")
    tap.check(host_templates("c", endpoint) == [],
              "the host that fetched the forged template keeps none of it",
              json.dumps(host_templates("c", endpoint)))
    set_template_record(endpoint, key, original)
    result = cluster_ctl("c", endpoint, "create", "--template", key)
    created = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and created.get("templateKey") == key
              and host_templates("c", endpoint) == [key],
              "a host that never prewarmed creates from the published template", describe(result))
    result = cluster_ctl("c", endpoint, "create", "--template", "f" * 64)
    expect(result, EXIT_NOT_FOUND, "a template never prewarmed anywhere is SANDBOX_NOT_FOUND",
           stderr_has="nor published")


def test_cluster_commands(endpoint):
    tree = os.path.join(work, "cluster-tree")
    write_file("cluster-tree/hello.txt", "hello\n")
    os.makedirs(os.path.join(tree, "empty"))
    write_file("cluster-tree/run.sh", "#!/bin/sh\necho ran\n", mode=0o755)
    os.symlink("hello.txt", os.path.join(tree, "link"))
    result = cluster_ctl("a", endpoint, "prewarm", "--template", "cluster-cli", "--dir", tree)
    key = result.stdout.decode().strip()
    tap.check(result.returncode == 0 and is_key(key), "cluster prewarm on host a prints a key",
              describe(result))
    tap.check(host_templates("b", endpoint) == [], "host b has not stored the template")

    state_path = os.path.join(work, "cluster-state.json")
    result = cluster_ctl("a", endpoint, "create", "--template", key, "--output", state_path)
    created = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0 and created.get("backend") == "cluster"
              and created.get("templateKey") == key and created.get("sessionId"),
              "cluster create prints {backend: cluster, sessionId, templateKey}", describe(result))
    session_id = created.get("sessionId", "")

    result = cluster_ctl("a", endpoint, "write", "--state", state_path, "notes/a.txt",
                         "--text", "written on a")
    expect(result, 0, "cluster write on host a")
    result = cluster_ctl("b", endpoint, "read", "--state", state_path, "notes/a.txt")
    tap.check(result.returncode == 0 and result.stdout == b"written on a",
              "host b reads what host a wrote (resumed from a's checkpoint)", describe(result))
    tap.check(host_templates("b", endpoint) == [key],
              "host b fetched the template from the cluster to resume the session")
    result = cluster_ctl("b", endpoint, "run", "--state", state_path, "/bin/sh", "-c",
                         "cat hello.txt notes/a.txt; ./run.sh; cat link; test -d empty && echo empty;"
                         " echo ' and run on b' >> notes/a.txt")
    expect(result, 0, "cluster run on host b sees the template (an executable, a link, an empty "
           "directory) and a's file",
           stdout_has="hello\nwritten onran\nhello\nempty\n".replace("written on", "written on a"))
    # The bubblewrap backend underneath takes its properties as bubblewrap.NAME.
    result = cluster_ctl("b", endpoint, "--driver-option", "bubblewrap.max-open-files=48", "run",
                         "--state", state_path, "/bin/sh", "-c", "ulimit -n")
    expect(result, 0, "--driver-option bubblewrap.max-open-files=48 reaches the guest through "
           "the cluster", stdout_has="48\n")
    result = cluster_ctl("b", endpoint, "--driver-option", "bubblewrap.name=other", "list")
    expect(result, EXIT_INVALID, "a bubblewrap.NAME the cluster sets itself is SANDBOX_INVALID",
           stderr_has="bubblewrap.name")
    result = cluster_ctl("b", endpoint, "--driver-option", "bubblewrap.no-such=1", "list")
    expect(result, EXIT_INVALID, "an unknown bubblewrap.NAME is SANDBOX_INVALID",
           stderr_has="bubblewrap.no-such")
    result = cluster_ctl("b", endpoint, "prewarm", "--template", "cluster-cli", "--dir", tree,
                         "--json")
    tap.check(json.loads(result.stdout or b"{}").get("reused") is True,
              "prewarming on host b what it fetched reuses it: the same key", describe(result))
    result = cluster_ctl("a", endpoint, "read", "--state", state_path, "notes/a.txt")
    tap.check(result.returncode == 0 and result.stdout == b"written on a and run on b\n",
              "host a reads what b's command wrote", describe(result))
    result = cluster_ctl("a", endpoint, "rm", "--state", state_path, "notes")
    expect(result, 0, "cluster rm on host a")
    result = cluster_ctl("b", endpoint, "read", "--state", state_path, "notes/a.txt")
    expect(result, EXIT_HOST_IO, "host b no longer finds the removed file",
           stderr_has="G_IO_ERROR_NOT_FOUND")

    result = cluster_ctl("b", endpoint, "list", "--json")
    listed = json.loads(result.stdout or b"{}")
    tap.check(result.returncode == 0
              and session_id in [s.get("sessionId") for s in listed.get("sessions", [])]
              and key in [t.get("templateKey") for t in listed.get("templates", [])],
              "cluster list --json shows the session and the template", describe(result))
    result = cluster_ctl("b", endpoint, "templates")
    expect(result, 0, "cluster templates lists the template", stdout_has=key)

    holder = subprocess.Popen([SANDBOXCTL, "--state-dir", os.path.join(work, "host-a"),
                               "--driver", "cluster", "--driver-option", "endpoints=" + endpoint,
                               "--driver-option", "host-id=a", "--driver-option",
                               "checkpoint-store=" + os.path.join(work, "checkpoints"),
                               "--driver-option", "lease-ttl=3",
                               "run", "--state", state_path, "--", "/bin/sh", "-c",
                               "echo started; exec /usr/bin/sleep 60"],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # Only once a's command runs: a read from b polling before that could
    # claim the session first and make a's run the busy one.
    started = holder.stdout.readline() == b"started\n"
    result = cluster_ctl("b", endpoint, "read", "--state", state_path, "hello.txt")
    tap.check(started and result.returncode == EXIT_BUSY,
              "while host a runs a command, host b is SANDBOX_BUSY",
              describe(result) if started else f"a's run did not start: {holder.communicate()!r}")
    result = cluster_ctl("a", endpoint, "stop", "--state", state_path)
    expect(result, 0, "cluster stop on the owner's host stops its running sandboxctl",
           stdout_has=str(holder.pid))
    try:
        holder.communicate(timeout=20)
    except subprocess.TimeoutExpired:
        holder.kill()
        holder.communicate()
    tap.check(holder.returncode == EXIT_INTERRUPTED, "the stopped run exits 130",
              f"exit {holder.returncode}")
    result = cluster_ctl("b", endpoint, "run", "--state", state_path, "/usr/bin/true")
    expect(result, 0, "the owner released it: host b runs in it")
    result = cluster_ctl("b", endpoint, "recover", "--state", state_path)
    expect(result, 0, "cluster recover of a free session", stdout_has=session_id)

    result = cluster_ctl("b", endpoint, "delete", "--state", state_path)
    expect(result, 0, "cluster delete on host b", stdout_has="deleted")
    result = cluster_ctl("a", endpoint, "read", "--state", state_path, "hello.txt")
    expect(result, EXIT_NOT_FOUND, "host a: a deleted session is SANDBOX_NOT_FOUND")
    result = cluster_ctl("a", endpoint, "delete", "--state", state_path)
    expect(result, EXIT_NOT_FOUND, "deleting it again from host a is SANDBOX_NOT_FOUND")
    test_cluster_template_fetch(endpoint, key)


def main():
    try:
        if SUITE == "quick":
            test_usage()
            test_drivers()
            test_backend_errors()
            test_prewarm_memory()
            test_run_memory()
            test_run_streams_live()
            test_run_usage()
            test_session_options()
            test_snapshot_usage()
            test_network_options()
            test_list_errors()
            test_store_memory()
            test_global_options()
            test_typed_driver_options()
            test_run_events()
        elif SUITE == "cluster":
            test_cluster()
        elif SUITE == "background":
            # Only the background commands, for working on them.
            os.makedirs(os.path.join(work, "tree"))
            write_file("tree/hello.txt", "hello\n")
            result = ctl("prewarm", "--template", "bg-test", "--dir", os.path.join(work, "tree"))
            test_background(result.stdout.decode().strip())
        else:
            test_bubblewrap()
            test_runtime_bubblewrap()
            test_prewarm_progress()
            test_create_progress()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return tap.finish()


if __name__ == "__main__":
    sys.exit(main())
