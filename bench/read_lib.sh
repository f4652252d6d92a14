# bench/read_lib.sh — what the read benchmarks share (sourced, not run):
# the tools, the work directory and its cleanup, mounts, cache drops,
# timing, medians and fio, with the VM's memory held by bench/prefault.sh.
# raw_read.sh, decoded_read.sh and kernel_side.sh source it.
#
# Before sourcing: BUILD (a build directory), optionally NEED (extra
# commands the script needs).  Defines ROOT, NINFERFS, NINFER_PACK, PY (a
# python3 with numpy), WORK, and registers an EXIT trap that unmounts
# every mount made with nf_mount/sq_mount, kills their daemons and removes
# WORK.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
NINFERFS=${NINFERFS:-$BUILD/fs/ninferfs}
NINFER_PACK=${NINFER_PACK:-$BUILD/tools/ninfer-pack}
WORK=${WORK:-/var/tmp/nf-bench.$$}
# numpy lives with the system python (tests/mount/lib.sh says the same)
PY=${PY:-/usr/bin/python3}

[ "$(id -u)" = 0 ] || { echo "$(basename "$0"): needs root (drop_caches, mounts)" >&2; exit 1; }
for t in "$NINFERFS" "$NINFER_PACK"; do [ -x "$t" ] || { echo "missing $t" >&2; exit 1; }; done
for t in fio dd fusermount3 ${NEED:-}; do
	command -v "$t" >/dev/null || { echo "missing $t" >&2; exit 1; }
done
"$PY" -c 'import numpy' 2>/dev/null || { echo "missing numpy for $PY" >&2; exit 1; }

. "$ROOT/bench/prefault.sh"

NF_MOUNTS=()
NF_DAEMONS=()
NF_TMP=()   # files outside WORK to remove at exit
nf_cleanup() {
	[ ${#NF_TMP[@]} -eq 0 ] || rm -f "${NF_TMP[@]}"
	for m in "${NF_MOUNTS[@]}"; do
		grep -q " $m fuse" /proc/mounts 2>/dev/null && { fusermount3 -u "$m" || umount -l "$m"; } || true
	done
	for p in "${NF_DAEMONS[@]}"; do kill "$p" 2>/dev/null || true; done
	[ -n "${KEEP:-}" ] || rm -rf "$WORK"
	prefault_end
}
trap nf_cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$WORK"
prefault_begin
echo "== $(prefault_status)"

# nf_mount ENTRY MNT [ninferfs options...]: mount and remember the daemon.
nf_mount() {
	local entry=$1 mnt=$2
	shift 2
	mkdir -p "$mnt"
	"$NINFERFS" "$entry" "$mnt" "$@"
	NF_MOUNTS+=("$mnt")
	NF_DAEMONS+=("$(pgrep -n -f "^$NINFERFS $entry $mnt")")
}
# (a reader that has just closed may hold the mount for a moment)
nf_umount() {
	local i
	for i in 1 2 3 4 5 6 7 8 9 10; do
		fusermount3 -u "$1" 2>/dev/null && return 0
		sleep 0.5
	done
	fusermount3 -u "$1"
}
# The pid of the daemon serving MNT.
nf_daemon() { pgrep -n -f "^$NINFERFS [^ ]* $1( |\$)"; }
sq_mount() { mkdir -p "$2"; squashfuse "$1" "$2"; NF_MOUNTS+=("$2"); }

# Every cache (the backing files' too): a cold read.
drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# Only FILE's pages (fadvise DONTNEED): for a file of a mount, the mount's
# page cache of it, while the backing files stay cached.
drop_file() { local f; for f in "$@"; do dd if="$f" iflag=nocache count=0 status=none; done; }
# Read FILEs once so that their pages are cached.
warm() { cat "$@" >/dev/null; }
nothing() { :; }

# The 1-minute load average now (the machine is shared: every figure is
# printed with it).
load1() { cut -d' ' -f1 /proc/loadavg; }

# MiB/s of BYTES moved by COMMAND (its stdout goes to /dev/null).
mbps() {
	local bytes=$1 t0 t1
	shift
	t0=$EPOCHREALTIME
	"$@" >/dev/null
	t1=$EPOCHREALTIME
	awk -v b="$bytes" -v a="$t0" -v z="$t1" 'BEGIN { printf "%.1f\n", b / 1048576 / (z - a) }'
}

# The median of the numbers on stdin (one a line).
median_of() { sort -g | awk '{ v[NR] = $1 } END { if (NR == 0) print "-"; else if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

# median MiB/s of REPS runs of: PREP (untimed); COMMAND moving BYTES
median() {
	local prep=$1 bytes=$2
	shift 2
	for _ in $(seq "$REPS"); do
		$prep
		mbps "$bytes" "$@"
	done | median_of
}

# IOPS of random 4 KiB buffered reads of the first SIZE bytes of FILE at
# queue depth DEPTH, for FIO_SECS or until every block was read once
# (fio's random map: no block is read twice, so the page cache never
# answers).  PREP runs first.
fio_iops() { # FILE DEPTH SIZE PREP
	$4
	fio --name=r --filename="$1" --rw=randread --bs=4k --iodepth="$2" --ioengine=io_uring \
	    --direct=0 --size="$3" --runtime="$FIO_SECS" --readonly \
	    --output-format=json 2>/dev/null |
		"$PY" -c "import json,sys; print('%.0f' % json.load(sys.stdin)['jobs'][0]['read']['iops'])"
}

size() { stat -c %s "$1"; }
# CPU seconds the daemon serving MNT has used (all its threads).
daemon_cpu() { awk -v t="$(getconf CLK_TCK)" '{ printf "%.2f\n", ($14 + $15) / t }' "/proc/$(nf_daemon "$1")/stat"; }
# The machine's idle and total CPU ticks so far (all CPUs, /proc/stat).
cpu_ticks() { awk '/^cpu / { t = 0; for (i = 2; i <= NF; i++) t += $i; print $5 + $6, t }' /proc/stat; }
# Run COMMAND, which moves BYTES through the mount MNT; prints MiB/s, then
# the daemon's and the command's CPU seconds per GiB moved (under load the
# first moves with the machine's other work, the other two much less),
# then the share of the machine's CPU time that was idle meanwhile (0: the
# cores were busy all along, ours or another helper's work).
timed() { # MNT BYTES COMMAND...
	local mnt=$1 bytes=$2 t d0 d1 c0 c1 TIMEFORMAT='%R %U %S'
	shift 2
	d0=$(daemon_cpu "$mnt")
	c0=$(cpu_ticks)
	t=$({ time "$@" >/dev/null; } 2>&1)
	c1=$(cpu_ticks)
	d1=$(daemon_cpu "$mnt")
	awk -v b="$bytes" -v t="$t" -v d0="$d0" -v d1="$d1" -v c0="$c0" -v c1="$c1" 'BEGIN {
		split(t, x, " "); g = b / 1073741824; split(c0, p, " "); split(c1, q, " ")
		idle = q[2] > p[2] ? (q[1] - p[1]) / (q[2] - p[2]) : 0
		printf "%.1f %.2f %.2f %.2f\n", b / 1048576 / x[1], (d1 - d0) / g, (x[2] + x[3]) / g, idle }'
}
