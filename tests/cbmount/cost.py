#!/usr/bin/env python3
"""tests/cbmount/cost.py — what one random 4 KiB read of
devices/chip0/dram costs the daemon, from its stats counters (a count, not
a time): exactly one FUSE read request and at most one io_uring submission
(none for a page of holes), wherever the page is: inside one mapped line,
across two lines, across data and a hole, or all holes; and the bytes are
the model's.  Readahead is off for the file (POSIX_FADV_RANDOM) and its
cached pages are dropped first, so each read is one request."""
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from craft import craft  # noqa: E402
from mountlib import check, drop_cache, load_json, main, pread  # noqa: E402
import oracle  # noqa: E402


def counters(mnt):
    s = load_json(os.path.join(mnt, "stats"))
    return s["reads"], s["uring_submissions"]


def pages(img, rng):
    """(kind, page offset) of 4 KiB pages worth asking for."""
    out = []
    for _ in range(15):
        off, n, _, _ = rng.choice(img.pieces)
        if n >= 8192:
            out.append(("inside", (off + rng.randrange(n - 4096)) // 4096 * 4096))
    for a, b in zip(img.pieces, img.pieces[1:]):
        if a[0] + a[1] == b[0] and a[2] is not b[2] and (b[0] % 4096):
            out.append(("two lines", b[0] // 4096 * 4096))
    for a, b in img.data[:: max(1, len(img.data) // 15)]:
        if b % 4096:
            out.append(("data and hole", b // 4096 * 4096))
    for (a0, b0), (a1, _) in list(zip(img.data, img.data[1:]))[:15]:
        h = (b0 + 4095) // 4096 * 4096
        if h + 4096 <= a1 // 4096 * 4096:
            out.append(("holes", h))
    out.append(("holes", img.size // 4096 * 4096 - 4096))
    return out


def body(env):
    pkg = craft(env.package("clean", "--small"))
    model = oracle.model_of(pkg)
    img = model.image(0, "dram")
    mnt = env.mount(pkg)
    path = os.path.join(mnt, img.path())
    # what two snapshots of stats cost by themselves (the read of the first)
    r0, u0 = counters(mnt)
    r1, u1 = counters(mnt)
    base_r, base_u = r1 - r0, u1 - u0
    check(base_u == 0, "reading stats submitted io_uring reads", base_u)
    seen = {}
    rng = random.Random(9)
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
    try:
        for kind, off in pages(img, rng):
            drop_cache(path)
            a_r, a_u = counters(mnt)
            data = os.pread(fd, 4096, off)
            b_r, b_u = counters(mnt)
            reads, subs = b_r - a_r - base_r, b_u - a_u - base_u
            check(data == img.read(off, 4096), kind, "page at", off, "differs")
            check(reads == 1, kind, "page at", off, "cost", reads, "FUSE reads")
            check(subs <= 1, kind, "page at", off, "cost", subs, "io_uring submissions")
            if kind == "holes":
                check(subs == 0, "a page of holes reached the engine", off)
            else:
                check(subs == 1, kind, "page at", off, "submitted", subs)
            seen[kind] = seen.get(kind, 0) + 1
    finally:
        os.close(fd)
    check(set(seen) == {"inside", "two lines", "data and hole", "holes"}, "kinds", seen)
    print("ok  %d random 4 KiB reads of %s: 1 FUSE request each, 1 io_uring submission "
          "(0 for holes): %s" % (sum(seen.values()), img.path(), seen))
    env.unmount(mnt)


if __name__ == "__main__":
    main(body)
