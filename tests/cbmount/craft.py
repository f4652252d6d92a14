"""tests/cbmount/craft.py — a generated package rewritten so its device
images have what the clean one lacks: holes between the mapped ranges
(every map line moved up by a gap per line), a line whose mask names both
chips, three lines of one chip at one vaddr (names ~1, ~2), an earlier line
hidden inside a later one and a later one shown inside it, and two lines
touching end to start from unrelated file offsets.  SHA256SUMS is removed
(the metadata changed; a missing manifest is only a warning)."""
import os
import re

from cbmodel import MAP, RESERVATION

GAP = {"dram": 0x10000, "sram": 0x4000, "sync": 0}


def craft(pkg):
    path = os.path.join(pkg, "model_memory_reserved_info.txt")
    lines = open(path).read().split("\n")
    res = {}
    for ln in lines:
        m = RESERVATION.match(ln)
        if m:
            res[m.group(1)] = (int(m.group(2), 16), int(m.group(3)))
    count = {d: 0 for d in res}
    out = []
    for ln in lines:
        m = MAP.match(ln)
        if not m:
            out.append(ln)
            continue
        vaddr = int(m.group(3), 16)
        dom = [d for d, (b, s) in res.items() if b <= vaddr < b + s][0]
        count[dom] += 1
        vaddr += count[dom] * GAP[dom]
        out.append(re.sub(r"vaddr 0x[0-9a-f]+", "vaddr 0x%016x" % vaddr, ln))
    while out and out[-1] == "":
        out.pop()
    base = res["dram"][0]
    x = base + 0x300001000   # (not a round number a size could also be)
    y = base + 0x310000000
    z = base + 0x320000000
    both, chip0, chip1 = "00000000 00000000 00000003", "00000000 00000000 00000001", \
        "00000000 00000000 00000002"
    extra = [
        # both chips; then two more chip-0 lines at the same vaddr
        ("param_blk0.bin", 0x0, x, 0x3000, both),
        ("param_blk0.bin", 0x10000, x, 0x1000, chip0),
        ("param_blk0.bin", 0x20000, x, 0x2000, chip0),
        # an earlier line hidden under a later big one, and a later one inside it
        ("param_blk1.bin", 0x100, y + 0x100, 0x100, chip1),
        ("param_blk1.bin", 0x0, y, 0x10000, chip1),
        ("param_blk1.bin", 0x40000, y + 0x4000, 0x800, chip1),
        # two lines touching end to start, from unrelated offsets
        ("param_blk0.bin", 0x50000, z, 0x1100, chip0),
        ("param_blk0.bin", 0x3000, z + 0x1100, 0x1800, chip0),
    ]
    for f, off, vaddr, size, mask in extra:
        out.append("%s offset 0x%x vaddr 0x%016x size 0x%x chip %s" % (f, off, vaddr, size, mask))
    with open(path, "w") as fh:
        fh.write("\n".join(out) + "\n")
    sums = os.path.join(pkg, "SHA256SUMS")
    if os.path.exists(sums):
        os.unlink(sums)
    return pkg
