#!/usr/bin/env python3
"""tests/mount/neutral.py — the FUSE adapter stays family-neutral (fs-neutral).

Every file directly in fs/ (the adapter) must include, directly or through
the headers it includes, no header of a family's library (reader/, calbin/)
and no family's own code (fs/ninfer/, fs/calbin/): it sees a family only
through fs/family.h.  And no file of a family (fs/ninfer/, fs/calbin/)
includes a FUSE header: FUSE is the adapter's.  Quoted includes are
followed transitively from the source root; the message names the chain.

    neutral.py SOURCE_ROOT        exit 0, or 1 naming every offence
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^">]+)[">]', re.M)
FORBIDDEN = ("reader/", "calbin/", "fs/ninfer/", "fs/calbin/")
FAMILIES = ("fs/ninfer", "fs/calbin")


def includes(root, path):
    """(kind, name) of every #include in root/path; kind is '"' or '<'."""
    with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
        return INCLUDE.findall(f.read())


def resolve(root, frm, name):
    """A quoted include as a path relative to root, or None (a system one)."""
    for cand in (name, os.path.normpath(os.path.join(os.path.dirname(frm), name))):
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def reach(root, start):
    """Every header reachable from start: {path: chain of includes to it}."""
    seen, todo = {start: [start]}, [start]
    while todo:
        cur = todo.pop()
        for kind, name in includes(root, cur):
            if kind != '"':
                continue
            p = resolve(root, cur, name)
            if p is None or p in seen:
                continue
            seen[p] = seen[cur] + [p]
            todo.append(p)
    return seen


def main():
    root = sys.argv[1]
    bad = []
    adapter = sorted(f for f in os.listdir(os.path.join(root, "fs"))
                     if f.endswith((".c", ".h")))
    if not adapter:
        bad.append("no source files in fs/")
    for f in adapter:
        for p, chain in reach(root, "fs/" + f).items():
            if p.startswith(FORBIDDEN):
                bad.append("fs/%s reaches %s: %s" % (f, p, " -> ".join(chain)))
    for fam in FAMILIES:
        d = os.path.join(root, fam)
        if not os.path.isdir(d):
            continue
        for f in sorted(os.listdir(d)):
            if not f.endswith((".c", ".h")):
                continue
            for kind, name in includes(root, fam + "/" + f):
                if kind == "<" and name.startswith("fuse"):
                    bad.append("%s/%s includes <%s>: FUSE is the adapter's" % (fam, f, name))
    for b in bad:
        print("FAIL:", b)
    if bad:
        return 1
    print("ok: %d adapter files reach no family header; the families include no FUSE header"
          % len(adapter))
    return 0


if __name__ == "__main__":
    sys.exit(main())
