#!/usr/bin/env bash
# A part, then the entry, removed (unlinked) while mounted.  Contract §5: "a
# part file truncated or removed while mounted: reads touching it fail with
# EIO; the daemon keeps serving everything else".  The daemon still holds
# the descriptor it opened at mount, so it checks the file's link count.
# Asserted, with the mount's page cache dropped: every raw and decoded
# object touching the removed file gives EIO, whole pages of those objects
# that lie in other files still read exactly, every other object reads
# exactly (faultlib.check); the daemon keeps serving and unmounts cleanly.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" >/dev/null || fail "reads before the unlink"

rm "$d/mixed.ninfer.part-0044"
drop_mount_cache "$mnt"
check_objects "$mnt" "$d" 44 0 || fail "reads after unlinking part-0044"
ok "unlinked part: reads touching it fail with EIO, the rest exact"
alive "$DPID" || fail "daemon died"
unmount "$mnt" "$DPID"

# The entry: the documents made at mount (validation.json, files.json) are
# in memory; artifact.json (read from the entry) and the objects whose bytes
# lie in the entry's payload fail.
e=$(fixture mixed -entry)
mount_fg "$e/mixed.ninfer" "$T/mnt2"
cp "$e/mixed.ninfer" "$T/entry.copy"
rm "$e/mixed.ninfer"
drop_mount_cache "$T/mnt2"
mkdir -p "$T/ref" && ln -s "$T/entry.copy" "$T/ref/mixed.ninfer" && ln -s "$e/expect" "$T/ref/expect"
check_objects "$T/mnt2" "$T/ref" 0 0 || fail "reads after unlinking the entry"
ok "unlinked entry: reads touching it fail with EIO, the rest exact"
alive "$DPID" || fail "daemon died"
unmount "$T/mnt2" "$DPID"
ok "clean unmount"
