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
