#!/usr/bin/env bash
# bindings/ leaves of whole-rows nvfp4 bindings (issue 11, item 12; man
# ninferfs.5, BINDINGS and FORMATS): on 128-row tiles inside one divisor
# share of one parent, the leaf is a standalone nvfp4 payload of the rows
# (D = 1, that share's divisor).  Checked three ways:
#   - its bytes equal the payload built here from the parent's bytes by
#     codecs.md §3.1/§3.3 (codes rows, the tile-rows' scale spans, the
#     share's divisor word, zero fill);
#   - decoded here with a numpy decoder written from codecs.md §3.2-§3.5, it
#     gives bit for bit the values of decoded/bindings/<name>;
#   - packed as an object of its own (ninfer-pack) and mounted, the project's
#     decoder gives the same values in decoded/objects/, and ninfer-check
#     --deep passes it.
# Bindings off the tiles, across shares, over two parents or two formats
# have no raw leaf (decoded/ only).
. "$(dirname "$0")/lib.sh"
: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}" "${NINFER_CHECK:?}"

d=$(fixture nvfp4rows)
mnt=$T/mnt
mount_fg "$d/nvfp4rows.ninfer" "$mnt"
mkdir -p "$T/leaves"
python3 - "$d" "$mnt" "$T/leaves" <<'PY' || fail "nvfp4 leaves"
import json, os, sys
import numpy as np
d, mnt, out = sys.argv[1], sys.argv[2], sys.argv[3]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
objs = {o["id"]: o for o in m["objects"]}
data = lambda o: open(os.path.join(d, "expect", o["expect_bytes"]), "rb").read()
up = lambda x, a: (x + a - 1) // a * a

# codecs.md §0.1 / §3: E2M1 and E4M3FN values, the swizzle, the divide
E2M1 = np.array([0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0,
                 -0.0, -0.5, -1.0, -1.5, -2.0, -3.0, -4.0, -6.0], dtype=np.float32)
def e4m3(b):
    s = -1.0 if b & 0x80 else 1.0
    e, mant = (b >> 3) & 15, b & 7
    if e == 15 and mant == 7:
        return np.float32("nan")
    return np.float32(s * (mant * 2.0 ** -9 if e == 0 else (1 + mant / 8) * 2.0 ** (e - 7)))
E4M3 = np.array([e4m3(b) for b in range(256)], dtype=np.float32)

def geometry(N, K, D):
    code = N * K // 2
    so = up(code, 256)
    return code, so, so + N * K // 16, so + N * K // 16 + 4 * D

def decode(buf, N, K, D):
    code, so, do, total = geometry(N, K, D)
    assert len(buf) == total, (len(buf), total)
    c = np.frombuffer(buf, np.uint8, code)
    codes = np.empty(N * K, np.uint8)
    codes[0::2], codes[1::2] = c & 0xF, c >> 4
    codes = codes.reshape(N, K)
    n = np.arange(N)[:, None]
    g = (np.arange(K) // 16)[None, :]
    off = (n // 128 * (K // 64) + g // 4) * 512 + (n % 32) * 16 + (n % 128) // 32 * 4 + g % 4
    sc = np.frombuffer(buf, np.uint8, N * K // 16, so)[off]
    div = np.frombuffer(buf, "<f4", D, do)
    p = E2M1[codes] * E4M3[sc]                       # exact in binary32
    return (p / div[n // (N // D)]).astype(np.float32)   # one binary32 division

def standalone(o, parts):
    """The payload of the rows of `parts` (all in one share of `o`)."""
    N, K = o["shape"]
    D = o.get("divisors", 1)
    code, so, do, _ = geometry(N, K, D)
    src = data(o)
    rows = sum((b - a) // K for a, b in parts)
    scode, sso, sdo, stotal = geometry(rows, K, 1)
    buf = bytearray(stotal)
    pc, ps = 0, sso
    for a, b in parts:
        r0, c = a // K, (b - a) // K
        buf[pc:pc + c * K // 2] = src[r0 * K // 2:(r0 + c) * K // 2]
        pc += c * K // 2
        buf[ps:ps + c * K // 16] = src[so + r0 * K // 16:so + (r0 + c) * K // 16]
        ps += c * K // 16
    share = N // D
    r0 = parts[0][0] // K
    buf[sdo:sdo + 4] = src[do + 4 * (r0 // share):do + 4 * (r0 // share) + 4]
    return bytes(buf), rows, K

leaves = 0
for b in m["bindings"]:
    name = b["name"]
    raw = os.path.join(mnt, "bindings", name)
    dec = np.fromfile(os.path.join(mnt, "decoded/bindings", name), "<f4")
    if name.startswith("none/"):
        assert not os.path.exists(raw), "a raw leaf for " + name
        continue
    if name == "whole":
        assert open(raw, "rb").read() == data(objs["w.n2"])
        continue
    o = objs[b["parts"][0]["object"]]
    want, rows, K = standalone(o, [tuple(p["range"]) for p in b["parts"]])
    got = open(raw, "rb").read()
    assert got == want, (name, len(got), len(want))
    assert json.loads(os.getxattr(raw, "user.ninfer.shape")) == [rows, K]
    # payload bytes of the leaf: codes, scales and one divisor (zero fill not counted)
    assert int(os.getxattr(raw, "user.ninfer.bytes")) == rows * K // 2 + rows * K // 16 + 4
    mine = decode(got, rows, K, 1).reshape(-1)
    assert mine.view("<u4").tobytes() == dec.view("<u4").tobytes(), "numpy decode of " + name
    open(os.path.join(out, name.replace("/", "_") + ".bin"), "wb").write(got)
    open(os.path.join(out, name.replace("/", "_") + ".json"), "w").write(json.dumps([rows, K]))
    leaves += 1
assert leaves == 5, leaves
print("5 nvfp4 leaves: right bytes, numpy decode = decoded/bindings; 6 without a leaf")
PY

# Every leaf as an object of its own, decoded by the project's decoder.
python3 - "$T/leaves" <<'PY'
import json, os, sys
d = sys.argv[1]
names = sorted(f[:-4] for f in os.listdir(d) if f.endswith(".bin"))
objs = [{"id": n, "kind": "tensor", "shape": json.load(open(os.path.join(d, n + ".json"))),
         "format": "nvfp4", "layout": "block_scale_k16_m128x4_v1", "source": n + ".bin"}
        for n in names]
json.dump({"components": {"text": {"config": {}}}, "objects": objs,
           "bindings": {n: {"object": n} for n in names}, "uses": []},
          open(os.path.join(d, "m.json"), "w"))
PY
"$NINFER_PACK" create -q --manifest "$T/leaves/m.json" "$T/leaves/l.ninfer" ||
	fail "the leaves are not valid nvfp4 objects (ninfer-pack)"
"$NINFER_CHECK" --deep "$T/leaves/l.ninfer" >"$T/check.txt" || fail "ninfer-check --deep: $(cat "$T/check.txt")"
mount_fg "$T/leaves/l.ninfer" "$T/mnt2"
for f in "$T"/leaves/*.bin; do
	n=$(basename "$f" .bin)
	cmp -s "$T/mnt2/decoded/objects/$n" "$mnt/decoded/bindings/${n/_//}" ||
		fail "$n: the project's decode of the leaf differs from decoded/bindings"
done
unmount "$T/mnt2"
unmount "$mnt"
ok "nvfp4 whole-rows leaves: standalone payloads, decoded alike three ways"
