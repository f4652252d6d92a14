#!/bin/sh
# bench/calbin_check.sh — issue 12: calbin-check on the full-size synthetic
# calbin package.
#
#   bench/calbin_check.sh [-b BUILD_DIR] [-d WORK_DIR] [-r REPEATS] [-k]
#
# Writes the package with cb-fixture --full (the sample's structure: 70
# files with SHA256SUMS and the ONNX, full-size sparse parameter blocks of
# 9,404,557,312 and 8,782,227,456 bytes, 444,610 / 444,608-command PLD
# dumps), then measures, in one run:
#   (1) calbin-check --fast, REPEATS times (default 5): wall time and peak
#       RSS (GNU time), the best and the median; goal <= 1 s, <= 64 MiB;
#   (2) calbin-check --hash and, over the same files, sha256sum (GNU
#       coreutils, one process, the native anchor): wall and CPU time;
#       speed ratio = sha256sum time / calbin-check time, goal >= 0.8.
# Every file is read once before (1) so both (2) runs see the same cache.
# The machine's load is printed with the figures: on a shared machine the
# wall times measure the other jobs too.  A benchmark, not a test: nothing
# fails on slow numbers.  Work files (~410 MB on disk) go to WORK_DIR
# (default a fresh directory under ${TMPDIR:-/var/tmp}), removed unless -k.
set -eu
. "$(dirname "$0")/calbin_lib.sh"
cb_bench_args 5 "$@"
cb_bench_need "$fixture" "$check" /usr/bin/time
cb_bench_workdir calbin-bench
cleanup() {
	[ "$keep" = 1 ] || rm -rf "$work/pkg" "$work"/*.time "$work"/*.out "$work"/*.list
	[ "$made" = 0 ] || [ "$keep" = 1 ] || rmdir "$work" 2>/dev/null || true
}
trap cleanup EXIT

field() { sed -n "s/^[[:space:]]*$1: //p" "$2" | head -n 1; }
secs() { echo "$1" | awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.3f", s }'; }
load() { cut -d' ' -f1-3 /proc/loadavg; }

echo "calbin-check benchmark: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
t0=$(date +%s.%N)
pkg=$("$fixture" "$work/pkg" --full)
t1=$(date +%s.%N)
files=$(find "$pkg" -type f | wc -l)
bytes=$(find "$pkg" -type f -printf '%s\n' | awk '{ s += $1 } END { printf "%.0f", s }')
echo "package: $pkg ($files files, $bytes bytes apparent, $(du -sh "$pkg" | cut -f1) on disk;" \
	"written in $(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }') s)"
find "$pkg" -type f -print0 | xargs -0 cat > /dev/null   # one read of everything, for both sides

echo
echo "(1) calbin-check --fast, $reps runs (load $(load))"
i=0
: > "$work/fast.list"
while [ "$i" -lt "$reps" ]; do
	i=$((i + 1))
	rc=0
	/usr/bin/time -v -o "$work/fast.time" "$check" --fast "$pkg" > "$work/fast.out" || rc=$?
	[ "$rc" = 0 ] || { echo "$0: calbin-check --fast exited $rc" >&2; tail -3 "$work/fast.out" >&2; }
	s=$(secs "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/fast.time")")
	kb=$(field 'Maximum resident set size (kbytes)' "$work/fast.time")
	cpu=$(awk -v u="$(field 'User time (seconds)' "$work/fast.time")" \
		-v y="$(field 'System time (seconds)' "$work/fast.time")" 'BEGIN { printf "%.2f", u + y }')
	echo "$s $kb $cpu" >> "$work/fast.list"
	awk -v i="$i" -v s="$s" -v c="$cpu" -v kb="$kb" \
		'BEGIN { printf "  run %d: %6.3f s wall, %5.2f s CPU, %6.1f MiB peak RSS\n", i, s, c, kb / 1024 }'
done
sort -n "$work/fast.list" | awk -v n="$reps" '
	{ t[NR] = $1; if ($2 > m) m = $2 }
	END { printf "  best %.3f s, median %.3f s, max peak RSS %.1f MiB  (goal: <= 1 s, <= 64 MiB)\n",
		t[1], t[int((n + 1) / 2)], m / 1024 }'
tail -1 "$work/fast.out" | sed 's/^/  /'

echo
echo "(2) --hash vs sha256sum over the same $files files (load $(load))"
rc=0
/usr/bin/time -v -o "$work/hash.time" "$check" --hash "$pkg" > "$work/hash.out" || rc=$?
[ "$rc" = 0 ] || { echo "$0: calbin-check --hash exited $rc" >&2; tail -3 "$work/hash.out" >&2; }
(cd "$pkg" && find . -type f -print0 | LC_ALL=C sort -z |
	/usr/bin/time -v -o "$work/sha.time" xargs -0 sha256sum > "$work/sha.out")
for k in hash sha; do
	s=$(secs "$(field 'Elapsed (wall clock) time (h:mm:ss or m:ss)' "$work/$k.time")")
	cpu=$(awk -v u="$(field 'User time (seconds)' "$work/$k.time")" \
		-v y="$(field 'System time (seconds)' "$work/$k.time")" 'BEGIN { printf "%.2f", u + y }')
	eval "${k}_s=$s ${k}_cpu=$cpu"
done
awk -v hs="$hash_s" -v hc="$hash_cpu" -v ss="$sha_s" -v sc="$sha_cpu" -v b="$bytes" 'BEGIN {
	printf "  calbin-check --hash: %8.2f s wall, %8.2f s CPU, %7.0f MiB/s\n", hs, hc, b / hs / 1048576
	printf "  sha256sum:           %8.2f s wall, %8.2f s CPU, %7.0f MiB/s\n", ss, sc, b / ss / 1048576
	printf "  speed ratio calbin/sha256sum = %.2fx (goal >= 0.8x)\n", ss / hs }'
tail -1 "$work/hash.out" | sed 's/^/  /'
echo "  load after: $(load)"
