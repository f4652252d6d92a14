#!/usr/bin/env python3
"""tests/calbin/fullsize.py FIXTURE CALBIN_CHECK — the one full-size test:
the sample's exact figures (seed §2-§7) on a package with full-size sparse
parameter blocks and full 444,610-command PLD dumps, checked by
calbin-check --fast and, where the figure is computed, by an independent
Python oracle over the package's own files (the op I/O address unions,
the command counts and dataSize sums).  No SHA256SUMS (hashing 17 GiB of
sparse blocks belongs to the benchmark)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cblib import DECODE, PREFILL, codes, main  # noqa: E402

GIB = 1 << 30
DTYPE = {"bfloat16": 2, "float16": 2, "float32": 4, "int32": 4, "int8": 1, "uint8": 1,
         "int64": 8, "bool": 1}


def union_of(path):
    """Static address coverage of an op I/O YAML, computed by regex."""
    rx = re.compile(r"(?:args|outs)_\d+: \[0x([0-9a-f]+), \[([0-9, ]*)\], (\w+), ")
    ranges = []
    with open(path) as f:
        for line in f:
            for a, dims, dt in rx.findall(line):
                n = DTYPE[dt]
                for d in dims.split(","):
                    if d.strip():
                        n *= int(d)
                if n:
                    ranges.append((int(a, 16), int(a, 16) + n))
    ranges.sort()
    total, end = 0, -1
    start = None
    for b, e in ranges:
        if start is None or b > end:
            if start is not None:
                total += end - start
            start, end = b, e
        else:
            end = max(end, e)
    return total + (end - start)


def dump_sums(path):
    n = total = 0
    rx = re.compile(rb" dataSize=(\d+) ")
    with open(path, "rb") as f:
        for line in f:
            if line.startswith(b"cmdId="):
                n += 1
                total += int(rx.search(line).group(1))
    return n, total


def body(env):
    pkg = env.package("no_hash_manifest", "--full")
    rc, doc = env.report(pkg, "--fast")
    assert rc == 1 and codes(doc) == ["HASH_MANIFEST_MISSING"], codes(doc)
    files = {f["path"]: f for f in doc["package"]["file_list"]}
    # §2: the parameter blocks, exactly
    assert files["param_blk0.bin"]["bytes"] == 9404557312
    assert files["param_blk1.bin"]["bytes"] == 8782227456
    assert os.path.getsize(os.path.join(pkg, "param_blk0.bin")) == 9404557312
    pb = doc["memory"]["parameter_bytes"]
    assert pb["total_file_bytes"] == 18186784768 and round(18186784768 / GIB, 3) == 16.938
    assert pb["by_chip"]["chip0"]["total"] == 9404557312
    assert pb["by_chip"]["chip1"]["total"] == 8782227456
    for blk in pb["by_file"].values():
        assert blk["uncovered_bytes"] == 0 and blk["duplicate_bytes"] == 0, blk
    # §4.2: reservations per chip
    res = doc["memory"]["reservations"]
    assert res["dram"]["size"] == 15113064448 and round(15113064448 / GIB, 3) == 14.075
    assert res["sram"]["size"] == 17662336 and round(17662336 / (1 << 20), 3) == 16.844
    assert res["sync"]["size"] == 20
    # §9 Gate D: KV = 48 * 4 * 2 * 128 * 40960 * 2
    assert doc["memory"]["kv_bytes"] == 48 * 4 * 2 * 128 * 40960 * 2 == 4026531840
    assert doc["memory"]["kv_bytes"] / GIB == 3.75
    assert doc["memory"]["kv_bytes_per_chip"] == 2013265920 and 2013265920 / GIB == 1.875
    # §6: ops and address unions (static coverage)
    assert doc["graph"]["prefill_ops"] == 1496 and doc["graph"]["decode_ops"] == 1398
    u = doc["memory"]["address_union"]
    for kind, d, gib in (("prefill", PREFILL, 14.091), ("decode", DECODE, 10.634)):
        oracle = union_of(os.path.join(pkg, d, d + "_op_io_buf_ptr.yaml"))
        assert u[kind] == oracle, (kind, u[kind], oracle)
        assert round(u[kind] / GIB, 3) == gib, (kind, u[kind] / GIB)
    # §7.1: profparts lines
    sub = {s["kind"]: s for s in doc["submodels"]}
    assert sub["prefill"]["profparts"] == {"chip0": 1352, "chip1": 1351}
    assert sub["decode"]["profparts"] == {"chip0": 1254, "chip1": 1253}
    # §5.3: the I/O contract
    io = [(b["name"], b["shape"], b["dtype"], b["bytes"]) for b in sub["prefill"]["inputs"] +
          sub["prefill"]["outputs"]]
    assert io == [("input_ids", [1, 40960], "int32", 163840), ("position_ids", [1, 40960], "int32", 163840),
                  ("logits", [1, 1, 151936], "bfloat16", 303872)], io
    io = [b["bytes"] for b in sub["decode"]["inputs"] + sub["decode"]["outputs"]]
    assert io == [4, 4, 303872], io
    # §7.2: the PLD dumps of the prefill
    cmds = {c["file"]: c for c in sub["prefill"]["commands"]}
    for chip, n, gib in ((0, 444610, 18.979), (1, 444608, 18.822)):
        name = "%s/pld_chip%d_ping.txt" % (PREFILL, chip)
        c = cmds[name]
        assert c["commands"] == n and c["parsed"], c
        assert round(c["data_bytes"] / GIB, 3) == gib, c["data_bytes"] / GIB
        assert (c["commands"], c["data_bytes"]) == dump_sums(os.path.join(pkg, name))
        assert sum(t["commands"] for t in c["by_type"].values()) == n
        assert cmds[name.replace("ping", "pong")]["data_bytes"] == c["data_bytes"]
    print("ok: 9,404,557,312 + 8,782,227,456 B; KV 4,026,531,840 B (1.875 GiB/chip); unions "
          "%.3f / %.3f GiB; 444,610 / 444,608 commands" % (u["prefill"] / GIB, u["decode"] / GIB))


if __name__ == "__main__":
    main(body)
