#!/usr/bin/env bash
# bench/raw_read.sh — raw and decoded read throughput of ninferfs against
# the native files and squashfuse, all in one run.
#
#   sudo bench/raw_read.sh [BUILD_DIR]     (default BUILD_DIR: build)
#
# Needs root (drop_caches, mounts), ninfer-pack and ninferfs built in
# BUILD_DIR, mksquashfs, squashfuse, fio, python3.  Large files go to
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
#   (f) decoded     dd bs=1M of decoded/objects/<q4 id>, caches dropped: a
#                   q4_g64_fp16 [SIZE_MB*16, 16384] object (random codes,
#                   finite scales) whose f32 view is SIZE_MB MiB, as output
#                   MiB/s and as a ratio to (b)
#   (g) decoded 4k  fio random 4 KiB reads at iodepth 1 of the decoded view
#                   against the raw object (latency ratio = IOPS ratio)
# Sequential numbers are the median of REPS (3) runs; the machine's other
# load shows in them, so run it on a quiet machine.
set -euo pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
NINFERFS=${NINFERFS:-$BUILD/fs/ninferfs}
NINFER_PACK=${NINFER_PACK:-$BUILD/tools/ninfer-pack}
WORK=${WORK:-/var/tmp/nf-bench.$$}
SIZE_MB=${SIZE_MB:-1024}
FIO_SECS=${FIO_SECS:-10}
REPS=${REPS:-3}

[ "$(id -u)" = 0 ] || { echo "raw_read.sh: needs root (drop_caches, mounts)" >&2; exit 1; }
for t in "$NINFERFS" "$NINFER_PACK"; do [ -x "$t" ] || { echo "missing $t" >&2; exit 1; }; done
for t in mksquashfs squashfuse fio python3 dd; do
	command -v $t >/dev/null || { echo "missing $t" >&2; exit 1; }
done

MNT=$WORK/mnt
SQ=$WORK/sqmnt
DAEMONS=()
cleanup() {
	for m in "$MNT" "$SQ"; do
		grep -q " $m fuse" /proc/mounts 2>/dev/null && { fusermount3 -u "$m" || umount -l "$m"; } || true
	done
	for p in "${DAEMONS[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
mkdir -p "$WORK/set" "$WORK/sqsrc" "$MNT" "$SQ"

drop() { sync; echo 3 >/proc/sys/vm/drop_caches; }
# MiB/s of a command that reads the whole object to stdout (/dev/null)
mbps() {
	local t0 t1
	t0=$(date +%s.%N)
	"$@" >/dev/null
	t1=$(date +%s.%N)
	python3 -c "print('%.1f' % ($SIZE_MB / ($t1 - $t0)))"
}

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
# The q4 object for (f)/(g): random base codes (every nibble is a legal
# code) and finite binary16 scales in [2^-10, 2^-2).
q4rows=$((SIZE_MB * 16))
python3 - "$WORK/q4.bin" "$q4rows" <<'PY'
import os, sys
path, n = sys.argv[1], int(sys.argv[2])
k = 16384
base = n * (k // 64) * 32           # codecs §2.1: K_pad = K, gpr = K/64, B = 32
scales = n * (k // 64)
with open(path, "wb") as f:
    left = base
    while left:
        c = min(left, 1 << 24)
        f.write(os.urandom(c))
        left -= c
    r = os.urandom(scales * 2)
    f.write(bytes(b for i in range(0, len(r), 2)
                  for b in (r[i], 0x14 + (r[i + 1] % 0x20))))   # exponent 5..12
PY
python3 - "$WORK/manifest.json" "$WORK/q4.bin" "$q4rows" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["objects"].append({"id": "w.q4", "kind": "tensor", "format": "q4_g64_fp16",
                     "layout": "row_split_k128_v1", "shape": [int(sys.argv[3]), 16384],
                     "source": sys.argv[2]})
m["bindings"]["bench/q4"] = {"object": "w.q4"}
json.dump(m, open(sys.argv[1], "w"))
PY
"$NINFER_PACK" create -q --manifest "$WORK/manifest.json" --max-file-bytes 256M "$WORK/set/big.ninfer"
ls -l "$WORK/set"

"$NINFERFS" "$WORK/set/big.ninfer" "$MNT"
DAEMONS+=("$(pgrep -n -f "^$NINFERFS $WORK/set/big.ninfer")")
OBJ=$MNT/objects/w.big
# The object's byte ranges in the backing files, from the range map.
getfattr -n user.ninfer.segments --only-values "$OBJ" | python3 -c "
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
# median MiB/s of REPS runs of: PREP; COMMAND (PREP untimed)
median() {
	local prep=$1; shift
	local v=()
	for _ in $(seq "$REPS"); do
		$prep
		v+=("$(mbps "$@")")
	done
	printf '%s\n' "${v[@]}" | sort -n | sed -n "$(( (REPS + 1) / 2 ))p"
}
nothing() { :; }
# drop only the mount's page cache for the object (the backing files stay)
drop_mount() { dd if="$OBJ" iflag=nocache count=0 status=none; }
warm_backing() { native_cat >/dev/null; drop_mount; }
a=$(median drop native_cat)
b=$(median drop dd if="$OBJ" bs=1M status=none)
c=$(median nothing dd if="$OBJ" bs=1M status=none)
an=$(median nothing native_cat)
bw=$(median warm_backing dd if="$OBJ" bs=1M status=none)
fusermount3 -u "$MNT"
"$NINFERFS" "$WORK/set/big.ninfer" "$MNT"
DAEMONS+=("$(pgrep -n -f "^$NINFERFS $WORK/set/big.ninfer")")
drop; dd if="$OBJ" of=/dev/null bs=1M status=none
stats=$(python3 -c "
import json; s=json.load(open('$MNT/stats'))
print('one cold read: daemon reads %d, mean request %.0f KiB, io_uring submissions %d' %
      (s['reads'], s['bytes'] / max(s['reads'], 1) / 1024, s['uring_submissions']))")

mksquashfs "$WORK/sqsrc" "$WORK/image.sqfs" -noI -noD -noF -noX -no-fragments -quiet \
	-no-progress >/dev/null
squashfuse "$WORK/image.sqfs" "$SQ"
cmp "$SQ/object.bin" "$WORK/sqsrc/object.bin"
d=$(median drop dd if="$SQ/object.bin" bs=1M status=none)
dr=$(median nothing dd if="$SQ/object.bin" bs=1M status=none)
fusermount3 -u "$SQ"

echo "== fio random 4 KiB reads, ${FIO_SECS}s each"
fio_iops() { # FILE DEPTH
	drop
	fio --name=r --filename="$1" --rw=randread --bs=4k --iodepth="$2" --ioengine=io_uring \
	    --direct=0 --size="${SIZE_MB}M" --time_based --runtime="$FIO_SECS" --readonly \
	    --output-format=json 2>/dev/null |
		python3 -c "import json,sys; print('%.0f' % json.load(sys.stdin)['jobs'][0]['read']['iops'])"
}
f1n=$(fio_iops "$WORK/sqsrc/object.bin" 1)
f1f=$(fio_iops "$OBJ" 1)
f16n=$(fio_iops "$WORK/sqsrc/object.bin" 16)
f16f=$(fio_iops "$OBJ" 16)

echo "== decoded q4 object: sequential and random 4 KiB"
DEC=$MNT/decoded/objects/w.q4
[ "$(stat -c %s "$DEC")" = $((SIZE_MB * 1048576)) ] || { echo "decoded size" >&2; exit 1; }
fd=$(median drop dd if="$DEC" bs=1M status=none)
f1d=$(fio_iops "$DEC" 1)
ra=$(cat "/sys/class/bdi/$(awk -v m="$MNT" '$5 == m {print $3}' /proc/self/mountinfo)/read_ahead_kb" \
	2>/dev/null || echo "?")

python3 - "$a" "$b" "$c" "$an" "$bw" "$d" "$dr" "$f1n" "$f1f" "$f16n" "$f16f" "$fd" "$f1d" \
	"$ra" "$stats" "$SIZE_MB" <<'PY'
import sys
a, b, c, an, bw, d, dr, f1n, f1f, f16n, f16f, fd, f1d = map(float, sys.argv[1:14])
ra, stats, size = sys.argv[14], sys.argv[15], sys.argv[16]
print()
print("Raw read benchmark: one %s MiB bf16 object, 4 continuation parts of 256 MiB" % size)
print("(ninferfs readahead %s KiB; %s)" % (ra, stats))
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
    ("(f) decoded q4 -> f32 first read, cold (output)", fd, "%.2fx raw first read (b)" % (fd / b)),
    ("(g) fio randread 4k QD1 decoded q4 (IOPS)", f1d,
     "latency %.2fx raw 4k QD1" % (f1f / f1d)),
]
for name, v, r in rows:
    print("| %-48s | %13.1f | %s |" % (name, v, r))
print()
print("goals: first/native %.2f (>= 0.2), first/squashfuse %.2f (>= 2), repeat/native %.2f (>= 0.75)"
      % (b / a, b / d, c / a))
print("       decoded/raw first read %.2f (>= 0.8), decoded 4k latency / raw %.2f (<= 2)"
      % (fd / b, f1f / f1d))
PY
