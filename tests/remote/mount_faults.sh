#!/usr/bin/env bash
# ninferfs URL MOUNTPOINT against a server that misbehaves on purpose
# (faultserver.py).  Proves, each in bounded time, with the daemon's log
# sanitizer-clean:
#   - every file's first response cut mid-body, a 503 then success, a body
#     shorter than its Content-Length: retried, and every file of the
#     47-file set reads byte-identical to the local mount;
#   - one part answering 503 forever: the reads touching it fail with EIO
#     after the bounded tries, every other object still reads, stats
#     counts the retries;
#   - one part's ETag changing after its second response (If-Match
#     ignored): the next read of it fails with EIO, the failure is logged
#     once, files.json says that part is bad and why, and every other file
#     (the entry, the other parts) still reads byte-exact;
#   - a part whose first check fails (503 until the tries are spent): EIO,
#     at once again while it rests, then a later read checks it again and
#     reads byte-exact (not bad for the rest of the mount);
#   - a redirect to another host: refused (exit 8 naming it) unless
#     -o redirects=any.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NF_FIXTURE:?}"

"$NF_FIXTURE" mixed "$T/set" >/dev/null
fault_server "$T/set" 170
fast=tries=3,retry_ms=5000,backoff_ms=20
mnt "$T/set/mixed.ninfer" "$T/l"

# --- transient faults: retried, bytes exact
for mode in drop 503once short; do
	mnt "$S/$mode/mixed.ninfer" "$T/$mode" -o "$fast"
	tree_same "$T/l" "$T/$mode"
	r=$($PY -c 'import json,sys; print(sum(f["remote"]["retries"] for f in json.load(open(sys.argv[1]))["files"]))' "$T/$mode/stats")
	umnt "$T/$mode"
	[ "$r" -ge 47 ] || fail "$mode: $r retries for 47 files"
	ok "$mode: every file's first response failed, $r retries, $TREE_FILES files byte-identical to the local mount"
done

# objects by the parts they touch (from the local mount's segments)
object_parts "$T/l" >"$T/parts"
touching() { awk -v p="$1" '{for (i = 2; i <= NF; i++) if ($i == p) {print $1; next}}' "$T/parts"; }
sparing() { awk -v p="$1" '{for (i = 2; i <= NF; i++) if ($i == p) next; print $1}' "$T/parts"; }

# --- one part 503 forever
mnt "$S/503on-part-0007/mixed.ninfer" "$T/e" -o "$fast"
bad=$(touching 7 | head -1)
[ -n "$bad" ] || fail "no object in part 7: $(cat "$T/parts")"
t0=$(ms)
cat "$T/e/objects/$bad" >/dev/null 2>"$T/cat.err" && fail "objects/$bad read with part 7 down"
dt=$(($(ms) - t0))
grep -q "Input/output error" "$T/cat.err" || fail "objects/$bad: $(cat "$T/cat.err")"
[ "$dt" -lt 15000 ] || fail "EIO took $dt ms"
n=0
for o in $(sparing 7); do cmp "$T/l/objects/$o" "$T/e/objects/$o" || fail "objects/$o"; n=$((n + 1)); done
[ "$n" -ge 10 ] || fail "only $n objects spare part 7"
$PY - "$T/e/stats" <<'PY' || fail "stats: $(cat "$T/e/stats")"
import json, sys
f = json.load(open(sys.argv[1]))["files"][7]
assert f["errors"] >= 1 and f["remote"]["retries"] >= 2, f
assert "HTTP 503" in f["remote"]["reason"], f
PY
umnt "$T/e"
ok "part 7 answering 503 forever: objects/$bad fails with EIO in $dt ms (3 tries), $n objects sparing it read byte-exact"

# two objects that share a part and do not touch the entry: "PART O1 O2"
read -r p o1 o2 < <(shared_part "$T/parts")
[ -n "$o2" ] || fail "no part with two objects: $(cat "$T/parts")"
pname=$(printf 'part-%04d' "$p")
gets() { grep -c "^GET /$1/mixed.ninfer.$pname " "$T/log" || true; }

# --- one part's ETag changes after its second response: that part fails,
# every other file (the entry and the other parts) keeps serving byte-exact
mnt "$S/etagon-$pname/mixed.ninfer" "$T/g" -o "$fast"
# (o1 is read with the part's second response, or, when the kernel cuts
# its read in two, its third already; either way o2 comes after)
cat "$T/g/objects/$o1" >/dev/null 2>&1 || true
cat "$T/g/objects/$o2" >/dev/null 2>"$T/cat.err" && fail "objects/$o2 read after part $p changed"
grep -q "Input/output error" "$T/cat.err" || fail "objects/$o2: $(cat "$T/cat.err")"
cat "$T/g/objects/$o2" >/dev/null 2>&1 && fail "objects/$o2 read the second time"
cmp "$T/l/artifact.json" "$T/g/artifact.json" || fail "artifact.json with only part $p changed"
n=0
for o in $(sparing "$p"); do cmp "$T/l/objects/$o" "$T/g/objects/$o" || fail "objects/$o (part $p changed)"; n=$((n + 1)); done
[ "$n" -ge 10 ] || fail "only $n objects spare part $p"
$PY - "$T/g/files.json" "$p" <<'PY' || fail "files.json: $(head -c 4000 "$T/g/files.json")"
import json, sys
fj, p = json.load(open(sys.argv[1])), int(sys.argv[2])
f = fj[p]
assert f["status"] == "bad", f
assert "changed on the server" in f["reason"], f
assert f["remote"]["status"] == "changed", f
# the others: present (read), or unchecked (no object sparing p uses them)
others = [x for x in fj if x["index"] != p]
odd = [x for x in others if (x["status"], x["remote"]["status"]) not in
       (("present", "ok"), ("unchecked", "unknown"))]
assert not odd, odd
assert fj[0]["status"] == "present" and sum(x["status"] == "present" for x in others) >= 10, others
PY
umnt "$T/g"
nlog=$(grep -c "files\[$p\]: .*changed on the server" "$T/g.log" || true)
[ "$nlog" = 1 ] || fail "part $p's change logged $nlog times: $(cat "$T/g.log")"
ok "part $p's ETag changed on the server: objects/$o2 fails with EIO, logged once, files.json says bad: changed; artifact.json and the $n objects sparing it byte-exact, every other file present"

# --- a part's first check fails (its first 3 GETs answer 503: the bounded
# tries spent), then the server is back: the part is asked again by a later
# read, not bad for the rest of the mount; in between, reads fail at once
mnt "$S/fail3on-$pname/mixed.ninfer" "$T/c" -o "$fast"
cat "$T/c/objects/$o1" >/dev/null 2>"$T/cat.err" && fail "objects/$o1 read while part $p answers 503"
grep -q "Input/output error" "$T/cat.err" || fail "objects/$o1: $(cat "$T/cat.err")"
g1=$(gets "fail3on-$pname")
[ "$g1" = 3 ] || fail "part $p: $g1 GETs for its first check, not 3: $(grep "$pname" "$T/log")"
t0=$(ms)
cat "$T/c/objects/$o1" >/dev/null 2>&1 && fail "objects/$o1 read while the part rests"
dt=$(($(ms) - t0))
[ "$(gets "fail3on-$pname")" = 3 ] || fail "part $p asked again at once: $(grep "$pname" "$T/log")"
[ "$dt" -lt 900 ] || fail "a read of the resting part took $dt ms"
sleep 1.1
cmp "$T/l/objects/$o1" "$T/c/objects/$o1" || fail "objects/$o1 after the server came back"
cmp "$T/l/objects/$o2" "$T/c/objects/$o2" || fail "objects/$o2 after the server came back"
$PY - "$T/c/files.json" "$p" <<'PY' || fail "files.json: $(head -c 4000 "$T/c/files.json")"
import json, sys
fj, p = json.load(open(sys.argv[1])), int(sys.argv[2])
assert fj[p]["status"] == "present" and fj[p]["remote"]["status"] == "ok", fj[p]
PY
umnt "$T/c"
ok "part $p's first check failed (3 x 503): EIO, the next read at once EIO in $dt ms with no request, after the 1 s rest objects/$o1 and $o2 read byte-exact and the part is present"

# --- redirects
mkdir -p "$T/x"
rc=0
"$NINFERFS" "$S/redir/mixed.ninfer" "$T/x" -f 2>"$T/e.err" || rc=$?
san_clean "$T/e.err"
[ "$rc" = 8 ] && grep -q "$S/redir/mixed.ninfer: .*redirect" "$T/e.err" || fail "redirect: exit $rc $(cat "$T/e.err")"
grep -q '^GET /ok/' "$T/log" && fail "the redirect was followed: $(grep '^GET /ok/' "$T/log")"
mnt "$S/redir/mixed.ninfer" "$T/rd" -o redirects=any
tree_same "$T/l" "$T/rd"
umnt "$T/rd"
ok "a redirect to another host: refused (exit 8 naming it); with -o redirects=any, $TREE_FILES files as locally"
umnt "$T/l"
