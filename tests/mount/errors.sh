#!/usr/bin/env bash
# File errors (contract §5): a missing part, a part from another artifact,
# a part truncated while mounted: only the reads that touch it fail (EIO),
# the daemon keeps serving everything else.
. "$(dirname "$0")/lib.sh"

# check_reads MNT DIR FILE_INDEX MODE: objects touching the file give EIO,
# the others read correctly.  MODE=status:<word> also checks files.json.
check_reads() {
	python3 - "$@" <<PY
import errno, json, os, sys
$PY_ESC
mnt, d, bad, status = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
files = json.load(open(os.path.join(mnt, "files.json")))
fl = files if isinstance(files, list) else files.get("files", files)
if status != "-":
    f = [x for x in fl if x["index"] == bad][0]
    assert f["status"] == status, f
ok = eio = 0
for o in m["objects"]:
    p = os.path.join(mnt, "objects", esc(o["id"]))
    segs = json.loads(os.getxattr(p, "user.ninfer.segments"))
    touches = any(s["file"] == bad for s in segs)
    want = open(os.path.join(d, "expect", o["expect_bytes"]), "rb").read()
    try:
        got = open(p, "rb").read()
        assert not touches, "read of %s touching file %d succeeded" % (o["id"], bad)
        assert got == want, o["id"]
        ok += 1
    except OSError as e:
        assert touches and e.errno == errno.EIO, (o["id"], e)
        eio += 1
        # the whole pages of the object before the bad file still read
        # (the kernel reads whole pages: one that touches the bad file fails)
        good = segs[0]["length"] // 4096 * 4096 if segs[0]["file"] != bad else 0
        if good:
            fd = os.open(p, os.O_RDONLY)
            assert os.pread(fd, good, 0) == want[:good], o["id"]
            os.close(fd)
assert ok > 0 and eio > 0, (ok, eio)
print("ok", ok, "eio", eio)
PY
}

# 1. a missing part
d=$(fixture mixed -missing)
parts=$(ls "$d" | grep -c 'part-' || true)
[ "$parts" -ge 3 ] || fail "mixed has only $parts parts"
rm "$d/mixed.ninfer.part-0002"
mount_fg "$d/mixed.ninfer" "$T/mnt1"
check_reads "$T/mnt1" "$d" 2 missing || fail "missing part"
grep -q FILE_MISSING "$T/mnt1/validation.json" || fail "validation.json lacks FILE_MISSING"
n=$(grep -c 'cannot read files\[2\]: mixed.ninfer.part-0002: no such file beside the entry; reads touching it fail with EIO' "$T/daemon.log" || true)
[ "$n" = 1 ] || fail "missing part logged $n times, not once"
unmount "$T/mnt1"
ok "missing part"

# 2. a part of another artifact (another artifact_id)
d=$(fixture mixed -bad)
o=$(fixture mixed -other)
cp "$o/mixed.ninfer.part-0001" "$d/mixed.ninfer.part-0001"
mount_fg "$d/mixed.ninfer" "$T/mnt2"
check_reads "$T/mnt2" "$d" 1 bad || fail "bad part"
unmount "$T/mnt2"
ok "part of another artifact"

# 3. a part truncated while mounted
d=$(fixture mixed -trunc)
mount_fg "$d/mixed.ninfer" "$T/mnt3"
last=$(ls "$d" | grep 'part-' | sort | tail -1)
idx=$((10#${last##*-}))
truncate -s 4097 "$d/$last"
check_reads "$T/mnt3" "$d" "$idx" - || fail "truncated part"
cat "$T/mnt3/stats" | python3 -c "
import json,sys; s=json.load(sys.stdin); assert s['errors'] > 0, s" || fail "stats errors"
unmount "$T/mnt3"
ok "part truncated while mounted"
