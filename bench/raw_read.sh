#!/usr/bin/env bash
# bench/raw_read.sh — raw and decoded read throughput of ninferfs against
# the native files and squashfuse, all in one run.
#
#   sudo bench/raw_read.sh [BUILD_DIR]     (default BUILD_DIR: build)
#
# Needs root (drop_caches, mounts), ninfer-pack and ninferfs built in
# BUILD_DIR, mksquashfs, squashfuse, fio, python3 with numpy.  Large files go to
# $WORK (default /var/tmp/nf-bench.PID) and are removed at exit.
#
# The set: one bf16 [32768,16384] object (1 GiB of random bytes) split with
# --max-file-bytes 256M, so the object straddles 4 continuation parts.
#   (a) native      dd bs=1M of the object's byte ranges straight from the
#                   backing files, caches dropped
#   (b) first       dd bs=1M of objects/<id> through ninferfs, caches dropped
#   (b') first-warm the same with the backing files in the page cache and
#                   the mount's cache of the object dropped (fadvise
#                   DONTNEED): the FUSE + daemon overhead alone
#   (c) repeat      dd again through the same mount (mount's page cache)
#   (d) squashfuse  an uncompressed squashfs image of the same bytes, cold
#                   and repeat
#   (e) fio         random 4 KiB reads, iodepth 1 and 16, ninferfs vs native
#                   (the source file holding the same bytes), caches dropped
# Sequential numbers are the median of REPS (3) runs; the machine's other
# load shows in them, so run it on a quiet machine.
#   Then it runs bench/decoded_read.sh (decoded reads of every source
# format and dtype against the raw reads, issue 15) on a set of its own,
# unless DECODED=0.
set -euo pipefail

BUILD=${1:-build}
NEED="mksquashfs squashfuse getfattr cmp"
. "$(dirname "$0")/read_lib.sh"
SIZE_MB=${SIZE_MB:-1024}
FIO_SECS=${FIO_SECS:-10}
REPS=${REPS:-3}
BYTES=$((SIZE_MB * 1048576))

MNT=$WORK/mnt
SQ=$WORK/sqmnt
mkdir -p "$WORK/set" "$WORK/sqsrc"

echo "== generating a ${SIZE_MB} MiB object in $WORK"
dd if=/dev/urandom of="$WORK/sqsrc/object.bin" bs=1M count="$SIZE_MB" status=none
rows=$((SIZE_MB * 32))   # bf16 [rows, 16384]: 32 KiB a row
cat >"$WORK/manifest.json" <<JSON
{"components": {"bench": {"config": {}}},
 "objects": [{"id": "w.big", "kind": "tensor", "format": "bf16", "layout": "contiguous_le_v1",
              "shape": [$rows, 16384], "source": "$WORK/sqsrc/object.bin"}],
 "bindings": {"bench/w": {"object": "w.big"}},
 "uses": []}
JSON
"$NINFER_PACK" create -q --manifest "$WORK/manifest.json" --max-file-bytes 256M "$WORK/set/big.ninfer"
ls -l "$WORK/set"

nf_mount "$WORK/set/big.ninfer" "$MNT"
OBJ=$MNT/objects/w.big
# The object's byte ranges in the backing files, from the range map.
getfattr -n user.ninfer.segments --only-values "$OBJ" | "$PY" -c "
import json, sys
for s in json.load(sys.stdin):
    print(s['path'], s['file_offset'], s['length'])" >"$WORK/segments.txt"
native_cat() {
	while read -r path off len; do
		dd if="$WORK/set/$path" bs=1M iflag=skip_bytes,count_bytes skip="$off" count="$len" \
		   status=none
	done <"$WORK/segments.txt"
}
cmp <(native_cat) "$WORK/sqsrc/object.bin" || { echo "native ranges differ" >&2; exit 1; }
cmp "$OBJ" "$WORK/sqsrc/object.bin" || { echo "ninferfs bytes differ" >&2; exit 1; }

echo "== sequential reads, dd bs=1M, median of $REPS"
# drop only the mount's page cache for the object (the backing files stay)
drop_mount() { dd if="$OBJ" iflag=nocache count=0 status=none; }
warm_backing() { native_cat >/dev/null; drop_mount; }
a=$(median drop "$BYTES" native_cat)
b=$(median drop "$BYTES" dd if="$OBJ" bs=1M status=none)
c=$(median nothing "$BYTES" dd if="$OBJ" bs=1M status=none)
an=$(median nothing "$BYTES" native_cat)
bw=$(median warm_backing "$BYTES" dd if="$OBJ" bs=1M status=none)
nf_umount "$MNT"
nf_mount "$WORK/set/big.ninfer" "$MNT"
drop; dd if="$OBJ" of=/dev/null bs=1M status=none
stats=$("$PY" -c "
import json; s=json.load(open('$MNT/stats'))
print('one cold read: daemon reads %d, mean request %.0f KiB, io_uring submissions %d' %
      (s['reads'], s['bytes'] / max(s['reads'], 1) / 1024, s['uring_submissions']))")

mksquashfs "$WORK/sqsrc" "$WORK/image.sqfs" -noI -noD -noF -noX -no-fragments -quiet \
	-no-progress >/dev/null
sq_mount "$WORK/image.sqfs" "$SQ"
cmp "$SQ/object.bin" "$WORK/sqsrc/object.bin"
d=$(median drop "$BYTES" dd if="$SQ/object.bin" bs=1M status=none)
dr=$(median nothing "$BYTES" dd if="$SQ/object.bin" bs=1M status=none)
fusermount3 -u "$SQ"

echo "== fio random 4 KiB reads, ${FIO_SECS}s each"
f1n=$(fio_iops "$WORK/sqsrc/object.bin" 1 "$BYTES" drop)
f1f=$(fio_iops "$OBJ" 1 "$BYTES" drop)
f16n=$(fio_iops "$WORK/sqsrc/object.bin" 16 "$BYTES" drop)
f16f=$(fio_iops "$OBJ" 16 "$BYTES" drop)

ra=$(cat "/sys/class/bdi/$(awk -v m="$MNT" '$5 == m {print $3}' /proc/self/mountinfo)/read_ahead_kb" \
	2>/dev/null || echo "?")

"$PY" - "$a" "$b" "$c" "$an" "$bw" "$d" "$dr" "$f1n" "$f1f" "$f16n" "$f16f" \
	"$ra" "$stats" "$SIZE_MB" "$(load1)" <<'PY'
import sys
a, b, c, an, bw, d, dr, f1n, f1f, f16n, f16f = map(float, sys.argv[1:12])
ra, stats, size, load = sys.argv[12], sys.argv[13], sys.argv[14], sys.argv[15]
print()
print("Raw read benchmark: one %s MiB bf16 object, 4 continuation parts of 256 MiB" % size)
print("(ninferfs readahead %s KiB; %s; load average %s at the end)" % (ra, stats, load))
print()
print("| %-48s | MiB/s or IOPS | ratio |" % "measurement")
print("|%s|--------------:|-------|" % ("-" * 50))
rows = [
    ("(a) native: backing file ranges, cold, dd bs=1M", a, ""),
    ("(b) ninferfs first read, cold", b, "%.2fx native" % (b / a)),
    ("(a') native, backing files in page cache", an, ""),
    ("(b') ninferfs first read, backing files cached", bw, "%.2fx native-cached" % (bw / an)),
    ("(c) ninferfs repeat (mount's page cache)", c,
     "%.2fx native, %.2fx native-cached" % (c / a, c / an)),
    ("(d) squashfuse first read, cold", d, "first/squashfuse %.2fx" % (b / d)),
    ("(d') squashfuse repeat", dr, ""),
    ("(e) fio randread 4k QD1 native (IOPS)", f1n, ""),
    ("(e) fio randread 4k QD1 ninferfs (IOPS)", f1f, "%.2fx native" % (f1f / f1n)),
    ("(e) fio randread 4k QD16 native (IOPS)", f16n, ""),
    ("(e) fio randread 4k QD16 ninferfs (IOPS)", f16f, "%.2fx native" % (f16f / f16n)),
]
for name, v, r in rows:
    print("| %-48s | %13.1f | %s |" % (name, v, r))
print()
print("goals: first/native %.2f (>= 0.2), first/squashfuse %.2f (>= 2), repeat/native %.2f (>= 0.75)"
      % (b / a, b / d, c / a))
PY
nf_umount "$MNT"
rm -f "$WORK"/set/* "$WORK/image.sqfs" "$WORK/sqsrc/object.bin"

[ "${DECODED:-1}" = 0 ] || WORK=$WORK/decoded KEEP=1 bash "$ROOT/bench/decoded_read.sh" "$BUILD"
