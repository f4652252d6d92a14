#!/usr/bin/env bash
# A part truncated while mounted (contract §5, ninferfs(1) BUGS, ninferfs(5)
# ERRORS), cut inside a page: a file whose size changed since it was first
# opened is treated like a replaced one (issue 11), so every read that
# touches the part fails with EIO (raw and decoded), not only the reads of
# the lost bytes; the whole pages of those objects that lie in other parts
# still read (readahead off); every other object — in the entry and in
# other parts — reads exactly; files.json says the part is bad and why;
# stats counts the errors; an mmap reader of a touching object gets SIGBUS;
# then the entry itself truncated:
# artifact.json (read from the entry, whose JSON is cut) and the objects in
# the entry's payload fail with EIO, the tree built at mount and the rest
# read exactly; the daemon stays up and unmounts cleanly with status 0.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" >/dev/null || fail "reads before the truncation"

# part 44 holds the tail of w.lm_head, x.q2 .. x.t2, x.nvfp4 and the head of
# x.nvfp4_d2.  Keep 6000 payload bytes (file offset 4096 + 6000): the cut is
# inside x.nvfp4 and inside a page; the surviving head of the part fails
# too, since the part is no longer the file that was mounted.
part=$d/mixed.ninfer.part-0044
[ -f "$part" ] || fail "fixture mixed has no part-0044"
size=$(stat -c %s "$part")
truncate -s $((4096 + 6000)) "$part"
drop_mount_cache "$mnt"
check_objects "$mnt" "$d" 44 0 || fail "part-0044 cut to 6000 payload bytes"
$PY - "$mnt/files.json" "$size" <<'PY' || fail "files.json after the truncation"
import json, sys
f = [x for x in json.load(open(sys.argv[1])) if x["index"] == 44][0]
want = "size %s -> %d" % (sys.argv[2], 4096 + 6000)
assert f["status"] == "bad" and want in f["reason"], f
print("files.json: part-0044", f["status"], "-", f["reason"])
PY
errs=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$mnt/stats")
[ "$errs" -gt 0 ] || fail "stats errors is $errs after failed reads"
alive "$DPID" || fail "daemon died"
ok "part truncated inside a page: every read touching it EIO, the rest exact; stats errors $errs"

# a reader that mmaps a touching object gets SIGBUS on the lost page (the
# kernel's answer to a failed page-in), not wrong bytes; the daemon lives on
rc=0
{ $PY -c '
import mmap, os, sys
fd = os.open(sys.argv[1], os.O_RDONLY)
m = mmap.mmap(fd, 0, prot=mmap.PROT_READ)
sys.stdout.write(repr(m[0:16]))
' "$mnt/objects/x.nvfp4" >/dev/null 2>&1; } 2>/dev/null || rc=$?
[ "$rc" = 135 ] || fail "mmap of a touching object: exit status $rc, want 135 (SIGBUS)"
alive "$DPID" || fail "daemon died"
ok "mmap of a touching object: SIGBUS in the reader"

# the entry truncated to its first 100 bytes: artifact.json (its bytes are
# read from the entry) and the objects with bytes in the entry's payload
# (the head of w.embed) fail, the tree built at mount time (ninferfs(1):
# "The tree is built once, at mount time, and never changes") and the other
# parts are still served (part-0044 is still cut to its header, so its
# objects fail too)
cp "$d/mixed.ninfer" "$T/entry.copy"
truncate -s 100 "$d/mixed.ninfer"
mkdir -p "$T/ref" && ln -s "$T/entry.copy" "$T/ref/mixed.ninfer" && ln -s "$d/expect" "$T/ref/expect"
drop_mount_cache "$mnt"
$PY - "$mnt" "$T/ref" <<'PY' || fail "entry truncated"
import errno, json, os, sys
sys.path.insert(0, os.environ["PYTHONPATH"].split(":")[0])
import faultlib as fl
mnt, ref = sys.argv[1], sys.argv[2]
m = fl.manifest(ref)
entry = open(os.path.join(ref, "mixed.ninfer"), "rb").read()
assert fl.read_file(os.path.join(mnt, "artifact.json")) == "EIO", "artifact.json"
# uses.json is made from the entry's uses array on open: EIO too
assert fl.read_file(os.path.join(mnt, "uses.json")) == "EIO", "uses.json"
f0 = [x for x in m["files"] if x["index"] == 0][0]
f44 = [x for x in m["files"] if x["index"] == 44][0]
lost = [(f0["logical_start"], f0["logical_start"] + f0["payload_bytes"]),
        (f44["logical_start"], f44["logical_start"] + f44["payload_bytes"])]
n_eio = n_ok = 0
for o in m["objects"]:
    lo, hi = o["offset"], o["offset"] + o["bytes"]
    touches = any(lo < b and a < hi for a, b in lost)
    got = fl.read_file(os.path.join(mnt, "objects", fl.esc(o["id"])))
    want = fl.expect(ref, o["expect_bytes"])
    if touches:
        assert got == "EIO", (o["id"], got if isinstance(got, str) else len(got))
        n_eio += 1
    else:
        assert got == want, o["id"]
        n_ok += 1
assert n_eio and n_ok
print("entry truncated: artifact.json EIO, %d objects EIO, %d exact" % (n_eio, n_ok))
PY
alive "$DPID" || fail "daemon died"
ok "entry truncated: tree and the other parts still served"

unmount "$mnt" "$DPID"
ok "clean unmount after the faults"
