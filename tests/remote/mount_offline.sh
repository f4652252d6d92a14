#!/usr/bin/env bash
# -o offline: a set mounted (and checked) from the block cache alone, with
# its server gone.  Proves: after one online mount read every file, an
# offline mount of the same URL, with nginx stopped, gives every file
# byte-identical to the local mount, and ninfer-check passes on it; an
# object in files never read online fails with EIO, its files.json reason saying
# so, while the rest of the set reads on; a set never cached, or with
# its records removed, does not mount (exit 8, the reason named);
# offline without cache= is a usage error (exit 16); and an online mount
# with the server down still fails (exit 8), as before.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NF_FIXTURE:?}" "${NINFER_CHECK:?}"

W=$T/www
mkdir -p "$W"
"$NF_FIXTURE" mixed "$W/mixed" >/dev/null
ngx_start "$W"
U=$NGX_URL/mixed/mixed.ninfer
mnt "$W/mixed/mixed.ninfer" "$T/l"
C=$T/cache

# --- online: one mount reads all of the set into cache C; another, into
# cache C2, only what mounting reads and one object that starts in the
# entry ($in_entry)
fill_cache "$U" "$T/l" "$C"
# an object that starts in the entry, and one in none of its files
object_parts "$T/l" >"$T/parts"
read -r in_entry in_part < <($PY - "$T/parts" <<'PY'
import sys
objs = [(l.split()[0], set(l.split()[1:])) for l in open(sys.argv[1])]
first = next(o for o in objs if "0" in o[1])           # an object that starts in the entry
other = next(o for o in objs if not (o[1] & first[1]))  # one in none of its files
print(first[0], other[0])
PY
)
[ -n "$in_entry" ] && [ -n "$in_part" ] || fail "mixed fixture: no object in the entry, or none apart from it"
C2=$T/cache2
mkdir -p "$C2"
mnt "$U" "$T/t1" -o cache="$C2"
cmp "$T/l/objects/$in_entry" "$T/t1/objects/$in_entry" || fail "online: $in_entry"
umnt "$T/t1"
nfiles=$(ls "$W/mixed" | grep -c '^mixed.ninfer')
nrec=$(ls "$C"/f-*.rec | wc -l)
[ "$nrec" = "$nfiles" ] || fail "file records stored: $nrec for $nfiles files"
[ "$(ls "$C2"/f-*.rec | wc -l)" -lt "$nfiles" ] || fail "cache2 has a record of every file"

# --- the server goes away
kill "$NGX_PID"
wait "$NGX_PID" 2>/dev/null || true
curl -s -o /dev/null --max-time 2 "$U" && fail "nginx still answers"
mkdir -p "$T/down"
rc=0; "$NINFERFS" "$U" "$T/down" -o cache="$C" 2>"$T/down.err" || rc=$?
[ "$rc" = 8 ] || fail "online mount with the server down: exit $rc"
grep -q "Couldn't connect" "$T/down.err" || fail "online, server down: $(cat "$T/down.err")"
ok "with the server down an online mount still fails: exit 8, the curl error named"

# --- offline: the whole of mixed from the cache
mnt "$U" "$T/o1" -o cache="$C",offline
tree_same "$T/l" "$T/o1"
$PY - "$T/o1/files.json" <<'PY' || fail "offline files.json: $(cat "$T/o1/files.json")"
import json, sys
for f in json.load(open(sys.argv[1])):
    r = f["remote"]
    assert r["requests"] == 0 and r["bytes_fetched"] == 0, f
    assert r["status"] == "ok" and r["etag"], f
PY
umnt "$T/o1"
"$NINFER_CHECK" -o cache="$C",offline "$U" >"$T/check.out" 2>&1 || fail "ninfer-check offline: $(cat "$T/check.out")"
ok "offline, server stopped: $TREE_FILES files byte-exact from the cache, no request, ninfer-check passes"

# --- offline: cache C2, in which the parts were never read
mnt "$U" "$T/o2" -o cache="$C2",offline
cmp "$T/l/objects/$in_entry" "$T/o2/objects/$in_entry" || fail "offline: $in_entry"
cmp "$T/l/artifact.json" "$T/o2/artifact.json" || fail "offline: artifact.json"
err=$(read_err "$T/o2/objects" "$in_part")
case $err in *"Input/output error"*) ;; *) fail "offline, $in_part (in parts never cached): '$err'" ;; esac
grep -q 'not in the cache (-o offline: nothing is asked of the server)' "$T/o2/files.json" ||
	fail "offline: reason in files.json: $(cat "$T/o2/files.json")"
cmp "$T/l/objects/$in_entry" "$T/o2/objects/$in_entry" || fail "offline: $in_entry after the failed read"
umnt "$T/o2"
ok "offline: an object in files never read online fails with EIO (files.json says why), the cached ones read on"

# --- offline with nothing to go on
mkdir -p "$T/empty" "$T/x"
rc=0; "$NINFERFS" "$U" "$T/x" -o cache="$T/empty",offline 2>"$T/x.err" || rc=$?
[ "$rc" = 8 ] && grep -q 'not in the cache (-o offline' "$T/x.err" || fail "offline, empty cache: exit $rc: $(cat "$T/x.err")"
cp -a "$C" "$T/norec"
rm -f "$T/norec"/f-*.rec
rc=0; "$NINFERFS" "$U" "$T/x" -o cache="$T/norec",offline 2>"$T/x.err" || rc=$?
[ "$rc" = 8 ] && grep -q 'not in the cache (-o offline' "$T/x.err" || fail "offline, no records: exit $rc: $(cat "$T/x.err")"
rc=0; "$NINFERFS" "$U" "$T/x" -o offline 2>"$T/x.err" || rc=$?
[ "$rc" = 16 ] && grep -q 'offline needs cache=DIR' "$T/x.err" || fail "offline without cache: exit $rc: $(cat "$T/x.err")"
rc=0; "$NINFER_CHECK" -o offline "$U" >"$T/x.err" 2>&1 || rc=$?
[ "$rc" = 16 ] && grep -q 'offline needs cache=DIR' "$T/x.err" || fail "ninfer-check offline without cache: exit $rc: $(cat "$T/x.err")"
grep -q " $T/x fuse" /proc/mounts && fail "a refused mount is mounted"
umnt "$T/l"
ok "offline refusals: an empty cache or one without file records -> exit 8 naming the cache; no cache= -> exit 16"
