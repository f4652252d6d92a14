#!/usr/bin/env bash
# lseek(2) SEEK_DATA / SEEK_HOLE through the mount (fs/ops.c op_lseek,
# fs/view.c nf_view_seek): a standalone row payload of a parts binding
# (codecs §2.7) is data where its planes' row bytes are and holes in the
# zero runs between and after them, exactly; a plain object, a document, a
# decoded view and stats are one data extent (stats: st_size 0, ENXIO).
# The oracle is the plane geometry of codecs §2.7 computed here from the
# manifest (as bindings.sh does), not the daemon's pieces; the holes are
# also read back as zeros.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
python3 - "$d" "$mnt" <<PY || fail "SEEK_DATA/SEEK_HOLE"
import errno, json, os, sys
$PY_ESC
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
objs = {o["id"]: o for o in m["objects"]}
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

def data_extents(b):
    """The standalone payload's data intervals (merged), its size; None when
    the binding has no row leaf."""
    if "object" in b:
        return None
    ps = [(objs[p["object"]], p["range"]) for p in b["parts"]]
    lays = {o["layout"] for o, _ in ps}; fmts = {o["format"] for o, _ in ps}
    if len(lays) != 1 or len(fmts) != 1:
        return None
    lay = lays.pop()
    if lay not in ("row_split_k128_v1", "row_scale_v1"):
        return None
    Ks = {o["shape"][1] for o, _ in ps}
    if len(Ks) != 1:
        return None
    K = Ks.pop()
    if any(r[0] % K or r[1] % K for _, r in ps):
        return None
    rows = sum((r[1] - r[0]) // K for _, r in ps)
    geo = rs_planes if lay == "row_split_k128_v1" else rsc_planes
    planes, total = geo(ps[0][0], rows)
    ext = []
    for off, rowlen in planes:
        lo, hi = off, off + rows * rowlen
        if hi == lo:
            continue
        if ext and ext[-1][1] == lo:
            ext[-1] = (ext[-1][0], hi)
        else:
            ext.append((lo, hi))
    return ext, total

def seek(fd, off, how):
    try:
        return os.lseek(fd, off, how)
    except OSError as e:
        assert e.errno == errno.ENXIO, e
        return None

def walk(path):
    """Data extents by SEEK_DATA/SEEK_HOLE from 0."""
    fd = os.open(path, os.O_RDONLY)
    try:
        size, pos, ext = os.fstat(fd).st_size, 0, []
        while pos < size:
            dat = seek(fd, pos, os.SEEK_DATA)
            if dat is None:
                break
            hole = seek(fd, dat, os.SEEK_HOLE)
            assert hole is not None and dat < hole <= size, (path, dat, hole, size)
            ext.append((dat, hole))
            pos = hole
        assert seek(fd, size, os.SEEK_DATA) is None and seek(fd, size, os.SEEK_HOLE) is None
        return ext, size
    finally:
        os.close(fd)

tested = gapped = 0
for b in m["bindings"]:
    want = data_extents(b)
    if want is None:
        continue
    ext, total = want
    p = os.path.join(mnt, "bindings", *[esc(c) for c in b["name"].split("/")])
    if os.path.isdir(p):
        p = os.path.join(p, "%self")
    got, size = walk(p)
    assert size == total, (b["name"], size, total)
    assert got == ext, (b["name"], got, ext)
    # every hole reads as zeros; SEEK_HOLE inside a hole is that offset,
    # SEEK_DATA inside one the next extent (or ENXIO after the last)
    data = open(p, "rb").read()
    holes = [(hi, ext[i + 1][0] if i + 1 < len(ext) else total) for i, (lo, hi) in enumerate(ext)]
    holes = [(lo, hi) for lo, hi in holes if hi > lo]
    if ext and ext[0][0] > 0:
        holes.insert(0, (0, ext[0][0]))
    fd = os.open(p, os.O_RDONLY)
    for i, (lo, hi) in enumerate(holes):
        assert data[lo:hi] == bytes(hi - lo), (b["name"], lo, hi)
        mid = (lo + hi) // 2
        assert seek(fd, mid, os.SEEK_HOLE) == mid
        nxt = [e[0] for e in ext if e[0] >= hi]
        assert seek(fd, mid, os.SEEK_DATA) == (nxt[0] if nxt else None), (b["name"], mid)
    os.close(fd)
    tested += 1
    gapped += len(holes) > 0 and len(ext) > 1
assert tested >= 3 and gapped >= 1, (tested, gapped)
print("row bindings:", tested, "walked,", gapped, "with a hole between data extents")

# a plain object, a document, a decoded view: one data extent; stats: none
for rel in ("objects/" + esc(m["objects"][0]["id"]), "validation.json",
            "decoded/objects/" + esc(m["objects"][0]["id"])):
    p = os.path.join(mnt, rel)
    got, size = walk(p)
    assert size > 0 and got == [(0, size)], (rel, got, size)
    fd = os.open(p, os.O_RDONLY)
    assert seek(fd, size // 2, os.SEEK_DATA) == size // 2
    assert seek(fd, size // 2, os.SEEK_HOLE) == size
    os.close(fd)
fd = os.open(os.path.join(mnt, "stats"), os.O_RDONLY)
assert seek(fd, 0, os.SEEK_DATA) is None and seek(fd, 0, os.SEEK_HOLE) is None
os.close(fd)
print("objects, documents, decoded views: one data extent; stats: ENXIO")
PY
ok "SEEK_DATA/SEEK_HOLE of row payloads with holes, objects, documents, decoded, stats"
# cp --sparse=always keeps the holes and the bytes
q=$(python3 - "$d" "$mnt" <<'PY'
import json, os, sys
sys.path.insert(0, os.environ["PYTHONPATH"].split(":")[0])
from nfnames import esc
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
for b in m["bindings"]:
    if b["name"] == "text/layers/0/attention/query":
        print(os.path.join(mnt, "bindings", *[esc(c) for c in b["name"].split("/")]))
PY
)
[ -f "$q" ] || fail "no query binding: $q"
cp --sparse=always "$q" "$T/q.copy"
cmp "$q" "$T/q.copy" || fail "cp --sparse=always changed the bytes"
ok "cp --sparse=always of a row payload: same bytes"
unmount "$mnt"
