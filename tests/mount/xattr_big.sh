#!/usr/bin/env bash
# Attribute values never exceed the kernel's 64 KiB (issue 11, item 9):
# getfattr -d works on every file, a cut value carries its marker, and the
# whole value is the file xattrs/<path>/<attribute> (man ninferfs.5).
#   - an object spread over 260 parts whose names are 237 bytes long (its
#     range map is ~77 KB of JSON): user.ninfer.segments keeps the first
#     entries and ends with {"truncated": N}; checked against the range map
#     worked out here from files.json;
#   - a 1,000,000-byte object id, binding name and resource object id:
#     user.ninfer.name / .object are cut to 4000 bytes + "...[cut: N bytes]".
. "$(dirname "$0")/lib.sh"
: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}"

# --- the spread object ----------------------------------------------------
s=$T/spread
mkdir -p "$s"
entry=$(python3 -c 'print("s" * 220)').ninfer
python3 - "$s" <<'PY'
import json, os, sys
d = sys.argv[1]
n = (81920 - 4096) * 259              # 259 full parts after the entry's share
blk = os.urandom(65536)
open(d + "/w.bin", "wb").write((blk * (n // 65536 + 1))[:n])
open(d + "/s.bin", "wb").write(os.urandom(64))
t = lambda i, src, k: {"id": i, "kind": "tensor", "shape": [k], "format": "bf16",
                       "layout": "contiguous_le_v1", "source": src}
json.dump({"components": {"text": {"config": {}}},
           "objects": [t("w.small", "s.bin", 32), t("w.spread", "w.bin", n // 2)],
           "bindings": {"spread": {"object": "w.spread"}, "small": {"object": "w.small"}},
           "uses": []}, open(d + "/m.json", "w"))
PY
"$NINFER_PACK" create -q --manifest "$s/m.json" --max-file-bytes 81920 "$s/$entry" ||
	fail "ninfer-pack create (spread)"
mnt=$T/mnt
mount_fg "$s/$entry" "$mnt"
getfattr -R -d -m - "$mnt" >/dev/null || fail "getfattr -R -d -m - over the spread set"
python3 - "$mnt" "$entry" <<'PY' || fail "segments"
import json, os, sys
mnt, entry = sys.argv[1], sys.argv[2]
files = json.load(open(os.path.join(mnt, "files.json")))
def expected(off, n):
    """The range map of logical [off, off+n), from files.json alone."""
    out = []
    for f in files:
        lo, hi = max(off, f["payload_begin"]), min(off + n, f["payload_end"])
        if lo < hi:
            out.append({"file": f["index"], "path": f["path"] or entry,
                        "file_offset": f["data_offset"] + lo - f["payload_begin"],
                        "length": hi - lo})
    return out
for rel in ("objects/w.spread", "bindings/spread", "decoded/objects/w.spread",
            "decoded/bindings/spread", "planes/w.spread/data"):
    p = os.path.join(mnt, rel)
    raw = os.getxattr(p, "user.ninfer.segments")
    assert len(raw) <= 65536, (rel, len(raw))
    segs = json.loads(raw)
    assert segs[-1].keys() == {"truncated"}, (rel, segs[-1])
    off = int(os.getxattr(p, "user.ninfer.offset"))
    want = expected(off, (81920 - 4096) * 259)
    full = json.loads(open(os.path.join(mnt, "xattrs", rel, "user.ninfer.segments"), "rb").read())
    assert full == want, (rel, len(full), len(want))
    assert len(full) >= 260, len(full)
    k = len(segs) - 1
    assert segs[:k] == full[:k] and segs[-1]["truncated"] == len(full) - k, (rel, k, segs[-1])
    # as many as fit: one more entry would not
    assert len(raw) + len(json.dumps(full[k], separators=(",", ":"))) + 1 > 65536, "cut too early"
    print("%s: %d of %d entries, %d bytes, {\"truncated\": %d}" % (rel, k, len(full), len(raw),
                                                                segs[-1]["truncated"]))
# a small object's list is whole, and has no file under xattrs/
segs = json.loads(os.getxattr(os.path.join(mnt, "objects/w.small"), "user.ninfer.segments"))
assert all("truncated" not in x for x in segs)
assert not os.path.exists(os.path.join(mnt, "xattrs/objects/w.small"))
PY
unmount "$mnt"
ok "segments of an object over 260 parts: truncated with the marker, whole under xattrs/"

# --- a million-byte id, binding name and resource object ---------------------
l=$T/long
mkdir -p "$l"
printf '\x80\x3f\x00\x40' >"$l/w.bin"
printf 'tok' >"$l/r.bin"
python3 - "$l" <<'PY'
import json, sys
d = sys.argv[1]
oid = "\u00e9" * 500000                 # 1,000,000 bytes of UTF-8
bname = "b/" + "x" * 1000000
rid = "r" * 1000000
json.dump({"components": {"text": {"config": {}, "resources": {"tok": rid}}},
           "objects": [{"id": oid, "kind": "tensor", "shape": [2], "format": "bf16",
                        "layout": "contiguous_le_v1", "source": "w.bin"},
                       {"id": rid, "kind": "resource", "encoding": "raw_bytes_v1",
                        "source": "r.bin"}],
           "bindings": {bname: {"object": oid}}, "uses": []}, open(d + "/m.json", "w"))
PY
"$NINFER_PACK" create -q --manifest "$l/m.json" "$l/long.ninfer" || fail "ninfer-pack create (long)"
mount_fg "$l/long.ninfer" "$mnt"
getfattr -R -d -m - "$mnt" >/dev/null || fail "getfattr -R -d -m - over the long-name set"
python3 - "$mnt" <<'PY' || fail "long names"
import os, sys
from nfnames import esc
mnt = sys.argv[1]
oid, bname, rid = "\u00e9" * 500000, "b/" + "x" * 1000000, "r" * 1000000
def cut(v):
    b = v.encode()
    k = 4000
    while k > 0 and (b[k] & 0xC0) == 0x80:   # never inside a UTF-8 sequence
        k -= 1
    return b[:k] + b"...[cut: %d bytes]" % len(b)
cases = [("objects/" + esc(oid), "user.ninfer.name", oid),
         ("planes/" + esc(oid) + "/data", "user.ninfer.name", oid),
         ("decoded/objects/" + esc(oid), "user.ninfer.name", oid),
         ("bindings/b/" + esc("x" * 1000000), "user.ninfer.name", bname),
         ("decoded/bindings/b/" + esc("x" * 1000000), "user.ninfer.name", bname),
         ("objects/" + esc(rid), "user.ninfer.name", rid),
         ("components/text/resources/tok", "user.ninfer.object", rid)]
for rel, attr, full in cases:
    p = os.path.join(mnt, rel)
    v = os.getxattr(p, attr)
    assert v == cut(full), (rel, attr, v[:20], v[-30:])
    assert len(v) <= 4096
    whole = open(os.path.join(mnt, "xattrs", rel, attr), "rb").read()
    assert whole == full.encode(), (rel, attr, len(whole))
# attributes that were not cut have no file there
assert not os.path.exists(os.path.join(mnt, "xattrs/components/text/resources/tok/user.ninfer.name"))
print("ok")
PY
unmount "$mnt"
ok "1,000,000-byte names: cut to 4000 bytes with the marker, whole under xattrs/"

# --- a plain set has no xattrs/ -------------------------------------------
d=$(fixture text)
mount_fg "$d/text.ninfer" "$mnt"
[ ! -e "$mnt/xattrs" ] || fail "xattrs/ in a set with no cut value"
unmount "$mnt"
ok "no xattrs/ when nothing is cut"
