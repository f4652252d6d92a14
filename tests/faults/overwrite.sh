#!/usr/bin/env bash
# Issue 11 item 3: a part overwritten in place (same inode) while mounted.
# Contract §5 as for a replaced part: a change of size, mtime or ctime of a
# file of the set since it was first opened makes it bad; every read that
# touches it fails with EIO, the daemon logs it once, files.json says why,
# and the kernel's cached pages of the views on it are dropped, so a reader
# that read an object before the change does not keep getting its bytes.
# Asserted:
#  1. part-0044 overwritten with another set's part-0044 (dd conv=notrunc,
#     the same length; only its artifact_id differs): a reader that holds
#     an object of it open, read once into the page cache, gets EIO on its
#     next reads (no page cache drop by the test; within 3 s: the daemon
#     hears of it through inotify), as does a new open; with the mount's
#     cache dropped every object touching part-0044 fails with EIO, raw and
#     decoded, the rest read exactly (faultlib.check); files.json says
#     "bad" with the changed mtime; the daemon log names part-0044 once;
#  2. on a second mount, only the mtime of part-0010 set back an hour
#     (touch -d): the same, the reason naming mtime;
#  3. a daemonized mount of a relative entry path (the daemon changes to /):
#     a reader holding a cached object of part-0044 gets EIO after the part
#     is touched, within 3 s (the watch is on the right directory);
#  4. the daemons keep serving and unmount cleanly.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
o=$(fixture mixed -other)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" >/dev/null || fail "reads before the overwrite"
cmp -s "$d/mixed.ninfer.part-0044" "$o/mixed.ninfer.part-0044" && fail "the other part is identical"

$PY - "$mnt" "$d" "$o/mixed.ninfer.part-0044" <<'PY' || fail "reader holding an object across the overwrite"
import errno, json, os, subprocess, sys, time
import faultlib as fl
mnt, d, other = sys.argv[1], sys.argv[2], sys.argv[3]
m = fl.manifest(d)
f44 = [f for f in m["files"] if f["index"] == 44][0]
lo, hi = f44["logical_start"], f44["logical_start"] + f44["payload_bytes"]
# an object wholly inside part-0044: its reads fail whole (no prefix)
obj = [o for o in m["objects"] if lo <= o["offset"] and o["offset"] + o["bytes"] <= hi][0]
path = os.path.join(mnt, "objects", fl.esc(obj["id"]))
want = fl.expect(d, obj["expect_bytes"])
fd = os.open(path, os.O_RDONLY)
assert os.pread(fd, len(want) + 1, 0) == want           # now in the page cache
def reads44():
    return [f for f in fl.stats(mnt)["files"] if f["index"] == 44][0]["reads"]
r0 = reads44()
assert os.pread(fd, len(want) + 1, 0) == want
assert reads44() == r0, "the page cache does not hold the object: nothing tested"
subprocess.run(["dd", "if=" + other, "of=" + os.path.join(d, "mixed.ninfer.part-0044"),
                "bs=64K", "conv=notrunc", "status=none"], check=True)
t0 = time.time()
served = 0
while True:
    try:
        got = os.pread(fd, len(want) + 1, 0)
    except OSError as e:
        assert e.errno == errno.EIO, e
        break
    assert got == want, "the overwritten part's bytes were served"
    served += 1
    if time.time() - t0 > 3:
        sys.exit("%s: still served from the page cache 3 s after the overwrite" % obj["id"])
    time.sleep(0.005)
os.close(fd)
print("%s: EIO %.1f ms after the overwrite (%d reads served the cached bytes before)"
      % (obj["id"], (time.time() - t0) * 1e3, served))
try:
    open(path, "rb").read()
    sys.exit("a new open of %s still reads" % obj["id"])
except OSError as e:
    assert e.errno == errno.EIO, e
PY
drop_mount_cache "$mnt"
check_objects "$mnt" "$d" 44 0 || fail "reads after the overwrite of part-0044"
$PY - "$mnt/files.json" 44 mtime <<'PY' || fail "files.json after the overwrite"
import json, sys
f = [x for x in json.load(open(sys.argv[1])) if x["index"] == int(sys.argv[2])][0]
assert f["status"] == "bad", f
assert "changed in place" in f["reason"] and sys.argv[3] + " " in f["reason"], f["reason"]
print("files.json:", f["path"], f["status"], "-", f["reason"][:120])
PY
n=$(grep -c 'part-0044' "$LOG" || true)
[ "$n" = 1 ] || fail "part-0044 logged $n times, want once: $(cat "$LOG")"
alive "$DPID" || fail "daemon died"
unmount "$mnt" "$DPID"
ok "part overwritten in place: EIO for every read touching it, cached pages dropped, files.json says why, logged once"

d2=$(fixture mixed -touch)
mount_fg "$d2/mixed.ninfer" "$T/mnt2"
check_objects "$T/mnt2" "$d2" >/dev/null || fail "reads before touch -d"
touch -d '1 hour ago' "$d2/mixed.ninfer.part-0010"
drop_mount_cache "$T/mnt2"
check_objects "$T/mnt2" "$d2" 10 0 || fail "reads after touch -d of part-0010"
$PY - "$T/mnt2/files.json" 10 mtime <<'PY' || fail "files.json after touch -d"
import json, sys
f = [x for x in json.load(open(sys.argv[1])) if x["index"] == int(sys.argv[2])][0]
assert f["status"] == "bad" and "mtime " in f["reason"], f
print("files.json:", f["path"], f["status"], "-", f["reason"][:120])
PY
alive "$DPID" || fail "daemon died"
unmount "$T/mnt2" "$DPID"
ok "touch -d on a part (mtime only): EIO for the reads touching it"

d3=$(fixture mixed -rel)
mkdir -p "$T/mnt3"
MOUNTS+=("$T/mnt3")
(cd "$d3" && "$NINFERFS" mixed.ninfer "$T/mnt3" 2>>"$LOG") || fail "daemonized mount of a relative path"
pid3=$(pgrep -n -f "^$NINFERFS mixed.ninfer $T/mnt3" || true)
[ -n "$pid3" ] && PIDS+=("$pid3")
$PY - "$T/mnt3" "$d3" <<'PY' || fail "cached reader, relative entry path, daemonized"
import errno, os, sys, time
import faultlib as fl
mnt, d = sys.argv[1], sys.argv[2]
m = fl.manifest(d)
f3 = [f for f in m["files"] if f["index"] == 44][0]
lo, hi = f3["logical_start"], f3["logical_start"] + f3["payload_bytes"]
obj = [o for o in m["objects"] if lo <= o["offset"] and o["offset"] + o["bytes"] <= hi][0]
path = os.path.join(mnt, "objects", fl.esc(obj["id"]))
want = fl.expect(d, obj["expect_bytes"])
fd = os.open(path, os.O_RDONLY)
assert os.pread(fd, len(want) + 1, 0) == want
os.utime(os.path.join(d, "mixed.ninfer.part-0044"), (time.time(), time.time() - 60))
t0 = time.time()
while True:
    try:
        assert os.pread(fd, len(want) + 1, 0) == want
    except OSError as e:
        assert e.errno == errno.EIO, e
        break
    if time.time() - t0 > 3:
        sys.exit("%s still served 3 s after the touch: the watch missed it" % obj["id"])
    time.sleep(0.005)
print("%s: EIO %.1f ms after the touch" % (obj["id"], (time.time() - t0) * 1e3))
PY
fusermount3 -u "$T/mnt3" || fail "unmount mnt3"
wait_unmounted "$T/mnt3" 5 || fail "still mounted: $T/mnt3"
ok "daemonized, relative entry path: the watch sees the part change"
