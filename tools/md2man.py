#!/usr/bin/python3
"""Turns docs/sandboxctl.md into the sandboxctl(1) man page (roff).

    md2man.py INPUT.md OUTPUT.1 VERSION

It reads the Markdown subset the page is written in: "# name(section)" as
the title, "##"/"###" headings, paragraphs, ``` fenced blocks, "- " and
"1. " lists, definition lists (a line, then ": description" with indented
continuation lines), pipe tables, and `code`, **bold** and *italic* spans.
Anything else is a paragraph. A small script rather than pandoc, so the
build needs nothing beyond python3 and the page is the same everywhere.

SPDX-License-Identifier: LGPL-2.1-or-later
"""

import re
import sys

# Characters the page uses that roff spells otherwise (so the page renders
# in any locale).
SPECIAL = {
    '\u2014': r'\(em', '\u2013': r'\(en', '\u2026': '...', '\u201c': r'\(lq',
    '\u201d': r'\(rq', '\u2018': r'\(oq', '\u2019': r'\(cq', '\u2192': r'\(->',
    '\u00d7': r'\(mu', '\u2265': r'\(>=', '\u2264': r'\(<=',
}


def escape(text):
    text = text.replace('\\', r'\e')
    for char, roff in SPECIAL.items():
        text = text.replace(char, roff)
    return text


def inline(text):
    """Markdown spans to roff fonts; code spans get \\- for every -."""
    parts = re.split(r'(`[^`]+`)', text)
    out = []
    for part in parts:
        if part.startswith('`') and part.endswith('`') and len(part) > 1:
            out.append(r'\fB' + escape(part[1:-1]).replace('-', r'\-') + r'\fR')
            continue
        part = escape(part)
        part = re.sub(r'\*\*([^*]+)\*\*', r'\\fB\1\\fR', part)
        part = re.sub(r'(?<![\w*])\*([^*\s][^*]*)\*(?![\w*])', r'\\fI\1\\fR', part)
        out.append(part)
    return ''.join(out)


def line_safe(text):
    """A roff text line must not start with . or '."""
    return '\\&' + text if text[:1] in ('.', "'") else text


class Converter:
    def __init__(self, version):
        self.version = version
        self.out = []
        self.section = None

    def emit(self, text):
        self.out.append(text)

    def text(self, text):
        self.emit(line_safe(inline(text)))

    def title(self, line):
        match = re.match(r'#\s+(\S+)\((\d)\)', line)
        name, number = (match.group(1), match.group(2)) if match else ('sandboxctl', '1')
        self.emit('.TH %s %s "" "libsandbox %s" "User Commands"'
                  % (name.upper(), number, self.version))

    def convert(self, lines):
        i = 0
        paragraph = []

        def flush():
            if paragraph:
                self.emit('.PP')
                for text in paragraph:
                    if self.section == 'NAME':
                        # whatis wants "name \- summary".
                        text = text.replace('`', '').replace(' \u2014 ', ' - ')
                        self.emit(line_safe(escape(text).replace(' - ', r' \- ', 1)))
                    else:
                        self.text(text)
                paragraph.clear()

        while i < len(lines):
            line = lines[i].rstrip('\n')
            stripped = line.strip()
            if line.startswith('# '):
                flush()
                self.title(line)
            elif line.startswith('## '):
                flush()
                self.section = line[3:].strip().upper()
                self.emit('.SH ' + escape(self.section))
            elif line.startswith('### '):
                flush()
                self.emit('.SS ' + inline(line[4:].strip()))
            elif stripped.startswith('```'):
                flush()
                i += 1
                self.emit('.PP')
                self.emit('.RS 4')
                self.emit('.nf')
                while i < len(lines) and not lines[i].strip().startswith('```'):
                    self.emit(line_safe(escape(lines[i].rstrip('\n'))))
                    i += 1
                self.emit('.fi')
                self.emit('.RE')
            elif stripped.startswith('|'):
                flush()
                i = self.table(lines, i)
                continue
            elif re.match(r'(- |\d+\. )', stripped):
                flush()
                i = self.list_item(lines, i)
                continue
            elif stripped and i + 1 < len(lines) and lines[i + 1].startswith(': '):
                flush()
                i = self.definition(lines, i)
                continue
            elif not stripped:
                flush()
            else:
                paragraph.append(stripped)
            i += 1
        flush()
        return '\n'.join(self.out) + '\n'

    def continuation(self, lines, i):
        """Indented lines after item i, joined; returns (texts, next index)."""
        texts = []
        while i < len(lines) and lines[i].startswith('  ') and lines[i].strip():
            texts.append(lines[i].strip())
            i += 1
        return texts, i

    def definition(self, lines, i):
        self.emit('.TP')
        self.text(lines[i].strip())
        texts = [lines[i + 1][2:].strip()]
        more, i = self.continuation(lines, i + 2)
        for text in texts + more:
            self.text(text)
        return i

    def list_item(self, lines, i):
        stripped = lines[i].strip()
        match = re.match(r'(- |(\d+)\. )(.*)', stripped)
        mark = r'\(bu' if match.group(1) == '- ' else match.group(2) + '.'
        self.emit('.IP %s 4' % mark)
        texts, i = self.continuation(lines, i + 1)
        for text in [match.group(3)] + texts:
            self.text(text)
        return i

    def table(self, lines, i):
        """Rows become tagged paragraphs: the first cell, then the rest."""
        rows = []
        while i < len(lines) and lines[i].strip().startswith('|'):
            cells = [cell.strip() for cell in lines[i].strip().strip('|').split('|')]
            if not all(re.fullmatch(r':?-+:?', cell) for cell in cells):
                rows.append(cells)
            i += 1
        for cells in rows[1:]:   # the first row is the header
            self.emit('.TP')
            self.text(cells[0])
            self.text(' \u2014 '.join(cells[1:]) if len(cells) > 2 else cells[1])
        return i


def main():
    source, target, version = sys.argv[1:4]
    with open(source, encoding='utf-8') as f:
        lines = f.readlines()
    page = Converter(version).convert(lines)
    with open(target, 'w', encoding='utf-8') as f:
        f.write(page)


if __name__ == '__main__':
    main()
