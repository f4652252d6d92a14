# tests/faults/lib.sh — shared helpers of the fault-injection tests (sourced).
#
# Every test gets its own temp dir; the EXIT trap always unmounts every mount
# the test made (fusermount3 -u, then -uz, then umount -l) and kills every
# daemon it started, by pid, so no daemon or mount is ever left behind.
set -euo pipefail

: "${NINFERFS:?NINFERFS must point at the ninferfs binary}"
: "${NF_FIXTURE:?NF_FIXTURE must point at nf-fixture}"
FAULTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3          # numpy lives with the system python
export PYTHONPATH=$FAULTS:$(cd "$FAULTS/../pylib" && pwd)${PYTHONPATH:+:$PYTHONPATH}
T=$(mktemp -d /tmp/nf-fault-test.XXXXXX)
LOG=$T/daemon.log
: >"$LOG"
MOUNTS=()
PIDS=()

cleanup() {
	local m p
	set +e
	# FAULT_LOG_DIR=DIR keeps each test's daemon log as DIR/<test>.log
	if [ -n "${FAULT_LOG_DIR:-}" ]; then
		mkdir -p "$FAULT_LOG_DIR" && cp "$LOG" "$FAULT_LOG_DIR/$(basename "$0" .sh).log"
	fi
	for m in "${MOUNTS[@]}"; do
		if is_mounted "$m"; then
			fusermount3 -u "$m" 2>/dev/null || fusermount3 -uz "$m" 2>/dev/null ||
				umount -l "$m" 2>/dev/null
		fi
	done
	for p in "${PIDS[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			sleep 0.3
			kill "$p" 2>/dev/null
			sleep 0.3
			kill -9 "$p" 2>/dev/null
		fi
	done
	# readers and other background jobs still running (a failed or timed-out
	# test): after the unmount they fail fast; make sure they are gone
	for p in $(jobs -p); do kill -9 "$p" 2>/dev/null; done
	chmod -R u+rwx "$T" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() {
	echo "FAIL: $*" >&2
	if [ -s "$LOG" ]; then echo "--- daemon log:" >&2; tail -30 "$LOG" >&2; fi
	exit 1
}
ok() { echo "ok: $*"; }

is_mounted() { grep -q " $1 fuse" /proc/mounts 2>/dev/null; }
alive() { kill -0 "$1" 2>/dev/null && ! grep -q '^State:.*Z' "/proc/$1/status" 2>/dev/null; }

# fixture NAME [SUFFIX] -> writes $T/NAME[SUFFIX]/ and prints the dir
fixture() {
	local d="$T/$1${2:-}"
	"$NF_FIXTURE" "$1" "$d" >/dev/null || fail "nf-fixture $1"
	echo "$d"
}

# mount_fg ENTRY MNT [ninferfs args...]: foreground daemon (-f) in the
# background of this shell, pid in DPID; waits until the mount answers.
# PREFIX (e.g. "setpriv --reuid=65534 ...") is put in front of the daemon.
mount_fg() {
	local entry=$1 mnt=$2; shift 2
	mkdir -p "$mnt"
	MOUNTS+=("$mnt")
	${PREFIX:-} "$NINFERFS" "$entry" "$mnt" -f "$@" 2>>"$LOG" &
	DPID=$!
	PIDS+=("$DPID")
	for _ in $(seq 200); do
		if is_mounted "$mnt" && ${PREFIX:-} stat "$mnt/artifact.json" >/dev/null 2>&1; then return 0; fi
		alive "$DPID" || fail "ninferfs exited: $(cat "$LOG")"
		sleep 0.05
	done
	fail "mount of $entry did not appear"
}

# wait_gone PID SECS: 0 once PID has exited (and been reaped, if our child)
wait_gone() {
	local i
	for i in $(seq $(($2 * 20))); do
		alive "$1" || return 0
		sleep 0.05
	done
	return 1
}

# wait_unmounted MNT SECS
wait_unmounted() {
	local i
	for i in $(seq $(($2 * 20))); do
		is_mounted "$1" || return 0
		sleep 0.05
	done
	return 1
}

# unmount MNT PID: fusermount3 -u; the -f daemon must exit with status 0.
unmount() {
	local rc=0
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	wait_unmounted "$1" 5 || fail "still mounted: $1"
	wait_gone "$2" 5 || fail "daemon $2 still running after unmount"
	wait "$2" || rc=$?
	[ "$rc" = 0 ] || fail "daemon exit status $rc after fusermount3 -u (man ninferfs(1): 0)"
	log_clean
}

# no sanitizer report in the daemon log (sanitizer builds; a no-op otherwise)
log_clean() {
	if grep -q 'runtime error:\|AddressSanitizer\|LeakSanitizer\|ThreadSanitizer' "$LOG"; then
		fail "sanitizer report in the daemon log"
	fi
}

# drop the kernel's cached pages of every file under DIR (the mount), so the
# next reads reach the daemon; drop_caches would disturb the whole machine.
drop_mount_cache() {
	$PY -c '
import os, sys
for root, dirs, files in os.walk(sys.argv[1]):
    for f in files:
        try:
            fd = os.open(os.path.join(root, f), os.O_RDONLY)
        except OSError:
            continue
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
' "$1"
}

# the mixed fixture's object files checked against expect/ (faultlib.py)
check_objects() { $PY -m faultlib check "$@"; }

# big_set DIR [MAXBYTES]: DIR/src (sources) and DIR/big.ninfer (split in
# files of MAXBYTES, default 8M) via ninfer-pack create
big_set() {
	: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}"
	$PY -m faultlib make-big "$1/src" || fail "make-big"
	"$NINFER_PACK" create -q --manifest "$1/src/manifest.json" --max-file-bytes "${2:-8M}" \
		"$1/big.ninfer" || fail "ninfer-pack create"
}
