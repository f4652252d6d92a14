#!/usr/bin/env bash
# Decoded reads at odd offsets and lengths through the daemon (issue 15:
# every source span of a request is fetched in one engine read now).  With
# O_DIRECT the kernel passes the offset and length of each read as they
# are, so the daemon sees 1-byte reads, reads that start and end inside an
# element, and reads across scale-group, block, row and part boundaries.
# On the split `mixed` set (every format and layout; objects and planes
# across the set's files) with decoded_dtype f32, bf16 and f16, every
# decoded file and model.safetensors: each such read equals the same slice
# of a whole read, and the daemon counted each read as one request with
# one engine submission at most; and each whole decoded file, read in one
# request, is exactly one engine submission carrying every source segment.
. "$(dirname "$0")/lib.sh"

check_odd() { # DIR MNT
	python3 - "$@" <<'PY'
import json, os, sys
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
sys.path.insert(0, os.environ["PYTHONPATH"].split(":")[0])
from nfnames import esc   # the naming rule of man ninferfs.5 (tests/pylib)

def stats():
    return json.load(open(os.path.join(mnt, "stats")))

def st_boundaries(whole):
    """model.safetensors: the header's end and every tensor's ends."""
    h = int.from_bytes(whole[:8], "little")
    out = {8 + h}
    for k, t in json.loads(whole[8:8 + h]).items():
        if k != "__metadata__":
            out |= {8 + h + t["data_offsets"][0], 8 + h + t["data_offsets"][1]}
    return sorted(out)

SRC_ESZ = {"bf16": 2, "fp32": 4, "int32": 4}
cuts = []

def boundaries(p, size, esz, parts):
    """Byte offsets where something changes: elements at multiples of the
    group sizes (16 nvfp4 blocks, 32 q8, 64 q4/q5/q6/q2, 128 t2 and tiles),
    row starts, part starts, file cuts of a contiguous object."""
    shape = json.loads(os.getxattr(p, "user.ninfer.shape"))
    k = shape[-1] if shape else 1
    out = {0, size}
    for g in (16, 32, 64, 128, k):
        for e in range(g, size // esz, g):
            out.add(e * esz)
            if len(out) > 120:
                break
    at = 0
    for n in parts:
        at += n * esz
        out.add(at)
    # where the set's files cut a contiguous object (bf16, fp32, int32:
    # element i is source bytes [i * w, (i + 1) * w)): the element a cut
    # falls in or before, so reads cross from one file to the next (the
    # other layouts cross them only where the marks above happen to)
    w = SRC_ESZ.get(os.getxattr(p, "user.ninfer.format").decode())
    if "/decoded/objects/" in p and w:
        cut = 0
        for sg in json.loads(os.getxattr(p, "user.ninfer.segments"))[:-1]:
            cut += sg["length"]
            out |= {cut // w * esz, (cut + w - 1) // w * esz}
            cuts.append((os.path.basename(p), cut))
    return sorted(b for b in out if b <= size)

n = 0
before = stats()
targets = []
for o in m["objects"]:
    if o["kind"] == "tensor" and o.get("expect_decoded"):
        targets.append((os.path.join(mnt, "decoded/objects", esc(o["id"])), [o["elements"]]))
for b in m["bindings"]:
    p = os.path.join(mnt, "decoded/bindings", *[esc(c) for c in b["name"].split("/")])
    if os.path.isdir(p):
        p = os.path.join(p, "%self")
    if os.path.isfile(p) and "parts" in b:
        targets.append((p, [pt["range"][1] - pt["range"][0] for pt in b["parts"]]))
targets.append((os.path.join(mnt, "decoded/model.safetensors"), []))
reads = 0
for p, parts in targets:
    try:
        whole = open(p, "rb").read()
    except OSError:
        continue          # an undecodable object (decoded.sh checks those)
    size = len(whole)
    dt = os.getxattr(p, "user.ninfer.dtype").decode()
    esz = 4 if dt in ("f32", "int32") else 2
    fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
    bounds = (st_boundaries(whole) if p.endswith("model.safetensors")
              else boundaries(p, size, esz, parts))
    for b in bounds:
        for off in (b - esz - 1, b - 1, b, b + 1, b + esz - 1):
            for ln in (1, 2, esz + 1, 3 * esz + 1, 64 * esz + 3):
                if off < 0 or off >= size:
                    continue
                got = os.pread(fd, ln, off)
                reads += 1
                assert got == whole[off:off + ln], (p, off, ln, len(got))
    os.close(fd)
    n += 1
after = stats()
assert n >= 30, n
# O_DIRECT: one FUSE read per pread (and page-cache reads of `whole`);
# never more engine submissions than reads
assert after["reads"] - before["reads"] >= reads, (after["reads"], before["reads"], reads)
assert (after["uring_submissions"] - before["uring_submissions"] <=
        after["reads"] - before["reads"]), after
assert len(cuts) >= 10, cuts
print("files", n, "odd reads", reads, "file cuts of contiguous objects", len(cuts),
      "odd ones", sum(c % 2 for _, c in cuts))
# Per request, not in sum: one O_DIRECT read of each whole decoded file
# (all below 1 MiB: one FUSE request) is one engine submission, with no
# short read; for a whole object it carries at least one sqe per segment
# of the object (user.ninfer.segments: its bytes cut at the set's files;
# a parts binding's segments are its whole source objects', more than it
# reads).
one = 0
for p, _ in targets:
    size = os.stat(p).st_size
    if p.endswith("model.safetensors") or size > 1 << 20:
        continue
    segs = len(json.loads(os.getxattr(p, "user.ninfer.segments")))
    fd = os.open(p, os.O_RDONLY | os.O_DIRECT)
    s0 = stats()
    try:
        got = os.pread(fd, size, 0)
    except OSError:
        os.close(fd)
        continue          # undecodable
    s1 = stats()
    os.close(fd)
    assert len(got) == size, (p, len(got), size)
    # the second stats open and read count as reads too, with no engine
    assert s1["uring_submissions"] - s0["uring_submissions"] == 1, (
        p, s1["uring_submissions"] - s0["uring_submissions"])
    whole = "/decoded/objects/" in p
    assert s1["uring_sqes"] - s0["uring_sqes"] >= (segs if whole else 1), (p, segs)
    assert s1["short_reads"] == s0["short_reads"], p
    one += 1
assert one >= 30, one
print("whole reads in one submission", one)
PY
}

d=$(fixture mixed)
for dt in f32 bf16 f16; do
	mount_fg "$d/mixed.ninfer" "$T/mnt-$dt" -o decoded_dtype=$dt
	check_odd "$d" "$T/mnt-$dt" || fail "odd decoded reads, $dt"
	unmount "$T/mnt-$dt"
	ok "odd decoded reads of mixed, $dt"
done
