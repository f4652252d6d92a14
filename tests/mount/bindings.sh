#!/usr/bin/env bash
# bindings/: whole objects, byte-range concatenations over contiguous
# parents, standalone row payloads (codecs §2.7, §3.6, §4.1) over row_split,
# row_scale and (on tiles inside one divisor share) nvfp4 parents; other
# parts bindings have no raw leaf.
. "$(dirname "$0")/lib.sh"

for set in interleaved mixed text shared nvfp4rows; do
	d=$(fixture $set)
	mnt=$T/mnt-$set
	mount_fg "$d/$set.ninfer" "$mnt"
	python3 - "$d" "$mnt" <<PY || fail "bindings of $set"
import json, os, sys
$PY_ESC
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
objs = {o["id"]: o for o in m["objects"]}
data = lambda o: open(os.path.join(d, "expect", o["expect_bytes"]), "rb").read()
up = lambda x, a: (x + a - 1) // a * a
RS = {"q2_g64_fp16": (64, 16, 0), "q4_g64_fp16": (64, 32, 0), "q5_g64_fp16": (64, 32, 8),
      "q6_g64_fp16": (64, 32, 16), "q8_g32_fp16": (32, 32, 0), "t2_g128_fp16": (128, 32, 0)}

def rs_planes(o, N):
    G, B, H = RS[o["format"]]
    K = o["shape"][1]; gpr = up(K, 128) // G
    high = up(N * gpr * B, 256); sc = high + up(N * gpr * H, 256)
    return [(0, gpr * B), (high, gpr * H), (sc, gpr * 2)], sc + N * gpr * 2

def rsc_planes(o, N):
    K = o["shape"][1]; sc = up(N * K, 256)
    return [(0, K), (sc, 2)], sc + 2 * N

def nvfp4_rows(ps):
    """codecs §3.6: one parent, 128-row tiles, one divisor share -> the
    standalone [rows, K] object with D = 1 (the share's divisor)."""
    o = ps[0][0]
    N, K = o["shape"]; D = o.get("divisors", 1); share = N // D
    if any(q is not o for q, _ in ps): return None
    spans = [(r[0] // K, (r[1] - r[0]) // K) for _, r in ps]
    if any(r[0] % K or r[1] % K or r0 % 128 or c % 128 or c == 0 for (_, r), (r0, c) in zip(ps, spans)):
        return None
    if len({r0 // share for r0, c in spans} | {(r0 + c - 1) // share for r0, c in spans}) != 1:
        return None
    src = data(o); so = up(N * K // 2, 256); do = so + N * K // 16
    rows = sum(c for _, c in spans)
    sso = up(rows * K // 2, 256)
    codes = b"".join(src[r0 * K // 2:(r0 + c) * K // 2] for r0, c in spans)
    scales = b"".join(src[so + r0 * K // 16:so + (r0 + c) * K // 16] for r0, c in spans)
    w = spans[0][0] // share
    return codes + bytes(sso - len(codes)) + scales + src[do + 4 * w:do + 4 * w + 4]

def expected(b):
    if "object" in b:
        return data(objs[b["object"]])
    ps = [(objs[p["object"]], p["range"]) for p in b["parts"]]
    lays = {o["layout"] for o, _ in ps}; fmts = {o["format"] for o, _ in ps}
    if len(lays) != 1 or len(fmts) != 1:
        return None
    lay = lays.pop()
    if lay == "contiguous_le_v1":
        w = 2 if ps[0][0]["format"] == "bf16" else 4
        return b"".join(data(o)[r[0] * w:r[1] * w] for o, r in ps)
    if lay == "block_scale_k16_m128x4_v1":
        return nvfp4_rows(ps)
    if lay not in ("row_split_k128_v1", "row_scale_v1"):
        return None
    Ks = {o["shape"][1] for o, _ in ps}
    if len(Ks) != 1: return None
    K = Ks.pop()
    if any(r[0] % K or r[1] % K for _, r in ps): return None
    rows = sum((r[1] - r[0]) // K for _, r in ps)
    geo = rs_planes if lay == "row_split_k128_v1" else rsc_planes
    sub, sub_bytes = geo(ps[0][0], rows)
    out = bytearray(sub_bytes)
    for pi in range(len(sub)):
        pos = sub[pi][0]
        for o, r in ps:
            par, _ = geo(o, o["shape"][0])
            off, rowlen = par[pi]
            r0, c = r[0] // K, (r[1] - r[0]) // K
            chunk = data(o)[off + r0 * rowlen: off + (r0 + c) * rowlen]
            out[pos:pos + len(chunk)] = chunk
            pos += len(chunk)
    return bytes(out)

present = absent = 0
for b in m["bindings"]:
    p = os.path.join(mnt, "bindings", *[esc(c) for c in b["name"].split("/")])
    if os.path.isdir(p):
        p = os.path.join(p, "%self")
    want = expected(b)
    if want is None:
        assert not os.path.exists(p), "unexpected raw leaf " + b["name"]
        absent += 1
        continue
    got = open(p, "rb").read()
    assert os.path.getsize(p) == len(want), (b["name"], os.path.getsize(p), len(want))
    assert got == want, "content of binding " + b["name"]
    shape = json.loads(os.getxattr(p, "user.ninfer.shape"))
    assert shape == b["shape"], (b["name"], shape, b["shape"])
    present += 1
print("$set: bindings present", present, "absent", absent)
PY
	ok "bindings of $set"
	unmount "$mnt"
done
# interleaved: query = rows 0-1 and 4-5 of the bf16 [8,4] parent
d=$T/interleaved
mount_fg "$d/interleaved.ninfer" "$T/mnt-il"
q=$(find "$T/mnt-il/bindings" -name query -o -name '*query*' -type f | sed -n 1p)
[ -n "$q" ] || fail "no query binding"
exp=$(python3 -c "
import json,sys
m=json.load(open('$d/expect/manifest.json'))
print(next(o['expect_bytes'] for o in m['objects'] if o['id']=='interleaved'))")
a=$(cat "$q" | sha256sum)
b=$( (dd if="$d/expect/$exp" bs=16 skip=0 count=1 status=none; dd if="$d/expect/$exp" bs=16 skip=2 count=1 status=none) | sha256sum)
[ "$a" = "$b" ] || fail "query = rows 0-1 and 4-5"
ok "interleaved query = rows 0-1 and 4-5"
