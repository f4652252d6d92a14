#!/usr/bin/env bash
# The block cache (cache=DIR) against nginx: a second process reads the
# cached blocks without a GET (only one HEAD per file, for its ETag);
# an object replaced on the server (a new ETag) is not read from its old
# blocks; a corrupted block is detected and that block alone is fetched again;
# processes killed with SIGKILL in the middle of cached reads leave no
# block that a later reader would use wrongly; the size limit holds.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"

W=$T/www
mkdir -p "$W/d"
mkfile "$W/d/e" 5000000 11
mkfile "$W/d/e.part-0001" 3000000 12
mkfile "$W/d/big" 24000000 13
ngx_start "$W" "location /slow/ { alias $W/d/; limit_rate 3m; }"
C=$T/cache
U=$NGX_URL/d/e
opts=cache=$C,cache_set=set-1

reads=(read 0 100 2000000 read 1 2500000 500000 segs 0 4000000:1000,4000000:999999)
{ slice "$W/d/e" 100 2000000; slice "$W/d/e.part-0001" 2500000 500000
  slice "$W/d/e" 4000000 1000; slice "$W/d/e" 4000000 999999; } >"$T/want"

rget -s "$T/st1" -o "$opts" -p e.part-0001 "$U" "${reads[@]}" >"$T/got" || fail "first: $(cat "$T/rget.err")"
cmp "$T/want" "$T/got" || fail "first reader's bytes"
grep -q '"cache_misses": [1-9]' "$T/st1" || fail "no misses counted: $(cat "$T/st1")"
[ "$(ls "$C"/b-*.blk | wc -l)" = 5 ] || fail "blocks stored: $(ls "$C")"   # 0,1 + 2 of part + 3
ngx_clear
rget -s "$T/st2" -o "$opts" -p e.part-0001 "$U" "${reads[@]}" >"$T/got" || fail "second: $(cat "$T/rget.err")"
cmp "$T/want" "$T/got" || fail "second reader's bytes"
grep -q '"GET ' "$NGX_LOG" && fail "the second reader sent a GET: $(cat "$NGX_LOG")"
[ "$(grep -c '"HEAD ' "$NGX_LOG")" = 2 ] || fail "HEADs: $(cat "$NGX_LOG")"
grep -q '"file": 0,.*"cache_hits": 4,' "$T/st2" || fail "hits: $(cat "$T/st2")"
ok "a second process reads every cached block without a GET (1 HEAD per file)"

# another cache_set in the same directory: no hits
ngx_clear
rget -s "$T/st3" -o cache=$C,cache_set=other -p e.part-0001 "$U" "${reads[@]}" >/dev/null || fail "other set"
grep -q '"cache_hits": 0, "cache_misses": 4' "$T/st3" || fail "another set hit: $(cat "$T/st3")"

# the entry replaced on the server (same size, a new ETag): the blocks
# stored under its old ETag are never used, its new bytes are fetched
mkfile "$W/d/e.new" 5000000 14
touch -d '+1 hour' "$W/d/e.new"
mv "$W/d/e.new" "$W/d/e"
ngx_clear
rget -s "$T/st4" -o "$opts" "$U" read 0 100 2000000 >"$T/got" || fail "replaced: $(cat "$T/rget.err")"
slice "$W/d/e" 100 2000000 | cmp - "$T/got" || fail "a block stored under the replaced object's old ETag was used"
grep -q '"file": 0,.*"cache_hits": 0, "cache_misses": 2,' "$T/st4" || fail "replaced: $(cat "$T/st4")"
[ "$(grep -c '"GET /d/e HTTP' "$NGX_LOG")" = 1 ] || fail "replaced: $(cat "$NGX_LOG")"
ok "the entry replaced on the server: its blocks under the old ETag are not used, 2 new ones fetched in 1 GET, bytes exact"

# corrupt one block (one byte in its data): detected, that block refetched
rm -rf "$C"
rget -o "$opts" "$U" read 0 0 3000000 >/dev/null || fail "fill"
blk=$(ls -S "$C"/b-*.blk | head -1)
printf '\xee' | dd of="$blk" bs=1 seek=500000 conv=notrunc status=none
ngx_clear
rget -s "$T/st" -o "$opts" "$U" read 0 0 3000000 >"$T/got" || fail "after corruption"
slice "$W/d/e" 0 3000000 | cmp - "$T/got" || fail "a corrupt block was used"
# one GET, of one aligned 1 MiB block
rng=$(grep '"GET ' "$NGX_LOG" | sed -n 's/.*"bytes=\([0-9]*\)-\([0-9]*\)".*/\1 \2/p')
[ "$(grep -c '"GET ' "$NGX_LOG")" = 1 ] && set -- $rng && [ $(($1 % 1048576)) = 0 ] &&
	[ $(($2 - $1 + 1)) = 1048576 ] || fail "refetch: $(cat "$NGX_LOG")"
grep -q '"cache_hits": 2, "cache_misses": 1' "$T/st" || fail "corrupt: $(cat "$T/st")"
# a truncated block, and a foreign file under a block's name
truncate -s 1000 "$(ls "$C"/b-*.blk | head -1)"
second=$(ls "$C"/b-*.blk | sed -n 2p)
printf 'NFRBLK01 not a block at all' >"$second"
rget -s "$T/st" -o "$opts" "$U" read 0 0 3000000 >"$T/got" || fail "after truncation"
slice "$W/d/e" 0 3000000 | cmp - "$T/got" || fail "a truncated or foreign block was used"
grep -q '"cache_hits": 1, "cache_misses": 2' "$T/st" || fail "truncated: $(cat "$T/st")"
ok "corrupted, truncated and foreign block files are detected and refetched"

# SIGKILL during cached reads (a 3 MB/s server: reads and block stores in
# flight), three times at different moments; then every block is verified
rm -rf "$C"
for d in 0.7 1.3 2.1; do
	"$NF_REMOTE_GET" -o "$opts" "$NGX_URL/slow/big" seq 0 0 24000000 1048576 >/dev/null 2>&1 &
	kp=$!
	sleep "$d"
	kill -9 "$kp" 2>/dev/null || fail "the reader finished before the kill at ${d}s"
	wait "$kp" 2>/dev/null || true
done
n=$(ls "$C"/b-*.blk 2>/dev/null | wc -l)
[ "$n" -ge 2 ] || fail "nothing cached before the kills ($n blocks)"
ngx_clear
rget -s "$T/st" -o "$opts" "$NGX_URL/d/big" read 0 0 24000000 >"$T/got" || fail "after kills"
cmp "$W/d/big" "$T/got" || fail "bytes after the kills"
grep -q "\"cache_hits\": $n," "$T/st" || fail "after kills: $n blocks on disk, $(cat "$T/st")"
ok "3 readers killed with SIGKILL mid-read: $n blocks left, all verified, bytes exact"

# two processes at once on one directory
rm -rf "$C"
rget -o "$opts" "$NGX_URL/d/big" seq 0 0 24000000 1048576 >"$T/a" 2>"$T/a.err" &
pa=$!
"$NF_REMOTE_GET" -o "$opts" "$NGX_URL/d/big" seq 0 0 24000000 1048576 >"$T/b" 2>"$T/b.err" || fail "b: $(cat "$T/b.err")"
wait "$pa" || fail "a: $(cat "$T/a.err")"
cmp "$W/d/big" "$T/a" && cmp "$W/d/big" "$T/b" || fail "two processes: bytes"
san_clean "$T/b.err"
ok "two processes share one cache directory at the same time"

# the size limit: 24 MB through a 4 MiB cache
rm -rf "$C"
rget -o "$opts,cache_size=4M" "$NGX_URL/d/big" seq 0 0 24000000 1048576 >/dev/null || fail "limit"
used=$(cat "$C"/b-*.blk | wc -c)
[ "$used" -le 4194304 ] || fail "cache holds $used bytes, limit 4 MiB"
ok "cache_size=4M holds: $used bytes after 24 MB read"
