#!/usr/bin/env bash
# A part (and the entry) removed while mounted.  Documented behaviour
# (ninferfs(1) BUGS): "A part file removed while mounted keeps being read
# through the descriptor opened at mount time (its bytes are still there)".
# Asserted: after unlinking two parts and the entry, with the page cache of
# the mount dropped, every object still reads exactly (raw and decoded), the
# daemon keeps serving and unmounts cleanly.  (contract.md §5 lists "removed"
# with "truncated" -> EIO; the man page is the authoritative one.)
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" >/dev/null || fail "reads before the unlink"

rm "$d/mixed.ninfer.part-0044" "$d/mixed.ninfer.part-0010"
drop_mount_cache "$mnt"
check_objects "$mnt" "$d" || fail "reads after unlinking part-0044 and part-0010"
ok "unlinked parts: every object still exact"

# the entry too (artifact.json, validation.json are served from memory; the
# head of w.embed lives in the entry's payload)
cp "$d/mixed.ninfer" "$T/entry.copy"
rm "$d/mixed.ninfer"
drop_mount_cache "$mnt"
mkdir -p "$T/ref" && ln -s "$T/entry.copy" "$T/ref/mixed.ninfer" && ln -s "$d/expect" "$T/ref/expect"
check_objects "$mnt" "$T/ref" || fail "reads after unlinking the entry"
ok "unlinked entry: every object still exact"

# what files.json says now (not specified; printed for the record)
$PY -c '
import json, sys
f = json.load(open(sys.argv[1]))
f = f if isinstance(f, list) else f.get("files", f)
print("files.json after unlink:", [(x["index"], x["status"]) for x in f if x["index"] in (0, 10, 44)])
' "$mnt/files.json"
alive "$DPID" || fail "daemon died"
unmount "$mnt" "$DPID"
ok "clean unmount"
