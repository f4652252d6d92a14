#!/usr/bin/env python3
"""tests/cbmount/devices.py — devices/ and params/ where the lines do more
than in the clean package: a crafted package (craft.py: holes between every
mapped range, a two-chip mask, three lines at one vaddr, nested and
touching lines) and the hostile variants map_overlap and map_duplicate.
Every image read at random offsets equals the Python model (the later line
wins); the SEEK_DATA/SEEK_HOLE walk is the model's mapped intervals;
cp --sparse=always keeps the holes (du of the copy) and the copy's data is
the model's; params/ names (~1, ~2), bytes and xattrs are the map lines."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from craft import craft  # noqa: E402
from mountlib import check, main, pread  # noqa: E402
import oracle  # noqa: E402


def sparse_copy(env, mnt, model, c, d):
    """cp --sparse=always of an image: same size and bytes, holes kept."""
    img = model.image(c, d)
    src = os.path.join(mnt, img.path())
    dst = os.path.join(env.tmp, "copy-%d-%s" % (c, d))
    res = subprocess.run(["cp", "--sparse=always", src, dst], capture_output=True, timeout=300)
    check(res.returncode == 0, "cp", res.stderr)
    st = os.stat(dst)
    check(st.st_size == img.size, "copy size")
    du = int(subprocess.run(["du", "-B1", dst], capture_output=True, text=True).stdout.split()[0])
    check(du == st.st_blocks * 512, "du and st_blocks disagree", du, st.st_blocks)
    # at most the data intervals rounded out to 4 KiB blocks (plus a block of
    # slack per interval for the file system's allocation)
    bound = sum(((b + 4095) // 4096 - a // 4096 + 1) * 4096 for a, b in img.data)
    check(du <= bound, img.path(), "copy allocates", du, "bytes, the mapped intervals", bound)
    check(bound < img.size // 2, img.path(), "the image has too few holes to tell", bound)
    # the copy's data lies inside the model's intervals, and holds the model's bytes
    for a, b in oracle.seek_walk(dst):
        check(any(x // 4096 * 4096 <= a and b <= (y + 4095) // 4096 * 4096 for x, y in img.data),
              "copy data", a, b, "outside the mapped intervals")
    for a, b in img.data:
        check(pread(dst, b - a, a) == img.read(a, b - a), "copy bytes at", a)
    os.unlink(dst)
    return du


def body(env):
    pkg = craft(env.package("clean", "--small"))
    model = oracle.model_of(pkg)
    mnt = env.mount(pkg)
    names = [p for p in model.params() if "0x0000000400001000" in p]
    check(sorted(names) == ["params/chip0/dram/0x0000000400001000",
                            "params/chip0/dram/0x0000000400001000~1",
                            "params/chip0/dram/0x0000000400001000~2",
                            "params/chip1/dram/0x0000000400001000"], "collision names", names)
    n = oracle.check_params(mnt, model)
    print("ok  crafted: %d params files (two-chip mask, ~1 ~2) = dd, xattrs = map lines" % n)
    n = oracle.check_devices(mnt, model, reads=300, seed=2)
    walks = sum(len(model.image(c, d).data) for c, d in model.images())
    print("ok  crafted: %d random reads = the model; SEEK walks = %d mapped intervals" % (n, walks))
    check(walks > 900, "the crafted images have holes", walks)
    for c, d in ((0, "dram"), (1, "dram"), (0, "sram")):
        du = sparse_copy(env, mnt, model, c, d)
        print("ok  cp --sparse=always devices/chip%d/%s: %d bytes allocated of %d" %
              (c, d, du, model.image(c, d).size))
    oracle.check_memory(mnt, model, oracle.check_reports(mnt, model))
    print("ok  crafted: memory.json device_overlaps and winners")
    env.unmount(mnt)
    for variant in ("map_overlap", "map_duplicate"):
        pkg = env.package(variant, "--small")
        model = oracle.model_of(pkg)
        check(any(model.image(0, "dram").overlaps), variant, "has no overlap")
        mnt = env.mount(pkg)
        oracle.check_params(mnt, model)
        oracle.check_devices(mnt, model, reads=100, seed=3)
        oracle.check_memory(mnt, model, oracle.check_reports(mnt, model))
        print("ok  %s: params, devices, memory.json" % variant)
        env.unmount(mnt)


if __name__ == "__main__":
    main(body)
