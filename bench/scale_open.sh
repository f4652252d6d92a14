#!/bin/sh
# bench/scale_open.sh — issue 6: how fast and how small the reader opens a
# huge directory, against Python's json.load of the same JSON text.
#
#   bench/scale_open.sh [-b BUILD_DIR] [-d WORK_DIR] [-k] [N ...]
#
# For each N (default: 10000 100000 1000000) it writes a set with
# bench/gen_large.py (N objects, N bindings, 2N uses, deep binding paths,
# 16 files, sparse zero payload), extracts the JSON text (bytes
# [32, 32 + json_bytes) of the entry) to a file, then times
#   python3 -c 'import json; json.load(open(FILE))'
# and `ninfer-check ENTRY` with /usr/bin/time -v (wall time and peak RSS),
# and prints one table row per N: the JSON size; for Python and for
# ninfer-check the wall time, the CPU time (user + system) and the peak RSS;
# then check/python for wall time and for CPU time, and ninfer-check's peak
# RSS over the JSON size.  (CPU time is the fairer comparison on a loaded
# machine: there the wall time mostly measures the other jobs.)
# ninfer-check opens and validates the whole set (directory and all 16
# file headers); it does not read payload bytes (no --deep).
#
# This is a benchmark, not a test: nothing fails on slow numbers.  The
# machine's load changes the times; run it on a quiet machine.  Work files
# go to WORK_DIR (default: a fresh directory under ${TMPDIR:-/tmp}) and are
# removed afterwards unless -k.
set -eu

NAME=scale_open
. "$(dirname "$0")/scale_args.sh"

check="$build/tools/ninfer-check"
[ -x "$check" ] || { echo "$0: no $check (build first, or give -b BUILD_DIR)" >&2; exit 8; }
[ -x /usr/bin/time ] || { echo "$0: needs GNU time at /usr/bin/time" >&2; exit 8; }
scale_workdir
cleanup() {
	if [ "$keep" = 0 ]; then
		rm -f "$work"/set-* "$work"/*.json "$work"/*.time "$work"/*.out
		[ "$made" = 0 ] || rmdir "$work" 2>/dev/null || true
	fi
}
trap cleanup EXIT

# field NAME FILE: a value from /usr/bin/time -v output
field() {
	sed -n "s/^[[:space:]]*$1: //p" "$2" | head -n 1
}
# wall clock "h:mm:ss" or "m:ss.ss" -> seconds
secs() {
	echo "$1" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }'
}

printf '%-8s %8s | %7s %7s %7s | %7s %7s %8s | %8s %8s %8s\n' N json_MB py_s py_cpu py_MB \
	check_s chk_cpu check_MB "time c/p" "cpu c/p" "RSS/json"
for n in "$@"; do
	entry="$work/set-$n.ninfer"
	python3 "$here/gen_large.py" "$entry" --objects "$n" --parts 16 > "$work/gen-$n.out"
	json="$work/dir-$n.json"
	python3 - "$entry" "$json" <<'EOF'
import struct, sys
with open(sys.argv[1], 'rb') as f:
    h = f.read(32)
    n = struct.unpack('<Q', h[8:16])[0]
    with open(sys.argv[2], 'wb') as out:
        out.write(f.read(n))
EOF
	jbytes=$(wc -c < "$json")
	# Warm the page cache for both readers alike.
	cat "$entry" "$json" > /dev/null
	/usr/bin/time -v -o "$work/py-$n.time" \
		python3 -c 'import json, sys; json.load(open(sys.argv[1], "rb"))' "$json"
	rc=0
	/usr/bin/time -v -o "$work/check-$n.time" "$check" "$entry" > "$work/check-$n.out" || rc=$?
	if [ "$rc" != 0 ]; then
		echo "$0: ninfer-check exited $rc on N=$n:" >&2
		cat "$work/check-$n.out" >&2
	fi
	py_s=$(secs "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/py-$n.time")")
	py_u=$(field 'User time (seconds)' "$work/py-$n.time")
	py_y=$(field 'System time (seconds)' "$work/py-$n.time")
	py_kb=$(field 'Maximum resident set size (kbytes)' "$work/py-$n.time")
	ck_s=$(secs "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/check-$n.time")")
	ck_u=$(field 'User time (seconds)' "$work/check-$n.time")
	ck_y=$(field 'System time (seconds)' "$work/check-$n.time")
	ck_kb=$(field 'Maximum resident set size (kbytes)' "$work/check-$n.time")
	awk -v n="$n" -v jb="$jbytes" -v ps="$py_s" -v pc="$py_u + $py_y" -v pk="$py_kb" \
		-v cs="$ck_s" -v cc="$ck_u + $ck_y" -v ck="$ck_kb" 'BEGIN {
		split(pc, a, " [+] "); pc = a[1] + a[2]; split(cc, a, " [+] "); cc = a[1] + a[2]
		printf "%-8s %8.1f | %7.2f %7.2f %7.0f | %7.2f %7.2f %8.0f | %8.2f %8.2f %8.2f\n",
			n, jb / 1048576, ps, pc, pk / 1024, cs, cc, ck / 1024,
			(ps > 0 ? cs / ps : 0), (pc > 0 ? cc / pc : 0), ck * 1024 / jb }'
	[ "$keep" = 1 ] || rm -f "$work/set-$n".ninfer* "$json"
done
