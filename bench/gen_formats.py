#!/usr/bin/env python3
"""bench/gen_formats.py — encoded [ROWS, 16384] objects of every source format
and an ninfer-pack manifest binding each one (for bench/decoded_read.sh).

    gen_formats.py OUTDIR ROWS [FORMAT ...]

FORMAT is one of bf16 q4 q5 q8 t2 nvfp4 fp8 (default: all, in that order).
Writes OUTDIR/<fmt>.bin (the object's encoded bytes) and
OUTDIR/manifest.json (objects w.<fmt>, bindings bench/<fmt>).

The bytes are random codes with realistic finite scales and no illegal code
(../shared/spec/codecs.md): q4/q5 every pattern is legal; q8 0x80 and t2
0b10 are replaced by 0; binary16 scales are positive with exponent 5..12
(never zero: a +0 scale would need all-zero codes, codecs §2.5); nvfp4 block
scales are E4M3FN 0x20..0x5F and the one divisor is 2.0 (§3.4); fp8 codes
0x7F/0xFF become 0x7E/0xFE and the bf16 row scales are positive finite
(§4.2).  K = 16384 is a multiple of 128, so no padding lanes exist; ROWS
must be a multiple of 128 (nvfp4 tiles).  Deterministic (fixed seed).
"""
import json
import os
import sys

import numpy as np

K = 16384
CHUNK_ROWS = 512  # bounds the memory of one step


def f16_scales(rng, n):
    lo = rng.integers(0, 256, n, dtype=np.uint8)
    hi = (0x14 + rng.integers(0, 32, n, dtype=np.uint8)).astype(np.uint8)  # exponent 5..12
    return np.stack([lo, hi], axis=1).reshape(-1)


def rand(rng, n):
    return np.frombuffer(rng.bytes(n), dtype=np.uint8).copy()


def no_q8_min(b):
    b[b == 0x80] = 0
    return b


def no_t2_minus2(b):
    for s in (0, 2, 4, 6):
        bad = ((b >> s) & 3) == 2
        b[bad] &= np.uint8(~(2 << s) & 0xFF)
    return b


def no_e4m3_nan(b):
    b[b == 0x7F] = 0x7E
    b[b == 0xFF] = 0xFE
    return b


# format -> (format name, layout, planes): each plane is (bytes per row,
# generator(rng, nbytes) -> uint8 array); planes are written plane after
# plane, chunk by chunk, in the layout's order (codecs §2.1, §3.1, §4.1).
# Every plane's size is a multiple of 256 here, so no gaps between planes.
FORMATS = {
    "bf16": ("bf16", "contiguous_le_v1", [(2 * K, rand)]),
    "q4": ("q4_g64_fp16", "row_split_k128_v1",
           [(K // 64 * 32, rand), (K // 64 * 2, lambda r, n: f16_scales(r, n // 2))]),
    "q5": ("q5_g64_fp16", "row_split_k128_v1",
           [(K // 64 * 32, rand), (K // 64 * 8, rand),
            (K // 64 * 2, lambda r, n: f16_scales(r, n // 2))]),
    "q8": ("q8_g32_fp16", "row_split_k128_v1",
           [(K // 32 * 32, lambda r, n: no_q8_min(rand(r, n))),
            (K // 32 * 2, lambda r, n: f16_scales(r, n // 2))]),
    "t2": ("t2_g128_fp16", "row_split_k128_v1",
           [(K // 128 * 32, lambda r, n: no_t2_minus2(rand(r, n))),
            (K // 128 * 2, lambda r, n: f16_scales(r, n // 2))]),
    "nvfp4": ("nvfp4", "block_scale_k16_m128x4_v1",
              [(K // 2, rand),
               (K // 16, lambda r, n: (0x20 + r.integers(0, 64, n, dtype=np.uint8)).astype(np.uint8))]),
    "fp8": ("fp8_e4m3fn_row_bf16", "row_scale_v1",
            [(K, lambda r, n: no_e4m3_nan(rand(r, n))),
             (2, lambda r, n: np.stack([rand(r, n // 2),
                                        (0x3C + r.integers(0, 4, n // 2, dtype=np.uint8))
                                        .astype(np.uint8)], axis=1).reshape(-1))]),
}


def write_object(path, rows, planes, rng, tail=b""):
    with open(path, "wb") as f:
        for per_row, gen in planes:
            left = rows
            while left:
                n = min(left, CHUNK_ROWS)
                f.write(gen(rng, n * per_row).tobytes())
                left -= n
        f.write(tail)


def main():
    out, rows = sys.argv[1], int(sys.argv[2])
    names = sys.argv[3:] or list(FORMATS)
    if rows <= 0 or rows % 128:
        sys.exit("gen_formats.py: ROWS must be a positive multiple of 128")
    os.makedirs(out, exist_ok=True)
    rng = np.random.default_rng(15)
    objects, bindings = [], {}
    for name in names:
        fmt, layout, planes = FORMATS[name]
        src = os.path.abspath(os.path.join(out, name + ".bin"))
        # nvfp4: D = 1, its one binary32 divisor 2.0 after the scales
        tail = np.array([2.0], dtype="<f4").tobytes() if name == "nvfp4" else b""
        write_object(src, rows, planes, rng, tail)
        objects.append({"id": "w." + name, "kind": "tensor", "format": fmt, "layout": layout,
                        "shape": [rows, K], "source": src})
        bindings["bench/" + name] = {"object": "w." + name}
    manifest = {"components": {"bench": {"config": {}}}, "objects": objects,
                "bindings": bindings, "uses": []}
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=1)


if __name__ == "__main__":
    main()
