#!/usr/bin/env bash
# Extended attributes of contract §3, with getfattr and the size protocol.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
first=$(ls "$mnt/objects" | sed -n 1p)
getfattr -d -m - "$mnt/objects/$first" >"$T/obj.txt" || fail "getfattr object"
for a in kind name format layout shape offset bytes segments; do
	grep -q "^user.ninfer.$a=" "$T/obj.txt" || fail "object lacks user.ninfer.$a: $(cat "$T/obj.txt")"
done
grep -q '^user.ninfer.kind="object"' "$T/obj.txt" || fail "kind"
getfattr -n user.ninfer.artifact_id --only-values "$mnt" >"$T/id.txt" || fail "root artifact_id"
python3 - "$d" "$mnt" "$T/id.txt" <<PY || fail "xattr values"
import ctypes, errno, json, os, sys
$PY_ESC
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
assert open(sys.argv[3]).read() == m["artifact_id"]
files = m["files"]
def check_segments(p, offset, nbytes):
    segs = json.loads(os.getxattr(p, "user.ninfer.segments"))
    pos = offset
    for s in segs:
        f = files[s["file"]]
        assert s["path"] == (f["path"] or m["entry"]), s
        assert s["file_offset"] == f["payload_start"] + (pos - f["logical_start"]), (p, s)
        pos += s["length"]
    assert pos == offset + nbytes, (p, pos, offset, nbytes)
    return len(segs)
multi = 0
for o in m["objects"]:
    p = os.path.join(mnt, "objects", esc(o["id"]))
    x = {k: os.getxattr(p, k).decode() for k in os.listxattr(p)}
    assert x["user.ninfer.kind"] == "object"
    assert x["user.ninfer.name"] == o["id"]
    assert int(x["user.ninfer.offset"]) == o["offset"]
    assert int(x["user.ninfer.bytes"]) == o["bytes"]
    if o["kind"] == "tensor":
        assert x["user.ninfer.format"] == o["format"]
        assert x["user.ninfer.layout"] == o["layout"]
        assert json.loads(x["user.ninfer.shape"]) == o["shape"]
    multi += check_segments(p, o["offset"], o["bytes"]) > 1
    pd = os.path.join(mnt, "planes", esc(o["id"]))
    if os.path.isdir(pd):
        for pl in os.listdir(pd):
            pp = os.path.join(pd, pl)
            assert os.getxattr(pp, "user.ninfer.kind") == b"plane"
            assert os.getxattr(pp, "user.ninfer.plane").decode() == pl
            off = int(os.getxattr(pp, "user.ninfer.offset"))
            n = int(os.getxattr(pp, "user.ninfer.bytes"))
            assert n == os.path.getsize(pp) and o["offset"] <= off <= o["offset"] + o["bytes"] - n
            check_segments(pp, off, n)
assert multi >= 3, "expected objects straddling file boundaries, got %d" % multi
# missing attribute -> ENODATA; too small a buffer -> ERANGE
p = os.path.join(mnt, "objects", esc(m["objects"][0]["id"]))
try:
    os.getxattr(p, "user.ninfer.nope"); raise SystemExit("no ENODATA")
except OSError as e:
    assert e.errno == errno.ENODATA, e
# only the user namespace exists: other namespaces are EOPNOTSUPP (what lets
# ls -l stop probing ACLs and labels after the first file)
for name in ("security.selinux", "system.posix_acl_access", "system.posix_acl_default",
             "trusted.x"):
    for q in (p, mnt, os.path.join(mnt, "objects")):
        try:
            os.getxattr(q, name); raise SystemExit("no EOPNOTSUPP for " + name)
        except OSError as e:
            assert e.errno == errno.EOPNOTSUPP, (q, name, e)
libc = ctypes.CDLL(None, use_errno=True)
buf = ctypes.create_string_buffer(2)
r = libc.getxattr(p.encode(), b"user.ninfer.kind", buf, ctypes.c_size_t(2))
assert r == -1 and ctypes.get_errno() == errno.ERANGE, (r, ctypes.get_errno())
r = libc.getxattr(p.encode(), b"user.ninfer.kind", None, ctypes.c_size_t(0))
assert r == len("object"), r
print("ok", multi, "objects span several files")
PY
ok "xattrs"

# GNU ls -l asks for security.selinux and the ACLs of every entry unless the
# first answer says the device has none: with EOPNOTSUPP a listing of many
# files costs a few probes, not two or three per file.
n=$(ls "$mnt/objects" | wc -l)
[ "$n" -ge 8 ] || fail "objects/ has only $n entries"
strace -f -qq -e trace=getxattr,lgetxattr,fgetxattr -o "$T/ls.strace" ls -l "$mnt/objects" >/dev/null ||
	fail "ls -l under strace"
probes=$(grep -c 'xattr(' "$T/ls.strace" || true)
[ "$probes" -le 3 ] || fail "ls -l of $n files made $probes xattr probes: $(head -5 "$T/ls.strace")"
ok "ls -l of $n files: $probes xattr probes"
