# tests/mount/lib.sh — shared helpers of the mount tests (sourced).
#
# Every test gets its own temp dir; cleanup (on any exit) unmounts every
# mount it made and kills every daemon it started, by pid.
set -euo pipefail

: "${NINFERFS:?NINFERFS must point at the ninferfs binary}"
: "${NF_FIXTURE:?NF_FIXTURE must point at nf-fixture}"
# numpy lives with the system python
python3() { /usr/bin/python3 "$@"; }
T=$(mktemp -d /tmp/nf-mount-test.XXXXXX)
MOUNTS=()
PIDS=()

cleanup() {
	local m p
	for m in "${MOUNTS[@]}"; do
		if grep -q " $m fuse" /proc/mounts 2>/dev/null; then
			fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
		fi
	done
	for p in "${PIDS[@]}"; do
		if kill -0 "$p" 2>/dev/null; then
			sleep 0.3
			kill "$p" 2>/dev/null || true
			sleep 0.2
			kill -9 "$p" 2>/dev/null || true
		fi
	done
	rm -rf "$T"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

is_mounted() { grep -q " $1 fuse" /proc/mounts; }

# fixture NAME -> writes $T/NAME/ and prints the dir
fixture() {
	local d="$T/$1${2:-}"
	"$NF_FIXTURE" "$1" "$d" >/dev/null || fail "nf-fixture $1"
	echo "$d"
}

# mount_fg ENTRY MNT [ninferfs args...]: foreground daemon in the
# background of this shell; waits until the mount answers.
mount_fg() {
	local entry=$1 mnt=$2; shift 2
	mkdir -p "$mnt"
	MOUNTS+=("$mnt")
	"$NINFERFS" "$entry" "$mnt" -f "$@" 2>>"$T/daemon.log" &
	PIDS+=($!)
	for _ in $(seq 100); do
		if is_mounted "$mnt" && stat "$mnt" >/dev/null 2>&1; then return 0; fi
		kill -0 "${PIDS[-1]}" 2>/dev/null || fail "ninferfs exited: $(cat "$T/daemon.log")"
		sleep 0.05
	done
	fail "mount of $entry did not appear"
}

# mount_bg ENTRY MNT [args...]: the daemonizing way; records the daemon pid.
mount_bg() {
	local entry=$1 mnt=$2; shift 2
	mkdir -p "$mnt"
	MOUNTS+=("$mnt")
	"$NINFERFS" "$entry" "$mnt" "$@"
	local p
	p=$(pgrep -n -f "^$NINFERFS $entry $mnt" || true)
	[ -n "$p" ] && PIDS+=("$p")
	return 0
}

unmount() {
	fusermount3 -u "$1"
	for _ in $(seq 50); do is_mounted "$1" || return 0; sleep 0.05; done
	fail "still mounted: $1"
}

# The naming rule of man ninferfs.5, for the python checks (tests/pylib).
export PYTHONPATH=$(cd "$(dirname "${BASH_SOURCE[0]}")/../pylib" && pwd)${PYTHONPATH:+:$PYTHONPATH}
PY_ESC='from nfnames import esc'
