#!/usr/bin/env bash
# bench/stress.sh [SECONDS [GIB]] — stress test of ninferfs (issue 7 item 3).
#
# Not a meson test (it takes minutes and GiBs).  Builds a split artifact set
# of GIB GiB (default 4) with ~10^4 objects under $WORK (default a fresh dir
# under /var/tmp), mounts it, runs $READERS (default 32) reader processes
# doing random preads over objects/, decoded/objects/, bindings/ and
# decoded/bindings/ for SECONDS (default 300), checks every byte, and prints
# reads/s, bytes/s, errors, the daemon's RSS and fd count.  Exit 0 only if
# there was no error, the daemon's fd count is flat and it unmounted cleanly.
#
#   BUILD=build-stress bench/stress.sh 30 1      # smoke run
#   bench/stress.sh                              # 300 s, 4 GiB
#
# Environment: BUILD (build dir, default build-stress, else build), WORK,
# READERS, PART (part size for --max-file-bytes, default 512M), THREADS
# (daemon -o threads=, default 16, the daemon's default), KEEP=1 keeps $WORK.  Always unmounts, kills the daemon and removes $WORK on exit.
set -euo pipefail

SECS=${1:-300}
GIB=${2:-4}
READERS=${READERS:-32}
PART=${PART:-512M}
export THREADS=${THREADS:-16}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/.." && pwd)
BUILD=${BUILD:-}
if [ -z "$BUILD" ]; then
	for b in build-stress build; do
		[ -x "$src/$b/fs/ninferfs" ] && { BUILD=$b; break; }
	done
fi
case $BUILD in /*) ;; *) BUILD=$src/$BUILD ;; esac
NINFERFS=$BUILD/fs/ninferfs
PACK=$BUILD/tools/ninfer-pack
[ -x "$NINFERFS" ] && [ -x "$PACK" ] || { echo "stress: no ninferfs/ninfer-pack under $BUILD (BUILD=...)" >&2; exit 2; }
PY=/usr/bin/python3

WORK=${WORK:-$(mktemp -d /var/tmp/ninferfs-stress.XXXXXX)}
mkdir -p "$WORK"
MNT=$WORK/mnt
DPID=
RPID=
cleanup() {
	set +e
	if [ -n "$RPID" ] && kill -0 "$RPID" 2>/dev/null; then
		pkill -9 -P "$RPID" 2>/dev/null; kill -9 "$RPID" 2>/dev/null
	fi
	if grep -q " $MNT fuse" /proc/mounts 2>/dev/null; then
		fusermount3 -u "$MNT" 2>/dev/null || fusermount3 -uz "$MNT" 2>/dev/null || umount -l "$MNT"
	fi
	if [ -n "$DPID" ] && kill -0 "$DPID" 2>/dev/null; then
		sleep 0.5; kill "$DPID" 2>/dev/null; sleep 0.5; kill -9 "$DPID" 2>/dev/null
	fi
	if [ "${KEEP:-0}" = 1 ]; then echo "stress: kept $WORK"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

echo "stress: $SECS s, $GIB GiB, $READERS readers, daemon threads=$THREADS, parts of $PART, work dir $WORK"
t=$(date +%s)
$PY "$here/stress.py" gen "$WORK" "$GIB"
mkdir -p "$WORK/set"
"$PACK" create -q --manifest "$WORK/src/manifest.json" --max-file-bytes "$PART" "$WORK/set/stress.ninfer"
rm -f "$WORK/src/pool.bin"
echo "stress: set written in $(( $(date +%s) - t )) s:"
ls -l "$WORK/set" | awk 'NR > 1 {printf "  %12d %s\n", $5, $9}'
du -sh --apparent-size "$WORK/set" | sed 's/^/  total /'

mkdir -p "$MNT"
"$NINFERFS" "$WORK/set/stress.ninfer" "$MNT" -f -o threads="$THREADS" 2>"$WORK/daemon.log" &
DPID=$!
for _ in $(seq 200); do
	grep -q " $MNT fuse" /proc/mounts && stat "$MNT/stats" >/dev/null 2>&1 && break
	kill -0 "$DPID" 2>/dev/null || { echo "stress: ninferfs exited:"; cat "$WORK/daemon.log"; exit 1; }
	sleep 0.1
done
grep -q " $MNT fuse" /proc/mounts || { echo "stress: mount did not appear"; exit 1; }
echo "stress: mounted, daemon pid $DPID"

rc=0
$PY "$here/stress.py" run "$WORK" "$MNT" "$DPID" "$SECS" "$READERS" &
RPID=$!
wait "$RPID" || rc=1
RPID=

fusermount3 -u "$MNT" || { echo "stress: FAIL: fusermount3 -u failed"; rc=1; }
drc=0
for _ in $(seq 100); do kill -0 "$DPID" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$DPID" 2>/dev/null; then
	echo "stress: FAIL: daemon still running 10 s after unmount"; rc=1
else
	wait "$DPID" || drc=$?
	DPID=
	[ "$drc" = 0 ] || { echo "stress: FAIL: daemon exit status $drc"; rc=1; }
fi
if [ -s "$WORK/daemon.log" ]; then
	echo "stress: daemon log (last 20 lines):"; tail -20 "$WORK/daemon.log" | sed 's/^/  /'
fi
[ "$rc" = 0 ] && echo "stress: PASS" || echo "stress: FAIL"
exit "$rc"
