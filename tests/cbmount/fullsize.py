#!/usr/bin/env python3
"""tests/cbmount/fullsize.py — the generated package at its full size
(cb-fixture --full: parameter blocks of 9,404,557,312 and 8,782,227,456
bytes, sparse; 444,610-command dumps): every params/ file has its map
line's size and the sums per chip are memory.json's; the largest params
files and a random sample equal dd of their block ranges; devices/ reads
and SEEK walks equal the model; the mount-ready time beside calbin-check
--fast's (printed; the ratio is bench/calbin_mount.sh's to judge)."""
import os
import random
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mountlib import CALBIN_CHECK, check, load_json, main  # noqa: E402
import oracle  # noqa: E402


def body(env):
    pkg = env.package("clean", "--full")
    model = oracle.model_of(pkg)
    check(os.path.getsize(os.path.join(pkg, "param_blk0.bin")) == 9404557312 and
          os.path.getsize(os.path.join(pkg, "param_blk1.bin")) == 8782227456, "block sizes")
    t0 = time.monotonic()
    subprocess.run([CALBIN_CHECK, "--fast", pkg], capture_output=True)
    t_check = time.monotonic() - t0
    t0 = time.monotonic()
    mnt = env.mount(pkg)
    t_mount = time.monotonic() - t0
    want = model.params()
    sums = {}
    for p, ln in want.items():
        check(os.stat(os.path.join(mnt, p)).st_size == ln.size, p, "size")
        c = p.split("/")[1]
        sums[c] = sums.get(c, 0) + ln.size
    mem = load_json(os.path.join(mnt, "memory.json"))
    for c, total in sums.items():
        check(mem["parameter_bytes"]["by_chip"][c]["total"] == total, c, "bytes", total)
    print("ok  %d params files of their map lines' sizes; per chip %s = memory.json" %
          (len(want), sums))
    items = sorted(want.items(), key=lambda kv: -kv[1].size)
    sample = items[:1] + random.Random(4).sample(items[1:], 12)
    for p, ln in sample:
        got = subprocess.run(["sha256sum", os.path.join(mnt, p)], capture_output=True,
                             text=True).stdout.split()[0]
        ref = subprocess.run("dd if=%s iflag=skip_bytes,count_bytes skip=%d count=%d "
                             "status=none bs=1M | sha256sum" % (os.path.join(pkg, ln.file),
                                                                ln.offset, ln.size),
                             shell=True, capture_output=True, text=True).stdout.split()[0]
        check(got == ref, p, "differs from dd of its block range")
    print("ok  %d params files (the largest %d bytes) = dd of their block ranges" %
          (len(sample), items[0][1].size))
    n = oracle.check_devices(mnt, model, reads=60, seed=11)
    print("ok  devices/: %d reads = the model, SEEK walks = the mapped intervals" % n)
    print("info mount ready in %.2f s, calbin-check --fast %.2f s (%.2fx, under test load)" %
          (t_mount, t_check, t_mount / t_check if t_check else 0))
    env.unmount(mnt)


if __name__ == "__main__":
    main(body)
