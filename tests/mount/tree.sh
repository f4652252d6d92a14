#!/usr/bin/env bash
# The tree of contract §2: every object, plane, binding, resource with its
# exact size; the documents; daemonized mount and clean unmount.
. "$(dirname "$0")/lib.sh"

for set in text mixed; do
	d=$(fixture $set)
	mnt=$T/mnt-$set
	# the daemonizing way: exit status 0 only once mounted
	mount_bg "$d/$set.ninfer" "$mnt" || fail "ninferfs exited $?"
	is_mounted "$mnt" || fail "not mounted after exit 0"
	ls -lR "$mnt" >"$T/ls-$set.txt" || fail "ls -lR"
	python3 - "$d" "$mnt" <<PY || fail "tree of $set"
import json, os, sys
$PY_ESC
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
entry = open(os.path.join(d, m["entry"]), "rb").read()
# artifact.json: the JSON exactly as stored
aj = open(os.path.join(mnt, "artifact.json"), "rb").read()
assert aj == entry[32:32 + m["json_bytes"]], "artifact.json differs"
for doc in ("validation.json", "files.json", "uses.json", "stats"):
    json.load(open(os.path.join(mnt, doc)))
v = json.load(open(os.path.join(mnt, "validation.json")))
assert v["schema"] == "ninferfs-validation/v1", v
files = json.load(open(os.path.join(mnt, "files.json")))
assert json.load(open(os.path.join(mnt, "uses.json"))) == m["uses"]
# generated on open: st_size is set after the tree is built, and exact
for doc in ("uses.json", "decoded/model.safetensors"):
    p = os.path.join(mnt, doc)
    assert os.path.getsize(p) == len(open(p, "rb").read()) > 0, doc
st = json.load(open(os.path.join(mnt, "stats")))
assert "reads" in st and "files" in st
def gsize(o):
    """plane sizes by codecs §1, §2.1, §4.1 (block_scale: presence only)"""
    f, lay, sh = o.get("format"), o.get("layout"), o.get("shape")
    up = lambda x, a: (x + a - 1) // a * a
    if lay == "contiguous_le_v1":
        n = 1
        for s in sh: n *= s
        return {"data": n * (2 if f == "bf16" else 4)}
    if lay == "row_split_k128_v1":
        G, B, H = {"q2_g64_fp16": (64, 16, 0), "q4_g64_fp16": (64, 32, 0),
                   "q5_g64_fp16": (64, 32, 8), "q6_g64_fp16": (64, 32, 16),
                   "q8_g32_fp16": (32, 32, 0), "t2_g128_fp16": (128, 32, 0)}[f]
        N, K = sh; gpr = up(K, 128) // G
        r = {"base": N * gpr * B, "scales": N * gpr * 2}
        if H: r["high"] = N * gpr * H
        return r
    if lay == "row_scale_v1":
        N, K = sh
        return {"codes": N * K, "scales": 2 * N}
    if lay == "block_scale_k16_m128x4_v1":
        return {"codes": None, "scales": None, "divisors": None}
    return {}
nobj = nplanes = 0
for o in m["objects"]:
    p = os.path.join(mnt, "objects", esc(o["id"]))
    assert os.path.getsize(p) == o["bytes"], (o["id"], os.path.getsize(p), o["bytes"])
    nobj += 1
    if o["kind"] != "tensor":
        continue
    want = gsize(o)
    pd = os.path.join(mnt, "planes", esc(o["id"]))
    if not want:
        assert not os.path.exists(pd), "planes of unknown format " + o["id"]
        continue
    got = sorted(os.listdir(pd))
    assert got == sorted(want), (o["id"], got, want)
    total = 0
    for pl, sz in want.items():
        s = os.path.getsize(os.path.join(pd, pl))
        assert sz is None or s == sz, (o["id"], pl, s, sz)
        total += s
        nplanes += 1
    assert total <= o["bytes"]
for b in m["bindings"]:
    parts = b["name"].split("/")
    p = os.path.join(mnt, "bindings", *[esc(c) for c in parts])
    if os.path.isdir(p):
        p = os.path.join(p, "%self")
    if "object" in b:
        o = next(x for x in m["objects"] if x["id"] == b["object"])
        assert os.path.getsize(p) == o["bytes"], b["name"]
for cid, c in m["components"].items():
    cd = os.path.join(mnt, "components", esc(cid))
    json.load(open(os.path.join(cd, "config.json")))
    if "target" in c:
        assert open(os.path.join(cd, "target")).read() == c["target"] + "\n"
    for role, oid in c.get("resources", {}).items():
        o = next(x for x in m["objects"] if x["id"] == oid)
        assert os.path.getsize(os.path.join(cd, "resources", esc(role))) == o["bytes"]
print("objects", nobj, "planes", nplanes)
PY
	# statfs reports the set's size; stable inode numbers across remounts
	df "$mnt" >/dev/null || fail "df"
	ino1=$(stat -c %i "$mnt/artifact.json" "$mnt/objects" "$mnt/stats" | tr '\n' ' ')
	unmount "$mnt"
	mount_fg "$d/$set.ninfer" "$mnt"
	ino2=$(stat -c %i "$mnt/artifact.json" "$mnt/objects" "$mnt/stats" | tr '\n' ' ')
	[ "$ino1" = "$ino2" ] || fail "inode numbers changed: $ino1 / $ino2"
	[ "$(stat -c %i "$mnt")" = 1 ] || fail "root inode is not 1"
	unmount "$mnt"
	ok "tree of $set"
done
# SIGTERM unmounts cleanly
d=$T/text
mount_fg "$d/text.ninfer" "$T/mnt-sig"
kill -TERM "${PIDS[-1]}"
for _ in $(seq 50); do is_mounted "$T/mnt-sig" || break; sleep 0.05; done
is_mounted "$T/mnt-sig" && fail "SIGTERM did not unmount"
ok "SIGTERM unmounts"

# mount(8) calling convention through mount.fuse3, with uid/gid/umask
if command -v mount.fuse3 >/dev/null; then
	mkdir -p "$T/mnt-m"
	MOUNTS+=("$T/mnt-m")
	# mount(8) runs helpers with a fixed PATH (/usr/local/sbin:...:/bin), so
	# -t fuse.ninferfs needs an installed ninferfs; the build tree's daemon
	# goes through the same mount.fuse3 convention as -t fuse PROG#SOURCE.
	if PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin command -v ninferfs >/dev/null; then
		mount -t fuse.ninferfs "$d/text.ninfer" "$T/mnt-m" -o uid=1234,gid=4321,umask=027 ||
			fail "mount -t fuse.ninferfs"
	else
		mount -t fuse "$NINFERFS#$d/text.ninfer" "$T/mnt-m" -o uid=1234,gid=4321,umask=027 ||
			fail "mount -t fuse NINFERFS#ENTRY"
	fi
	p=$(pgrep -n -f "ninferfs $d/text.ninfer $T/mnt-m" || true)
	[ -n "$p" ] && PIDS+=("$p")
	[ "$(stat -c '%u %g %a' "$T/mnt-m/artifact.json")" = "1234 4321 440" ] ||
		fail "ownership: $(stat -c '%u %g %a' "$T/mnt-m/artifact.json")"
	[ "$(stat -c '%a' "$T/mnt-m/objects")" = 550 ] || fail "dir mode"
	grep -q " $T/mnt-m fuse.ninferfs ro," /proc/mounts || fail "fstype/ro: $(grep mnt-m /proc/mounts)"
	umount "$T/mnt-m"
	ok "mount(8) through mount.fuse3 with uid/gid/umask"
fi
