"""The naming rule of man ninferfs.5 (NAMES), written from the man page
apart from fs/names.c and fs/tree.c, so the Python checks of the mount,
fault and stress tests compare the mount against an independent reading of
the rule.

esc(c)                  one name component (rules 1-4) as a file name
binding_path(n, dirs)   the path of binding n under bindings/ (a list of
                        file names, rule 5), dirs = binding_dirs(names)
"""

CUT = 230            # rule 4: the stem is at most 230 bytes
NAME_MAX = 255       # rule 4: longer results are cut


def fnv1a64(data):
    """FNV-1a 64 over bytes (offset basis and prime as rule 4 gives them)."""
    h = 0xcbf29ce484222325
    for b in data:
        h = ((h ^ b) * 0x100000001b3) & 0xFFFFFFFFFFFFFFFF
    return h


def _unit(ch):
    """Rule 1 for one character: its escape or its UTF-8 bytes."""
    if ch == "%":
        return b"%25"
    if ch == "/":
        return b"%2F"
    return ch.encode("utf-8")


def esc(c):
    """One name component as a file name (rules 1 to 4)."""
    if c == "":
        return "%"
    if c == ".":
        return "%2E"
    if c == "..":
        return "%2E%2E"
    units = [_unit(ch) for ch in c]
    whole = b"".join(units)
    if len(whole) <= NAME_MAX:
        return whole.decode("utf-8")
    stem = b""
    for u in units:
        if len(stem) + len(u) > CUT:
            break
        stem += u
    tail = "%%~%016x" % fnv1a64(c.encode("utf-8"))
    return stem.decode("utf-8") + tail


def binding_dirs(names):
    """Every name that is a directory by rule 5: each name's prefixes up to
    (not including) one of its slashes."""
    dirs = set()
    for n in names:
        i = n.find("/")
        while i >= 0:
            dirs.add(n[:i])
            i = n.find("/", i + 1)
    return dirs


def binding_path(name, dirs):
    """The path of binding `name` under bindings/ or decoded/bindings/, as a
    list of file names: its '/'-cut components escaped, and %self when the
    name is itself a directory (rule 5)."""
    path = [esc(c) for c in name.split("/")]
    if name in dirs:
        path.append("%self")
    return path
