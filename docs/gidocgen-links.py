#!/usr/bin/python3
# Turns the gtk-doc style references of the doc comments (`#SandboxSession`,
# `#SandboxBackend:state-dir`, `#SandboxHandle::output`, `sandbox_backend_new()`)
# into gi-docgen links (`[class@Sandbox.Session]`, …), using the GIR to know
# what each name is: gi-docgen renders the old forms as code, not as links.
#
#   gidocgen-links.py --gir build/introspection/Sandbox-1.gir \
#       [--gir build/introspection/SandboxConformance-1.gir] [--check] FILE…
#
# Only the text of `/** … */` comments changes, never code, code spans or
# code blocks. A name the GIRs do not know (a private function, a macro) is
# left as it is. With --check nothing is written: the references that would
# change are listed and the exit status is 1 if there is any (the docs check
# runs it so that a new comment in the old style is caught).
#
# SPDX-License-Identifier: LGPL-2.1-or-later

import argparse
import re
import sys
import xml.etree.ElementTree as ET

CORE = '{http://www.gtk.org/introspection/core/1.0}'
C = '{http://www.gtk.org/introspection/c/1.0}'
GLIB = '{http://www.gtk.org/introspection/glib/1.0}'

TYPE_KINDS = {'class': 'class', 'interface': 'iface', 'record': 'struct',
              'enumeration': 'enum', 'bitfield': 'flags', 'callback': 'callback',
              'alias': 'alias', 'union': 'union'}
CALLABLE_KINDS = {'method': 'method', 'constructor': 'ctor', 'function': 'func'}


class Links:
    """What each C name of the GIRs is, as a gi-docgen link."""

    def __init__(self):
        self.types = {}        # SandboxSession → class@Sandbox.Session
        self.members = {}      # (SandboxSession, ':', state) → property@…
        self.functions = {}    # sandbox_session_get_id → method@Sandbox.Session.get_id

    def load(self, path):
        namespace = ET.parse(path).getroot().find(CORE + 'namespace')
        ns = namespace.get('name')
        for element in namespace:
            tag = element.tag[len(CORE):] if element.tag.startswith(CORE) else None
            if tag == 'function' and not element.get('moved-to'):
                # A moved-to function is the same symbol as a type's function,
                # and gi-docgen links it only there.
                self.add_function(element, 'func@%s.%s' % (ns, element.get('name')))
            elif tag in TYPE_KINDS:
                self.add_type(ns, tag, element)

    def add_type(self, ns, tag, element):
        c_type = element.get(C + 'type') or element.get(GLIB + 'type-name')
        name = '%s.%s' % (ns, element.get('name'))
        kind = TYPE_KINDS[tag]
        if tag == 'enumeration' and element.get(GLIB + 'error-domain'):
            kind = 'error'
        if c_type:
            self.types[c_type] = '%s@%s' % (kind, name)
        for child in element:
            child_tag = child.tag.split('}')[1]
            if child_tag in CALLABLE_KINDS:
                self.add_function(child, '%s@%s.%s' % (CALLABLE_KINDS[child_tag], name, child.get('name')))
            elif child_tag == 'property' and c_type:
                self.members[(c_type, ':', child.get('name'))] = 'property@%s:%s' % (name, child.get('name'))
            elif child_tag == 'signal' and c_type:
                self.members[(c_type, '::', child.get('name'))] = 'signal@%s::%s' % (name, child.get('name'))

    def add_function(self, element, link):
        identifier = element.get(C + 'identifier')
        if identifier:
            self.functions[identifier] = link


# The forms gi-docgen's own preprocessor (gidocgen/mdext.py) recognises.
MEMBER_RE = re.compile(r'(^|\W)#([A-Z][A-Za-z0-9]+)(::?)([a-z0-9_-]+)\b')
TYPE_RE = re.compile(r'(^|\W)#([A-Z][A-Za-z0-9]+)\b')
FUNCTION_RE = re.compile(r'(^|[^\w\[@.])([a-z][a-z0-9_]*)\(\)')
CODE_SPAN_RE = re.compile(r'(`[^`]*`)')


def convert_text(text, links, found):
    """One line's prose outside code spans."""
    def member(m):
        link = links.members.get((m.group(2), m.group(3), m.group(4).replace('_', '-')))
        if link is None:
            return m.group(0)
        found.append(m.group(0).strip())
        return '%s[%s]' % (m.group(1), link)

    def type_(m):
        link = links.types.get(m.group(2))
        if link is None:
            return m.group(0)
        found.append(m.group(0).strip())
        return '%s[%s]' % (m.group(1), link)

    def function(m):
        link = links.functions.get(m.group(2))
        if link is None:
            return m.group(0)
        found.append(m.group(0).strip())
        return '%s[%s]' % (m.group(1), link)

    text = MEMBER_RE.sub(member, text)
    text = TYPE_RE.sub(type_, text)
    return FUNCTION_RE.sub(function, text)


def convert_line(line, links, found):
    parts = CODE_SPAN_RE.split(line)
    return ''.join(part if part.startswith('`') and part.endswith('`') and len(part) > 1
                   else convert_text(part, links, found) for part in parts)


def convert_comment(comment, links, found):
    lines = comment.split('\n')
    in_code = False
    for i, line in enumerate(lines):
        prose = re.sub(r'^\s*/?\*+\s?', '', line).strip()
        if prose.startswith('```') or prose.startswith('|[') or prose.startswith(']|'):
            if prose.startswith('```'):
                in_code = not in_code
            else:
                in_code = prose.startswith('|[')
            continue
        if not in_code:
            lines[i] = convert_line(line, links, found)
    return '\n'.join(lines)


DOC_COMMENT_RE = re.compile(r'/\*\*(?!/)(?:[^*]|\*(?!/))*\*/')


def convert_source(source, links, found):
    return DOC_COMMENT_RE.sub(lambda m: convert_comment(m.group(0), links, found), source)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument('--gir', action='append', required=True)
    parser.add_argument('--check', action='store_true')
    parser.add_argument('files', nargs='+')
    options = parser.parse_args()
    links = Links()
    for gir in options.gir:
        links.load(gir)
    total = 0
    for path in options.files:
        with open(path, encoding='utf-8') as f:
            source = f.read()
        found = []
        converted = convert_source(source, links, found)
        total += len(found)
        if options.check:
            for ref in found:
                print('%s: gtk-doc style reference %s: run docs/gidocgen-links.py' % (path, ref))
        elif converted != source:
            with open(path, 'w', encoding='utf-8') as f:
                f.write(converted)
            print('%s: %d references converted' % (path, len(found)))
    if options.check and total:
        sys.exit(1)


if __name__ == '__main__':
    main()
