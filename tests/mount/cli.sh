#!/usr/bin/env bash
# The command line (issue 11, items 10 and 11): every -o value is range
# checked and a bad one exits 16 with a message naming the option; unknown
# options exit 16 too; valid edge values mount and take effect.  A header or
# JSON the reader refuses says "refused: N directory error(s)", not "cannot
# read ENTRY: Invalid argument"; a real read failure still names the errno.
. "$(dirname "$0")/lib.sh"

d=$(fixture text)
entry=$d/text.ninfer
mnt=$T/mnt
mkdir -p "$mnt"
MOUNTS+=("$mnt")

# refused OPTION WORD: ninferfs must exit 16 without mounting and name WORD
refused() {
	local rc=0
	"$NINFERFS" "$entry" "$mnt" "$@" 2>"$T/err" >/dev/null || rc=$?
	if is_mounted "$mnt"; then
		fusermount3 -u "$mnt"
		fail "$*: mounted"
	fi
	[ "$rc" = 16 ] || fail "$*: exit $rc, want 16 ($(cat "$T/err"))"
}
bad() { # bad OPT NAME
	refused -o "$1"
	grep -q -- "$2" "$T/err" || fail "-o $1: the message does not name $2: $(cat "$T/err")"
}

for v in 0 1025 -1 +5 abc '' 1e3 0x10 ' 8' 99999999999999999999999; do
	bad "threads=$v" "threads"
done
for v in 0 4097 -3 64k 18446744073709551617; do
	bad "uring_depth=$v" "uring_depth"
done
for v in 4294967295 4294967296 99999999999 -1 0x10 1a ''; do
	bad "uid=$v" "uid"
	bad "gid=$v" "gid"
done
for v in 0o22 8 0778 1000 -1 '' 22x; do
	bad "umask=$v" "umask"
done
bad "decoded_dtype=f64" "decoded_dtype"
bad "bogus" "bogus"
refused --bogus
grep -q -- "--bogus" "$T/err" || fail "--bogus not named: $(cat "$T/err")"
ok "bad option values and unknown options exit 16, naming the option"

# Valid edges mount, and ownership and modes follow them.
mount_fg "$entry" "$mnt" -o threads=1,uring_depth=1,uid=4294967294,gid=0,umask=0777
[ "$(stat -c %u "$mnt/artifact.json")" = 4294967294 ] || fail "uid=4294967294"
[ "$(stat -c %a "$mnt/artifact.json")" = 0 ] || fail "umask=0777"
unmount "$mnt"
mount_fg "$entry" "$mnt" -o threads=1024,uring_depth=4096,uid=0,gid=4294967294,umask=027
[ "$(stat -c %g "$mnt/objects")" = 4294967294 ] || fail "gid=4294967294"
[ "$(stat -c %a "$mnt/objects")" = 550 ] || fail "umask=027 on a directory"
[ "$(stat -c %a "$mnt/artifact.json")" = 440 ] || fail "umask=027 on a file"
cmp -s "$mnt/objects/w.embed" "$d/expect/objects/w.embed.bin" || fail "read with threads=1024"
unmount "$mnt"
mount_fg "$entry" "$mnt" -o umask=0,uid=00017
[ "$(stat -c %a:%u "$mnt/artifact.json")" = 444:17 ] || fail "umask=0, uid=00017"
unmount "$mnt"
ok "edge values 1, 1024, 4096, 4294967294, umask 0/027/0777 mount and apply"

# Item 11: refusals of the header or the JSON, and real read failures.
cp "$entry" "$T/json.ninfer"
printf 'X' | dd of="$T/json.ninfer" bs=1 seek=32 conv=notrunc status=none
cp "$entry" "$T/magic.ninfer"
printf 'NOPE' | dd of="$T/magic.ninfer" bs=1 seek=0 conv=notrunc status=none
for e in json magic; do
	for lenient in "" "-olenient"; do
		rc=0
		"$NINFERFS" "$T/$e.ninfer" "$mnt" $lenient 2>"$T/err" || rc=$?
		is_mounted "$mnt" && fail "$e: mounted"
		[ "$rc" = 4 ] || fail "$e $lenient: exit $rc, want 4"
		grep -q "^ninferfs: $T/$e.ninfer: refused: 1 directory error " "$T/err" ||
			fail "$e $lenient: no 'refused: 1 directory error': $(cat "$T/err")"
		! grep -q "Invalid argument\|cannot read" "$T/err" ||
			fail "$e: still says it cannot read the entry: $(cat "$T/err")"
	done
done
rc=0
"$NINFERFS" "$T/absent.ninfer" "$mnt" 2>"$T/err" || rc=$?
[ "$rc" = 8 ] || fail "absent entry: exit $rc"
grep -q "^ninferfs: cannot read $T/absent.ninfer: No such file or directory$" "$T/err" ||
	fail "absent entry: $(cat "$T/err")"
rc=0
"$NINFERFS" "$d" "$mnt" 2>"$T/err" || rc=$?
[ "$rc" = 8 ] || fail "directory as entry: exit $rc"
grep -q "^ninferfs: cannot read $d: not a regular file$" "$T/err" ||
	fail "directory as entry: $(cat "$T/err")"
ok "refusals say 'refused: N directory error(s)'; read failures name the cause"
