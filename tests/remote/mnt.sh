# tests/remote/mnt.sh — ninferfs mounts for the remote tests (sourced after
# lib.sh).  Every mount is recorded and unmounted by lib.sh's EXIT trap
# (before the servers are killed), every daemon killed by PID, even when
# the test fails.
: "${NINFERFS:?NINFERFS must point at the ninferfs binary}"
MNTS=()
DPIDS=()
declare -A MPID

mnt_cleanup() {
	local m p
	for m in "${MNTS[@]}"; do
		grep -q " $m fuse" /proc/mounts 2>/dev/null &&
			{ fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; }
	done
	for p in "${DPIDS[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		kill "$p" 2>/dev/null
		for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$p" 2>/dev/null
	done
}
CLEANUPS+=(mnt_cleanup)

is_mounted() { grep -q " $1 fuse" /proc/mounts; }

# mnt SOURCE DIR [ninferfs args...]: a foreground daemon in the background
# of this shell (stderr in DIR.log); waits until the mount answers.
mnt() {
	local src=$1 dir=$2; shift 2
	mkdir -p "$dir"
	MNTS+=("$dir")
	"$NINFERFS" "$src" "$dir" -f "$@" 2>"$dir.log" &
	DPIDS+=($!)
	MNT_PID=$!
	MPID[$dir]=$!
	for _ in $(seq 200); do
		if is_mounted "$dir" && stat "$dir" >/dev/null 2>&1; then return 0; fi
		kill -0 "$MNT_PID" 2>/dev/null || fail "ninferfs $src exited: $(cat "$dir.log")"
		sleep 0.05
	done
	fail "mount of $src did not appear"
}

# umnt DIR: unmount, wait for the daemon, check its log is sanitizer-clean
umnt() {
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	for _ in $(seq 100); do is_mounted "$1" || break; sleep 0.05; done
	is_mounted "$1" && fail "still mounted: $1"
	wait "${MPID[$1]}" 2>/dev/null || true
	san_clean "$1.log"
}

# read_err DIR FILE: the error a read of DIR/FILE fails with ("" if none)
read_err() { (cd "$1" && cat "$2" 2>&1 >/dev/null) || true; }

# tree_same A B: the same files with the same bytes (cmp), but the
# documents that name the source or count requests; a file whose reads
# fail (an unknown format's decoded view: EOPNOTSUPP) must fail the same
# way on both (TREE_ERRS counts them)
tree_same() {
	local a=$1 b=$2 f n=0 e
	TREE_ERRS=0
	diff <(cd "$a" && find . | sort) <(cd "$b" && find . | sort) >"$T/tree.diff" ||
		fail "the trees differ: $(head -20 "$T/tree.diff")"
	while IFS= read -r f; do
		case "$f" in ./stats | ./files.json | ./validation.json) continue ;; esac
		if ! cmp -s "$a/$f" "$b/$f"; then
			e=$(read_err "$a" "$f")
			[ -n "$e" ] && [ "$e" = "$(read_err "$b" "$f")" ] ||
				fail "bytes differ: $f ($(cmp "$a/$f" "$b/$f" 2>&1 | head -2))"
			TREE_ERRS=$((TREE_ERRS + 1))
		fi
		n=$((n + 1))
	done < <(cd "$a" && find . -type f | sort)
	TREE_FILES=$n
}

# object_parts DIR: one line per file of DIR/objects, "<id> <file>...": the
# set's files its segments lie in (user.ninfer.segments of a local mount)
object_parts() {
	(cd "$1/objects" && for f in *; do
		getfattr --only-values -n user.ninfer.segments "$f" |
			$PY -c 'import json,sys; print(sys.argv[1], " ".join(str(s["file"]) for s in json.load(sys.stdin)))' "$f"
	done)
}

# shared_part PARTS: "<part> <id1> <id2>": the first part two objects lie
# in, among the objects that do not touch the entry (file 0); PARTS as
# object_parts wrote it; nothing when there is no such part
shared_part() {
	$PY - "$1" <<'PY'
import sys
objs = [l.split() for l in open(sys.argv[1])]
objs = [(o[0], [int(x) for x in o[1:]]) for o in objs if "0" not in o[1:]]
for p in sorted({x for _, ps in objs for x in ps}):
    on = [name for name, ps in objs if p in ps]
    if len(on) >= 2:
        print(p, on[0], on[1])
        break
PY
}
