#!/usr/bin/env bash
# ninferfs URL MOUNTPOINT -o cache=DIR against nginx: the block cache under
# the daemon.  Proves: a second mount of the same set reads every file
# byte-identical to the local mount with no GET at all (one HEAD per file
# it reads, for the ETag a cached block is checked against); a corrupted
# block file is detected and that block alone is fetched again; two
# daemons sharing one cache directory at once both read byte-exact, and a
# third then needs no GET; a daemon killed with SIGKILL in the middle of a
# cached read leaves no block a later mount uses wrongly.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NF_FIXTURE:?}"

settle() { ngx_settle; grep -v ' "GET /.nf-settle/' "$NGX_LOG" >"$T/access.log" || true; }
LOG=$T/access.log
gets() { grep -c '"GET ' "$LOG" || true; }
heads() { grep -c '"HEAD ' "$LOG" || true; }

W=$T/www
mkdir -p "$W"
"$NF_FIXTURE" mixed "$W/mixed" >/dev/null
"$NF_FIXTURE" text "$W/text" >/dev/null
ngx_start "$W" "location /slow/ { alias $W/; limit_rate 2m; }"
U=$NGX_URL/mixed/mixed.ninfer
mnt "$W/mixed/mixed.ninfer" "$T/l"

# --- first mount fills the cache, the second reads it
C=$T/cache
fill_cache "$U" "$T/l" "$C"
nb=$(ls "$C"/b-*.blk | wc -l)
[ "$nb" -ge 48 ] || fail "$nb blocks stored"
ngx_settle; ngx_clear
mnt "$U" "$T/r2" -o cache="$C"
tree_same "$T/l" "$T/r2"
hits=$($PY -c 'import json,sys; print(sum(f["remote"]["cache_hits"] for f in json.load(open(sys.argv[1]))["files"]))' "$T/r2/stats")
umnt "$T/r2"
settle
[ "$(gets)" = 0 ] || fail "the second mount sent GETs: $(grep '"GET ' "$LOG" | head)"
[ "$(heads)" -le 48 ] || fail "$(heads) HEADs for 48 files"
[ "$hits" -ge "$nb" ] || fail "$hits cache hits for $nb blocks"
ok "a second mount with the cache: $TREE_FILES files byte-exact, no GET, $(heads) HEADs (one per file), $hits cache hits"

# --- a corrupted block: detected, that block alone fetched again
b=$(ls "$C"/b-*.blk | head -1)
sz=$(stat -c %s "$b")
printf '\xff' | dd of="$b" bs=1 seek=$((sz - 1)) conv=notrunc status=none
ngx_settle; ngx_clear
mnt "$U" "$T/r3" -o cache="$C"
tree_same "$T/l" "$T/r3"
umnt "$T/r3"
settle
[ "$(gets)" = 1 ] || fail "$(gets) GETs after one block was corrupted: $(grep '"GET ' "$LOG")"
ok "a corrupted block file: detected, refetched with one GET ($(grep '"GET ' "$LOG" | cut -d'"' -f2,4)), bytes exact"

# --- two daemons share a cache directory at once
C2=$T/cache2
mkdir -p "$C2"
mnt "$U" "$T/a" -o cache="$C2"
mnt "$U" "$T/b" -o cache="$C2"
(tree_same "$T/l" "$T/a") & pa=$!
(tree_same "$T/l" "$T/b") & pb=$!
wait "$pa" || fail "the first of two daemons sharing the cache"
wait "$pb" || fail "the second of two daemons sharing the cache"
umnt "$T/a"
umnt "$T/b"
ngx_settle; ngx_clear
mnt "$U" "$T/c" -o cache="$C2"
tree_same "$T/l" "$T/c"
umnt "$T/c"
settle
[ "$(gets)" = 0 ] || fail "after two daemons filled it: $(gets) GETs"
ok "two daemons sharing one cache directory at once: both byte-exact; a third mount then sends no GET"

# --- SIGKILL in the middle of a cached read: an 8 MiB object served at 2 MB/s
: "${NINFER_PACK:?}"
mkfile "$T/obj.bin" $((8 << 20)) 7
mkdir -p "$W/big"
bf16_set "$T/obj.bin" "$W/big/big.ninfer"
C3=$T/cache3
mkdir -p "$C3"
mnt "$W/big/big.ninfer" "$T/lt"
mnt "$NGX_URL/slow/big/big.ninfer" "$T/k" -o cache="$C3"
cat "$T/k/objects/w.big" >/dev/null 2>&1 &
cp=$!
sleep 1.5
kill -9 "${MPID[$T/k]}"
wait "$cp" 2>/dev/null || true
umount -l "$T/k" 2>/dev/null || fusermount3 -u -z "$T/k" 2>/dev/null || true
[ "$(ls "$C3" | wc -l)" -ge 1 ] || fail "nothing was cached before the kill"
mnt "$NGX_URL/big/big.ninfer" "$T/k2" -o cache="$C3"
tree_same "$T/lt" "$T/k2"
cmp "$T/obj.bin" "$T/k2/objects/w.big" || fail "the object"
umnt "$T/k2"
umnt "$T/lt"
umnt "$T/l"
ok "a daemon killed (SIGKILL) in a cached read of an 8 MiB object: the next mount on the same cache reads it and every file byte-exact"
