#!/usr/bin/env bash
# A part replaced by another file (rename over its name) while mounted.  The
# original file is then removed (its inode has no name left), so contract §5
# applies as for unlink: reads touching it fail with EIO; the daemon never
# opens the new file, and keeps serving everything else.
# Asserted, with the mount's page cache dropped: after renaming a same-length
# file of 0xA5 bytes over part-0044, raw and decoded objects touching it give
# EIO (never the 0xA5 bytes), the rest read exactly; then the same for a copy
# of another set's entry (another artifact_id) renamed over the entry of a
# second mount; the served artifact_id stays the original one.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" >/dev/null || fail "reads before the rename"

size=$(stat -c %s "$d/mixed.ninfer.part-0044")
$PY -c 'import sys; open(sys.argv[1], "wb").write(b"\xa5" * int(sys.argv[2]))' "$T/junk" "$size"
mv -f "$T/junk" "$d/mixed.ninfer.part-0044"
drop_mount_cache "$mnt"
check_objects "$mnt" "$d" 44 0 || fail "reads after renaming junk over part-0044"
ok "part replaced by rename: reads touching it fail with EIO, the rest exact"
alive "$DPID" || fail "daemon died"
unmount "$mnt" "$DPID"

e=$(fixture mixed -entry)
o=$(fixture mixed -other)
mount_fg "$e/mixed.ninfer" "$T/mnt2"
cp "$e/mixed.ninfer" "$T/entry.copy"
cp "$o/mixed.ninfer" "$T/other-entry"
mv -f "$T/other-entry" "$e/mixed.ninfer"
cmp -s "$e/mixed.ninfer" "$T/entry.copy" && fail "the other entry is identical (same artifact_id?)"
drop_mount_cache "$T/mnt2"
mkdir -p "$T/ref" && ln -s "$T/entry.copy" "$T/ref/mixed.ninfer" && ln -s "$e/expect" "$T/ref/expect"
check_objects "$T/mnt2" "$T/ref" 0 0 || fail "reads after renaming another entry over the entry"
want=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["artifact_id"])' "$e/expect/manifest.json")
got=$(getfattr --only-values -n user.ninfer.artifact_id "$T/mnt2")
[ "$got" = "$want" ] || fail "root artifact_id $got, want $want"
ok "entry replaced by rename: reads touching it fail with EIO, artifact_id unchanged"
alive "$DPID" || fail "daemon died"
unmount "$T/mnt2" "$DPID"
ok "clean unmount"
