"""The naming rule of man ninferfs.5 (NAMES), written apart from fs/names.c
so the Python checks of the mount, fault and stress tests compare the mount
against an independent reading of the rule.  Names shorter than the cut
(255 bytes escaped) only: no test set has longer ones outside
tests/mount/names.sh, which checks the cut itself."""


def esc(c):
    """One name component as a file name."""
    if c == "":
        return "%"
    if c == ".":
        return "%2E"
    if c == "..":
        return "%2E%2E"
    return c.replace("%", "%25").replace("/", "%2F")

