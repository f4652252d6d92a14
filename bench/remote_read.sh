#!/usr/bin/env bash
# bench/remote_read.sh — ninferfs over HTTP (issue 14) against curl from the
# same nginx, in one run.  Never part of the test suite.
#
#   bench/remote_read.sh [BUILD_DIR]     (default BUILD_DIR: build; root)
#
# The set: a bf16 object of SIZE_MB (1024) MiB of random bytes and a 1 MiB
# one, split with --max-file-bytes 256M, served by nginx on a free loopback
# port (tests/remote/ngx.sh).  Large files go to $WORK (default
# /var/tmp/nf-rbench.PID), removed at exit with every mount and server.
#   (a) sequential first read: dd bs=1M of objects/w.big through a fresh
#       mount of the URL, against `curl -o /dev/null` of the same byte
#       ranges from the same server; median of REPS (5); ratio mount/curl
#       (goal >= 0.8); and, as the FUSE path's own ceiling, dd of the object
#       through a fresh mount of the set's directory (io_uring, the backing
#       files in the page cache); and the URL mount with -o direct_io
#       (no page cache for read(2); mmap still maps), same rounds.  Each
#       reader also gets the machine's busy CPU-seconds per GiB while it
#       ran (/proc/stat: server, daemon and reader together), steadier
#       than the MiB/s of one round on a machine of two CPUs; and the
#       mount's CPU cap: the rate all the CPUs allow at its CPU per GiB,
#       over curl's (a ratio goal above the cap cannot be met by the
#       daemon's waits or windows, only by a cheaper GiB)
#   (b) the same with 20 ms RTT: tc netem where the kernel has it, else
#       (said so) both through the delay proxy (BUILD/bench/delay-proxy,
#       bench/delay_proxy.c), a loopback proxy that delays every byte 10 ms
#       each way
#   (c) random 4 KiB reads at QD16 (fio, io_uring, O_DIRECT) of
#       objects/w.big: HTTP requests per read from nginx's log (goal <= 1.1)
#   (d) mount-ready time of a 100k-object set (bench/gen_large.py) over HTTP
#       / local, median of REPS (goal <= 1.5)
#   (e) bytes fetched (nginx's $bytes_sent, and the daemon's bytes_fetched)
#       to read objects/w.small (1 MiB) out of the set (goal <= 4 MiB)
# While it runs, the VM's free page reporting is off and PREFAULT_MB
# (default all: the free memory but 1 GiB; 0: neither) MiB are
# prefaulted once (bench/prefault.sh:
# this VM hands freed memory back to its host, and the page cache a
# buffered read fills then costs host faults, charged to the daemon's
# FUSE reply).  Readers that fill no page cache (curl, -o direct_io) are
# hardly changed by it.  Both are in bench/README.md.
# ONLY=abe (default abcde) runs only those parts; the table says "-" for
# the others; MOUNT_OPTS (e.g. "-o prefetch_mem=0") go to the URL mounts of
# (a) and (b); PROXY (default BUILD/bench/delay-proxy; a *.py, such as the
# older bench/delay_proxy.py, runs with python3) is the delaying proxy of
# (b), which first prints one ranged GET through it against two in
# parallel (a proxy that is the bound gives both the same).  The load
# average is printed at the start and the end (the machine may be shared).
set -euo pipefail

BUILD=${1:-build}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
case $BUILD in /*) ;; *) BUILD=$ROOT/$BUILD ;; esac
NINFERFS=${NINFERFS:-$BUILD/fs/ninferfs}
NINFER_PACK=${NINFER_PACK:-$BUILD/tools/ninfer-pack}
SIZE_MB=${SIZE_MB:-1024}
REPS=${REPS:-5}
OBJECTS=${OBJECTS:-100000}
FIO_IOS=${FIO_IOS:-4000}
export NF_REMOTE_GET=${NF_REMOTE_GET:-$BUILD/tests/remote/nf-remote-get}
[ "$(id -u)" = 0 ] || { echo "remote_read.sh: needs root (mounts)" >&2; exit 1; }
for t in "$NINFERFS" "$NINFER_PACK"; do [ -x "$t" ] || { echo "missing $t" >&2; exit 1; }; done
for t in nginx curl fio python3 dd; do command -v $t >/dev/null || { echo "missing $t" >&2; exit 1; }; done

. "$ROOT/tests/remote/lib.sh"     # T, SRV_PIDS, CLEANUPS, the EXIT trap
. "$ROOT/tests/remote/ngx.sh"
# nginx as Debian configures it (the tests' server leaves sendfile off)
export NGX_SENDFILE=${NGX_SENDFILE:-on}
. "$ROOT/tests/remote/mnt.sh"
. "$ROOT/bench/prefault.sh"
CLEANUPS+=(prefault_end)
prefault_begin
WORK=${WORK:-/var/tmp/nf-rbench.$$}
rm_work() { rm -rf "$WORK"; }
CLEANUPS+=(rm_work)
mkdir -p "$WORK/www/set" "$WORK/www/many"
ONLY=${ONLY:-abcde}
MOUNT_OPTS=${MOUNT_OPTS:-}
PROXY=${PROXY:-$BUILD/bench/delay-proxy}
want() { case $ONLY in *$1*) return 0 ;; esac; return 1; }
! want b || [ -e "$PROXY" ] || { echo "missing $PROXY" >&2; exit 1; }
RA=- RAD=- RL=- RB=- RBD=- RC=- RD=- RE=- CA=- CB=- CAPA=- CAPB=-
echo "== load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "== $(prefault_status)"

now() { date +%s.%N; }
# the machine's busy time so far, in 1/100 s (user nice system irq softirq)
busy() { awk '/^cpu /{print $2 + $3 + $4 + $7 + $8}' /proc/stat; }
# "MiB/s CPU-s/GiB" of SIZE_MB read between times $1 $2 and busy counts $3 $4
rate_cpu() { python3 -c "print('%.1f %.2f' % ($SIZE_MB / ($2 - $1), ($4 - $3) / 100 / ($SIZE_MB / 1024)))"; }
med() { python3 -c 'import sys; v=sorted(float(x) for x in sys.argv[1:]); print(v[len(v)//2])' "$@"; }
ratio() { python3 -c "print('%.2f' % ($1 / $2))"; }

echo "== generating the set in $WORK (${SIZE_MB} MiB + 1 MiB)"
dd if=/dev/urandom of="$WORK/big.bin" bs=1M count="$SIZE_MB" status=none
dd if=/dev/urandom of="$WORK/small.bin" bs=1M count=1 status=none
cat >"$WORK/manifest.json" <<JSON
{"components": {"bench": {"config": {}}},
 "objects": [{"id": "w.big", "kind": "tensor", "format": "bf16", "layout": "contiguous_le_v1",
              "shape": [$((SIZE_MB * 32)), 16384], "source": "$WORK/big.bin"},
             {"id": "w.small", "kind": "tensor", "format": "bf16", "layout": "contiguous_le_v1",
              "shape": [32, 16384], "source": "$WORK/small.bin"}],
 "bindings": {"bench/w": {"object": "w.big"}, "bench/s": {"object": "w.small"}},
 "uses": []}
JSON
"$NINFER_PACK" create -q --manifest "$WORK/manifest.json" --max-file-bytes 256M "$WORK/www/set/big.ninfer"
! want d || python3 "$ROOT/bench/gen_large.py" "$WORK/www/many/many.ninfer" --objects "$OBJECTS" --parts 4 >/dev/null
cat "$WORK"/www/set/* >/dev/null   # the server's files in the page cache, for both readers
ngx_start "$WORK/www"
U=$NGX_URL/set/big.ninfer

mnt "$WORK/www/set/big.ninfer" "$T/local"
getfattr -n user.ninfer.segments --only-values "$T/local/objects/w.big" | python3 -c "
import json, sys
for s in json.load(sys.stdin):
    print(s['path'], s['file_offset'], s['length'])" >"$WORK/segments.txt"
cmp "$T/local/objects/w.big" "$WORK/big.bin" || fail "local mount bytes"

# curl of the object's byte ranges from BASE (one request per part, as a
# client that knows the layout would)
curl_ranges() {
	while read -r path off len; do
		curl -s -f -o /dev/null -r "$off-$((off + len - 1))" "$1/set/$path" || return 1
	done <"$WORK/segments.txt"
}
# "MiB/s CPU-s/GiB" of: a fresh mount of BASE's set (MOUNT_OPTS and
# OPTS...), dd of objects/w.big
mount_seq() { # BASE [OPTS...]
	local t0 t1 c0 c1 base=$1
	shift
	# shellcheck disable=SC2086 # MOUNT_OPTS is a list of words
	mnt "$base/set/big.ninfer" "$T/m" $MOUNT_OPTS "$@"
	t0=$(now) c0=$(busy)
	dd if="$T/m/objects/w.big" of=/dev/null bs=1M status=none
	t1=$(now) c1=$(busy)
	cp "$T/m/stats" "$WORK/last-stats.json"
	umnt "$T/m"
	rate_cpu "$t0" "$t1" "$c0" "$c1"
}
curl_seq() {
	local t0 t1 c0 c1
	t0=$(now) c0=$(busy)
	curl_ranges "$1"
	t1=$(now) c1=$(busy)
	rate_cpu "$t0" "$t1" "$c0" "$c1"
}
local_seq() {
	local t0 t1 c0 c1
	mnt "$WORK/www/set/big.ninfer" "$T/lm"
	t0=$(now) c0=$(busy)
	dd if="$T/lm/objects/w.big" of=/dev/null bs=1M status=none
	t1=$(now) c1=$(busy)
	umnt "$T/lm"
	rate_cpu "$t0" "$t1" "$c0" "$c1"
}
# Each reader's rounds are kept as "MiB/s CPU-s/GiB" words in an array;
# col N picks the Nth of each (1 MiB/s, 2 CPU-s/GiB).
col() { local n=$1; shift; for x in "$@"; do echo "$x" | cut -d' ' -f"$n"; done; }
seq_pair() { # BASE LABEL [local]
	local m=() c=() l=() d=() mc cc dc lc cap
	for _ in $(seq "$REPS"); do
		c+=("$(curl_seq "$1")")
		m+=("$(mount_seq "$1")")
		d+=("$(mount_seq "$1" -o direct_io)")
		[ -z "${3:-}" ] || l+=("$(local_seq)")
	done
	# shellcheck disable=SC2046 # one word per round
	SEQ_M=$(med $(col 1 "${m[@]}")) SEQ_C=$(med $(col 1 "${c[@]}")) SEQ_D=$(med $(col 1 "${d[@]}"))
	# shellcheck disable=SC2046
	mc=$(med $(col 2 "${m[@]}")) cc=$(med $(col 2 "${c[@]}")) dc=$(med $(col 2 "${d[@]}"))
	echo "$2: mount $(col 1 "${m[@]}" | xargs) MiB/s (median $SEQ_M), curl $(col 1 "${c[@]}" | xargs) MiB/s (median $SEQ_C), ratio $(ratio "$SEQ_M" "$SEQ_C")"
	echo "   mount -o direct_io: $(col 1 "${d[@]}" | xargs) MiB/s (median $SEQ_D), ratio to curl $(ratio "$SEQ_D" "$SEQ_C")"
	echo "   machine CPU-s/GiB (medians; rounds): curl $cc ($(col 2 "${c[@]}" | xargs)), mount $mc ($(col 2 "${m[@]}" | xargs)), -o direct_io $dc ($(col 2 "${d[@]}" | xargs))"
	echo "   CPU cost against curl's: mount $(ratio "$mc" "$cc")x, -o direct_io $(ratio "$dc" "$cc")x"
	# with every CPU busy, the machine's CPU per GiB caps the rate: when
	# the mount's cap is below the goal, no change of the daemon's waits
	# or window sizes can meet it
	cap=$(python3 -c "print('%.1f' % ($(nproc) * 1024 / $mc))")
	SEQ_CAP=$(ratio "$cap" "$SEQ_C")
	echo "   CPU cap: $(nproc) CPUs / mount's $mc CPU-s/GiB = $cap MiB/s, ${SEQ_CAP}x curl's median"
	SEQ_CPU="$mc/$dc/$cc"
	if [ -n "${3:-}" ]; then
		# shellcheck disable=SC2046
		SEQ_L=$(med $(col 1 "${l[@]}"))
		# shellcheck disable=SC2046
		lc=$(med $(col 2 "${l[@]}"))
		echo "   local mount (the FUSE path's ceiling): $(col 1 "${l[@]}" | xargs) MiB/s (median $SEQ_L, $lc CPU-s/GiB): URL mount / local mount $(ratio "$SEQ_M" "$SEQ_L"), local mount / curl $(ratio "$SEQ_L" "$SEQ_C")"
	fi
}

if want a; then
echo "== (a) sequential first read of the ${SIZE_MB} MiB object, loopback"
seq_pair "$NGX_URL" "loopback" local
RA=$(ratio "$SEQ_M" "$SEQ_C")
RAD=$(ratio "$SEQ_D" "$SEQ_C")
CA=$SEQ_CPU
CAPA=$SEQ_CAP
RL=$(ratio "$SEQ_M" "$SEQ_L")
python3 - "$WORK/last-stats.json" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
f = [x["remote"] for x in s["files"]]
print("   last mount: %d HTTP requests, %d bytes fetched, %d prefetched, %d prefetch hits, %d FUSE reads" % (
    sum(x["requests"] for x in f), sum(x["bytes_fetched"] for x in f),
    sum(x["prefetch_bytes"] for x in f), sum(x["prefetch_hits"] for x in f), s["reads"]))
PY
fi

if want b; then
echo "== (b) the same with 20 ms RTT"
if tc qdisc add dev lo root netem delay 10ms 2>/dev/null; then
	tc qdisc del dev lo root 2>/dev/null
	echo "   tc netem exists here, but would delay every loopback user of the machine: using the proxy"
else
	echo "   tc netem is not available (no sch_netem): both readers go through $(basename "$PROXY") (10 ms each way)"
fi
case $PROXY in
*.py) python3 "$PROXY" "$WORK/pport" "$NGX_PORT" 10 3600 & ;;
*) "$PROXY" "$WORK/pport" "$NGX_PORT" 10 3600 & ;;
esac
SRV_PIDS+=($!)
for _ in $(seq 100); do [ -s "$WORK/pport" ] && break; sleep 0.05; done
P=http://127.0.0.1:$(cat "$WORK/pport")
t0=$(now); curl -s -o /dev/null -r 0-0 "$P/set/big.ninfer"; t1=$(now)
echo "   one 1-byte GET through the proxy: $(python3 -c "print('%.1f' % (($t1 - $t0) * 1000))") ms (a new connection: 2 RTT)"
# is the proxy the bound?  one ranged GET of a part against two parallel
# ones of its halves: a proxy that runs out of CPU gives both the same
p1=$(head -1 "$WORK/segments.txt" | cut -d' ' -f1)
t0=$(now); curl -s -o /dev/null -r 0-$(((256 << 20) - 1)) "$P/set/$p1"; t1=$(now)
t2=$(now)
curl -s -o /dev/null -r 0-$(((128 << 20) - 1)) "$P/set/$p1" & cp1=$!
curl -s -o /dev/null -r $((128 << 20))-$(((256 << 20) - 1)) "$P/set/$p1"
wait "$cp1"; t3=$(now)
echo "   256 MiB through the proxy: one stream $(python3 -c "print('%.1f' % (256 / ($t1 - $t0)))") MiB/s, two parallel streams $(python3 -c "print('%.1f' % (256 / ($t3 - $t2)))") MiB/s together"
seq_pair "$P" "20 ms RTT"
RB=$(ratio "$SEQ_M" "$SEQ_C")
RBD=$(ratio "$SEQ_D" "$SEQ_C")
CB=$SEQ_CPU
CAPB=$SEQ_CAP
fi

if want c; then
echo "== (c) random 4 KiB reads at QD16, $FIO_IOS reads"
mnt "$U" "$T/m"
ngx_settle; ngx_clear
fio --name=r --filename="$T/m/objects/w.big" --rw=randread --bs=4k --iodepth=16 --ioengine=io_uring \
    --direct=1 --size="${SIZE_MB}M" --number_ios="$FIO_IOS" --readonly --output-format=json \
    2>/dev/null >"$WORK/fio.json"
ngx_settle
reads=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['jobs'][0]['read']['total_ios'])" "$WORK/fio.json")
iops=$(python3 -c "import json,sys; print('%.0f' % json.load(open(sys.argv[1]))['jobs'][0]['read']['iops'])" "$WORK/fio.json")
gets=$(grep -c '"GET /set/' "$NGX_LOG" || true)
umnt "$T/m"
RC=$(python3 -c "print('%.3f' % ($gets / $reads))")
echo "random 4k QD16: $reads reads, $gets HTTP requests: $RC requests per read ($iops IOPS)"
fi

if want d; then
echo "== (d) mount-ready time, $OBJECTS objects"
ready() { # SOURCE -> seconds until ninferfs (daemonizing) returns: the mount answers
	local t0 t1 p
	mkdir -p "$T/ready"
	MNTS+=("$T/ready")
	t0=$(now)
	"$NINFERFS" "$1" "$T/ready" 2>>"$WORK/ready.err" || fail "mount of $1: $(tail -3 "$WORK/ready.err")"
	t1=$(now)
	p=$(pgrep -n -f "^$NINFERFS $1 $T/ready" || true)
	[ -n "$p" ] && DPIDS+=("$p")
	ls "$T/ready" >/dev/null
	fusermount3 -u "$T/ready"
	for _ in $(seq 200); do [ -n "$p" ] && kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
	python3 -c "print('%.3f' % ($t1 - $t0))"
}
l=() r=()
for _ in $(seq "$REPS"); do
	l+=("$(ready "$WORK/www/many/many.ninfer")")
	r+=("$(ready "$NGX_URL/many/many.ninfer")")
done
ML=$(med "${l[@]}") MR=$(med "${r[@]}")
RD=$(ratio "$MR" "$ML")
echo "mount-ready: HTTP ${r[*]} s (median $MR), local ${l[*]} s (median $ML): ratio $RD"
fi

if want e; then
echo "== (e) bytes fetched to read the 1 MiB object"
mnt "$U" "$T/m"
ngx_settle; ngx_clear
cmp "$T/m/objects/w.small" "$WORK/small.bin" || fail "w.small bytes"
ngx_settle
sent=$(grep -v nf-settle "$NGX_LOG" | awk '{s += $NF} END {print s + 0}')
nreq=$(grep -vc nf-settle "$NGX_LOG" || true)
fetched=$(python3 -c "import json,sys; print(sum(f['remote']['bytes_fetched'] for f in json.load(open(sys.argv[1]))['files']))" "$T/m/stats")
umnt "$T/m"
RE=$(python3 -c "print('%.2f' % ($sent / 1048576))")
echo "w.small (1048576 bytes): $nreq requests, $sent bytes sent by nginx, $fetched body bytes fetched (daemon): $RE MiB"
fi
umnt "$T/local"

echo
echo "| measure | figure | goal |"
echo "|---|---|---|"
echo "| sequential first read, loopback, mount/curl | ${RA}x | >= 0.8 |"
echo "| the same, mount -o direct_io / curl | ${RAD}x | >= 0.8 |"
echo "| the same, URL mount / local mount | ${RL}x | |"
echo "| loopback, machine CPU-s/GiB: mount / direct_io / curl | $CA | |"
echo "| loopback, the mount's CPU cap / curl | ${CAPA}x | |"
echo "| sequential first read, 20 ms RTT, mount/curl | ${RB}x | >= 0.8 |"
echo "| the same, mount -o direct_io / curl | ${RBD}x | >= 0.8 |"
echo "| 20 ms RTT, machine CPU-s/GiB: mount / direct_io / curl | $CB | |"
echo "| 20 ms RTT, the mount's CPU cap / curl | ${CAPB}x | |"
echo "| random 4 KiB QD16, HTTP requests per read | $RC | <= 1.1 |"
echo "| mount-ready $OBJECTS objects, HTTP/local | ${RD}x | <= 1.5 |"
echo "| bytes fetched to read 1 MiB object | $RE MiB | <= 4 MiB |"
echo "load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
