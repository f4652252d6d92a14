#!/usr/bin/env bash
# Limits of the daemon (issue 11).
#  item 5: -o max_json=BYTES, the ceiling on the JSON directory's claimed
#  size: a claim above it is refused before it is read (JSON_TOO_LARGE on
#  stderr, exit 8: ninferfs(1) EXIT STATUS), a bad value is a usage error
#  (16), and a ceiling above the claim mounts.
. "$(dirname "$0")/lib.sh"

d=$(fixture text)
jb=$(python3 -c 'import struct,sys; print(struct.unpack_from("<Q", open(sys.argv[1],"rb").read(16), 8)[0])' "$d/text.ninfer")
mkdir -p "$T/mnt"
set +e
"$NINFERFS" "$d/text.ninfer" "$T/mnt" -f -o max_json=$((jb - 1)) 2>"$T/err1"; rc1=$?
"$NINFERFS" "$d/text.ninfer" "$T/mnt" -f -o max_json=12abc 2>"$T/err2"; rc2=$?
"$NINFERFS" "$d/text.ninfer" "$T/mnt" -f -o max_json=0 2>/dev/null; rc3=$?
set -e
is_mounted "$T/mnt" && { MOUNTS+=("$T/mnt"); fail "mounted above -o max_json"; }
[ "$rc1" = 8 ] || fail "json_bytes $jb above max_json: exit $rc1, want 8 ($(cat "$T/err1"))"
grep -q "JSON_TOO_LARGE  header: json_bytes $jb is above the ceiling of $((jb - 1)) bytes" "$T/err1" ||
	fail "no JSON_TOO_LARGE finding: $(cat "$T/err1")"
[ "$rc2" = 16 ] && [ "$rc3" = 16 ] || fail "bad max_json values: exit $rc2, $rc3, want 16"
grep -q "max_json must be a positive size" "$T/err2" || fail "bad max_json: $(cat "$T/err2")"
mount_fg "$d/text.ninfer" "$T/mnt" -o max_json=$jb
cmp -s <(tail -c +33 "$d/text.ninfer" | head -c "$jb") "$T/mnt/artifact.json" || fail "artifact.json"
unmount "$T/mnt"
ok "-o max_json: $jb-byte JSON refused at $((jb - 1)) (exit 8, JSON_TOO_LARGE), mounted at $jb"
