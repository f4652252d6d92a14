#!/usr/bin/env bash
# bench/kernel_side.sh — where a GiB read through the mount costs CPU on the
# kernel's side, and what -o direct_io and O_DIRECT change (issue 15, the
# kernel-side goals), all in one run.
#
#   sudo bench/kernel_side.sh [BUILD_DIR]     (default BUILD_DIR: build)
#
# Needs root, ninfer-pack and ninferfs built in BUILD_DIR, python3 with
# numpy; perf (optional: the reader's kernel profile); tracefs (optional:
# folio orders).  env: ROWS (10240: each object [ROWS, 16384]), REPS (3),
# WORK (/var/tmp/nf-bench.PID, removed at exit unless KEEP=1).
#
# The set: one [ROWS, 16384] object of q4, q8, nvfp4, fp8 and bf16
# (bench/gen_formats.py), parts of 256 MiB, the backing files cached all
# along.  Two mounts of it: the default one and one with -o direct_io.
#
# What it prints:
#   facts      the page-cache folio orders a first read of a decoded file
#              through the mount makes, against a native file read from
#              disk (tracepoint filemap:mm_filemap_add_to_page_cache,
#              filtered on each file's inode: nobody else's pages); the
#              FUSE read sizes (the daemon's stats); the daemon's context
#              switches per GiB and its threads; the reader's kernel
#              profile (perf record -g of dd): the share of its samples
#              allocating page-cache pages (readahead) and copying to user
#   rounds     REPS alternating rounds of first reads (mount pages dropped
#              before each), each: MiB/s, the daemon's and the reader's
#              CPU-s per GiB:
#                native   dd bs=1M of the cached part files (the anchor:
#                         the copy alone, no page allocation)
#                raw      dd bs=1M of objects/w.bf16
#                dec      dd bs=1M of decoded/objects/w.q4, buffered
#                odirect  the same with iflag=direct on the default mount
#                dio      the same (buffered dd) on the -o direct_io mount
#                one/four dd of the 4 decoded objects q4 q8 nvfp4 fp8 one
#                         after another / all 4 at once, on the default
#                         mount and on the -o direct_io mount; the machine's
#                         idle share meanwhile
#   bounds     per mount, the aggregate the 2 cores allow at four readers'
#              cost per GiB, over one reader: the best ratio those costs
#              permit
set -euo pipefail

BUILD=${1:-build}
. "$(dirname "$0")/read_lib.sh"
ROWS=${ROWS:-10240}
REPS=${REPS:-3}
K=16384
PAR=(q4 q8 nvfp4 fp8)

echo "== generating [$ROWS, $K] objects of ${PAR[*]} bf16 in $WORK (load $(load1))"
"$PY" "$ROOT/bench/gen_formats.py" "$WORK/src" "$ROWS" bf16 "${PAR[@]}" >/dev/null
mkdir -p "$WORK/set"
"$NINFER_PACK" create -q --manifest "$WORK/src/manifest.json" --max-file-bytes 256M \
	"$WORK/set/dec.ninfer"
rm -rf "$WORK/src"
PARTS=("$WORK"/set/*)
warm "${PARTS[@]}"
M=$WORK/mnt
MD=$WORK/mnt-dio
nf_mount "$WORK/set/dec.ninfer" "$M"
nf_mount "$WORK/set/dec.ninfer" "$MD" -o direct_io
DEC=$M/decoded/objects/w.q4
RAW=$M/objects/w.bf16

sizes() { local b=0 f; for f in "$@"; do b=$((b + $(size "$f"))); done; echo "$b"; }
# context switches of all the daemon's threads so far
daemon_cs() {
	cat /proc/"$(nf_daemon "$1")"/task/*/status |
		awk '/ctxt_switches/ { n += $2 } END { print n }'
}
dd1() { dd if="$1" bs=1M status=none of=/dev/null ${DDFLAG:+iflag=$DDFLAG}; }
dd_all() { local f; for f in "$@"; do dd1 "$f"; done; }
par4() { local f; for f in "$@"; do dd1 "$f" & done; wait; }
# pass MNT COMMAND FILE...: a first read (FILEs' mount pages dropped
# before and after; the parts cached)
pass() {
	local mnt=$1 cmd=$2
	shift 2
	warm "${PARTS[@]}"
	drop_file "$@"
	timed "$mnt" "$(sizes "$@")" "$cmd" "$@"
	drop_file "$@"
}
# the native anchor: dd of the cached parts (their pages stay cached)
native() {
	local TIMEFORMAT='%R %U %S' b t
	b=$(sizes "${PARTS[@]}")
	warm "${PARTS[@]}"
	t=$({ time dd_all "${PARTS[@]}"; } 2>&1)
	awk -v b="$b" -v t="$t" 'BEGIN { split(t, x, " "); g = b / 1073741824
		printf "%.1f - %.2f -\n", b / 1048576 / x[1], (x[2] + x[3]) / g }'
}

declare -A R
rec() { R[$1]+="$* $(load1)"$'\n'; }
col() { printf '%s' "${R[$1]:-}" | awk -v c="$(($2 + 1))" 'NF && $c != "-" { print $c }' | median_of; }

echo "== facts"
# folio orders, filtered on the file's inode in a private trace instance
TI=/sys/kernel/tracing/instances/nfks.$$
orders() { # FILE COMMAND...: "order:count ..." of the pages FILE got
	local f=$1 ino dev
	shift
	ino=$(stat -c %i "$f")
	dev=$("$PY" -c "import os; d = os.stat('$f').st_dev; print((os.major(d) << 20) | os.minor(d))")
	[ -d /sys/kernel/tracing/instances ] || { echo "n/a (no tracefs)"; return; }
	mkdir "$TI"
	echo 65536 >"$TI/buffer_size_kb"
	echo "i_ino == $ino && s_dev == $dev" >"$TI/events/filemap/mm_filemap_add_to_page_cache/filter"
	echo 1 >"$TI/events/filemap/mm_filemap_add_to_page_cache/enable"
	"$@" >/dev/null
	echo 0 >"$TI/events/filemap/mm_filemap_add_to_page_cache/enable"
	grep -o 'order=[0-9]*' "$TI/trace" | sort | uniq -c |
		awk '{ sub("order=", "", $2); printf "%s%s:%s", (NR > 1 ? " " : ""), $2, $1 }'
	echo
	rmdir "$TI"
}
drop_file "$DEC"
ORD_DEC=$(orders "$DEC" dd1 "$DEC")
drop_file "$DEC"
# a native first read: the part's pages dropped, read back from the disk
drop_file "${PARTS[0]}"
ORD_NAT=$(orders "${PARTS[0]}" dd1 "${PARTS[0]}")
warm "${PARTS[@]}"
# request sizes and context switches of one buffered and one direct read
reqs() { "$PY" -c "
import json, sys; s = json.load(open('$1/stats')); b = s['read_sizes']
print(' '.join('%s:%d' % (k, v) for k, v in (b.items() if isinstance(b, dict) else enumerate(b)) if v))"; }
cs_of() { # MNT FILE: context switches of the daemon per GiB of one read
	local c0 c1
	drop_file "$2"
	c0=$(daemon_cs "$1")
	dd1 "$2"
	c1=$(daemon_cs "$1")
	drop_file "$2"
	awk -v n="$((c1 - c0))" -v b="$(size "$2")" 'BEGIN { printf "%.0f", n / (b / 1073741824) }'
}
CS_BUF=$(cs_of "$M" "$DEC")
CS_DIO=$(cs_of "$MD" "$MD/decoded/objects/w.q4")
REQ_BUF=$(reqs "$M")
REQ_DIO=$(reqs "$MD")
THREADS=$(ls "/proc/$(nf_daemon "$M")/task" | wc -l)
PROF="n/a (no perf)"
if command -v perf >/dev/null; then
	drop_file "$DEC"
	perf record -q -g -o "$WORK/perf.data" -- dd if="$DEC" bs=1M of=/dev/null status=none \
		2>/dev/null || true
	drop_file "$DEC"
	PROF=$(perf report -i "$WORK/perf.data" --children --stdio --sort sym -g none 2>/dev/null |
		awk '/\] (page_cache_ra_unbounded|page_cache_ra_order|copy_page_to_iter|filemap_add_folio|folio_alloc_noprof)$/ {
			printf "%s%s %s", n++ ? ", " : "", $NF, $1 } END { print "" }')
fi

echo "== $REPS alternating rounds"
FOUR=()
FOURD=()
for f in "${PAR[@]}"; do FOUR+=("$M/decoded/objects/w.$f"); FOURD+=("$MD/decoded/objects/w.$f"); done
for r in $(seq "$REPS"); do
	rec native $(native)
	rec raw $(pass "$M" dd_all "$RAW")
	rec dec $(pass "$M" dd_all "$DEC")
	rec odirect $(DDFLAG=direct pass "$M" dd_all "$DEC")
	rec dio $(pass "$MD" dd_all "$MD/decoded/objects/w.q4")
	rec one $(pass "$M" dd_all "${FOUR[@]}")
	rec four $(pass "$M" par4 "${FOUR[@]}")
	rec done $(pass "$MD" dd_all "${FOURD[@]}")
	rec dfour $(pass "$MD" par4 "${FOURD[@]}")
	echo "   round $r done (load $(load1))"
done

row() { # LABEL NAME
	printf '| %-52s | %8s | %5s | %5s | %5s | %5s |\n' "$1" "$(col "$2" 1)" "$(col "$2" 2)" \
		"$(col "$2" 3)" "$(col "$2" 4)" "$(col "$2" 5)"
}
cost() { awk -v a="$(col "$1" 2)" -v b="$(col "$1" 3)" 'BEGIN { printf "%.2f", (a == "-" ? 0 : a) + b }'; }
ratio() { awk -v a="$(col "$1" 1)" -v b="$(col "$2" 1)" 'BEGIN { printf "%.2f", a / b }'; }
bound() { # FOUR ONE: ncpu / cost(FOUR) over ONE's rate
	awk -v n="$(nproc)" -v c="$(cost "$1")" -v o="$(col "$2" 1)" \
		'BEGIN { printf "%.0f MiB/s = %.2fx", n / c * 1024, n / c * 1024 / o }'
}
echo
echo "Kernel side of a read through the mount: [$ROWS, $K] objects, parts cached, mount pages"
echo "dropped before each read; medians of $REPS alternating rounds; load = 1-min load average"
echo "($(nproc) cores)"
echo
echo "page-cache folios (order:count) of one dd of decoded/objects/w.q4: $ORD_DEC"
echo "  of one dd of a native part file read from disk:                $ORD_NAT"
echo "FUSE read sizes (bytes:count, daemon stats), buffered dd: $REQ_BUF"
echo "  -o direct_io dd bs=1M:                                  $REQ_DIO"
echo "daemon context switches per GiB: buffered $CS_BUF, -o direct_io $CS_DIO; its threads: $THREADS"
echo "dd's kernel profile (children %): $PROF"
echo
printf '| %-52s | %8s | %5s | %5s | %5s | %5s |\n' measurement MiB/s dCPU rCPU idle load
printf '|%s|%s|%s|%s|%s|%s|\n' "------------------------------------------------------" "----------" "-------" "-------" "-------" "-------"
row "native: dd of the cached parts (the copy alone)" native
row "raw: dd objects/w.bf16, first read" raw
row "decoded: dd decoded/objects/w.q4, buffered" dec
row "decoded: the same, dd iflag=direct (O_DIRECT)" odirect
row "decoded: the same, buffered dd on -o direct_io" dio
row "one reader: 4 decoded objects in turn" one
row "4 parallel readers" four
row "one reader, -o direct_io" done
row "4 parallel readers, -o direct_io" dfour
echo "dCPU, rCPU: CPU-s per GiB of the daemon (all threads) and of the reader (dd: user + sys);"
echo "idle: the machine's idle share meanwhile"
echo
echo "CPU-s per GiB (daemon + reader): buffered $(cost dec), O_DIRECT $(cost odirect), -o direct_io $(cost dio)"
echo "4 parallel / one: buffered $(ratio four one)x at $(cost four) CPU-s/GiB (cores allow $(bound four one));"
echo "  -o direct_io $(ratio dfour done)x at $(cost dfour) CPU-s/GiB (cores allow $(bound dfour done))"
