#!/usr/bin/env python3
"""Write a synthetic NInfer v3 artifact set with many objects (issue 6).

An independent writer in Python (it shares no code with the C writer), so
it doubles as a second implementation of the container framing:

    gen_large.py OUT.ninfer --objects N [--parts P]

N tensor objects in a mix of formats with tiny payloads, N bindings (half
whole-object, half a parts binding over a second object), 2N uses, and deep
binding paths such as text/layers/47/mlp/experts/511/down.  The payload is
split over P files (entry + P-1 parts).  Payload bytes are zero, which is a
valid encoding for every format used (zero codes with +0 scales), so the
files are sparse and cost almost no disk.

Prints one JSON line: objects, bindings, uses, json_bytes, payload_bytes,
files, and a few sample paths with their expected sizes.
"""
import argparse
import json
import os
import sys
import uuid


def align_up(x, a):
    return (x + a - 1) // a * a


# (format, layout, shape, encoded bytes): sizes from codecs.md §1, §2.1, §4.1
KINDS = [
    ("q4_g64_fp16", "row_split_k128_v1", [1, 64], 260),
    ("q8_g32_fp16", "row_split_k128_v1", [1, 32], 264),
    ("bf16", "contiguous_le_v1", [8], 16),
    ("fp8_e4m3fn_row_bf16", "row_scale_v1", [1, 16], 258),
    ("fp32", "contiguous_le_v1", [4], 16),
]
PROJ = ["gate", "up", "down"]


def binding_name(i):
    """Deep, realistic names: 48 layers x 512 experts x 3 projections."""
    proj = PROJ[i % 3]
    expert = (i // 3) % 512
    layer = (i // (3 * 512)) % 48
    rep = i // (3 * 512 * 48)
    base = f"text/layers/{layer}/mlp/experts/{expert}/{proj}"
    return base if rep == 0 else f"{base}_{rep}"


def build(n):
    objects, bindings, uses = [], {}, []
    off = 0
    for i in range(n):
        fmt, lay, shape, size = KINDS[i % len(KINDS)]
        off = align_up(off, 256)
        objects.append({"id": f"w.{i:07d}", "shape": shape, "format": fmt,
                        "layout": lay, "offset": off, "bytes": size,
                        "kind": "tensor"})
        off += size
    for i in range(n):
        name = binding_name(i)
        if i % 2 == 0:
            bindings[name] = {"object": objects[i]["id"]}
        else:
            o = objects[(i + 1) % n]
            elems = 1
            for d in o["shape"]:
                elems *= d
            bindings[name] = {"parts": [{"object": o["id"], "range": [0, elems]}]}
        policy = ["A16Only", "AllowA8", "AllowA4"][i % 3]
        uses.append({"parameter": name, "input": f"{name}/input",
                     "activation_policy": policy})
        uses.append({"parameter": name, "input": f"{name}/residual"})
    return objects, bindings, uses, off


def files_table(payload, nfiles):
    """Split the payload into nfiles pieces on 4096-byte logical boundaries."""
    if nfiles <= 1 or payload < 4096 * nfiles:
        return [payload]
    share = align_up(payload // nfiles, 4096)
    sizes = []
    left = payload
    while left > 0:
        s = min(share, left)
        sizes.append(s)
        left -= s
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out")
    ap.add_argument("--objects", type=int, required=True)
    ap.add_argument("--parts", type=int, default=16)
    a = ap.parse_args()

    objects, bindings, uses, payload = build(a.objects)
    sizes = files_table(payload, a.parts)
    entry = os.path.basename(a.out)
    files = [{"path": None if i == 0 else f"{entry}.part-{i:04d}", "payload_bytes": s}
             for i, s in enumerate(sizes)]
    directory = {
        "components": {"text": {"config": {"architectures": ["SyntheticMoE"],
                                           "model_type": "synthetic"}}},
        "objects": objects, "bindings": bindings, "uses": uses,
        "metadata": {"name": f"synthetic-{a.objects}"}, "provenance": {},
        "files": files,
    }
    text = json.dumps(directory, separators=(",", ":"), ensure_ascii=False).encode()
    json_bytes = align_up(32 + len(text), 4096) - 32
    text += b" " * (json_bytes - len(text))
    aid = uuid.uuid4().bytes
    eps = 32 + json_bytes

    with open(a.out, "wb") as f:
        f.write(b"NINFER\x00\x03" + json_bytes.to_bytes(8, "little") + aid)
        f.write(text)
        f.truncate(eps + sizes[0])
    for i in range(1, len(sizes)):
        with open(f"{a.out}.part-{i:04d}", "wb") as f:
            f.write(b"NINPRT\x00\x03" + i.to_bytes(8, "little") + aid)
            f.truncate(4096 + sizes[i])

    samples = [{"path": "objects/" + objects[i]["id"], "bytes": objects[i]["bytes"]}
               for i in (0, len(objects) // 2, len(objects) - 1)]
    last = binding_name(a.objects - 1 - ((a.objects - 1) % 2))  # a whole-object one
    samples.append({"path": "bindings/" + last,
                    "bytes": objects[a.objects - 1 - ((a.objects - 1) % 2)]["bytes"]})
    print(json.dumps({"objects": len(objects), "bindings": len(bindings),
                      "uses": len(uses), "json_bytes": json_bytes,
                      "payload_bytes": payload, "files": len(sizes),
                      "samples": samples}))


if __name__ == "__main__":
    sys.exit(main())
