#!/usr/bin/env python3
"""doc_links.py — checks that the relative links of Markdown files resolve.

For every inline link `[text](target)` and reference definition
`[name]: target` outside code (fenced blocks and `code spans`) whose target
is not a URL (no scheme, not //host):

  - the file or folder it names exists, relative to the linking file;
  - a #anchor names a heading of the Markdown file it points into (the
    linking file itself for a bare #anchor), by GitHub's rule: the
    heading's text lowercased, every character that is not a letter, digit,
    '_', '-' or space dropped, spaces turned into '-', and "-1", "-2", ...
    added to repeats; an <a name|id="..."> in the file counts too. Into a
    file that is not Markdown only GitHub's line anchors (#L10, #L10-L20)
    are taken.

One line per link that does not resolve, `FAIL FILE:LINE: target: why`,
then `links FILE: N checked` per file; exit status 1 when any failed.

usage: doc_links.py FILE.md...
"""
import os
import re
import sys

FENCE = re.compile(r"^\s*(```|~~~)")
CODE_SPAN = re.compile(r"(`+).*?\1")
INLINE = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(\s*<?([^)\s>]*)>?(?:\s+\"[^\"]*\")?\s*\)")
DEFINITION = re.compile(r"^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s+\"[^\"]*\")?\s*$")
HEADING = re.compile(r"^\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")
HTML_ANCHOR = re.compile(r"<a\s+(?:name|id)=\"([^\"]+)\"")
LINE_ANCHOR = re.compile(r"^L\d+(-L\d+)?$")


def prose_lines(path):
    """(line number, text) of the lines outside fenced code blocks."""
    fence = None
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            m = FENCE.match(line)
            if m and (fence is None or m.group(1) == fence):
                fence = m.group(1) if fence is None else None
                continue
            if fence is None:
                yield n, line.rstrip("\n")


def slug(heading):
    """GitHub's anchor of a heading, from its Markdown text."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link: its text
    text = re.sub(r"<[^>]+>", "", text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    """Every anchor of a Markdown file."""
    if path not in cache:
        found, seen = set(), {}
        for _, line in prose_lines(path):
            found.update(HTML_ANCHOR.findall(line))
            m = HEADING.match(line)
            if m:
                s = slug(m.group(2))
                found.add(s if s not in seen else "%s-%d" % (s, seen[s]))
                seen[s] = seen.get(s, 0) + 1
        cache[path] = found
    return cache[path]


def targets(path):
    """(line number, target) of every link of a Markdown file."""
    for n, line in prose_lines(path):
        line = CODE_SPAN.sub("", line)
        m = DEFINITION.match(line)
        if m:
            yield n, m.group(1)
            continue
        for m in INLINE.finditer(line):
            yield n, m.group(1)


def problem(path, target):
    """Why target, linked from path, does not resolve (None when it does)."""
    if re.match(r"^[a-zA-Z][a-zA-Z0-9+.-]*:", target) or target.startswith("//"):
        return None  # a URL: not this checker's
    where, _, anchor = target.partition("#")
    dest = os.path.normpath(os.path.join(os.path.dirname(path), where)) if where else path
    if not os.path.exists(dest):
        return "no such file %s" % dest
    if not anchor:
        return None
    if not dest.endswith(".md"):
        return None if LINE_ANCHOR.match(anchor) else "%s is not Markdown: no #%s" % (dest, anchor)
    if os.path.isdir(dest) or anchor not in anchors(dest):
        return "no heading of %s has the anchor #%s" % (dest, anchor)
    return None


def main(files):
    failed = 0
    for path in files:
        checked = 0
        for n, target in targets(path):
            checked += 1
            why = problem(path, target)
            if why:
                failed += 1
                print("FAIL %s:%d: %s: %s" % (path, n, target, why))
        print("links %s: %d checked" % (path, checked))
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__.strip().splitlines()[-1])
    sys.exit(main(sys.argv[1:]))
