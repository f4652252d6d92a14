#!/bin/bash
# scale.sh — issue 6 at 10,000 objects: a set from bench/gen_large.py
# (10k objects, 10k bindings with deep paths, 20k uses, 16 files) mounts,
# `ls -lR` lists exactly the tree the directory describes, and a few hundred
# random files have the size the JSON gives and the bytes of the payload
# read straight from the entry and parts.
source "$(dirname "$0")/lib.sh"

N=10000
GEN="$MOUNT_TESTS/../../bench/gen_large.py"
[ -f "$GEN" ] || fail "no $GEN"
python3 "$GEN" "$T/set.ninfer" --objects $N --parts 16 > "$T/gen.json" || fail "gen_large.py"
deep=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"][3]["path"])' \
	"$T/gen.json")

start=$(date +%s.%N)
mount_fg "$T/set.ninfer" "$T/m"
for _ in $(seq 200); do stat "$T/m/$deep" > /dev/null 2>&1 && break; sleep 0.05; done
stat "$T/m/$deep" > /dev/null || fail "deep file $deep not there"
ok "mounted $N objects in $(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }') s"

ls -lR "$T/m" > "$T/ls.out" || fail "ls -lR"
python3 - "$T/set.ninfer" "$T/gen.json" "$T/ls.out" "$T/m" <<'EOF' || fail "listing"
import json, os, struct, sys
entry, gen, lsout, mnt = sys.argv[1:]
with open(entry, 'rb') as f:
    jb = struct.unpack('<Q', f.read(32)[8:16])[0]
    d = json.loads(f.read(jb))
g = json.load(open(gen))
assert g["objects"] == len(d["objects"]) == 10000, g

# plane counts per format: the codec registry's, read once per format from
# the mount (everything else comes from the JSON alone)
planes_of = {}
for o in d["objects"]:
    if o["format"] not in planes_of:
        planes_of[o["format"]] = len(os.listdir(os.path.join(mnt, "planes", o["id"])))
# directories and their entry counts, as contract §2 places them
dirs = {}
def add(path, is_dir):
    parent = os.path.dirname(path)
    dirs[parent] = dirs.get(parent, 0) + 1
    if is_dir:
        dirs.setdefault(path, 0)
dirs[""] = 0
for f in ("artifact.json", "validation.json", "files.json", "uses.json", "stats"):
    add(f, False)
for top in ("components", "objects", "planes", "bindings", "decoded",
            "decoded/bindings", "decoded/objects", "decoded/npy", "decoded/npy/bindings",
            "decoded/npy/objects"):
    add(top, True)
add("decoded/model.safetensors", False)
for cid in d["components"]:
    add("components/" + cid, True)
    add("components/" + cid + "/config.json", False)
for o in d["objects"]:
    add("objects/" + o["id"], False)
    add("decoded/objects/" + o["id"], False)
    add("decoded/npy/objects/" + o["id"] + ".npy", False)
    add("planes/" + o["id"], True)
    for k in range(planes_of[o["format"]]):
        add("planes/%s/p%d" % (o["id"], k), False)
for top, suffix in (("bindings", ""), ("decoded/bindings", ""), ("decoded/npy/bindings", ".npy")):
    for name in d["bindings"]:
        parts = name.split("/")
        for k in range(1, len(parts)):
            p = top + "/" + "/".join(parts[:k])
            if p not in dirs:
                add(p, True)
        add(top + "/" + name + suffix, False)
# ls -lR: per directory a "DIR:" line, a "total" line and its entries; a
# blank line between directories
want = sum(2 + n for n in dirs.values()) + len(dirs) - 1
got = sum(1 for _ in open(lsout))
entries = sum(dirs.values())
print("ls -lR: %d lines (want %d), %d directories, %d entries" % (got, want, len(dirs), entries))
assert got == want, (got, want)
st = os.statvfs(mnt)
assert st.f_files == entries + 1, (st.f_files, entries + 1)
EOF
ok "ls -lR lists the whole tree"

# Random files: size from the JSON, bytes = the payload read straight from
# the entry and parts (seed §2.2: the files joined at their payload starts).
python3 - "$T/set.ninfer" "$T/m" <<'EOF' || fail "spot checks"
import json, os, random, struct, sys
entry, mnt = sys.argv[1:]
with open(entry, 'rb') as f:
    jb = struct.unpack('<Q', f.read(32)[8:16])[0]
    d = json.loads(f.read(jb))
files, start = [], 0
for i, fl in enumerate(d["files"]):
    path = entry if i == 0 else os.path.join(os.path.dirname(entry), fl["path"])
    files.append((start, fl["payload_bytes"], path, 32 + jb if i == 0 else 4096))
    start += fl["payload_bytes"]
def payload(off, n):
    out = b""
    for s, b, path, data in files:
        lo, hi = max(off, s), min(off + n, s + b)
        if lo < hi:
            with open(path, 'rb') as f:
                f.seek(data + lo - s)
                out += f.read(hi - lo)
    return out
objs = {o["id"]: o for o in d["objects"]}
def elements(o):
    n = 1
    for x in o["shape"]:
        n *= x
    return n
rnd = random.Random(6)
names = list(d["bindings"])
checked = 0
for o in rnd.sample(d["objects"], 150):
    p = os.path.join(mnt, "objects", o["id"])
    assert os.stat(p).st_size == o["bytes"], p
    got = open(p, 'rb').read()
    assert got == payload(o["offset"], o["bytes"]), p
    q = os.path.join(mnt, "decoded/objects", o["id"])
    assert os.stat(q).st_size == 4 * elements(o), q
    assert open(q, 'rb').read(64) == bytes(min(64, 4 * elements(o))), q  # zero codes decode to +0.0
    checked += 2
for name in rnd.sample(names, 150):
    b = d["bindings"][name]
    o = objs[b["object"] if "object" in b else b["parts"][0]["object"]]
    p = os.path.join(mnt, "bindings", name)
    # whole objects, and parts that cover a whole object, are its bytes
    assert os.stat(p).st_size == o["bytes"], (p, os.stat(p).st_size, o["bytes"])
    assert open(p, 'rb').read() == payload(o["offset"], o["bytes"]), p
    q = os.path.join(mnt, "decoded/bindings", name)
    assert os.stat(q).st_size == 4 * elements(o), q
    checked += 2
print("%d random files: sizes and bytes right" % checked)
EOF
ok "random files have the JSON's sizes and the payload's bytes"

unmount "$T/m"
ok "scale: $N objects"
