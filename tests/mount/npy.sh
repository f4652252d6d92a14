#!/usr/bin/env bash
# decoded/npy/: every decoded file as an NPY file (issue 15, man
# ninferfs.5).  On the split `mixed` set (every format and layout) with
# decoded_dtype f32, bf16 and f16, and on `text` and `unknown` in f32:
# - the npy tree has exactly the decoded files' names plus ".npy" (a
#   binding stored as <dir>/%self is <dir>.npy);
# - each preamble checked byte by byte against the NPY format description
#   (magic, version 1.0, little-endian uint16 length, the dict literal
#   parsed by Python's own literal parser, spaces and '\n', a multiple of
#   64 bytes and the smallest such), st_size exact;
# - np.load, plain and mmap_mode="r", equals np.fromfile of the decoded
#   file reshaped by user.ninfer.shape (bf16 as its uint16 words);
# - O_DIRECT reads across the preamble/data boundary equal the slices of
#   the whole file; an undecodable object's .npy fails as its decoded file;
# - every tensor of decoded/model.safetensors as a numpy.memmap at its
#   data_offsets (the way safetensors' safe_open maps it) equals np.load
#   of its binding's .npy.
# And the names of the npy tree by the man page's rule, not from the
# decoded tree: on `hostile`, `names` and a packed set of the rule's edge
# cases, decoded/npy/objects/ holds esc(id + ".npy") and
# decoded/npy/bindings/ the name's directories and esc(leaf + ".npy") (no
# %self: "a/b" beside "a/b/c" is a/b.npy; a leaf cut with the suffix ends
# in the hash of the suffixed name; no file when another binding is named
# "<name>.npy/..."), each the NPY file of its decoded file.
. "$(dirname "$0")/lib.sh"

check_npy() { # DIR MNT
	python3 - "$@" <<'PY'
import ast, errno, json, os, sys
import numpy as np
from nfnames import esc   # the naming rule of man ninferfs.5 (tests/pylib)
d, mnt = sys.argv[1], sys.argv[2]
dec = os.path.join(mnt, "decoded")
npy = os.path.join(dec, "npy")
DESCR = {"f32": "<f4", "f16": "<f2", "bf16": "<u2", "int32": "<i4"}

def files(top):
    out = {}
    for root, dirs, names in os.walk(top):
        for n in names:
            p = os.path.join(root, n)
            out[os.path.relpath(p, top)] = p
    return out

# the names: decoded/{objects,bindings}/X -> npy/{...}/X.npy
want = {}
for sub in ("objects", "bindings"):
    for rel, p in files(os.path.join(dec, sub)).items():
        if os.path.basename(rel) == "%self":
            rel = os.path.dirname(rel)
        want[os.path.join(sub, rel + ".npy")] = p
got = files(npy)
assert sorted(got) == sorted(want), (sorted(set(got) ^ set(want)))[:10]

def check_preamble(raw, descr, shape, what):
    assert raw[:6] == b"\x93NUMPY", what
    assert raw[6] == 1 and raw[7] == 0, (what, raw[6:8])        # version 1.0
    hlen = raw[8] | raw[9] << 8                                   # uint16 LE
    pre = 10 + hlen
    assert pre % 64 == 0, (what, pre)
    text = raw[10:pre]
    assert text.endswith(b"\n"), what
    body = text[:-1].rstrip(b" ")
    assert text[len(body):-1] == b" " * (hlen - 1 - len(body)), what   # only spaces
    assert (len(body) + 1 + 10 + 63) // 64 * 64 == pre, (what, "not minimal")
    assert all(32 <= c < 127 for c in body), what               # ASCII
    lit = ast.literal_eval(body.decode("ascii"))
    assert lit == {"descr": descr, "fortran_order": False, "shape": tuple(shape)}, (what, lit)
    assert isinstance(lit["shape"], tuple), what
    return pre

n = bad = 0
for rel, p in sorted(got.items()):
    src = want[rel]
    dt = os.getxattr(src, "user.ninfer.dtype").decode()
    assert os.getxattr(p, "user.ninfer.dtype").decode() == dt, rel
    assert os.getxattr(p, "user.ninfer.kind") == b"npy", rel
    shape = json.loads(os.getxattr(src, "user.ninfer.shape"))
    assert json.loads(os.getxattr(p, "user.ninfer.shape")) == shape, rel
    try:
        body = open(src, "rb").read()
    except OSError as e:
        # undecodable: the .npy fails the same way, whole or in part
        for off, ln in ((0, 1), (0, 1 << 20), (200, 10)):
            fd = os.open(p, os.O_RDONLY)
            try:
                os.pread(fd, ln, off)
                raise SystemExit("read of undecodable " + rel)
            except OSError as e2:
                assert e2.errno == e.errno, (rel, e2, e)
            finally:
                os.close(fd)
        bad += 1
        continue
    raw = open(p, "rb").read()
    descr = DESCR[dt]
    pre = check_preamble(raw, descr, shape, rel)
    assert raw[pre:] == body, rel
    assert os.stat(p).st_size == pre + len(body) == len(raw), rel
    ref = np.fromfile(src, dtype=np.dtype(descr)).reshape(shape)
    for mm in (None, "r"):
        a = np.load(p, mmap_mode=mm)
        assert a.dtype == np.dtype(descr) and a.shape == tuple(shape), (rel, a.dtype, a.shape)
        assert a.tobytes() == ref.tobytes(), (rel, mm)
        del a
    fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
    for off in range(max(0, pre - 5), pre + 6):
        for ln in (1, 3, 7, 64, 4099):
            assert os.pread(fd, ln, off) == raw[off:off + ln], (rel, off, ln)
    os.close(fd)
    n += 1
# decoded/model.safetensors the way safetensors.safe_open reads it: the
# header by json, each tensor a numpy.memmap at its data_offsets; each
# equals np.load of its binding's .npy
st = os.path.join(dec, "model.safetensors")
with open(st, "rb") as f:
    hn = int.from_bytes(f.read(8), "little")
    hdr = json.loads(f.read(hn))
ST = {"F32": "<f4", "F16": "<f2", "BF16": "<u2", "I32": "<i4"}
nt = 0
for name, t in hdr.items():
    if name == "__metadata__":
        continue
    a0, a1 = t["data_offsets"]
    mm = np.memmap(st, dtype=ST[t["dtype"]], mode="r", offset=8 + hn + a0,
                   shape=tuple(t["shape"]))
    assert mm.nbytes == a1 - a0, name
    p = os.path.join(npy, "bindings", *[esc(c) for c in name.split("/")]) + ".npy"
    ref = np.load(p, mmap_mode="r")
    assert ref.dtype == mm.dtype and ref.shape == mm.shape, (name, ref.dtype, mm.dtype)
    assert ref.tobytes() == mm.tobytes(), name
    del mm, ref
    nt += 1
print("npy files", n, "undecodable", bad, "safetensors tensors", nt)
assert n > 0 and nt > 0
PY
}

for set in mixed text unknown; do
	d=$(fixture $set)
	mount_fg "$d/$set.ninfer" "$T/mnt-$set"
	check_npy "$d" "$T/mnt-$set" || fail "npy of $set, f32"
	unmount "$T/mnt-$set"
	ok "decoded/npy of $set, f32"
done
d=$T/mixed
for dt in bf16 f16; do
	mount_fg "$d/mixed.ninfer" "$T/mnt-$dt" -o decoded_dtype=$dt
	check_npy "$d" "$T/mnt-$dt" || fail "npy of mixed, $dt"
	unmount "$T/mnt-$dt"
	ok "decoded/npy of mixed, $dt"
done


# The npy tree's names from the rule of man ninferfs.5 (decoded/npy/ and
# NAMES), applied to the manifest's names (tests/pylib/nfnames.py).
check_npy_names() { # DIR MNT
	python3 - "$@" <<'PY'
import json, os, sys
from nfnames import esc, binding_dirs, binding_path
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
dec = os.path.join(mnt, "decoded")
npy = os.path.join(dec, "npy")

def files(top):
    out = set()
    for root, _, names in os.walk(top):
        out |= {os.path.relpath(os.path.join(root, n), top) for n in names}
    return out

def same(p, src, name):
    raw = open(p, "rb").read()
    pre = 10 + (raw[8] | raw[9] << 8)
    assert raw[:6] == b"\x93NUMPY" and pre % 64 == 0, p
    assert raw[pre:] == open(src, "rb").read(), (p, src)
    assert os.getxattr(p, "user.ninfer.name").decode() == name, (p, name)

want = {}
for o in m["objects"]:
    src = os.path.join(dec, "objects", esc(o["id"]))
    if o["kind"] == "tensor" and os.path.isfile(src):
        want[esc(o["id"] + ".npy")] = (src, o["id"])
got = files(os.path.join(npy, "objects"))
assert got == set(want), (sorted(got - set(want))[:3], sorted(set(want) - got)[:3])
for rel, (src, name) in want.items():
    same(os.path.join(npy, "objects", rel), src, name)

names = [b["name"] for b in m["bindings"]]
dirs = binding_dirs(names)
want, gone = {}, 0
for n in names:
    src = os.path.join(dec, "bindings", *binding_path(n, dirs))
    if not os.path.isfile(src):
        continue
    if any(x.startswith(n + ".npy/") for x in names):
        gone += 1          # its name is a directory of the npy tree
        continue
    cs = n.split("/")
    want[os.path.join(*[esc(c) for c in cs[:-1]], esc(cs[-1] + ".npy"))] = (src, n)
got = files(os.path.join(npy, "bindings"))
assert got == set(want), (sorted(got - set(want))[:3], sorted(set(want) - got)[:3])
for rel, (src, name) in want.items():
    same(os.path.join(npy, "bindings", rel), src, name)
print("npy names: objects", len([o for o in m["objects"] if o["kind"] == "tensor"]),
      "bindings", len(want), "no file", gone)
PY
}

# The rule's edge cases, packed: an id and a binding leaf of 252 bytes
# (fit as they are, cut with ".npy"), 251 bytes (255 with it: not cut), a
# binding "p" beside "p.npy/q" (no p.npy file), "a/b" beside "a/b/c"
# (a/b.npy and a/b/c.npy), an empty leaf "a/" (a/.npy), a leaf "%self".
: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}"
mkdir -p "$T/edge"
python3 - "$T/edge" <<'PY'
import json, os, sys
out = sys.argv[1]
ids = ["o" * 252, "o" * 251, "w", "x.npy"]
objs = []
for i, oid in enumerate(ids):
    with open(os.path.join(out, "%d.bin" % i), "wb") as f:
        f.write(bytes(range(2 * i + 1, 2 * i + 9)))   # bf16 [4]
    objs.append({"id": oid, "kind": "tensor", "shape": [4], "format": "bf16",
                 "layout": "contiguous_le_v1", "source": "%d.bin" % i})
names = ["p", "p.npy/q", "a/", "a/b", "a/b/c", "a/%self", "L" * 252, "d/" + "L" * 251,
         "x", "x.npy"]
bind = {n: {"object": ids[k % len(ids)]} for k, n in enumerate(names)}
json.dump({"components": {"text": {"config": {}}}, "objects": objs, "bindings": bind,
           "uses": []}, open(os.path.join(out, "m.json"), "w"))
PY
"$NINFER_PACK" create -q --manifest "$T/edge/m.json" "$T/edge/edge.ninfer" ||
	fail "ninfer-pack of the edge-case names"
mkdir -p "$T/edge/expect"
python3 - "$T/edge" <<'PY'
import json, os, sys
d = sys.argv[1]
m = json.load(open(os.path.join(d, "m.json")))
json.dump({"objects": [{"id": o["id"], "kind": o["kind"]} for o in m["objects"]],
           "bindings": [{"name": n} for n in m["bindings"]]},
          open(os.path.join(d, "expect/manifest.json"), "w"))
PY
for set in hostile names edge; do
	if [ "$set" = edge ]; then d=$T/edge; else d=$(fixture $set); fi
	mount_fg "$d/$set.ninfer" "$T/mnt-n-$set"
	check_npy_names "$d" "$T/mnt-n-$set" || fail "npy names of $set"
	unmount "$T/mnt-n-$set"
	ok "decoded/npy names of $set by the rule"
done
