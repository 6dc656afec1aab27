#!/usr/bin/python3
"""No include runs from the core up into the gateway, the drivers or any
other layer built on it; the drivers build on the core's public headers
only (the memory and cluster drivers also on the helpers they are given). Reports TAP.

    test-layering.py SRCDIR

Every `#include` of libsandbox-core/*.c and *.h is read. One that names a
header of a layer above the core (gateway/, drivers/, conformance/, tools/,
lib/ — lib/sandbox.h is the umbrella, which includes the gateway's header) or
a path into one of them fails. A quoted include must be a core header, a
header the core's build generates, or config.h.

A driver (drivers/*/) includes no private header of the library (the
core's or the gateway's) but the ones DRIVER_HELPERS grants it, and its
meson.build does not define SANDBOX_COMPILATION (which lets a file include
a public core header by itself). No driver includes another driver's header, nor names another
driver's directory in its meson.build: a driver built on another (cluster on
bubblewrap) reaches it through the public backend API only. Nor does any file
of the layers that build on the public API alone (APPLICATION_LAYERS) include
a private header of the library: private headers are never installed, and
this check, not a guard macro in each of them, is what keeps the tree's own
programs off them.

The check proves it can fail: it plants each kind of upward include in a
scratch copy of the core and expects a report. To see the first case fail on
the tree, add `#include "sandbox-gateway.h"` (or `#include <sandbox.h>`) to
any file of libsandbox-core/.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import os
import re
import shutil
import sys
import tempfile

import sandbox_tap

SRCDIR = sys.argv[1]
CORE = "libsandbox-core"
UPPER_LAYERS = ["gateway", "drivers", "conformance", "tools", "lib"]
# What the core's build generates (libsandbox-core/meson.build) and the
# project's config.h.
GENERATED = {"config.h", "sandbox-enums.h", "sandbox-version.h"}

# The private core headers a driver may include: the memory driver links
# sandbox_context_thread_dep (libsandbox-core/meson.build) for its worker and
# sandbox_json_strict_dep for its scripts' base64; the cluster driver both
# too (its etcd I/O and lease threads; etcd's replies are untrusted JSON).
DRIVER_HELPERS = {
    "memory": {"sandbox-context-thread-private.h", "sandbox-json-private.h"},
    "cluster": {"sandbox-context-thread-private.h", "sandbox-json-private.h"},
}

# What builds on libsandbox-1's public API alone, as an application does.
APPLICATION_LAYERS = ["tools", "conformance", "examples", "bench"]

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')


def upper_headers(srcdir):
    """Maps each header name of the layers above the core to where it is."""
    found = {}
    for layer in UPPER_LAYERS:
        for root, _dirs, files in os.walk(os.path.join(srcdir, layer)):
            for name in files:
                if name.endswith(".h"):
                    found.setdefault(name, os.path.relpath(os.path.join(root, name), srcdir))
    return found


def includes(directory, recursive=False):
    """(file name, line number, quote, target) for every #include of the
    C files of a directory (and, if recursive, of those below it, named by
    their path from it)."""
    if recursive:
        names = sorted(os.path.relpath(os.path.join(root, name), directory)
                       for root, _dirs, files in os.walk(directory) for name in files)
    else:
        names = sorted(os.listdir(directory))
    for name in names:
        if not name.endswith((".c", ".h")):
            continue
        with open(os.path.join(directory, name), encoding="utf-8") as f:
            for number, line in enumerate(f, 1):
                match = INCLUDE.match(line)
                if match:
                    yield (name, number) + match.groups()


# The layers built into libsandbox-1 itself, whose private headers nothing
# built on the library includes.
LIBRARY_LAYERS = [CORE, "gateway"]


def library_private_headers(srcdir):
    """Maps the name of each private header of LIBRARY_LAYERS to its layer."""
    return {name: layer for layer in LIBRARY_LAYERS
            for name in os.listdir(os.path.join(srcdir, layer)) if name.endswith("-private.h")}


def application_findings(srcdir, root):
    """Every private core header a file of APPLICATION_LAYERS (below root)
    includes."""
    private = library_private_headers(srcdir)
    result = []
    for layer in APPLICATION_LAYERS:
        directory = os.path.join(root, layer)
        if not os.path.isdir(directory):
            continue
        for name, number, _quote, target in includes(directory, recursive=True):
            base = os.path.basename(target)
            if base in private:
                result.append("%s/%s:%d: includes %s, private to %s"
                              % (layer, name, number, target, private[base]))
    return result


def planted_in_application(srcdir, layer, line):
    """The application findings on a scratch copy of `layer` with `line`
    added to a new C file of it."""
    with tempfile.TemporaryDirectory(prefix="sandbox-layering-") as work:
        shutil.copytree(os.path.join(srcdir, layer), os.path.join(work, layer))
        with open(os.path.join(work, layer, "planted.c"), "w", encoding="utf-8") as f:
            f.write(line + "\n")
        return application_findings(srcdir, work)


def findings(srcdir, core_dir):
    """Every include of the core that runs upward, as 'file:line: why'."""
    upper = upper_headers(srcdir)
    core_files = set(os.listdir(core_dir))
    result = []
    for name, number, quote, target in includes(core_dir):
        where = "%s/%s:%d" % (CORE, name, number)
        parts = os.path.normpath(target).split(os.sep)
        base = parts[-1]
        if parts[0] == ".." or parts[0] in UPPER_LAYERS:
            result.append("%s: includes %s, a path out of the core" % (where, target))
        elif base in upper and base not in core_files:
            result.append("%s: includes %s (%s), a layer above the core"
                          % (where, target, upper[base]))
        elif quote == '"' and target not in core_files and target not in GENERATED:
            result.append("%s: includes \"%s\", which is no core header" % (where, target))
    return result


def driver_headers(drivers_dir):
    """Maps each driver to the names of the headers of its directory tree."""
    headers = {}
    for driver in sorted(os.listdir(drivers_dir)):
        directory = os.path.join(drivers_dir, driver)
        if os.path.isdir(directory):
            headers[driver] = {name for _root, _dirs, files in os.walk(directory)
                               for name in files if name.endswith(".h")}
    return headers


def driver_findings(srcdir, drivers_dir):
    """Every private core header a driver includes without being given it,
    and every way one driver reaches into another."""
    private = library_private_headers(srcdir)
    headers = driver_headers(drivers_dir)
    result = []
    for driver in headers:
        directory = os.path.join(drivers_dir, driver)
        allowed = DRIVER_HELPERS.get(driver, set())
        others = {name: other for other in headers if other != driver
                  for name in headers[other] - headers[driver]}
        for name, number, _quote, target in includes(directory):
            base = os.path.basename(target)
            if base in private and base not in allowed:
                result.append("drivers/%s/%s:%d: includes %s, private to %s"
                              % (driver, name, number, target, private[base]))
            elif base in others:
                result.append("drivers/%s/%s:%d: includes %s, a header of drivers/%s"
                              % (driver, name, number, target, others[base]))
        build_file = os.path.join(directory, "meson.build")
        if os.path.exists(build_file):
            with open(build_file, encoding="utf-8") as f:
                build = f.read()
            if "-DSANDBOX_COMPILATION" in build:
                result.append("drivers/%s/meson.build: builds with -DSANDBOX_COMPILATION"
                              % driver)
            for other in headers:
                if other != driver and re.search(r"['\"]\.\./%s['/\"]" % re.escape(other), build):
                    result.append("drivers/%s/meson.build: names drivers/%s" % (driver, other))
    return result


def planted_in_driver(srcdir, driver, into_build_file, line):
    """The driver findings on a scratch copy of drivers/ with `line` added to
    the meson.build or the first C file of `driver`."""
    with tempfile.TemporaryDirectory(prefix="sandbox-layering-") as work:
        drivers_copy = os.path.join(work, "drivers")
        shutil.copytree(os.path.join(srcdir, "drivers"), drivers_copy)
        directory = os.path.join(drivers_copy, driver)
        if into_build_file:
            target = os.path.join(directory, "meson.build")
        else:
            target = os.path.join(directory, sorted(
                name for name in os.listdir(directory) if name.endswith(".c"))[0])
        with open(target, "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return driver_findings(srcdir, drivers_copy)


def planted(srcdir, line):
    """The findings on a scratch copy of the core with `line` added to one file."""
    with tempfile.TemporaryDirectory(prefix="sandbox-layering-") as work:
        core_copy = os.path.join(work, CORE)
        shutil.copytree(os.path.join(srcdir, CORE), core_copy)
        with open(os.path.join(core_copy, "sandbox-path.c"), "a", encoding="utf-8") as f:
            f.write(line + "\n")
        return findings(srcdir, core_copy)


# The driver kit: what only drivers include, through lib/sandbox-backend-driver.h.
KIT_HEADERS = ["sandbox-workspace.h", "sandbox-session-gate.h", "sandbox-backend-base.h",
               "sandbox-backend-transfer.h"]


def kit_findings(srcdir, umbrella_text):
    """Every way the application umbrella reaches the driver kit, and every
    kit header an application could include by itself."""
    result = ["lib/sandbox.h: includes %s, a driver-kit header" % header
              for header in KIT_HEADERS if '"%s"' % header in umbrella_text]
    for header in KIT_HEADERS:
        with open(os.path.join(srcdir, CORE, header), encoding="utf-8") as f:
            if "!defined(SANDBOX_DRIVER_INSIDE)" not in f.read():
                result.append("%s/%s: not guarded for <sandbox-backend-driver.h>" % (CORE, header))
    return result


def main():
    cases = []
    with open(os.path.join(SRCDIR, "lib", "sandbox.h"), encoding="utf-8") as f:
        umbrella = f.read()
    kit = kit_findings(SRCDIR, umbrella)
    cases.append(("<sandbox.h> leaves the driver kit to <sandbox-backend-driver.h>", not kit, kit))
    planted_kit = kit_findings(SRCDIR, umbrella + '# include "sandbox-workspace.h"\n')
    cases.append(("planted kit header in <sandbox.h> is reported",
                  any("sandbox-workspace.h" in finding for finding in planted_kit), planted_kit))
    tree = findings(SRCDIR, os.path.join(SRCDIR, CORE))
    cases.append(("no core file includes a header of a layer above it", not tree, tree))
    # (what is planted, the line, what the report must say)
    plants = [
        ("the gateway's public header", '#include "sandbox-gateway.h"', "a layer above"),
        ("a gateway private header", '#include "sandbox-gateway-loop-private.h"',
         "a layer above"),
        ("a driver's header", '#include "sandbox-memory-store.h"', "a layer above"),
        ("the umbrella <sandbox.h>", "#include <sandbox.h>", "a layer above"),
        ("a relative path into the gateway", '#include "../gateway/sandbox-gateway.h"',
         "a path out of the core"),
        ("an unknown quoted header", '#include "sandbox-nowhere.h"', "no core header"),
    ]
    for description, line, says in plants:
        found = planted(SRCDIR, line)
        cases.append(("planted %s is reported" % description,
                      any(finding.startswith(CORE + "/sandbox-path.c:") and says in finding
                          for finding in found), found))
    drivers = driver_findings(SRCDIR, os.path.join(SRCDIR, "drivers"))
    cases.append(("the drivers include no private core header they are not given, "
                  "nor each other's", not drivers, drivers))
    driver_plants = [
        ("memory", "a core private header", False, '#include "sandbox-digest-private.h"',
         "private to libsandbox-core"),
        ("cluster", "a gateway private header", False,
         '#include "sandbox-gateway-loop-private.h"', "private to gateway"),
        ("bubblewrap", "the memory driver's helper", False,
         '#include "sandbox-context-thread-private.h"', "private to libsandbox-core"),
        ("memory", "-DSANDBOX_COMPILATION", True, "planted = ['-DSANDBOX_COMPILATION']",
         "builds with -DSANDBOX_COMPILATION"),
        ("cluster", "a bubblewrap private header", False,
         '#include "sandbox-bubblewrap-store-private.h"', "a header of drivers/bubblewrap"),
        ("memory", "a cluster header", False, '#include "sandbox-cluster-etcd-private.h"',
         "a header of drivers/cluster"),
        ("cluster", "bubblewrap's directory", True,
         "planted = include_directories('../bubblewrap')", "names drivers/bubblewrap"),
    ]
    for driver, description, into_build_file, line, says in driver_plants:
        found = planted_in_driver(SRCDIR, driver, into_build_file, line)
        cases.append(("planted %s in drivers/%s is reported" % (description, driver),
                      any(finding.startswith("drivers/%s/" % driver) and says in finding
                          for finding in found), found))
    applications = application_findings(SRCDIR, SRCDIR)
    cases.append(("no file of %s includes a private core header" % ", ".join(APPLICATION_LAYERS),
                  not applications, applications))
    for layer, header, owner in [("tools", "sandbox-workspace-private.h", CORE),
                                 ("conformance", "sandbox-gateway-http-private.h", "gateway")]:
        found = planted_in_application(SRCDIR, layer, '#include "%s"' % header)
        cases.append(("planted %s private header in %s/ is reported" % (owner, layer),
                      any(finding.startswith(layer + "/planted.c:") and "private to " + owner
                          in finding for finding in found), found))
    return sandbox_tap.report(cases)


if __name__ == "__main__":
    sys.exit(main())
