#!/usr/bin/env bash
# bench/decoded_read.sh — decoded reads of ninferfs against its raw reads,
# every source format and output dtype, all in one run (issue 15).
#
#   sudo bench/decoded_read.sh [BUILD_DIR]     (default BUILD_DIR: build)
#
# Needs root, ninfer-pack and ninferfs built in BUILD_DIR, fio, python3
# with numpy (/usr/bin/python3).  bench/raw_read.sh runs it at its end.
# env: ROWS (10240: each object [ROWS, 16384]), REPS (3), FIO_SECS (10),
#      WORK (/var/tmp/nf-bench.PID, removed at exit unless KEEP=1),
#      TRACE (1: request sizes from the fuse tracepoints when tracefs is
#      there; 0: skip).
#
# The set (bench/gen_formats.py): one [ROWS, 16384] object of each source
# format bf16, q4, q5, q8, t2, nvfp4, fp8 (random codes, finite scales),
# each bound as bench/<fmt>; ~1 GiB of payload at ROWS=10240, packed with
# --max-file-bytes 256M so objects straddle the continuation parts.  It is
# mounted three times, with -o decoded_dtype=f32 (the default), bf16 and
# f16.  The backing files stay in the page cache for the whole run (read
# once at the start); before every timed read only the mount's pages of
# the files read are dropped (fadvise DONTNEED), so every figure is a
# first read through FUSE and the daemon, never the disk.
#
# What it prints, medians of REPS alternating rounds (each round runs
# every sequential measurement once, in the same order), each with the
# 1-minute load average at the time:
#   raw        dd bs=1M of every objects/<id> in turn (the whole payload):
#              the anchor of the decoded ratios
#   decoded    dd bs=1M of decoded/objects/w.<fmt> for each format and
#              dtype, as output MiB/s and over the raw anchor (goal >= 0.9)
#   variance   a fresh f32 mount, then 5 consecutive runs of the same dd of
#              decoded/objects/w.q4: max/min (goal <= 1.3), and the same of
#              their CPU cost (what the daemon and dd spent per GiB), the
#              daemon's threads before and after, the MiB the VM handed
#              back to its host meanwhile; and its native anchor: 5
#              copies of as many bytes of cached parts into fresh tmpfs
#              pages (the kernel's copy into new page-cache pages that
#              the reply makes, with no FUSE): their max/min
#   fio        random 4 KiB buffered reads, QD1 and QD16, of
#              decoded/objects/w.q4 against objects/w.bf16, the same
#              number of bytes of each (goal >= 0.8); and, as a row,
#              the q4 object's own raw file objects/w.q4 (1/7 of the
#              bytes, so more of it stays cached within a round)
#   mmap       numpy.memmap of every tensor of decoded/model.safetensors,
#              summed in order (numpy's own sum: its time counts too) (the way safetensors.safe_open faults pages
#              in) against dd of the same file (goal >= 0.8); the same over
#              the .npy files of decoded/npy/objects/ (np.load mmap_mode="r")
#              against dd of them, when the mount has them; the fault
#              path alone (one byte of every page, no sum) against dd, and
#              the sum with the pages already cached (no faults), and
#              numpy's sum alone over in-memory copies of the tensors: a memmap
#              sum whose faults and sum did not overlap would run at
#              1 / (1 + dd / that) of dd
#   parallel   4 dd readers of 4 decoded objects at once: aggregate MiB/s
#              over the same 4 read one after another (goal >= 1.6 on 2
#              cores); the CPU cost per GiB of each, the CPUs they kept
#              busy, the machine's idle share meanwhile, and the most the
#              cores allow at the 4 readers' cost; the same on a mount with
#              -o direct_io (no page cache: the reader's kernel allocates
#              no 4 KiB pages; bench/kernel_side.sh says where a GiB goes)
#   requests   the FUSE_READ sizes the kernel sent for one memmap pass and
#              one dd pass of decoded/model.safetensors (fuse tracepoints,
#              a private trace instance), and the daemon's stats for one
#              decoded read
set -euo pipefail

BUILD=${1:-build}
. "$(dirname "$0")/read_lib.sh"
ROWS=${ROWS:-10240}
REPS=${REPS:-3}
FIO_SECS=${FIO_SECS:-10}
TRACE=${TRACE:-1}
FORMATS=(q4 q5 q8 t2 nvfp4 fp8 bf16)
DTYPES=(f32 bf16 f16)
K=16384

echo "== generating [$ROWS, $K] objects of ${FORMATS[*]} in $WORK (load $(load1))"
"$PY" "$ROOT/bench/gen_formats.py" "$WORK/src" "$ROWS" bf16 q4 q5 q8 t2 nvfp4 fp8
mkdir -p "$WORK/set"
"$NINFER_PACK" create -q --manifest "$WORK/src/manifest.json" --max-file-bytes 256M \
	"$WORK/set/dec.ninfer"
rm -rf "$WORK/src"
ENTRY=$WORK/set/dec.ninfer
ls -l "$WORK/set"
warm "$WORK"/set/*
declare -A MNT
for dt in "${DTYPES[@]}"; do
	MNT[$dt]=$WORK/mnt-$dt
	nf_mount "$ENTRY" "${MNT[$dt]}" -o decoded_dtype="$dt"
done
M=${MNT[f32]}
MDIO=$WORK/mnt-dio
nf_mount "$ENTRY" "$MDIO" -o direct_io

dd_all() { local f; for f in "$@"; do dd if="$f" bs=1M status=none; done; }
# A first read (dd bs=1M) through the mount of FILEs, all on one mount:
# the backing files cached, the FILEs' mount pages dropped before (and
# after, so that the run does not fill memory).  Prints what timed does.
first_read() { pass dd_all "$@"; }
# The same with COMMAND FILE... doing the reading.
pass() {
	local cmd=$1 bytes=0 f
	shift
	for f in "$@"; do bytes=$((bytes + $(size "$f"))); done
	warm "$WORK"/set/*
	drop_file "$@"
	timed "$(stat -c %m "$1")" "$bytes" "$cmd" "$@"
	drop_file "$@"
}

# Results: R[name] holds "value load daemon-cpu reader-cpu idle" lines,
# one per round ("-" where a measurement has no CPU figures).
declare -A R
rec() { R[$1]+="$2 $(load1) ${3:--} ${4:--} ${5:--}"$'\n'; }
col() { printf '%s' "${R[$1]:-}" | awk -v c="$2" 'NF && $c != "-" { print $c }' | median_of; }
med() { col "$1" 1; }
medload() { col "$1" 2; }

RAW=()
for f in "${FORMATS[@]}"; do RAW+=("$M/objects/w.$f"); done
# The bytes must be right before they are timed: the bf16 object decoded
# to f32 is its words << 16 (codecs §0.1), the q4 view has 4 bytes an
# element, and every format decodes its first MiB.
"$PY" - "$M" "$ROWS" "$K" "${FORMATS[@]}" <<'PY'
import os, sys
import numpy as np
m, rows, k, fmts = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
raw = np.fromfile(m + "/objects/w.bf16", dtype="<u2", count=1 << 18)
dec = np.fromfile(m + "/decoded/objects/w.bf16", dtype="<u4", count=1 << 18)
assert (dec == raw.astype(np.uint32) << 16).all(), "decoded bf16 is not bf16 << 16"
for f in fmts:
    p = m + "/decoded/objects/w." + f
    assert os.stat(p).st_size == rows * k * 4, (p, os.stat(p).st_size)
    with open(p, "rb") as fh:
        assert len(fh.read(1 << 20)) == 1 << 20
PY

echo "== sequential first reads, $REPS alternating rounds"
# 4 dd readers at once, one file each
par4() { local f; for f in "$@"; do dd if="$f" bs=1M status=none of=/dev/null & done; wait; }
for r in $(seq "$REPS"); do
	rec raw $(first_read "${RAW[@]}")
	for dt in "${DTYPES[@]}"; do
		for f in "${FORMATS[@]}"; do
			rec "dec_${dt}_$f" $(first_read "${MNT[$dt]}/decoded/objects/w.$f")
		done
	done
	# 4 parallel readers against the same 4 read one after another
	PAR=("$M"/decoded/objects/w.{q4,q8,nvfp4,fp8})
	rec par_one $(first_read "${PAR[@]}")
	rec par_four $(pass par4 "${PAR[@]}")
	PARD=("$MDIO"/decoded/objects/w.{q4,q8,nvfp4,fp8})
	rec par_one_dio $(first_read "${PARD[@]}")
	rec par_four_dio $(pass par4 "${PARD[@]}")
	rec raw $(first_read "${RAW[@]}")
	echo "   round $r done (load $(load1))"
done

echo "== variance: a fresh mount, 5 consecutive decoded q4 reads"
nf_umount "$M"
nf_mount "$ENTRY" "$M"
# The daemon's threads (libfuse's workers and ours): counted before the
# first read and after the fifth, to show whether workers (and their rings
# and work areas) were made during the runs or were destroyed and made
# again between them (libfuse's max_idle_threads).
threads() { ls "/proc/$(nf_daemon "$M")/task" | wc -l; }
# MiB the guest has handed back to the host so far (virtio-balloon free
# page reporting: a page handed back costs a fault in the host the next
# time the guest writes it), or "-" without it.
REPORTED=/sys/module/page_reporting/parameters/reported_kib
reported() { [ -r "$REPORTED" ] && echo $(($(cat "$REPORTED") / 1024)) || echo -; }
VAR=()
VARCPU=()
VARDCPU=()
thr0=$(threads)
rep0=$(reported)
for _ in 1 2 3 4 5; do
	out=$(first_read "$M/decoded/objects/w.q4")
	read -r v dc rc _ <<<"$out"
	VAR+=("$v")
	VARDCPU+=("$dc")
	VARCPU+=("$(awk -v a="$dc" -v b="$rc" 'BEGIN { printf "%.2f", a + b }')")
done
varload=$(load1)
thr1=$(threads)
rep1=$(reported)
# The native anchor of the variance: the same kernel copy the reply makes
# (bytes from memory into page-cache pages allocated for it), with no FUSE
# and no daemon: 5 consecutive copies of cached backing files into fresh
# tmpfs pages, as many bytes as the decoded q4 file (whole parts), removed
# after each.  Its max/min is what this machine's memory and load give.
SHM=/dev/shm/nf-bench.$$
NF_TMP+=("$SHM")
NATVAR=()
NATSYS=()
if [ -d /dev/shm ]; then
	decsize=$(size "$M/decoded/objects/w.q4")
	COPY=()
	copied=0
	for f in "$WORK"/set/*; do
		[ "$copied" -ge "$decsize" ] && break
		COPY+=("$f")
		copied=$((copied + $(size "$f")))
	done
	warm "$WORK"/set/*
	for _ in 1 2 3 4 5; do
		t=$({ TIMEFORMAT='%R %S'; time cat "${COPY[@]}" >"$SHM"; } 2>&1)
		rm -f "$SHM"
		NATVAR+=("$(awk -v b="$copied" -v t="$t" 'BEGIN { split(t, x, " "); printf "%.1f", b / 1048576 / x[1] }')")
		NATSYS+=("$(awk -v b="$copied" -v t="$t" 'BEGIN { split(t, x, " "); printf "%.2f", x[2] / (b / 1073741824) }')")
	done
fi

echo "== one decoded q4 read: the daemon's counters"
nf_umount "$M"
nf_mount "$ENTRY" "$M"
first_read "$M/decoded/objects/w.q4" >/dev/null
stats=$("$PY" -c "
import json; s = json.load(open('$M/stats'))
fr = sum(f['reads'] for f in s['files'])
print('FUSE reads %d, mean request %.0f KiB, io_uring submissions %d, sqes %d, part reads %d' %
      (s['reads'], s['bytes'] / max(s['reads'], 1) / 1024, s['uring_submissions'],
       s['uring_sqes'], fr))")
echo "   $stats"

echo "== fio random 4 KiB reads, ${FIO_SECS}s or one pass each, $REPS rounds"
FRAW=$M/objects/w.bf16
FDEC=$M/decoded/objects/w.q4
FRQ4=$M/objects/w.q4
fsize=$(size "$FRAW")
drop_raw() { drop_file "$FRAW"; }
drop_dec() { drop_file "$FDEC"; }
drop_rq4() { drop_file "$FRQ4"; }
for r in $(seq "$REPS"); do
	for qd in 1 16; do
		rec "fio_raw_$qd" "$(fio_iops "$FRAW" "$qd" "$fsize" drop_raw)"
		rec "fio_dec_$qd" "$(fio_iops "$FDEC" "$qd" "$fsize" drop_dec)"
		rec "fio_rq4_$qd" "$(fio_iops "$FRQ4" "$qd" "$(size "$FRQ4")" drop_rq4)"
	done
done
drop_file "$FRAW" "$FDEC" "$FRQ4"

echo "== numpy memmap of decoded/model.safetensors and decoded/npy/"
ST=$M/decoded/model.safetensors
# Sum every tensor of a safetensors file through numpy.memmap, in file
# order.
memmap_st() {
	"$PY" - "$1" <<'PY'
import json, struct, sys
import numpy as np
np.seterr(all="ignore")   # random bf16 words include NaN and Inf
p = sys.argv[1]
with open(p, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    h = json.loads(f.read(n))
dt = {"F32": np.float32, "BF16": np.uint16, "F16": np.float16, "I32": np.int32}
total = 0
for name, t in sorted(((k, v) for k, v in h.items() if k != "__metadata__"),
                      key=lambda kv: kv[1]["data_offsets"][0]):
    a, b = t["data_offsets"]
    m = np.memmap(p, dtype=dt[t["dtype"]], mode="r", offset=8 + n + a, shape=((b - a) //
                  np.dtype(dt[t["dtype"]]).itemsize,))
    m.sum()
    del m
PY
}
# The fault path alone: the whole file mapped, one byte of every page read
# in order (no arithmetic over the data).
memmap_touch() {
	"$PY" - "$1" <<'PY'
import sys
import numpy as np
np.memmap(sys.argv[1], dtype=np.uint8, mode="r")[::4096].sum()
PY
}
# COMMAND FILE... with FILE's pages already in the mount's cache (one
# untimed run first): no daemon, no fault I/O: what the reader's own work
# costs.
warm_pass() {
	local cmd=$1 bytes=0 f
	shift
	for f in "$@"; do bytes=$((bytes + $(size "$f"))); done
	"$cmd" "$@" >/dev/null
	timed "$(stat -c %m "$1")" "$bytes" "$cmd" "$@"
	drop_file "$@"
}
# numpy's sum alone: every tensor of the safetensors file read into memory
# first (untimed, np.fromfile), then the same sums timed; prints MiB/s of
# the file's size.  What numpy's compute costs with no fault and no page
# cache in the way.
sum_ram() {
	"$PY" - "$1" <<'PY'
import json, os, struct, sys, time
import numpy as np
np.seterr(all="ignore")
p = sys.argv[1]
with open(p, "rb") as f:
    n = struct.unpack("<Q", f.read(8))[0]
    h = json.loads(f.read(n))
dt = {"F32": np.float32, "BF16": np.uint16, "F16": np.float16, "I32": np.int32}
arrs = []
for name, t in sorted(((k, v) for k, v in h.items() if k != "__metadata__"),
                      key=lambda kv: kv[1]["data_offsets"][0]):
    a, b = t["data_offsets"]
    d = np.dtype(dt[t["dtype"]])
    arrs.append(np.fromfile(p, dtype=d, offset=8 + n + a, count=(b - a) // d.itemsize))
t0 = time.perf_counter()
for x in arrs:
    x.sum()
print("%.1f" % (os.stat(p).st_size / 1048576 / (time.perf_counter() - t0)))
PY
}
# The same over .npy files (np.load mmap_mode="r").
memmap_npy() {
	"$PY" - "$@" <<'PY'
import sys
import numpy as np
np.seterr(all="ignore")
for p in sys.argv[1:]:
    a = np.load(p, mmap_mode="r")
    a.sum()
    del a
PY
}
NPY=()
[ -d "$M/decoded/npy/objects" ] && NPY=("$M"/decoded/npy/objects/*.npy)
for r in $(seq "$REPS"); do
	rec mm_st $(pass memmap_st "$ST")
	rec dd_st $(first_read "$ST")
	rec mm_touch $(pass memmap_touch "$ST")
	rec mm_warm $(warm_pass memmap_st "$ST")
	rec mm_ram "$(sum_ram "$ST")"
	drop_file "$ST"
	if [ ${#NPY[@]} -gt 0 ]; then
		rec mm_npy $(pass memmap_npy "${NPY[@]}")
		rec dd_npy $(first_read "${NPY[@]}")
	fi
done

# FUSE_READ sizes of this mount's connection during COMMAND, from the fuse
# tracepoints in a private trace instance (other users' tracing and other
# mounts are left alone): "size count" lines, then a summary line.
REQ_MMAP="n/a (no tracefs)"
REQ_DD=$REQ_MMAP
TI=/sys/kernel/tracing/instances/nfbench.$$
read_sizes() { # COMMAND...
	local conn
	conn=$("$PY" -c "import os; d = os.stat('$M').st_dev; print((os.major(d) << 20) | os.minor(d))")
	mkdir "$TI"
	echo "opcode == 15 && connection == $conn" >"$TI/events/fuse/fuse_request_send/filter"
	echo "connection == $conn" >"$TI/events/fuse/fuse_request_end/filter"
	echo 65536 >"$TI/buffer_size_kb"
	cat "$TI/trace_pipe" >"$WORK/trace.txt" &
	local reader=$!
	echo 1 >"$TI/events/fuse/fuse_request_send/enable"
	echo 1 >"$TI/events/fuse/fuse_request_end/enable"
	"$@" >/dev/null
	echo 0 >"$TI/events/fuse/fuse_request_send/enable"
	echo 0 >"$TI/events/fuse/fuse_request_end/enable"
	sleep 1
	kill "$reader"; wait "$reader" 2>/dev/null || true
	rmdir "$TI"
	"$PY" - "$WORK/trace.txt" <<'PY'
import collections, re, sys
sent, sizes = set(), collections.Counter()
for line in open(sys.argv[1], errors="replace"):
    m = re.search(r"fuse_request_send: connection \d+ req (\d+) opcode 15", line)
    if m:
        sent.add(m.group(1)); continue
    m = re.search(r"fuse_request_end: connection \d+ req (\d+) len (\d+) error (-?\d+)", line)
    if m and m.group(1) in sent and m.group(3) == "0":
        sizes[int(m.group(2)) - 16] += 1   # the reply's 16-byte header
n, b = sum(sizes.values()), sum(k * v for k, v in sizes.items())
top = ", ".join("%s KiB x%d" % (("%.0f" % (k / 1024)) if k >= 1024 else "%.2f" % (k / 1024), v)
                for k, v in sorted(sizes.items(), key=lambda kv: -kv[1])[:4])
print("%d FUSE_READs, mean %.0f KiB; most frequent: %s" % (n, b / max(n, 1) / 1024, top))
PY
}
if [ "$TRACE" = 1 ] && [ -d /sys/kernel/tracing/instances ] &&
   [ -d /sys/kernel/tracing/events/fuse/fuse_request_end ]; then
	echo "== FUSE_READ sizes (fuse tracepoints)"
	drop_file "$ST"
	REQ_MMAP=$(read_sizes memmap_st "$ST")
	drop_file "$ST"
	REQ_DD=$(read_sizes dd if="$ST" bs=1M status=none)
	drop_file "$ST"
fi

# ---- the table ----
row() { # LABEL NAME [RATIO-TEXT]
	printf '| %-48s | %9s | %6s | %6s | %5s | %s\n' "$1" "$(med "$2")" "$(col "$2" 3)" \
		"$(col "$2" 4)" "$(medload "$2")" "${3:-}"
}
# the CPU cost of a read over the raw anchor's, inverted: (raw dCPU + rCPU)
# / (dCPU + rCPU), the throughput ratio two saturated cores would give
cpu_ratio() { awk -v a="$(col "$1" 3)" -v b="$(col "$1" 4)" -v c="$(col "$2" 3)" -v d="$(col "$2" 4)" \
	'BEGIN { if (a == "-" || c == "-" || a + b <= 0) print "n/a"; else printf "%.2f", (c + d) / (a + b) }'; }
ratio() { awk -v a="$(med "$1")" -v b="$(med "$2")" 'BEGIN { if (a == "-" || b == "-" || b <= 0) print "n/a"; else printf "%.2f", a / b }'; }
verdict() { awk -v v="$1" -v g="$2" -v op="$3" 'BEGIN { if (v == "n/a") print "n/a"; else if (op == ">=" ? v >= g : v <= g) print "met"; else print "NOT met" }'; }
goal() { # TEXT VALUE OP GOAL
	printf '  %-60s %6s  (%s %s) %s\n' "$1" "$2" "$3" "$4" "$(verdict "$2" "$4" "$3")"
}

echo
echo "Decoded read benchmark: [$ROWS, $K] objects of ${FORMATS[*]},"
echo "$(du -sh "$WORK/set" | cut -f1) set in parts of 256 MiB, backing files cached, mount pages dropped"
echo "before each read; medians of $REPS alternating rounds; load = 1-min load average (2 cores)"
echo "one decoded q4 read: $stats"
echo
printf '| %-48s | %9s | %6s | %6s | %5s | %s\n' "measurement" "MiB/s" "dCPU" "rCPU" "load" "ratio"
printf '|%s|%s|%s|%s|%s|%s\n' "--------------------------------------------------" "-----------" "--------" "--------" "-------" "------"
row "raw: objects/* (the payload)" raw
for dt in "${DTYPES[@]}"; do
	for f in "${FORMATS[@]}"; do
		row "decoded/objects/w.$f -> $dt" "dec_${dt}_$f" \
			"$(ratio "dec_${dt}_$f" raw)x raw (CPU cost $(cpu_ratio "dec_${dt}_$f" raw)x)"
	done
done
row "one reader: 4 decoded objects in turn" par_one
row "4 parallel readers: aggregate" par_four "$(ratio par_four par_one)x one reader"
row "one reader, -o direct_io mount" par_one_dio
row "4 parallel readers, -o direct_io mount" par_four_dio "$(ratio par_four_dio par_one_dio)x one reader"
for qd in 1 16; do
	row "fio 4k randread QD$qd objects/w.bf16 (IOPS)" "fio_raw_$qd"
	row "fio 4k randread QD$qd decoded/objects/w.q4 (IOPS)" "fio_dec_$qd" "$(ratio "fio_dec_$qd" "fio_raw_$qd")x raw"
	row "fio 4k randread QD$qd objects/w.q4, raw (IOPS)" "fio_rq4_$qd" "decoded / this $(ratio "fio_dec_$qd" "fio_rq4_$qd")x"
done
row "dd decoded/model.safetensors" dd_st
row "numpy memmap sum, every tensor of it" mm_st "$(ratio mm_st dd_st)x dd"
row "numpy memmap, one byte a page (faults only)" mm_touch "$(ratio mm_touch dd_st)x dd"
row "numpy memmap sum, pages cached (no faults)" mm_warm
row "numpy sum of in-memory copies (compute alone)" mm_ram
if [ -n "${R[mm_npy]:-}" ]; then
	row "dd decoded/npy/objects/*.npy" dd_npy
	row "np.load(mmap_mode=r) sum of them" mm_npy "$(ratio mm_npy dd_npy)x dd"
fi
echo "MiB/s or IOPS: the median; dCPU, rCPU: CPU seconds per GiB read used by the daemon (all"
echo "threads) and by the reader (dd, python); CPU cost ratio: (raw dCPU + rCPU) / (dCPU + rCPU)."
echo
vmax=$(printf '%s\n' "${VAR[@]}" | sort -g | tail -1)
vmin=$(printf '%s\n' "${VAR[@]}" | sort -g | head -1)
vr=$(awk -v a="$vmax" -v b="$vmin" 'BEGIN { printf "%.2f", a / b }')
cmax=$(printf '%s\n' "${VARCPU[@]}" | sort -g | tail -1)
cmin=$(printf '%s\n' "${VARCPU[@]}" | sort -g | head -1)
maxmin() { printf '%s\n' "$@" | sort -g | awk 'NR == 1 { lo = $1 } { hi = $1 } END { if (NR == 0 || lo <= 0) print "n/a"; else printf "%.2f", hi / lo }'; }
echo "variance, fresh mount, 5 runs of decoded q4 -> f32 (MiB/s): ${VAR[*]} (load $varload)"
echo "  their CPU cost (daemon + reader CPU-s/GiB): ${VARCPU[*]}, max/min $(awk -v a="$cmax" -v b="$cmin" 'BEGIN { printf "%.2f", a / b }')"
echo "  the daemon's alone: ${VARDCPU[*]}, max/min $(maxmin "${VARDCPU[@]}"); its threads before run 1: $thr0, after run 5: $thr1"
echo "  MiB handed back to the host (free page reporting) during the 5 runs: $( [ "$rep0" = - ] && echo n/a || echo $((rep1 - rep0)))"
if [ ${#NATVAR[@]} -gt 0 ]; then
	echo "native anchor, 5 copies of $((copied >> 20)) MiB of cached parts into fresh tmpfs pages (MiB/s): ${NATVAR[*]}, max/min $(maxmin "${NATVAR[@]}")"
	echo "  their kernel CPU (sys CPU-s/GiB): ${NATSYS[*]}, max/min $(maxmin "${NATSYS[@]}")"
fi
# were the sum and the faults not overlapped (readahead runs ahead of the
# faults while the reader sums), a memmap sum would run at dd's rate slowed
# by the sum's own time
echo "memmap sum with no overlap of faults and sum: 1 / (1 + dd / (sum with pages cached)) = $(awk -v d="$(med dd_st)" -v w="$(med mm_warm)" 'BEGIN { printf "%.2f", 1 / (1 + d / w) }')x dd;"
echo "  with numpy's sum of in-memory copies: 1 / (1 + dd / sum) = $(awk -v d="$(med dd_st)" -v w="$(med mm_ram)" 'BEGIN { if (w <= 0) print "n/a"; else printf "%.2f", 1 / (1 + d / w) }')x dd"
# What bounds the 4 readers: their CPU cost per GiB against one reader's,
# the CPUs each kept busy, and the idle share of the machine meanwhile;
# at four readers' cost per GiB, all of the machine's cores give at most
# cores / cost GiB/s, which over one reader's rate is the best ratio the
# cores allow (the cost counts the daemon and the readers, not the kernel
# work done for them elsewhere: it is a lower bound on the cost)
par_cost() { awk -v a="$(col "$1" 3)" -v b="$(col "$1" 4)" 'BEGIN { if (a == "-" || b == "-") print "n/a"; else printf "%.2f", a + b }'; }
par_cpus() { awk -v r="$(med "$1")" -v c="$(par_cost "$1")" 'BEGIN { if (c == "n/a" || r == "-") print "n/a"; else printf "%.2f", r / 1024 * c }'; }
NCPU=$(nproc)
echo "parallel: one reader $(med par_one) MiB/s at $(par_cost par_one) CPU-s/GiB (daemon + dd: $(par_cpus par_one) CPUs busy, machine idle $(col par_one 5));"
echo "  4 readers $(med par_four) MiB/s at $(par_cost par_four) CPU-s/GiB ($(par_cpus par_four) CPUs, machine idle $(col par_four 5));"
echo "  $NCPU cores at the 4 readers' cost: at most $(awk -v n="$NCPU" -v c="$(par_cost par_four)" -v o="$(med par_one)" 'BEGIN { if (c == "n/a" || c <= 0 || o == "-") print "n/a"; else printf "%.0f MiB/s = %.2fx one reader", n / c * 1024, n / c * 1024 / o }')"
echo "  -o direct_io: one reader $(med par_one_dio) MiB/s at $(par_cost par_one_dio) CPU-s/GiB, 4 readers $(med par_four_dio) MiB/s at $(par_cost par_four_dio)"
echo "FUSE_READ sizes, memmap of model.safetensors: $REQ_MMAP"
echo "FUSE_READ sizes, dd bs=1M of model.safetensors: $REQ_DD"
echo
echo "goals (issue 15):"
for dt in "${DTYPES[@]}"; do
	for f in "${FORMATS[@]}"; do
		goal "decoded $f -> $dt / raw first read" "$(ratio "dec_${dt}_$f" raw)" ">=" 0.9
	done
done
goal "variance max/min over 5 runs" "$vr" "<=" 1.3
goal "4k random QD1 decoded / raw" "$(ratio fio_dec_1 fio_raw_1)" ">=" 0.8
goal "4k random QD16 decoded / raw" "$(ratio fio_dec_16 fio_raw_16)" ">=" 0.8
goal "memmap sum model.safetensors / dd" "$(ratio mm_st dd_st)" ">=" 0.8
if [ -n "${R[mm_npy]:-}" ]; then
	goal "np.load mmap sum decoded/npy / dd" "$(ratio mm_npy dd_npy)" ">=" 0.8
else
	goal "np.load mmap sum decoded/npy / dd" "n/a" ">=" 0.8
fi
goal "4 parallel readers aggregate / one" "$(ratio par_four par_one)" ">=" 1.6
goal "the same on a -o direct_io mount" "$(ratio par_four_dio par_one_dio)" ">=" 1.6
