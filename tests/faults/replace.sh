#!/usr/bin/env bash
# A part (and the entry) replaced by another file (rename over it) while
# mounted.  The daemon reads through the descriptors it opened at mount time
# (ninferfs(1) BUGS, the same rule as for a removed part), so it keeps serving
# the original bytes and never looks at the new files.  Asserted: after
# renaming a same-length file of 0xA5 bytes over part-0044, a 100-byte file
# over part-0020 and a copy of another set's entry (another artifact_id)
# over the entry, with the mount's page cache dropped, every object reads
# exactly (raw and decoded); the daemon keeps serving and unmounts cleanly.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
o=$(fixture mixed -other)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" >/dev/null || fail "reads before the rename"
cp "$d/mixed.ninfer" "$T/entry.copy"

size=$(stat -c %s "$d/mixed.ninfer.part-0044")
$PY -c 'import sys; open(sys.argv[1], "wb").write(b"\xa5" * int(sys.argv[2]))' "$T/junk" "$size"
mv -f "$T/junk" "$d/mixed.ninfer.part-0044"
head -c 100 /dev/zero >"$T/short"
mv -f "$T/short" "$d/mixed.ninfer.part-0020"
cp "$o/mixed.ninfer" "$T/other-entry"
mv -f "$T/other-entry" "$d/mixed.ninfer"
cmp -s "$d/mixed.ninfer" "$T/entry.copy" && fail "the other entry is identical (same artifact_id?)"
drop_mount_cache "$mnt"

mkdir -p "$T/ref" && ln -s "$T/entry.copy" "$T/ref/mixed.ninfer" && ln -s "$d/expect" "$T/ref/expect"
check_objects "$mnt" "$T/ref" || fail "reads after the renames"
# the served artifact_id is still the original one
want=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["artifact_id"])' "$d/expect/manifest.json")
got=$(getfattr --only-values -n user.ninfer.artifact_id "$mnt" 2>/dev/null || true)
[ -z "$got" ] || [ "$got" = "$want" ] || fail "root artifact_id $got, want $want"
ok "parts and entry replaced by rename: the original bytes are served"
alive "$DPID" || fail "daemon died"
unmount "$mnt" "$DPID"
ok "clean unmount"
