#!/usr/bin/python3
"""No two files of libsandbox-core call each other, nor do longer rings of
them: the core's calls between files run one way. Reports TAP.

    test-call-cycles.py NM ARCHIVE

ARCHIVE is libsandbox-internal.a (lib/meson.build), which holds the object
of every source of libsandbox-1 and of the static helpers it links whole.
`nm` lists, for each object, the global symbols it defines (T, D, B, R …)
and the ones it uses undefined (U). A file uses another when it has a U for
a symbol the other defines. A pair of core files each using the other is a
circle: one of them must give the other what it needs (a lower file both
use, a table of functions, a value passed in) instead of calling back. So
is a ring of three or more (a uses b uses c uses a), reported as the set of
files that reach each other.

The check proves it can fail: made-up listings with a pair and with a ring
must be reported, and one whose calls run one way must not.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import re
import subprocess
import sys

import sandbox_tap

# An object of the core in the archive: meson names it after its source path,
# e.g. `.._libsandbox-core_sandbox-workspace.c.o`, or plainly
# `sandbox-json.c.o` for the static helpers' objects.
CORE_OBJECT = re.compile(r"^(?:.*_libsandbox-core_)?(sandbox-[A-Za-z0-9-]+\.c)\.o$")
GATEWAY_OBJECT = re.compile(r"_gateway_")


def parse(listing):
    """Maps each core source file to (defined symbols, used symbols), from
    `nm` output of an archive."""
    files = {}
    current = None
    for line in listing.splitlines():
        line = line.rstrip()
        if not line:
            continue
        if line.endswith(":"):
            member = line[:-1]
            match = CORE_OBJECT.match(member)
            current = None
            if match and not GATEWAY_OBJECT.search(member):
                current = files.setdefault(match.group(1), (set(), set()))
            continue
        if current is None:
            continue
        fields = line.split()
        if len(fields) == 2 and fields[0] == "U":
            current[1].add(fields[1])
        elif len(fields) == 3 and fields[1] in "TDBRGSVWC" and fields[1].isupper():
            current[0].add(fields[2])
    return files


def uses(files):
    """Maps (user, used) file pairs to the symbols the user takes from the
    used."""
    owner = {}
    for name, (defined, _used) in files.items():
        for symbol in defined:
            owner.setdefault(symbol, name)
    result = {}
    for name, (_defined, used) in files.items():
        for symbol in used:
            other = owner.get(symbol)
            if other is not None and other != name:
                result.setdefault((name, other), set()).add(symbol)
    return result


def circles(files):
    """Every pair of core files that use each other, as report lines."""
    edges = uses(files)
    found = []
    for (a, b), symbols in sorted(edges.items()):
        if a < b and (b, a) in edges:
            found.append("%s uses %s; %s uses %s"
                         % (a, ", ".join(sorted(symbols)),
                            b, ", ".join(sorted(edges[(b, a)]))))
    return found


def rings(files):
    """Every set of two or more core files that reach each other through
    their uses (a strongly connected component), as report lines."""
    edges = uses(files)
    graph = {}
    for user, used in edges:
        graph.setdefault(user, set()).add(used)
    index, low, stack, on_stack, found = {}, {}, [], set(), []

    def visit(name):
        # Tarjan's algorithm; the core is a few dozen files deep at most.
        index[name] = low[name] = len(index)
        stack.append(name)
        on_stack.add(name)
        for other in sorted(graph.get(name, ())):
            if other not in index:
                visit(other)
                low[name] = min(low[name], low[other])
            elif other in on_stack:
                low[name] = min(low[name], index[other])
        if low[name] == index[name]:
            ring = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                ring.append(member)
                if member == name:
                    break
            if len(ring) > 1:
                found.append("ring of %s: %s" % (", ".join(sorted(ring)), "; ".join(
                    "%s uses %s" % (a, b) for (a, b) in sorted(edges)
                    if a in ring and b in ring)))

    for name in sorted(files):
        if name not in index:
            visit(name)
    return found


PLANTED_RING = """
.._libsandbox-core_sandbox-a.c.o:
0000000000000000 T sandbox_a
                 U sandbox_b

.._libsandbox-core_sandbox-b.c.o:
0000000000000000 T sandbox_b
                 U sandbox_c

.._libsandbox-core_sandbox-c.c.o:
0000000000000000 T sandbox_c
                 U sandbox_a
"""

PLANTED = """
.._libsandbox-core_sandbox-up.c.o:
0000000000000000 T sandbox_up
                 U sandbox_down
                 U g_free

.._libsandbox-core_sandbox-down.c.o:
0000000000000000 T sandbox_down
0000000000000010 t helper
                 U sandbox_up

.._gateway_sandbox-gateway-x.c.o:
0000000000000000 T sandbox_gateway_x
                 U sandbox_up
"""


def main():
    nm, archive = sys.argv[1], sys.argv[2]
    listing = subprocess.run([nm, archive], check=True, capture_output=True, text=True).stdout
    files = parse(listing)
    cases = []
    cases.append(("the archive holds the core's objects",
                  "sandbox-workspace.c" in files and "sandbox-handle.c" in files,
                  sorted(files)))
    tree = circles(files)
    cases.append(("no two files of libsandbox-core call each other", not tree, tree))
    tree_rings = rings(files)
    cases.append(("no ring of libsandbox-core files calls round", not tree_rings, tree_rings))
    planted = circles(parse(PLANTED))
    cases.append(("a planted circle is reported",
                  len(planted) == 1 and planted[0].startswith("sandbox-down.c uses sandbox_up"),
                  planted))
    one_way = circles(parse(PLANTED.replace("U sandbox_up\n\n", "U g_free\n\n", 1)))
    cases.append(("calls one way are no circle", not one_way, one_way))
    ring = rings(parse(PLANTED_RING))
    cases.append(("a planted ring of three is reported",
                  len(ring) == 1
                  and ring[0].startswith("ring of sandbox-a.c, sandbox-b.c, sandbox-c.c:")
                  and not circles(parse(PLANTED_RING)), ring))
    one_way = rings(parse(PLANTED_RING.replace("U sandbox_a", "U g_free")))
    cases.append(("a chain one way is no ring", not one_way, one_way))
    return sandbox_tap.report(cases)


if __name__ == "__main__":
    sys.exit(main())
