#!/usr/bin/env bash
# bench/calbin_mount.sh — issue 13: a calbin package mounted by ninferfs,
# against native anchors measured in the same run.
#
#   bench/calbin_mount.sh [-b BUILD_DIR] [-d WORK_DIR] [-r REPEATS] [-k]
#
# Writes the full-size package with cb-fixture --full (sparse parameter
# blocks of 9,404,557,312 and 8,782,227,456 bytes, 444,610-command dumps),
# then, in one run:
#   (1) mount-ready time: REPEATS (default 7) alternating runs of
#       calbin-check --fast DIR and of ninferfs DIR MNT (without -f the
#       parent exits once the mounted tree answers a stat), then
#       fusermount3 -u; medians and the median of the per-run ratios
#       mount / check; goal <= 1.2; then the daemon's RSS (VmRSS, VmHWM of
#       a -f mount once the tree answers) beside calbin-check --fast's
#       maximum RSS (/usr/bin/time);
#   (2) sequential read: one 1 GiB params file (a map line added over 1 GiB
#       of random bytes written into param_blk0.bin; SHA256SUMS removed, a
#       warning) against the raw read of a 1 GiB NInfer object of the same
#       bytes (ninfer-pack, objects/<id>) through its own mount, dd bs=1M,
#       REPEATS alternating runs each: the backing files in the page cache,
#       the mount's cache of the file dropped first (fadvise DONTNEED), so
#       the figure is FUSE and the daemon; median MiB/s, their ratio
#       calbin / NInfer and the median of the per-run ratios (each pair
#       taken back to back, so less exposed to the load); goal >= 0.9;
#   (3) random 4 KiB reads of devices/chip0/dram (readahead off, the page
#       dropped first): FUSE read requests and io_uring submissions per
#       read from the stats counters (a count, not a time), for 100 pages
#       in mapped ranges and 100 anywhere; goal 1 request, <= 1 submission.
# A benchmark, not a test: nothing fails on slow numbers; the machine's
# load is printed with the figures.  Needs root (FUSE mounts) and about
# 2.5 GB in WORK_DIR (default a fresh directory under ${TMPDIR:-/var/tmp}),
# removed unless -k.
set -euo pipefail
. "$(dirname "$0")/calbin_lib.sh"
cb_bench_args 7 "$@"
ninferfs=$build/fs/ninferfs
pack=$build/tools/ninfer-pack
py=/usr/bin/python3
cb_bench_need "$fixture" "$check" "$ninferfs" "$pack" "$py"
cb_bench_workdir calbin-mount-bench
mnts=()
cleanup() {
	for m in "${mnts[@]}"; do
		grep -q " $m fuse" /proc/mounts 2>/dev/null && { fusermount3 -u "$m" || umount -l "$m"; } || true
	done
	if [ "$keep" = 0 ]; then
		rm -rf "$work/pkg" "$work/set" "$work/random.bin" "$work"/*.list "$work/check.rss" "$work"/mnt*
		[ "$made" = 0 ] || rmdir "$work" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

load() { cut -d' ' -f1-3 /proc/loadavg; }
now() { date +%s.%N; }
mounted() { grep -q " $1 fuse" /proc/mounts; }
median() { sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.6f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mount_bg() { # SRC MNT: the daemonizing way (the parent exits when the tree answers)
	mkdir -p "$2"
	mnts+=("$2")
	"$ninferfs" "$1" "$2" 2>/dev/null
}
umount_wait() {
	fusermount3 -u "$1"
	for _ in $(seq 100); do mounted "$1" || return 0; sleep 0.05; done
	echo "$0: $1 still mounted" >&2
	exit 1
}

echo "calbin mount benchmark: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
pkg=$("$fixture" "$work/pkg" --full)
echo "package: $pkg ($(find "$pkg" -type f | wc -l) files, $(du -sh "$pkg" | cut -f1) on disk)"
find "$pkg" -type f -print0 | xargs -0 cat > /dev/null   # one read of everything, for both sides

echo
echo "(1) mount-ready time vs calbin-check --fast, $reps runs each, alternating (load $(load))"
: > "$work/ready.list"
mnt=$work/mnt1
for i in $(seq "$reps"); do
	t0=$(now)
	"$check" --fast "$pkg" > /dev/null || true
	t1=$(now)
	mount_bg "$pkg" "$mnt"
	t2=$(now)
	[ -d "$mnt/devices/chip0" ] || { echo "$0: the mount has no tree" >&2; exit 1; }
	umount_wait "$mnt"
	awk -v a="$t0" -v b="$t1" -v c="$t2" -v i="$i" 'BEGIN { printf "  run %d: check %.3f s, mount %.3f s, ratio %.2f\n", i, b - a, c - b, (c - b) / (b - a) }'
	awk -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN { printf "%.6f %.6f %.6f\n", b - a, c - b, (c - b) / (b - a) }' >> "$work/ready.list"
done
c=$(cut -d' ' -f1 "$work/ready.list" | median)
m=$(cut -d' ' -f2 "$work/ready.list" | median)
r=$(cut -d' ' -f3 "$work/ready.list" | median)
awk -v c="$c" -v m="$m" -v r="$r" 'BEGIN { printf "  median: check %.3f s, mount ready %.3f s: ratio of medians %.2f, median ratio %.2f (goal <= 1.2)\n", c, m, m / c, r }'

echo "  memory: daemon RSS once the tree answers, against calbin-check --fast's peak (load $(load))"
/usr/bin/time -o "$work/check.rss" -f '%M' "$check" --fast "$pkg" > /dev/null 2>&1 || true
ck_kb=$(tail -1 "$work/check.rss")
mkdir -p "$mnt"
mnts+=("$mnt")
"$ninferfs" "$pkg" "$mnt" -f 2> /dev/null &
fpid=$!
for _ in $(seq 600); do mounted "$mnt" && [ -d "$mnt/devices" ] && break; sleep 0.05; done
mounted "$mnt" || { echo "$0: the -f mount did not appear" >&2; kill "$fpid"; exit 1; }
rss=$(awk '/^VmRSS/ { print $2 }' "/proc/$fpid/status")
hwm=$(awk '/^VmHWM/ { print $2 }' "/proc/$fpid/status")
umount_wait "$mnt"
wait "$fpid" || true
awk -v r="$rss" -v h="$hwm" -v c="$ck_kb" 'BEGIN { printf "  daemon VmRSS %.1f MiB, VmHWM %.1f MiB; calbin-check --fast max RSS %.1f MiB (ratio of peaks %.2f)\n", r / 1024, h / 1024, c / 1024, c ? h / c : 0 }'

echo
echo "(2) sequential read of a 1 GiB params file vs a 1 GiB NInfer object (load $(load))"
dd if=/dev/urandom of="$work/random.bin" bs=1M count=1024 status=none
off=$((8 << 30))
dd if="$work/random.bin" of="$pkg/param_blk0.bin" bs=1M seek=$((off >> 20)) conv=notrunc status=none
vaddr=0x0000000440000000
printf 'param_blk0.bin offset 0x%x vaddr %s size 0x40000000 chip 00000000 00000000 00000001\n' \
	"$off" "$vaddr" >> "$pkg/model_memory_reserved_info.txt"
rm -f "$pkg/SHA256SUMS"
mkdir -p "$work/set"
cat > "$work/set/manifest.json" <<JSON
{"components": {"bench": {"config": {}}},
 "objects": [{"id": "w.big", "kind": "tensor", "format": "bf16", "layout": "contiguous_le_v1",
              "shape": [524288, 1024], "source": "$work/random.bin"}],
 "bindings": {"w": {"object": "w.big"}}, "uses": []}
JSON
"$pack" create -q --manifest "$work/set/manifest.json" "$work/set/big.ninfer" > /dev/null
mount_bg "$pkg" "$work/mnt2"
mount_bg "$work/set/big.ninfer" "$work/mnt3"
cbfile=$work/mnt2/params/chip0/dram/$vaddr
nffile=$work/mnt3/objects/w.big
[ "$(stat -c %s "$cbfile")" = 1073741824 ] && [ "$(stat -c %s "$nffile")" = 1073741824 ] ||
	{ echo "$0: the two files are not 1 GiB" >&2; exit 1; }
cmp "$cbfile" "$nffile" || { echo "$0: the two files differ" >&2; exit 1; }
cat "$work/set/big.ninfer" > /dev/null   # the backing bytes in the page cache
dd if="$pkg/param_blk0.bin" bs=1M skip=$((off >> 20)) count=1024 status=none > /dev/null
dropf() { "$py" -c 'import os, sys; fd = os.open(sys.argv[1], os.O_RDONLY); os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED); os.close(fd)' "$1"; }
mibs() { # FILE: MiB/s of dd bs=1M of it, its mount cache dropped first
	dropf "$1"
	local t0 t1
	t0=$(now)
	dd if="$1" of=/dev/null bs=1M status=none
	t1=$(now)
	awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f\n", 1024 / (b - a) }'
}
: > "$work/seq.list"
for i in $(seq "$reps"); do
	a=$(mibs "$cbfile")
	b=$(mibs "$nffile")
	echo "  run $i: params $a MiB/s, NInfer object $b MiB/s"
	awk -v a="$a" -v b="$b" 'BEGIN { printf "%s %s %.6f\n", a, b, a / b }' >> "$work/seq.list"
done
a=$(cut -d' ' -f1 "$work/seq.list" | median)
b=$(cut -d' ' -f2 "$work/seq.list" | median)
r=$(cut -d' ' -f3 "$work/seq.list" | median)
awk -v a="$a" -v b="$b" -v r="$r" 'BEGIN { printf "  median: params file %.1f MiB/s, NInfer object %.1f MiB/s: ratio of medians %.2f, median of the per-run ratios %.2f (goal >= 0.9)\n", a, b, a / b, r }'
umount_wait "$work/mnt3"

echo
echo "(3) random 4 KiB reads of devices/chip0/dram: requests and submissions (load $(load))"
"$py" - "$work/mnt2" <<'PY'
import json, os, random, sys
mnt = sys.argv[1]
path = os.path.join(mnt, "devices/chip0/dram")
def counters():
    with open(os.path.join(mnt, "stats")) as f:
        s = json.load(f)
    return s["reads"], s["uring_submissions"]
r0, u0 = counters()
r1, u1 = counters()
base_r, base_u = r1 - r0, u1 - u0
size = os.stat(path).st_size
fd = os.open(path, os.O_RDONLY)
os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
# pages in mapped ranges: SEEK_DATA from random offsets
rng = random.Random(1)
data_pages, any_pages = [], []
while len(data_pages) < 100:
    try:
        a = os.lseek(fd, rng.randrange(size), 3)
    except OSError:
        continue
    b = os.lseek(fd, a, 4)
    data_pages.append(rng.randrange(a, b) // 4096 * 4096)
any_pages = [rng.randrange(size // 4096) * 4096 for _ in range(100)]
for name, pages in (("in mapped ranges", data_pages), ("anywhere (mostly holes)", any_pages)):
    reqs, subs = [], []
    for off in pages:
        os.posix_fadvise(fd, off, 4096, os.POSIX_FADV_DONTNEED)
        a_r, a_u = counters()
        os.pread(fd, 4096, off)
        b_r, b_u = counters()
        reqs.append(b_r - a_r - base_r)
        subs.append(b_u - a_u - base_u)
    print("  %-24s %d reads: FUSE requests per read min %d max %d, io_uring submissions "
          "per read min %d max %d (mean %.2f)" % (name, len(pages), min(reqs), max(reqs),
                                                   min(subs), max(subs), sum(subs) / len(subs)))
os.close(fd)
PY
umount_wait "$work/mnt2"
