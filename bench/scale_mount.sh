#!/bin/bash
# bench/scale_mount.sh — issue 6: how fast a huge set mounts and lists, and
# how small the daemon stays, against Python's json.load of the same JSON.
#
#   bench/scale_mount.sh [-b BUILD_DIR] [-d WORK_DIR] [-k] [N ...]
#
# For each N (default: 10000 100000 1000000), in one run per N:
#   - writes a set with bench/gen_large.py (N objects, N bindings, 2N uses,
#     deep binding paths, 16 files, sparse zero payload) and extracts its
#     JSON text (bytes [32, 32 + json_bytes) of the entry) to a file;
#   - py:     python3 -c 'import json; json.load(...)' of that file (anchor);
#   - check:  ninfer-check ENTRY (wall time);
#   - ready:  `ninferfs ENTRY MNT -f` started in the background, the time
#             until a stat(2) of a deep binding file succeeds (polled every
#             5 ms without forking): the time to a mounted, listable tree;
#   - hwm0:   the daemon's VmHWM at ready;
#   - stat:   10,000 stats of random known paths (objects/, bindings/,
#             decoded/objects/, planes/) in one python3 process, right
#             after ready (cold: every path goes through lookups);
#   - ls:     `ls -lR MNT | wc -l` (lines, time);
#   - find:   `find MNT -type f | wc -l` (files, time);
#   - peak:   the daemon's VmHWM at the end (peak RSS), and steady: VmRSS
#             after the listing;
#   - tmpfs:  the native anchor of the listing: the same tree copied (names
#             and modes, no data: cp -r --attributes-only) to a tmpfs under
#             /dev/shm, and `ls -lR | wc -l` of that copy; only for N up to
#             NATIVE_LS_MAX (default 100000: the copy costs ~1 KiB of memory
#             per file and ~40 s at 100k); 0 when skipped.
# and prints one table row per N with the ratios ready/py, peak/json and
# ls/tmpfs.
# Goals at N = 100000 (issue 6): ready/py < 1, peak/json < 4, ls < 2 s.
#
# This is a benchmark, not a test: nothing fails on slow numbers.  The
# machine's load changes the times; run it on a quiet machine.  The mount
# is always unmounted (trap).  Work files go to WORK_DIR (default: a fresh
# directory under ${TMPDIR:-/tmp}) and are removed afterwards unless -k
# (with -k an existing set-N.ninfer in WORK_DIR is reused).
set -eu

NAME=scale_mount
. "$(dirname "$0")/scale_args.sh"

ninferfs="$build/fs/ninferfs"
check="$build/tools/ninfer-check"
for b in "$ninferfs" "$check"; do
	[ -x "$b" ] || { echo "$0: no $b (build first, or give -b BUILD_DIR)" >&2; exit 8; }
done
command -v fusermount3 > /dev/null || { echo "$0: needs fusermount3" >&2; exit 8; }
scale_workdir
mnt="$work/mnt"
pid=""
native=""
cleanup() {
	[ -z "$native" ] || rm -rf "$native"
	if grep -q " $mnt fuse" /proc/mounts 2> /dev/null; then
		fusermount3 -u "$mnt" 2> /dev/null || umount -l "$mnt" 2> /dev/null || true
	fi
	if [ -n "$pid" ] && kill -0 "$pid" 2> /dev/null; then
		sleep 0.2
		kill "$pid" 2> /dev/null || true
	fi
	rmdir "$mnt" 2> /dev/null || true
	if [ "$keep" = 0 ]; then
		rm -f "$work"/set-* "$work"/*.json "$work"/*.out "$work"/*.log "$work"/*.paths
		[ "$made" = 0 ] || rmdir "$work" 2> /dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

now() { date +%s.%N; }
since() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
vm() { sed -n "s/^$1:[[:space:]]*\([0-9]*\) kB/\1/p" "/proc/$pid/status"; }

rows=()
for n in "$@"; do
	entry="$work/set-$n.ninfer"
	if [ "$keep" = 0 ] || [ ! -f "$entry" ] || [ ! -f "$work/gen-$n.out" ]; then
		python3 "$here/gen_large.py" "$entry" --objects "$n" --parts 16 > "$work/gen-$n.out"
	fi
	json="$work/dir-$n.json"
	# the JSON text, and the known paths for the random stats
	python3 - "$entry" "$json" "$work/stat-$n.paths" <<'EOF'
import json, random, struct, sys
with open(sys.argv[1], 'rb') as f:
    n = struct.unpack('<Q', f.read(32)[8:16])[0]
    text = f.read(n)
with open(sys.argv[2], 'wb') as out:
    out.write(text)
d = json.loads(text)
ids = [o["id"] for o in d["objects"]]
names = list(d["bindings"])
rnd = random.Random(6)
paths = []
for _ in range(10000):
    k = rnd.randrange(4)
    if k == 0: paths.append("objects/" + rnd.choice(ids))
    elif k == 1: paths.append("bindings/" + rnd.choice(names))
    elif k == 2: paths.append("decoded/objects/" + rnd.choice(ids))
    else: paths.append("decoded/bindings/" + rnd.choice(names))
with open(sys.argv[3], 'w') as out:
    out.write("\n".join(paths) + "\n")
EOF
	jbytes=$(wc -c < "$json")
	deep=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["samples"][3]["path"])' \
		"$work/gen-$n.out")
	cat "$entry" "$entry".part-* "$json" > /dev/null   # warm the page cache alike

	t=$(now)
	python3 -c 'import json, sys; json.load(open(sys.argv[1], "rb"))' "$json"
	py_s=$(since "$t")

	t=$(now)
	"$check" "$entry" > "$work/check-$n.out" || echo "$0: ninfer-check exited $? on N=$n" >&2
	ck_s=$(since "$t")

	mkdir -p "$mnt"
	# The poll must not compete with the daemon for the 2 cores: `[ -e ]`
	# is bash's own stat(2) and `read -t` its own sleep, no fork (a
	# `stat`+`sleep` loop every 10 ms cost the daemon 0.1-0.2 s at 100k).
	exec {sleepfd}<> <(:)
	t=$(now)
	"$ninferfs" "$entry" "$mnt" -f 2> "$work/daemon-$n.log" &
	pid=$!
	until [ -e "$mnt/$deep" ]; do
		state=Z
		read -r _ _ state _ < "/proc/$pid/stat" 2> /dev/null || true
		[ "$state" != Z ] || { cat "$work/daemon-$n.log" >&2; exit 1; }
		read -r -t 0.005 -u "$sleepfd" || true
	done
	ready_s=$(since "$t")
	hwm0=$(vm VmHWM)

	t=$(now)
	python3 - "$mnt" "$work/stat-$n.paths" <<'EOF'
import os, sys
root = sys.argv[1]
for p in open(sys.argv[2]).read().split():
    os.stat(os.path.join(root, p))
EOF
	stat_s=$(since "$t")

	t=$(now)
	ls_lines=$(ls -lR "$mnt" | wc -l)
	ls_s=$(since "$t")
	t=$(now)
	find_files=$(find "$mnt" -type f | wc -l)
	find_s=$(since "$t")
	hwm=$(vm VmHWM)
	rss=$(vm VmRSS)
	tmpfs_s=0
	if [ "$n" -le "${NATIVE_LS_MAX:-100000}" ] && [ -d /dev/shm ]; then
		native=$(mktemp -d /dev/shm/scale_native.XXXXXX)
		cp -r --attributes-only "$mnt" "$native/tree"
		t=$(now)
		native_lines=$(ls -lR "$native/tree" | wc -l)
		tmpfs_s=$(since "$t")
		rm -rf "$native"
		native=""
		[ "$native_lines" = "$ls_lines" ] ||
			echo "$0: the tmpfs copy lists $native_lines lines, the mount $ls_lines" >&2
	fi

	fusermount3 -u "$mnt"
	wait "$pid" || true
	pid=""
	rows+=("$(awk -v n="$n" -v jb="$jbytes" -v py="$py_s" -v ck="$ck_s" -v rd="$ready_s" \
		-v h0="$hwm0" -v h="$hwm" -v r="$rss" -v st="$stat_s" -v ls="$ls_s" -v ll="$ls_lines" \
		-v fd="$find_s" -v ff="$find_files" -v tf="$tmpfs_s" 'BEGIN {
		printf "%-8s %7.1f | %6.2f %6.2f | %6.2f %6.2f | %6.0f %6.0f %6.0f %6.2f | %6.2f %7.2f %8d %6.2f %8d | %6.2f %6.2f\n",
			n, jb / 1048576, py, ck, rd, (py > 0 ? rd / py : 0),
			h0 / 1024, h / 1024, r / 1024, h * 1024 / jb, st, ls, ll, fd, ff,
			tf, (tf > 0 ? ls / tf : 0) }')")
	[ "$keep" = 1 ] || rm -f "$entry" "$entry".part-* "$json" "$work/stat-$n.paths"
done

printf '%-8s %7s | %6s %6s | %6s %6s | %6s %6s %6s %6s | %6s %7s %8s %6s %8s | %6s %6s\n' \
	N json_MB py_s check_s ready_s rdy/py hwm0MB peakMB rssMB pk/json \
	stat_s ls_s ls_lines find_s files tmpfs ls/tmp
for r in "${rows[@]}"; do echo "$r"; done
