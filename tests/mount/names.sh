#!/usr/bin/env bash
# Names with '/', '%', unicode, '.', '..', spaces; %self; user.ninfer.name.
. "$(dirname "$0")/lib.sh"

d=$(fixture names)
mnt=$T/mnt
mount_fg "$d/names.ninfer" "$mnt"
ls -la "$mnt/objects" "$mnt/bindings" >/dev/null
python3 - "$d" "$mnt" <<PY || fail "names"
import json, os, sys
$PY_ESC
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
listed = set(os.listdir(os.path.join(mnt, "objects")))
for o in m["objects"]:
    e = esc(o["id"])
    assert e in listed, (o["id"], e, listed)
    p = os.path.join(mnt, "objects", e)
    assert os.getxattr(p, "user.ninfer.name").decode() == o["id"]
    assert open(p, "rb").read() == open(os.path.join(d, "expect", o["expect_bytes"]), "rb").read()
assert len(listed) == len(m["objects"])
for want in ("a%2Fb", "100%25", "%25leading", "%2E", "%2E%2E", " ", "sp ace"):
    assert want in listed, want
names = [b["name"] for b in m["bindings"]]
for b in m["bindings"]:
    parts = [esc(c) for c in b["name"].split("/")]
    p = os.path.join(mnt, "bindings", *parts)
    if any(n.startswith(b["name"] + "/") for n in names):
        assert os.path.isdir(p), p
        p = os.path.join(p, "%self")
    if not os.path.isfile(p):
        continue   # no raw leaf for this one
    assert os.getxattr(p, "user.ninfer.name").decode() == b["name"], p
print("ok")
PY
[ -f "$mnt/bindings/a/b/%self" ] || fail "a/b/%self"
[ -f "$mnt/bindings/a/b/c/%self" ] || fail "a/b/c/%self"
[ -f "$mnt/bindings/a/b/c/d" ] || fail "a/b/c/d"
[ -e "$mnt/bindings/%25" ] || fail "binding %"
[ -d "$mnt/bindings/dots/%2E" ] || fail "dots/%2E"
[ -e "$mnt/bindings/dots/%2E/%2E%2E" ] || fail "dots/./.."
[ ! -e "$mnt/objects/nonexistent" ] || fail "lookup of a missing name"
ok "names"
