#!/usr/bin/env python3
"""tests/cbmount/faults.py — a parameter block truncated, removed or
replaced while the package is mounted (man ninferfs.5, Errors of a calbin
package; the NInfer parts' change detection): every read that needs its
bytes fails with EIO — its package/ file, the params/ files of its lines,
the mapped ranges of the devices/ images it shows in — while the other
block, the holes of the images and every other file are still served, and
files.json says the block is bad."""
import os
import random
import shutil
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from craft import craft  # noqa: E402
from mountlib import check, drop_cache, errno_of, load_json, main, pread, read  # noqa: E402
import oracle  # noqa: E402


def status_of(mnt, path):
    for f in load_json(os.path.join(mnt, "files.json")):
        if f["path"] == path:
            return f["status"]
    raise AssertionError("files.json has no " + path)


def wait_bad(mnt, path, probe):
    """The change is noticed by the watch at once, or by the next read."""
    for _ in range(250):
        drop_cache(probe)
        errno_of(read, probe)
        if status_of(mnt, path) == "bad":
            return
        time.sleep(0.02)
    raise AssertionError("files.json never said %s is bad" % path)


def check_after(mnt, model, bad):
    rng = random.Random(5)
    lost = good = 0
    for p, ln in model.params().items():
        path = os.path.join(mnt, p)
        drop_cache(path)
        if ln.file == bad and ln.size:
            check(errno_of(read, path) == "EIO", p, "of the changed block did not fail with EIO")
            lost += 1
        else:
            check(read(path) == model.param_bytes(ln), p, "of the other block differs")
            good += 1
    for name, (t, _) in model.files.items():
        if t != "f":
            continue
        path = os.path.join(mnt, "package", name)
        drop_cache(path)
        if name == bad:
            check(errno_of(read, path) == "EIO", "package/" + name, "did not fail")
        elif os.path.getsize(os.path.join(model.pkg, name)) < 64 << 20:
            check(read(path) == read(os.path.join(model.pkg, name)), "package/" + name)
    holes = 0
    for c, d in model.images():
        img = model.image(c, d)
        path = os.path.join(mnt, img.path())
        drop_cache(path)
        for off, n, ln, _ in rng.sample(img.pieces, min(20, len(img.pieces))):
            a = off // 4096 * 4096
            touches = any(o < a + 4096 and a < o + k and q.file == bad for o, k, q, _ in img.pieces)
            got = errno_of(pread, path, 4096, a, True)
            if touches:
                check(got == "EIO", img.path(), "read at", a, "gave", got)
            else:
                check(got is None and pread(path, 4096, a, True) == img.read(a, 4096),
                      img.path(), "read at", a, got)
        # a page-aligned 4 KiB run of holes reads zeros, whatever the files
        for (a0, b0), (a1, _) in zip(img.data, img.data[1:]):
            h = (b0 + 4095) // 4096 * 4096
            if h + 4096 <= a1 // 4096 * 4096:
                check(pread(path, 4096, h, True) == b"\0" * 4096, img.path(), "hole at", h)
                holes += 1
                break
    check(lost and good, "lost", lost, "good", good)
    return lost, good, holes


def body(env):
    cases = [("truncate", "param_blk1.bin"), ("unlink", "param_blk0.bin"),
             ("replace", "param_blk1.bin")]
    for how, block in cases:
        pkg = craft(env.package("clean", "--small"))
        model = oracle.model_of(pkg)
        mnt = env.mount(pkg)
        src = os.path.join(pkg, block)
        # read everything once first: the kernel's cache must not hide the change
        for p in list(model.params())[:50]:
            read(os.path.join(mnt, p))
        if how == "truncate":
            os.truncate(src, os.path.getsize(src) // 2)
        elif how == "unlink":
            os.unlink(src)
        else:
            tmp = src + ".new"
            shutil.copyfile(src, tmp)
            with open(tmp, "r+b") as f:
                f.write(b"\xff" * 4096)
            os.rename(tmp, src)
        wait_bad(mnt, block, os.path.join(mnt, "package", block))
        # the model of the package as mounted: it reads only the other files
        lost, good, holes = check_after(mnt, model, block)
        print("ok  %s %s: %d params files EIO, %d served, holes read zeros (%d), files.json bad"
              % (how, block, lost, good, holes))
        env.unmount(mnt)


if __name__ == "__main__":
    main(body)
