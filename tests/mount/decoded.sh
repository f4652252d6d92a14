#!/usr/bin/env bash
# decoded/: objects and bindings dequantized (f32, bf16), model.safetensors,
# unknown formats fail with EOPNOTSUPP.
. "$(dirname "$0")/lib.sh"

check_decoded() { # DIR MNT DTYPE
	python3 - "$@" <<PY
import errno, json, os, struct, sys
import numpy as np
$PY_ESC
d, mnt, dtype = sys.argv[1], sys.argv[2], sys.argv[3]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
objs = {o["id"]: o for o in m["objects"]}

def bf16(f32):
    u = f32.view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    nan = np.isnan(f32)
    r[nan] = ((u[nan] >> 16) | 0x40).astype(np.uint16)
    return r
def f16(f32):
    return f32.astype(np.float16).view(np.uint16)

def values(o):
    if not o.get("expect_decoded"):
        return None
    p = os.path.join(d, "expect", o["expect_decoded"])
    if p.endswith(".i32"):
        return np.fromfile(p, dtype=np.int32).view(np.uint8)
    v = np.fromfile(p, dtype=np.float32)
    conv = {"f32": lambda x: x.view(np.uint32), "bf16": bf16, "f16": f16}[dtype]
    return conv(v).view(np.uint8)

def per_elem(o):
    return 4 if o.get("expect_decoded", "").endswith(".i32") or dtype == "f32" else 2

n = 0
for o in m["objects"]:
    if o["kind"] != "tensor":
        continue
    p = os.path.join(mnt, "decoded/objects", esc(o["id"]))
    want = values(o)
    if want is None:   # unknown format: the file is there, reads fail
        try:
            open(p, "rb").read(); raise SystemExit("read of undecodable " + o["id"])
        except OSError as e:
            assert e.errno == errno.EOPNOTSUPP, (o["id"], e)
        continue
    got = np.fromfile(p, dtype=np.uint8)
    assert got.size == want.size, (o["id"], got.size, want.size)
    assert (got == want).all(), "decoded/objects/" + o["id"]
    is_int = o.get("expect_decoded", "").endswith(".i32")
    assert os.getxattr(p, "user.ninfer.dtype").decode() == ("int32" if is_int else dtype)
    # a few unaligned reads
    fd = os.open(p, os.O_RDONLY)
    for off, ln in ((1, 5), (got.size // 2 + 3, 1001), (max(0, got.size - 3), 10)):
        assert os.pread(fd, ln, off) == want[off:off + ln].tobytes(), (o["id"], off, ln)
    os.close(fd)
    n += 1
nb = 0
for b in m["bindings"]:
    p = os.path.join(mnt, "decoded/bindings", *[esc(c) for c in b["name"].split("/")])
    if os.path.isdir(p):
        p = os.path.join(p, "%self")
    parts = [{"object": b["object"], "range": [0, None]}] if "object" in b else b["parts"]
    chunks = []
    for pt in parts:
        o = objs[pt["object"]]
        v = values(o)
        if v is None:
            chunks = None; break
        e = per_elem(o)
        lo, hi = pt["range"][0], pt["range"][1] if pt["range"][1] is not None else v.size // e
        chunks.append(v[lo * e:hi * e])
    if chunks is None or not os.path.exists(p):
        continue
    got = np.fromfile(p, dtype=np.uint8)
    want = np.concatenate(chunks)
    assert got.size == want.size and (got == want).all(), "decoded/bindings/" + b["name"]
    assert json.loads(os.getxattr(p, "user.ninfer.shape")) == b["shape"]
    nb += 1
# model.safetensors: header parses, every tensor equals its decoded binding
st = os.path.join(mnt, "decoded/model.safetensors")
raw = open(st, "rb").read()
assert len(raw) == os.path.getsize(st)
h = struct.unpack_from("<Q", raw, 0)[0]
hdr = json.loads(raw[8:8 + h])
data = raw[8 + h:]
nt = 0
for name, t in hdr.items():
    if name == "__metadata__":
        continue
    p = os.path.join(mnt, "decoded/bindings", *[esc(c) for c in name.split("/")])
    if os.path.isdir(p):
        p = os.path.join(p, "%self")
    a, z = t["data_offsets"]
    assert data[a:z] == open(p, "rb").read(), name
    nt += 1
print(dtype, "decoded objects", n, "bindings", nb, "safetensors tensors", nt)
PY
}

for set in mixed text unknown; do
	d=$(fixture $set)
	mount_fg "$d/$set.ninfer" "$T/mnt-$set"
	check_decoded "$d" "$T/mnt-$set" f32 || fail "decoded f32 of $set"
	unmount "$T/mnt-$set"
	ok "decoded f32 of $set"
done
d=$T/mixed
mount_fg "$d/mixed.ninfer" "$T/mnt-bf" -o decoded_dtype=bf16
check_decoded "$d" "$T/mnt-bf" bf16 || fail "decoded bf16"
unmount "$T/mnt-bf"
ok "decoded bf16 of mixed"
mount_fg "$d/mixed.ninfer" "$T/mnt-f16" -o decoded_dtype=f16
check_decoded "$d" "$T/mnt-f16" f16 || fail "decoded f16"
ok "decoded f16 of mixed"
