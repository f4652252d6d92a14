#!/usr/bin/env bash
# The naming rule (man ninferfs.5, NAMES) as a property over 300 bindings
# named from a hostile alphabet (issue 11, item 1): every binding is at
# exactly the path the Python oracle (tests/pylib/nfnames.py) gives, under
# bindings/ and decoded/bindings/, with its own bytes, its own inode and
# user.ninfer.name mapping back; no directory lists one name twice (ls -f,
# os.listdir);
# nothing else is in the trees.  Among the names: "x" (256 B) and "/x"
# (16 B), which once shared bindings/x.
. "$(dirname "$0")/lib.sh"

d=$(fixture hostile)
mnt=$T/mnt
mount_fg "$d/hostile.ninfer" "$mnt"

# ls -f (getdents order, no sorting, NUL-separated): no name twice in the
# top directories and those of the issue's names (the python below checks
# every directory the same way, with one listdir each: a fork per
# directory would cost seconds)
dups=$(for dir in "$mnt/bindings" "$mnt/bindings/%" "$mnt/decoded/bindings" \
	"$mnt/decoded/bindings/%" "$mnt/objects" "$mnt/bindings/x" "$mnt/bindings/%/x"; do
		[ -d "$dir" ] || continue
		ls -f --zero "$dir" | LC_ALL=C sort -z | uniq -zd |
			while IFS= read -r -d '' n; do printf '%s: %s\n' "$dir" "$n"; done
	done)
[ -z "$dups" ] || fail "names listed twice: $dups"

python3 - "$d" "$mnt" <<'PY' || fail "hostile names"
import json, os, sys
from nfnames import esc, binding_dirs, binding_path
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
objs = {o["id"]: o for o in m["objects"]}
names = [b["name"] for b in m["bindings"]]
assert len(names) == 300 and len(set(names)) == 300
dirs = binding_dirs(names)

def expect(o, what):
    return open(os.path.join(d, "expect", o[what]), "rb").read()

def tree(top):
    """Every file under top, relative, and every directory listing checked
    for duplicates."""
    files = set()
    for root, ds, fs in os.walk(top):
        listed = os.listdir(root)
        assert len(listed) == len(set(listed)), ("duplicate", root)
        for f in fs:
            files.add(os.path.relpath(os.path.join(root, f), top))
    return files

for sub, what in (("bindings", "expect_bytes"), ("decoded/bindings", "expect_decoded")):
    top = os.path.join(mnt, sub)
    want, inodes = set(), set()
    for b in m["bindings"]:
        rel = os.path.join(*binding_path(b["name"], dirs))
        p = os.path.join(top, rel)
        assert os.path.isfile(p), (sub, b["name"], rel)
        want.add(rel)
        st = os.stat(p)
        assert st.st_ino not in inodes, ("inode shared", p)
        inodes.add(st.st_ino)
        assert os.getxattr(p, "user.ninfer.name").decode() == b["name"], p
        data = open(p, "rb").read()
        assert data == expect(objs[b["object"]], what), ("bytes", sub, b["name"])
    got = tree(top)
    assert got == want, (sub, sorted(got - want)[:5], sorted(want - got)[:5])

# the issue's case, spelled out (x, /x and / may also be directories here:
# names were drawn that extend them, and their leaves are %self then)
px = os.path.join(mnt, "bindings", *binding_path("x", dirs))
psx = os.path.join(mnt, "bindings", *binding_path("/x", dirs))
assert binding_path("/x", dirs)[:2] == ["%", "x"], binding_path("/x", dirs)
assert binding_path("/", dirs)[:2] == ["%", "%"], binding_path("/", dirs)
x, sx = open(px, "rb").read(), open(psx, "rb").read()
assert len(x) == 256 and x == expect(objs["w.embed"], "expect_bytes"), len(x)
assert len(sx) == 16 and sx == expect(objs["w.i32"], "expect_bytes"), len(sx)
assert os.stat(px).st_ino != os.stat(psx).st_ino
assert os.getxattr(os.path.join(mnt, "bindings", *binding_path("/", dirs)),
                   "user.ninfer.name") == b"/"

# objects/: one file per id, at esc(id), with its bytes
listed = os.listdir(os.path.join(mnt, "objects"))
assert sorted(listed) == sorted(esc(i) for i in objs), "objects/ differs"
for i, o in objs.items():
    p = os.path.join(mnt, "objects", esc(i))
    assert os.getxattr(p, "user.ninfer.name").decode() == i, p
    assert open(p, "rb").read() == expect(o, "expect_bytes"), i
print("ok")
PY
ok "names rule over hostile names"

# Two bindings whose long leaves cut to one name (rule 4; a real FNV-1a 64
# collision, see tests/mount/test_tree.c): the mount is refused with exit
# 4, the message naming both and the path; ninfer-check passes the set.
: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}" "${NINFER_CHECK:?NINFER_CHECK must point at ninfer-check}"
c=$T/collide
mkdir -p "$c"
printf '\x80\x3f\x00\x40' > "$c/w.bin"
python3 - "$c" <<'PY'
import json, sys
from nfnames import esc, fnv1a64
a, b = "n" * 250 + "Cr9iWW1cQA!", "n" * 250 + "RqveePu1qD@"
assert a != b and fnv1a64(a.encode()) == fnv1a64(b.encode()) and esc(a) == esc(b)
obj = lambda i: {"id": i, "kind": "tensor", "shape": [2], "format": "bf16",
                 "layout": "contiguous_le_v1", "source": "w.bin"}
json.dump({"components": {"text": {"config": {}}}, "objects": [obj("w1"), obj("w2")],
           "bindings": {"d/" + a: {"object": "w1"}, "d/" + b: {"object": "w2"}},
           "uses": []}, open(sys.argv[1] + "/m.json", "w"))
PY
"$NINFER_PACK" create --manifest "$c/m.json" "$c/c.ninfer" >/dev/null || fail "pack the colliding set"
"$NINFER_CHECK" "$c/c.ninfer" >/dev/null || fail "ninfer-check should pass the colliding set"
mkdir -p "$c/mnt"
rc=0
"$NINFERFS" "$c/c.ninfer" "$c/mnt" -f 2>"$c/err" || rc=$?
is_mounted "$c/mnt" && fail "a colliding set was mounted"
[ "$rc" = 4 ] || fail "colliding names: exit $rc, not 4: $(cat "$c/err")"
grep -q 'binding "d/nnn.*Cr9iWW1cQA!" and binding "d/nnn.*RqveePu1qD@" both map to "bindings/d/nnn.*%~7941afe34a95d081"' "$c/err" ||
	fail "refusal message: $(cat "$c/err")"
ok "colliding cut names refuse the mount (exit 4, both named)"
