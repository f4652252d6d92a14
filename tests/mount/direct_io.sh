#!/usr/bin/env bash
# -o direct_io (fs/ops.c op_open, man ninferfs.1): every open is
# FOPEN_DIRECT_IO, so reads bypass the page cache.  On the split `mixed`
# set mounted twice, plainly and with -o direct_io: every file reads the
# same bytes on both (the plain mount's bytes are what bytes.sh and
# decoded.sh check against the fixture's expectations), sizes are equal,
# reads at odd offsets and lengths (no O_DIRECT: the kernel passes them as
# they are) equal the same slice; each whole read of a decoded file sends
# the daemon exactly its size in reply bytes (stats "bytes"), the second
# as much as the first (nothing cached), where the plain mount's second
# read sends nothing (keep_cache); MAP_SHARED and MAP_PRIVATE mappings map
# the same bytes (MAP_SHARED refused with ENODEV on a kernel before 6.6),
# and so does np.load(mmap_mode="r") of every .npy file; -o direct_io=1 is
# a usage error (exit 16).
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mount_fg "$d/mixed.ninfer" "$T/plain"
mount_fg "$d/mixed.ninfer" "$T/direct" -o direct_io
python3 - "$T/plain" "$T/direct" <<'PY' || fail "direct_io reads"
import errno, json, mmap, os, sys
plain, direct = sys.argv[1], sys.argv[2]

def stats(m):
    return json.load(open(os.path.join(m, "stats")))

def read(p):
    with open(p, "rb") as f:
        return f.read()

files = []
for top in ("objects", "decoded/objects", "decoded/npy/objects"):
    for n in sorted(os.listdir(os.path.join(plain, top))):
        files.append(os.path.join(top, n))
files += ["decoded/model.safetensors", "artifact.json"]
n = 0
for rel in files:
    a, b = os.path.join(plain, rel), os.path.join(direct, rel)
    if not os.path.isfile(a):
        continue
    try:
        want = read(a)
    except OSError as e:
        # an undecodable object fails the same way on both
        try:
            read(b)
        except OSError as e2:
            assert e2.errno == e.errno, (rel, e, e2)
            continue
        raise AssertionError((rel, "reads on the direct_io mount only"))
    assert os.stat(b).st_size == os.stat(a).st_size == len(want), rel
    assert read(b) == want, rel
    n += 1
assert n >= 20, n

# odd offsets and lengths through the direct_io mount
rel = max((r for r in files if r.startswith("decoded/objects/")),
          key=lambda r: os.stat(os.path.join(plain, r)).st_size)
want = read(os.path.join(plain, rel))
size = len(want)
assert size > 8192, (rel, size)
fd = os.open(os.path.join(direct, rel), os.O_RDONLY)
k = 0
for off in (0, 1, 3, 4095, 4096, 4097, size // 2 + 1, size - 5, size - 1):
    for ln in (1, 2, 7, 4097, 65539):
        got = os.pread(fd, ln, off)
        assert got == want[off:off + ln], (rel, off, ln, len(got))
        k += 1
assert os.pread(fd, 16, size) == b""
os.close(fd)

# nothing is cached: every whole read reaches the daemon, reply bytes
# exactly the file's size; the plain mount read it above and keeps it
for m, passes in ((direct, (size, size)), (plain, (0, 0))):
    for expect in passes:
        s0 = stats(m)["bytes"]
        assert read(os.path.join(m, rel)) == want, (m, rel)
        got = stats(m)["bytes"] - s0
        assert got == expect, (m, rel, got, expect)

# mmap: on a kernel with FUSE_DIRECT_IO_ALLOW_MMAP (6.6+; fs/initx.c
# asks for it) MAP_SHARED maps the bytes through the page cache, and
# again after a read(2) and a second mapping; on an older one it is
# refused (ENODEV).  MAP_PRIVATE maps the bytes either way.
kernel = tuple(int(x) for x in os.uname().release.split("-")[0].split(".")[:2])
with open(os.path.join(direct, rel), "rb") as f:
    if kernel >= (6, 6):
        for _ in range(2):
            mp = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
            assert mp[:] == want, ("MAP_SHARED on the direct_io mount", rel)
            assert mp[4095:4098] == want[4095:4098], rel
            mp.close()
            assert read(os.path.join(direct, rel)) == want, rel
    else:
        try:
            mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
            raise AssertionError("MAP_SHARED mapped on the direct_io mount")
        except OSError as e:
            assert e.errno == errno.ENODEV, e
    mp = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ)
    assert mp[:] == want, rel
    mp.close()
# the loaders' way: np.load(mmap_mode="r") maps shared
if kernel >= (6, 6):
    import numpy as np
    k_npy = 0
    for name in sorted(os.listdir(os.path.join(direct, "decoded/npy/objects"))):
        a = os.path.join(plain, "decoded/npy/objects", name)
        try:
            want_a = np.load(a)
        except OSError:
            continue   # undecodable: checked above
        got = np.load(os.path.join(direct, "decoded/npy/objects", name), mmap_mode="r")
        assert isinstance(got, np.memmap), name
        assert got.dtype == want_a.dtype and got.shape == want_a.shape, name
        assert got.tobytes() == want_a.tobytes(), name
        del got
        k_npy += 1
    assert k_npy >= 5, k_npy
with open(os.path.join(plain, rel), "rb") as f:
    mp = mmap.mmap(f.fileno(), 0, flags=mmap.MAP_SHARED, prot=mmap.PROT_READ)
    assert mp[:] == want, rel
    mp.close()
print("files", n, "odd reads", k, "checked on", rel, size)
PY
ok "-o direct_io: same bytes, nothing cached, shared and private mappings"

rc=0
mkdir -p "$T/bad"
"$NINFERFS" "$d/mixed.ninfer" "$T/bad" -f -o direct_io=1 2>"$T/err" || rc=$?
[ "$rc" = 16 ] || fail "-o direct_io=1: exit $rc, want 16 ($(cat "$T/err"))"
grep -q "direct_io" "$T/err" || fail "-o direct_io=1: message does not name it: $(cat "$T/err")"
"$NINFERFS" -h | grep -q -- "-o direct_io " || fail "-h does not list -o direct_io"
ok "-o direct_io=1 refused (exit 16), -h lists it"
