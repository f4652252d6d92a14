#!/usr/bin/env bash
# nginx serves fixture files on loopback; nf-remote-get reads them through
# the remote engine.  Proves: byte-exact ranges, sibling parts with names
# that need encoding, merged adjacent segments (one request, counted in
# the access log), several requests in flight for one read (on several
# connections), keep-alive (every request on one $connection), stat =
# nginx's own ETag and size, If-Match 412 after a change, 404 -> missing,
# reads past the end, the prefetcher's growing windows (their defaults
# too), and redirects
# (refused to another host unless allowed); over TLS: verification on (a
# private CA fails until cafile= names it), HTTP/2 with several requests
# multiplexed on one connection, no downgrade to http.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"

W=$T/www
mkdir -p "$W/d"
mkfile "$W/d/e.ninfer" 3000000 1
mkfile "$W/d/e.ninfer.part-0001" 2000000 2
weird='we ird%2F..?#name'
mkfile "$W/d/$weird" 70000 3
mkfile "$W/d/big" 9000000 4
NGX_TLS=1 ngx_start "$W" 'location /hop/ { return 302 http://localhost:$server_port/d/e.ninfer; }
		location /same/ { return 302 /d/e.ninfer; }
		location /slow/ { alias '"$W"'/d/; limit_rate 1m; }'
U=$NGX_URL/d/e.ninfer

# --- ranges, byte-exact, entry and parts
for r in "0 1" "0 4096" "12345 100000" "2999000 1000" "1048575 2"; do
	set -- $r
	rget "$U" read 0 "$1" "$2" >"$T/got" || fail "read $r: $(cat "$T/rget.err")"
	slice "$W/d/e.ninfer" "$1" "$2" | cmp - "$T/got" || fail "bytes of range $r"
done
rget -p e.ninfer.part-0001 -p "$weird" "$U" read 1 1000000 500000 read 2 5 69995 >"$T/got" ||
	fail "parts: $(cat "$T/rget.err")"
{ slice "$W/d/e.ninfer.part-0001" 1000000 500000; slice "$W/d/$weird" 5 69995; } | cmp - "$T/got" ||
	fail "part bytes"
grep -q '"GET /d/we%20ird%252F..%3F%23name HTTP/1.1"' "$NGX_LOG" || fail "encoded part name not requested as one segment: $(cat "$NGX_LOG")"
ok "byte-exact ranges of the entry and of parts (a name with ' ', '%2F', '..', '?', '#' stays one segment)"

# --- merged segments: one request; a gap: two
ngx_clear
rget "$U" segs 0 1000:5000,0:1000,6000:100,9000:10 >"$T/got" || fail "segs"
{ slice "$W/d/e.ninfer" 1000 5000; slice "$W/d/e.ninfer" 0 1000; slice "$W/d/e.ninfer" 6000 100
  slice "$W/d/e.ninfer" 9000 10; } | cmp - "$T/got" || fail "segs bytes"
[ "$(ngx_requests)" = 2 ] || fail "segs: $(ngx_requests) requests, want 2: $(cat "$NGX_LOG")"
grep -q '"bytes=0-6099"' "$NGX_LOG" && grep -q '"bytes=9000-9009"' "$NGX_LOG" ||
	fail "merged ranges: $(cat "$NGX_LOG")"
ok "adjacent segments merged into one range GET (4 segments, 2 requests)"

# --- several requests in flight for one read: 3 separate segments (2.7 MB)
# from a server that sends 1 MB/s per connection; one after the other they
# would reuse one kept-alive connection (as the 20 reads below do) and take
# 2.7 s
ngx_settle; ngx_clear
t0=$(date +%s%3N)
rget "$NGX_URL/slow/e.ninfer" segs 0 0:1000000,1100000:1000000,2200000:700000 >"$T/got" ||
	fail "slow segs: $(cat "$T/rget.err")"
dt=$(($(date +%s%3N) - t0))
{ slice "$W/d/e.ninfer" 0 1000000; slice "$W/d/e.ninfer" 1100000 1000000
  slice "$W/d/e.ninfer" 2200000 700000; } | cmp - "$T/got" || fail "slow segs: bytes"
ngx_settle
nconn=$(grep '"GET /slow/' "$NGX_LOG" | awk '{print $1}' | sort -u | wc -l)
[ "$(grep -c '"GET /slow/' "$NGX_LOG")" = 3 ] && [ "$nconn" -ge 2 ] ||
	fail "one read's requests: $nconn connections: $(cat "$NGX_LOG")"
ok "one read of 3 segments (2.7 MB at 1 MB/s per connection): 3 range GETs in flight on $nconn connections at once, ${dt} ms"

# --- keep-alive: 20 reads, one connection
etag=$(curl -sI "$U" | tr -d '\r' | awk 'tolower($1)=="etag:" {print $2}')
ngx_settle   # (else the HEAD's line may land after the clear)
ngx_clear
args=()
for i in $(seq 0 19); do args+=(read 0 $((i * 1000)) 100); done
rget "$U" "${args[@]}" >/dev/null || fail "20 reads"
[ "$(ngx_requests)" = 20 ] || fail "20 reads: $(ngx_requests) requests"
[ "$(awk '{print $1}' "$NGX_LOG" | sort -u | wc -l)" = 1 ] ||
	fail "keep-alive: connections $(awk '{print $1}' "$NGX_LOG" | sort -u | tr '\n' ' ')"
# the second and later requests carry the first response's ETag (nginx
# logs a quote as \x22)
[ "$(grep -cF "\"\\x22${etag//\"/}\\x22\" 206" "$NGX_LOG" || true)" = 19 ] ||
	fail "If-Match $etag on 19 requests: $(cat "$NGX_LOG")"
ok "keep-alive: 20 requests on one connection; If-Match on every one after the first"

# --- stat: nginx's own ETag and size
[ "$(rget "$U" stat 0)" = "3000000 $etag" ] || fail "stat: $(rget "$U" stat 0)"
ok "stat = size and ETag from curl -I"

# --- the object changes between two reads: 412, then -EIO, reason named
rm -f "$T/go"
rget -s "$T/st" "$U" read 0 0 100 touch "$T/r1" wait "$T/go" read 0 100 100 >/dev/null &
rp=$!
for _ in $(seq 200); do [ -e "$T/r1" ] && break; sleep 0.05; done
[ -e "$T/r1" ] || fail "first read did not happen"
mkfile "$W/d/e.ninfer.new" 3000000 9
touch -d '+1 hour' "$W/d/e.ninfer.new"
mv "$W/d/e.ninfer.new" "$W/d/e.ninfer"
touch "$T/go"
rc=0; wait $rp || rc=$?
[ "$rc" = 1 ] || fail "read after the change: exit $rc"
grep -q 'changed on the server: If-Match failed (HTTP 412)' "$T/rget.err" || fail "412 reason: $(cat "$T/rget.err")"
grep -q '"status": "changed", "http": 412' "$T/st" || fail "stats: $(cat "$T/st")"
tail -1 "$NGX_LOG" | grep -q ' 412 ' || fail "no 412 in the log"
ok "object replaced between reads: If-Match gets 412, the read fails, the file is 'changed'"

# --- 404 and reads past the end
rc=0; rget -s "$T/st" -p nope "$U" read 1 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'HTTP 404' "$T/rget.err" && grep -q '"status": "missing", "http": 404' "$T/st" ||
	fail "404: rc=$rc $(cat "$T/rget.err") $(cat "$T/st")"
rc=0; rget "$U" read 0 2999990 20 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'past the end' "$T/rget.err" || fail "past the end: rc=$rc $(cat "$T/rget.err")"
ok "404 -> missing (ENOENT), a range past the end -> EIO"

# --- the prefetcher: a sequential read of 9 MB in 128 KiB reads
ngx_clear
rget -s "$T/st" -o prefetch_min=256K,prefetch_max=4M,max_request=4M "$NGX_URL/d/big" \
	seq 0 0 9000000 131072 >"$T/got" || fail "seq: $(cat "$T/rget.err")"
cmp "$W/d/big" "$T/got" || fail "seq bytes"
n=$(ngx_requests)
[ "$n" -le 10 ] || fail "seq: $n requests for 69 reads: $(cat "$NGX_LOG")"
grep -q '"prefetch_hits": [1-9]' "$T/st" || fail "no prefetch hits: $(cat "$T/st")"
# windows grow: 256K, 512K, 1M, 2M, 4M, from the second read on (the first,
# [0, 128K), is read directly: a file's first read may be a random one)
for r in 131072-393215 393216-917503 917504-1966079 1966080-4063231 4063232-8257535; do
	grep -q "\"bytes=$r\"" "$NGX_LOG" || fail "window $r missing: $(cat "$NGX_LOG")"
done
ok "sequential reads: $n requests for 69 reads, windows doubling 256K..4M"
# the same with the defaults (ninferfs-remote(7): prefetch_min 1M,
# prefetch_max 64M, max_request 16M, prefetch_mem 256M), a 200 MiB file
# (sparse) read in 1 MiB reads as FUSE delivers them: the first read
# direct, then windows of 1, 2, 4, 8, 16, 32 and 64 MiB, the last one cut
# at the end of the file, each byte asked for once.  With the defaults a
# window is cut into requests of 16 MiB; with max_request=64M (nothing
# else changed) each window is one request, so the log shows its size.
truncate -s $((200 << 20)) "$W/d/huge"
M=1048576
asked() { # the (offset length) of the GETs of /d/huge in the log, sorted
	ngx_settle
	grep '"GET /d/huge ' "$NGX_LOG" | grep -o '"bytes=[0-9]*-[0-9]*"' |
		sed 's/"bytes=\([0-9]*\)-\([0-9]*\)"/\1 \2/' | awk '{print $1, $2 - $1 + 1}' | sort -n
}
for mr in 16 64; do
	want=("0 $M")
	if [ $mr = 16 ]; then
		opt=()
		for w in 1 2 4 8; do want+=("$((w * M)) $((w * M))"); done
		for a in $(seq 16 16 176); do want+=("$((a * M)) $((16 * M))"); done
		want+=("$((192 * M)) $((8 * M))")
	else
		opt=(-o max_request=64M)
		for w in 1 2 4 8 16 32 64; do want+=("$((w * M)) $((w * M))"); done
		want+=("$((128 * M)) $((64 * M))" "$((192 * M)) $((8 * M))")
	fi
	ngx_clear
	rget -s "$T/st" "${opt[@]}" "$NGX_URL/d/huge" seq 0 0 $((200 << 20)) $M >"$T/got" ||
		fail "seq, defaults ${opt[*]}: $(cat "$T/rget.err")"
	cmp "$W/d/huge" "$T/got" || fail "seq, defaults ${opt[*]}: bytes"
	printf '%s\n' "${want[@]}" >"$T/want"
	asked >"$T/asked"
	cmp -s "$T/want" "$T/asked" ||
		fail "defaults ${opt[*]}: GETs (offset length), want | got: $(paste -d'|' "$T/want" "$T/asked")"
	[ "$(grep -c '"GET /d/huge ' "$NGX_LOG")" = ${#want[@]} ] || fail "defaults ${opt[*]}: requests: $(grep /d/huge "$NGX_LOG")"
done
ok "sequential reads, default options: windows 1M doubling to 64M (max_request=64M shows them), cut into GETs of 16M; each byte asked once"
# at the cap the lead is topped up to one window in whole requests (2M
# here): the chunks held peak at 112-122M (the 96M lead right after the
# first 64M window, 16M behind, chunks whose worker is not done yet); a
# whole window queued each time the lead fell below one held 144M
rget -o max_request=2M "$NGX_URL/d/huge" seq 0 0 $((200 << 20)) $M peak >"$T/got" ||
	fail "seq, max_request=2M: $(cat "$T/rget.err")"
cmp "$W/d/huge" "$T/got" || fail "seq, max_request=2M: bytes"
peak=$(sed -n 's/^peak //p' "$T/rget.err")
[ "$peak" -le $((136 * M)) ] || fail "max_request=2M: the chunks peaked at $peak bytes"
ok "a sequential read's chunks peak at $((peak / M)) MiB: the lead at the cap is one window, not two"
# a sequential read that runs to the end of a file and goes on in the next
# one (a split object: entry, then its part after the part's 4 KiB header)
# carries its window over: the part's first read is fetched as asked (1
# MiB: it may be all the object has there), but its windows then do not
# start at 1 MiB again, but at the 64 MiB reached (cut into GETs of 16
# MiB).  stat 1 first, as the daemon checks a part's header before it
# reads it.
mkfile "$W/d/h0" $((40 << 20)) 21
mkfile "$W/d/h0.part-0001" $((40 << 20)) 22
ngx_clear
rget -p h0.part-0001 "$NGX_URL/d/h0" seq 0 0 $((40 << 20)) $M stat 1 \
	seq 1 4096 $(((40 << 20) - 4096)) $M >"$T/got" || fail "seq across files: $(cat "$T/rget.err")"
{ head -c $((40 << 20)) "$T/got"; tail -c $(((40 << 20) - 4096)) "$T/got"; } |
	cmp - <(cat "$W/d/h0"; tail -c +4097 "$W/d/h0.part-0001") || fail "seq across files: bytes"
ngx_settle
printf '%s\n' "4096 $M" "$((4096 + M)) $((16 * M))" "$((4096 + 17 * M)) $((16 * M))" \
	"$((4096 + 33 * M)) $((7 * M - 4096))" >"$T/want"
grep '"GET /d/h0.part-0001 ' "$NGX_LOG" | grep -o '"bytes=[0-9]*-[0-9]*"' |
	sed 's/"bytes=\([0-9]*\)-\([0-9]*\)"/\1 \2/' | awk '{print $1, $2 - $1 + 1}' | sort -n >"$T/asked"
cmp -s "$T/want" "$T/asked" || fail "across files: the part's GETs (offset length), want | got: $(paste -d'|' "$T/want" "$T/asked")"
ok "a sequential read going on from a file's end into the next: after its first read (1M, as asked) the next one's GETs are 16M (the window carried over)"
# the same read with the stream's path (an open object's ranges: its
# bytes are h0 [0, 40M) and part-0001 [4096, 4096 + 30M)): the window
# that reaches h0's end goes on at part-0001's payload before the reader
# gets there, at the size reached (64M, cut into 16M GETs), and stops at
# the object's end, 10 MiB before the part's; no first read as asked.
# reached names part-0001 once.
ngx_clear
rget -p h0.part-0001 "$NGX_URL/d/h0" path 0:0:$((40 << 20)),1:4096:$((30 << 20)) \
	seq 0 0 $((40 << 20)) $M reached reached seq 1 4096 $((30 << 20)) $M >"$T/got" ||
	fail "path across files: $(cat "$T/rget.err")"
cmp "$T/got" <(head -c $((40 << 20)) "$W/d/h0"; tail -c +4097 "$W/d/h0.part-0001" | head -c $((30 << 20))) ||
	fail "path across files: bytes"
[ "$(grep '^reached' "$T/rget.err" | tr '\n' ' ')" = "reached 1 reached -1 " ] ||
	fail "path across files: $(cat "$T/rget.err")"
ngx_settle
printf '%s\n' "4096 $((16 * M))" "$((4096 + 16 * M)) $((14 * M))" >"$T/want"
grep '"GET /d/h0.part-0001 ' "$NGX_LOG" | grep -o '"bytes=[0-9]*-[0-9]*"' |
	sed 's/"bytes=\([0-9]*\)-\([0-9]*\)"/\1 \2/' | awk '{print $1, $2 - $1 + 1}' | sort -n >"$T/asked"
cmp -s "$T/want" "$T/asked" || fail "path: the part's GETs (offset length), want | got: $(paste -d'|' "$T/want" "$T/asked")"
ok "with the object's path, the window reaching its end in one file goes on in the next before the reader gets there (16M GETs from the payload), and stops at the object's end"
# the last byte the GETs of /d/NAME in nginx's log reached
gets_end() {
	grep "\"GET /d/$1 " "$NGX_LOG" | grep -o '"bytes=[0-9]*-[0-9]*"' | sed 's/.*-\([0-9]*\)"/\1/' | sort -n | tail -1
}
# overlapping ranges (a view that reads an object twice): h0 [0, 2.5M),
# the part's [4096, 1M), then h0 [0, 4096) again.  Once the reader is in
# the part, a read of h0 at 2M is found by the search, whose last range to
# start there is the short one: path_range looks back to the one that
# holds it, and the windows stop at its end (found none, the read went
# pathless and its window ran 1M on: GETs up to 3276799)
ngx_clear
rget -p h0.part-0001 "$NGX_URL/d/h0" path 0:0:$((2 * M + M / 2)),1:4096:$M,0:0:4096 \
	seq 1 4096 $M $((M / 4)) seq 0 $((2 * M)) $((M / 2)) $((M / 8)) >"$T/got" ||
	fail "overlapping ranges: $(cat "$T/rget.err")"
cmp "$T/got" <(tail -c +4097 "$W/d/h0.part-0001" | head -c $M; tail -c +$((2 * M + 1)) "$W/d/h0" | head -c $((M / 2))) ||
	fail "overlapping ranges: bytes"
ngx_settle
end=$(gets_end h0)
[ "$end" = $((2 * M + M / 2 - 1)) ] || fail "overlapping ranges: h0's GETs reach $end: $(grep '/d/h0 ' "$NGX_LOG")"
ok "of overlapping path ranges, a read is found in the one that holds it (h0's windows end at its 2.5M)"
# a read beyond the windows, in a path range, leaves no gap: the reads
# of the kernel's readahead come on several FUSE threads and one further
# on may arrive first; the bytes between are queued too, so the read of
# 4M that comes next is served from them (without a path, or with the
# gap skipped as before, it was a GET of its 4096 bytes as asked)
ngx_clear
rget "$NGX_URL/d/h0" path 0:0:$((16 * M)) seq 0 0 262144 131072 sreads 0 $((5 * M)):4096 \
	sreads 0 $((4 * M)):4096 >"$T/got" || fail "gap in a range: $(cat "$T/rget.err")"
cmp "$T/got" <(head -c 262144 "$W/d/h0"; tail -c +$((5 * M + 1)) "$W/d/h0" | head -c 4096
	       tail -c +$((4 * M + 1)) "$W/d/h0" | head -c 4096) || fail "gap in a range: bytes"
ngx_settle
! grep -q "\"bytes=$((4 * M))-$((4 * M + 4095))\"" "$NGX_LOG" ||
	fail "gap in a range: the read at 4M was asked for as is: $(grep '/d/h0 ' "$NGX_LOG")"
ok "a read beyond the windows in a path range: the gap before it is fetched ahead too"
# distances along a path are view bytes: h0 [0, 1M), then 512 ranges of
# 4K, one every 64K, in the part (joined: 32M of file, 2M of view), then
# h0 [2M, +8K).  Reads in the last range are 3M of view past h0's first,
# less than the 16M behind which chunks go: a late read of h0 at 768K is
# still served from its window.  (Counted in file bytes, the gaps too,
# they were 33.5M past and its window went: a GET of those 4096 bytes.)
r1=$($PY -c 'print(",".join("1:%d:4096" % (4096 + 65536 * i) for i in range(512)))')
ngx_clear
rget -p h0.part-0001 "$NGX_URL/d/h0" path "0:0:$M,$r1,0:$((2 * M)):8192" seq 0 0 $((M / 2)) $((M / 8)) \
	sreads 1 4096:4096 sreads 0 $((2 * M)):4096 sreads 0 $((2 * M + 4096)):4096 \
	sreads 0 $((3 * M / 4)):4096 >"$T/got" || fail "view distances: $(cat "$T/rget.err")"
cmp "$T/got" <(head -c $((M / 2)) "$W/d/h0"; tail -c +4097 "$W/d/h0.part-0001" | head -c 4096
	       tail -c +$((2 * M + 1)) "$W/d/h0" | head -c 8192; tail -c +$((3 * M / 4 + 1)) "$W/d/h0" | head -c 4096) ||
	fail "view distances: bytes"
ngx_settle
! grep -q "\"bytes=$((3 * M / 4))-$((3 * M / 4 + 4095))\"" "$NGX_LOG" ||
	fail "view distances: h0's window was let go of: $(grep '/d/h0' "$NGX_LOG")"
ok "distances along a path of joined ranges are view bytes: a late read 3M of view back is served from its window"
# a path of 80 ranges (more than the 64 once kept): h1 [0, 2M), then parts
# 1-79 [4096, 2M) each
NP=80
# h1's payload bytes of parts FROM..TO, [4096, 2M) of each
h1_parts() { for i in $(seq "$1" "$2"); do tail -c +4097 "$(printf '%s/d/h1.part-%04d' "$W" "$i")"; done; }
# the h1 parts' GETs in nginx's log as "NAME OFFSET LENGTH", sorted
h1_gets() {
	grep -o '"GET /d/h1.part-[0-9]* HTTP/[0-9.]*" "bytes=[0-9]*-[0-9]*"' "$NGX_LOG" |
		sed 's|"GET /d/\([^ ]*\) .*"bytes=\([0-9]*\)-\([0-9]*\)"|\1 \2 \3|' | awk '{print $1, $2, $3 - $2 + 1}' | sort
}
$PY -c 'import random,sys
for i in range(int(sys.argv[2])):
    open(sys.argv[1] + ("" if i == 0 else ".part-%04d" % i), "wb").write(random.Random(100 + i).randbytes(2 << 20))' \
	"$W/d/h1" $NP
popt=() rng="0:0:$((2 * M))" cmds=(seq 0 0 $((2 * M)) $M)
for i in $(seq 1 $((NP - 1))); do
	popt+=(-p "$(printf 'h1.part-%04d' "$i")")
	rng+=",$i:4096:$((2 * M - 4096))"
	cmds+=(seq "$i" 4096 $((2 * M - 4096)) $M)
done
ngx_clear
rget "${popt[@]}" "$NGX_URL/d/h1" path "$rng" "${cmds[@]}" peak >"$T/got" ||
	fail "path of $NP ranges: $(cat "$T/rget.err")"
cmp "$T/got" <(cat "$W/d/h1"; h1_parts 1 $((NP - 1))) ||
	fail "path of $NP ranges: bytes"
ngx_settle
for i in $(seq 1 $((NP - 1))); do echo "$(printf 'h1.part-%04d' "$i") 4096 $((2 * M - 4096))"; done >"$T/want"
h1_gets >"$T/asked"
cmp -s "$T/want" "$T/asked" || fail "path of $NP ranges: the parts' GETs, want | got: $(diff "$T/want" "$T/asked" | head -20)"
# chunks more than 16M behind the reader, on the path, are dropped: the
# 2M parts' chunks peak at 22M (16M behind, the current part, the lead
# in the next ones); kept until their file's state was evicted (16
# files), they peaked at 32M
peak=$(sed -n 's/^peak //p' "$T/rget.err")
[ "$peak" -le $((27 * M)) ] || fail "path of $NP ranges: the chunks peaked at $peak bytes"
ok "a path of $NP ranges: each part's bytes in one GET [4096, 2M) made ahead of the reader, none asked as read; the chunks of parts 16M behind are dropped (peak $((peak / M)) MiB)"
# the same path read twice on one stream: the second pass lets go of the
# ranges it passes as the first did (the ranges were looked at once, and
# what the first pass held at its end stayed until its file states were
# evicted: 33.5M)
rget "${popt[@]}" "$NGX_URL/d/h1" path "$rng" "${cmds[@]}" "${cmds[@]}" peak >"$T/got" ||
	fail "path of $NP ranges, two passes: $(cat "$T/rget.err")"
cmp "$T/got" <(for _ in 1 2; do cat "$W/d/h1"; h1_parts 1 $((NP - 1)); done) ||
	fail "path of $NP ranges, two passes: bytes"
peak=$(sed -n 's/^peak //p' "$T/rget.err")
[ "$peak" -le $((27 * M)) ] || fail "path of $NP ranges, two passes: the chunks peaked at $peak bytes"
ok "the same path read twice on one stream: the second pass drops what it passed too (peak $((peak / M)) MiB)"
# ... but a read back by less than 64M is no new pass: a re-read of part
# 8's last 512K once the reader is in part 20 (22M further on the path)
# lets the lead stand (taken for a new run, it dropped what was held
# ahead: parts 9 and 20 were fetched again)
c2=(seq 0 0 $((2 * M)) $M)
for i in $(seq 1 19); do c2+=(seq "$i" 4096 $((2 * M - 4096)) $M); done
c2+=(seq 8 $((2 * M - M / 2)) $((M / 2)) $((M / 2)))
for i in $(seq 20 $((NP - 1))); do c2+=(seq "$i" 4096 $((2 * M - 4096)) $M); done
ngx_clear
rget "${popt[@]}" "$NGX_URL/d/h1" path "$rng" "${c2[@]}" >"$T/got" ||
	fail "path of $NP ranges, a read back: $(cat "$T/rget.err")"
cmp "$T/got" <(cat "$W/d/h1"; h1_parts 1 19; tail -c $((M / 2)) "$W/d/h1.part-0008"; h1_parts 20 $((NP - 1))) ||
	fail "path of $NP ranges, a read back: bytes"
ngx_settle
{ for i in $(seq 1 $((NP - 1))); do echo "$(printf 'h1.part-%04d' "$i") 4096 $((2 * M - 4096))"; done
  echo "h1.part-0008 $((2 * M - M / 2)) $((M / 2))"; } | sort >"$T/want"
h1_gets >"$T/asked"
cmp -s "$T/want" "$T/asked" || fail "path of $NP ranges, a read back: the parts' GETs, want | got: $(diff "$T/want" "$T/asked" | head -20)"
ok "a read 22M back on the path is no new pass: the parts ahead keep what was fetched for them (one GET each, and the re-read's own)"
# a read far from the last one finds its range (a search of the path, by
# file and offset): with the parts' ranges [4096, 4096 + 1M), a reader
# that starts in part 50 gets no window beyond its range's end
rng="0:0:$((2 * M))"
for i in $(seq 1 $((NP - 1))); do rng+=",$i:4096:$M"; done
ngx_clear
rget "${popt[@]}" "$NGX_URL/d/h1" path "$rng" seq 50 4096 $M $((M / 4)) >"$T/got" ||
	fail "path, a read in part 50: $(cat "$T/rget.err")"
cmp "$T/got" <(tail -c +4097 "$W/d/h1.part-0050" | head -c $M) || fail "path, a read in part 50: bytes"
ngx_settle
end=$(gets_end h1.part-0050)
[ "$end" = $((4096 + M - 1)) ] || fail "path, a read in part 50: GETs reach $end: $(grep part-0050 "$NGX_LOG")"
ok "a read in the path's 51st range, after none in the others, fetches up to that range's end and not beyond"
# a path longer than the 65536 ranges once kept: 70000 ranges of 64K in
# one sparse file, each before the last (descending: none joined); a
# sequential read in range 69990 (at 576K) fetches up to that range's end
# and not beyond.  With the old cap that range was off the path: its
# window ran 1M past the range's end (seen: GETs up to 3751935).
NL=70000 L=65536
truncate -s $((NL * L)) "$W/d/h3"
mkfile "$T/r9" $L 31
dd if="$T/r9" of="$W/d/h3" bs=$L seek=9 conv=notrunc status=none
$PY -c 'import sys; n, l = int(sys.argv[1]), int(sys.argv[2])
print(",".join("0:%d:%d" % ((n - 1 - i) * l, l) for i in range(n)))' $NL $L >"$T/h3.path"
ngx_clear
rget "$NGX_URL/d/h3" path "@$T/h3.path" seq 0 $((9 * L)) 32768 16384 >"$T/got" ||
	fail "path of $NL ranges: $(cat "$T/rget.err")"
cmp "$T/got" <(head -c 32768 "$T/r9") || fail "path of $NL ranges: bytes"
ngx_settle
end=$(gets_end h3)
[ "$end" = $((10 * L - 1)) ] ||
	fail "path of $NL ranges: a read in range 69990 fetched to $end, not its end $((10 * L - 1)): $(grep h3 "$NGX_LOG")"
ok "a path of $NL ranges: a read in its range 69990 fetches up to that range's end and not beyond"
# a path that jumps back inside one file (a model.safetensors whose
# bindings are not in the order of their objects): the second range's
# bytes are fetched as windows ahead of the reader, as in another file,
# not 1M at a time as asked (a read 20-40M behind the furthest one was a
# straggler of the first range)
mkfile "$W/d/j0" $((40 << 20)) 23
ngx_clear
rget "$NGX_URL/d/j0" path 0:$((20 << 20)):$((20 << 20)),0:0:$((20 << 20)) \
	seq 0 $((20 << 20)) $((20 << 20)) $M seq 0 0 $((20 << 20)) $M >"$T/got" ||
	fail "path back inside a file: $(cat "$T/rget.err")"
cmp "$T/got" <(tail -c +$(((20 << 20) + 1)) "$W/d/j0"; head -c $((20 << 20)) "$W/d/j0") ||
	fail "path back inside a file: bytes"
ngx_settle
grep '"GET /d/j0 ' "$NGX_LOG" | grep -o '"bytes=[0-9]*-[0-9]*"' |
	sed 's/"bytes=\([0-9]*\)-\([0-9]*\)"/\1 \2/' | awk '{print $1, $2 - $1 + 1}' | sort -n >"$T/asked"
$PY - "$T/asked" $((20 << 20)) <<'PY' || fail "path back inside a file: GETs (offset length): $(tr '\n' ' ' <"$T/asked")"
import sys
gets = [tuple(map(int, l.split())) for l in open(sys.argv[1])]
half = int(sys.argv[2])
at = 0
for off, n in gets:                 # each byte once, in order
    assert off == at, (off, at)
    at += n
assert at == 2 * half
second = [(o, n) for o, n in gets if o < half]
assert second[-1][0] + second[-1][1] == half   # none across the ranges' boundary
assert len(second) <= 3 and all(n > 1 << 20 for o, n in second), second
PY
ok "a path back inside one file: the second range's bytes in $(awk -v h=$((20 << 20)) '$1 < h' "$T/asked" | wc -l) windows ahead of the reader, each byte once"
# random reads do not prefetch (a window cancelled at the last exit may
# still be logged late: let the log settle first)
sleep 0.3
ngx_clear
rget "$NGX_URL/d/big" seq 0 0 131072 65536 seq 0 5000000 65536 65536 seq 0 100 10 10 >/dev/null || fail "seq random"
[ "$(ngx_requests)" -le 5 ] || fail "random: $(cat "$NGX_LOG")"

# reads of a sequential reader that arrive out of order (as FUSE threads
# and kernel readahead deliver them) stay sequential inside the window
ngx_clear
spans=0:65536,65536:65536,196608:65536,131072:65536
for k in $(seq 4 63); do spans=$spans,$((k * 65536)):65536; done
rget -s "$T/st" -o prefetch_min=256K,prefetch_max=1M "$NGX_URL/d/big" sreads 0 "$spans" >"$T/got" ||
	fail "out of order: $(cat "$T/rget.err")"
{ slice "$W/d/big" 0 131072; slice "$W/d/big" 196608 65536; slice "$W/d/big" 131072 65536
  slice "$W/d/big" 262144 $((60 * 65536)); } | cmp - "$T/got" || fail "out of order: bytes"
n=$(ngx_requests)
[ "$n" -le 8 ] || fail "out of order: $n requests for 64 reads: $(cat "$NGX_LOG")"
ok "64 reads with one pair swapped: still sequential, $n requests"

# --- threads: 4 readers with their own thread handles and streams at once,
# within a prefetch budget that fits only some of their windows
rget -s "$T/st" -o prefetch_min=512K,prefetch_max=2M,prefetch_mem=3M,max_request=1M \
	"$NGX_URL/d/big" threads 4 0 0 9000000 65536 >"$T/got" || fail "threads: $(cat "$T/rget.err")"
cmp "$W/d/big" "$T/got" || fail "threads: bytes"
grep -q '"prefetch_hits": [1-9]' "$T/st" || fail "threads: no prefetch hits: $(cat "$T/st")"
ok "4 threads, each with its own stream, read the same 9 MB at once within prefetch_mem=3M"
# a budget smaller than the first window: nothing is fetched ahead
rget -s "$T/st" -o prefetch_min=1M,prefetch_mem=512K "$NGX_URL/d/big" seq 0 0 3000000 65536 >"$T/got" ||
	fail "tiny budget"
slice "$W/d/big" 0 3000000 | cmp - "$T/got" || fail "tiny budget: bytes"
grep -q '"prefetch_hits": 0, "prefetch_bytes": 0' "$T/st" || fail "tiny budget prefetched: $(cat "$T/st")"
ok "prefetch_mem smaller than a window: no fetch-ahead, bytes still exact"

# --- redirects
ngx_clear
rc=0; rget "$NGX_URL/hop/x" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'redirect to http://localhost:[0-9]*/d/e.ninfer refused' "$T/rget.err" ||
	fail "redirect to another host: rc=$rc $(cat "$T/rget.err")"
[ "$(ngx_requests)" = 1 ] || fail "the target was requested: $(cat "$NGX_LOG")"
rc=0; rget -o redirects=same-host "$NGX_URL/hop/x" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'another host' "$T/rget.err" || fail "same-host allowed another host"
rget -o redirects=same-host "$NGX_URL/same/x" read 0 0 1000 >"$T/got" || fail "same-host redirect"
slice "$W/d/e.ninfer" 0 1000 | cmp - "$T/got" || fail "same-host redirect bytes"
rget -o redirects=any "$NGX_URL/hop/x" read 0 0 1000 >"$T/got" || fail "redirects=any"
slice "$W/d/e.ninfer" 0 1000 | cmp - "$T/got" || fail "redirect bytes"
ok "redirects refused by default, to another host unless redirects=any"

# --- TLS: verification, a private CA, HTTP/2, no downgrade
TU=$NGX_TLS_URL/d/e.ninfer
rc=0; rget "$TU" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'SSL certificate problem' "$T/rget.err" || fail "unknown CA accepted: $(cat "$T/rget.err")"
ngx_clear
rget -o cafile="$NGX_DIR/ca.pem" "$TU" segs 0 0:1000,500000:1000,900000:1000,1500000:1000 >"$T/got" ||
	fail "cafile: $(cat "$T/rget.err")"
{ for o in 0 500000 900000 1500000; do slice "$W/d/e.ninfer" $o 1000; done; } | cmp - "$T/got" ||
	fail "TLS bytes"
[ "$(grep -c 'HTTP/2.0" "bytes=' "$NGX_LOG")" = 4 ] || fail "not HTTP/2: $(cat "$NGX_LOG")"
[ "$(awk '{print $1}' "$NGX_LOG" | sort -u | wc -l)" = 1 ] || fail "h2: several connections: $(cat "$NGX_LOG")"
ok "TLS: an unknown CA is refused; with cafile=, 4 ranges in flight over one HTTP/2 connection"
rc=0; rget -o cafile="$NGX_DIR/ca.pem",redirects=any "$NGX_TLS_URL/down/x" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'refused: a downgrade from https' "$T/rget.err" || fail "downgrade: $(cat "$T/rget.err")"
ok "https never follows a redirect to http, even with redirects=any"
