#!/usr/bin/env bash
# Replies written straight from the prefetched chunks (issue 14: the
# engine's read_ref, fs/readpath.c's nf_read_reply, remote/prefetch.c's
# held chunks).  A 20 MiB object of random bytes split over 3 MiB parts,
# mounted from nginx with small odd chunks (max_request=69633, windows
# from 64 KiB, a 2 MiB prefetch budget, so buffers are reused all the
# time); the oracle is the object's source file.  Proves:
#   - two readers, each on its own open file (O_DIRECT: every read reaches
#     the daemon with its own odd offset and length), reading sequentially
#     in odd-sized pieces from odd starts, get exactly the source's bytes
#     across chunk and part boundaries, while a third thread, on the first
#     reader's file, reads at random places (each resets that stream's
#     windows, cancelling chunks the first reader may hold);
#   - the chunk path was taken: stats' ref_bytes and prefetch_hits are
#     not 0 (prefetch_mem=0 makes them 0: the test can tell);
#   - cat and dd bs=1M of a fresh mount compare equal to the source;
#   - bytes read by reference stay right while their stream is freed and a
#     new stream's windows reuse the buffers, until released (nf-remote-get
#     held; seen to fail when the stream's end released them).
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NINFER_PACK:?}"

W=$T/www
mkdir -p "$W/set"
head -c $((20 << 20)) /dev/urandom >"$T/obj.bin"
bf16_set "$T/obj.bin" "$W/set/set.ninfer"
[ "$(ls "$W/set" | wc -l)" -ge 7 ] || fail "expected a split set: $(ls "$W/set")"
ngx_start "$W"
U=$NGX_URL/set/set.ninfer
OPTS=(-o max_request=69633,prefetch_min=65536,prefetch_max=1M,prefetch_mem=2M)

# ref_bytes and prefetch_hits of a mount's stats
counters() {
	$PY - "$1/stats" <<'PY'
import json, sys
s = json.load(open(sys.argv[1]))
def find(o, k):
    if isinstance(o, dict):
        if k in o:
            return o[k]
        for v in o.values():
            r = find(v, k)
            if r is not None:
                return r
    elif isinstance(o, list):
        for v in o:
            r = find(v, k)
            if r is not None:
                return r
    return None
hits = sum(f["remote"]["prefetch_hits"] for f in s["files"])
print(find(s, "ref_bytes"), hits)
PY
}

# readers.py MOUNTED_FILE SOURCE: the three threads above; exit 0 when every
# read gave the source's bytes
cat >"$T/readers.py" <<'PY'
import os, random, sys, threading
path, src = sys.argv[1], sys.argv[2]
want = open(src, "rb").read()
size = len(want)
errors = []
deadline = __import__("time").monotonic() + 60

def check(fd, off, n, who):
    got = os.pread(fd, n, off)
    if got != want[off:off + n]:
        errors.append("%s: %d bytes at %d differ (got %d)" % (who, n, off, len(got)))

def sequential(fd, start, seed, who):
    rng = random.Random(seed)
    off = start
    while off < size and not errors and __import__("time").monotonic() < deadline:
        n = min(rng.choice([1, 4095, 12345, 69633, 99999, 131071, 262147, 600001]), size - off)
        check(fd, off, n, who)
        off += n

def racer(fd, stop):
    rng = random.Random(7)
    k = 0
    while not stop.is_set() and not errors and k < 400:
        off = rng.randrange(size - 5000)
        check(fd, off, rng.randrange(1, 5000), "racer")
        k += 1

fa = os.open(path, os.O_RDONLY | os.O_DIRECT)
fb = os.open(path, os.O_RDONLY | os.O_DIRECT)
stop = threading.Event()
ts = [threading.Thread(target=sequential, args=(fa, 12347, 1, "reader A")),
      threading.Thread(target=sequential, args=(fb, 3 * 1048576 - 77777, 2, "reader B"))]
r = threading.Thread(target=racer, args=(fa, stop))
for t in ts:
    t.start()
r.start()
for t in ts:
    t.join()
stop.set()
r.join()
# once more alone: a sequential pass over the whole object on one file
if not errors:
    sequential(fb, 0, 3, "reader B, second pass")
os.close(fa)
os.close(fb)
if errors:
    print("\n".join(errors[:5]))
    sys.exit(1)
PY

mnt "$U" "$T/m" "${OPTS[@]}"
$PY "$T/readers.py" "$T/m/objects/w.big" "$T/obj.bin" || fail "concurrent odd reads differ"
read -r refs hits <<<"$(counters "$T/m")"
[ "$refs" -gt 0 ] && [ "$hits" -gt 0 ] ||
	fail "the chunk path was not taken: ref_bytes $refs, prefetch_hits $hits"
umnt "$T/m"
ok "two readers and a racer, odd offsets and lengths over chunk and part boundaries: byte-exact ($refs bytes replied from chunks)"

mnt "$U" "$T/m" "${OPTS[@]}"
cmp "$T/m/objects/w.big" "$T/obj.bin" || fail "cat of a fresh mount"
umnt "$T/m"
mnt "$U" "$T/m"
dd if="$T/m/objects/w.big" bs=1M status=none | cmp - "$T/obj.bin" || fail "dd bs=1M, default options"
read -r refs hits <<<"$(counters "$T/m")"
[ "$refs" -gt 0 ] || fail "dd bs=1M: no bytes replied from chunks"
umnt "$T/m"
ok "cat (small chunks) and dd bs=1M (defaults) of fresh mounts: byte-exact"

# a reader crossing the parts' boundaries waits at none of them: the
# prefetch knows the view's file ranges (stream_path), so the window that
# reaches the end of its bytes in one part goes on at the next part's
# payload before the reader gets there, and that part's header is checked
# ahead (checks_ahead).  dd iflag=direct: in-order 1 MiB reads, so the
# log shows it: the GET at the start of each later part's bytes is a
# window (> 1 MiB), not the reader's first read there; each part is
# checked once, each byte asked once, nothing beyond the object.  The
# object's raw bytes, then its decoded .npy and model.safetensors (f32:
# the family names the object's span, view_spans), against the local
# mount's.
cat >"$T/ahead.py" <<'PY'
import json, re, sys
segs, ahead = json.load(open(sys.argv[1])), int(sys.argv[3])
got = {}
for line in open(sys.argv[2]):
    if "/.nf-settle/" in line:
        continue
    m = re.match(r'\d+ "GET /%s/(\S+) HTTP/1.1" "bytes=(\d+)-(\d+)" "[^"]*" 206 ' % sys.argv[4], line)
    assert m, line
    got.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3)) + 1))
names = [s["path"] for s in segs]
assert len(names) == len(set(names)) and len(names) >= 5, names
assert sorted(got) == sorted(names), (sorted(got), names)
# the parts after the first are checked ahead, but for those a 1 MiB read
# of the first two reaches: a file's first read is fetched as asked (and
# its part checked by the reader), and one read then spans several 256K
# parts before the windows have gone on into them
starts, late = 0, 0
for s in segs:
    late += starts >= 2 << 20
    starts += s["length"]
assert late <= ahead <= len(names) - 1, ("checks_ahead", ahead, late, len(names))
for k, s in enumerate(segs):
    g = sorted(got[s["path"]])
    if not s["path"].endswith(".ninfer"):
        assert g.count((0, 32)) == 1, (s, g)      # the header, checked once
        g.remove((0, 32))
    spans = []
    for a, b in g:
        assert not spans or spans[-1][1] <= a, ("a byte asked twice", s, g)
        spans.append((a, b))
    lo, hi = s["file_offset"], s["file_offset"] + s["length"]
    assert g[0][0] == lo and max(b for _, b in g) == hi, ("beyond the object", s, g)
    if k > 0 and s["length"] > 1 << 20:
        assert g[0][1] - g[0][0] > 1 << 20, ("not a window ahead of the reader", s, g)
PY
# The same over 256 KiB parts: the object's path has 80 ranges, more than
# the 64 once kept (then the parts after the 64th were not checked ahead).
mkdir -p "$W/many"
bf16_set "$T/obj.bin" "$W/many/set.ninfer" 256K
for set in set many; do
	mnt "$W/$set/set.ninfer" "$T/l"
	getfattr --only-values -n user.ninfer.segments "$T/l/objects/w.big" >"$T/segs.json"
	n=$(($(tr -cd '{' <"$T/segs.json" | wc -c) - 1))
	for view in objects/w.big decoded/npy/objects/w.big.npy decoded/model.safetensors; do
		mnt "$NGX_URL/$set/set.ninfer" "$T/m"
		ngx_settle; ngx_clear
		dd if="$T/m/$view" bs=1M iflag=direct status=none | cmp - "$T/l/$view" ||
			fail "$set/$view: dd iflag=direct"
		ahead=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["checks_ahead"])' "$T/m/stats")
		umnt "$T/m"
		ngx_settle
		$PY "$T/ahead.py" "$T/segs.json" "$NGX_LOG" "$ahead" "$set" ||
			fail "$set/$view: parts ahead of the reader: checks_ahead $ahead; $(head -c 4000 "$NGX_LOG")"
	done
	umnt "$T/l"
	nbs+=("$n")
done
ok "dd of the object, its decoded .npy and model.safetensors across ${nbs[0]} and ${nbs[1]} part boundaries: each later part's bytes asked as a window before the reader got there, its header checked ahead, each byte once"

# a part checked ahead and found bad (its magic overwritten on the
# server): the reader's dd fails with EIO where the object reaches it,
# every byte before is exact, the part is bad in files.json and logged
# once, the parts after it are never asked for, and the daemon serves on
mkdir -p "$W/bad"
cp "$W/set/"* "$W/bad/"
p3=$(cd "$W/bad" && ls | grep 'part-0003$')
printf 'X' | dd of="$W/bad/$p3" bs=1 conv=notrunc status=none
mnt "$W/set/set.ninfer" "$T/l"
getfattr --only-values -n user.ninfer.segments "$T/l/objects/w.big" >"$T/segs.json"
umnt "$T/l"
before=$($PY -c 'import json,sys; print(sum(s["length"] for s in json.load(open(sys.argv[1]))[:3]))' "$T/segs.json")
mnt "$NGX_URL/bad/set.ninfer" "$T/b"
ngx_settle; ngx_clear
dd if="$T/b/objects/w.big" of="$T/b.out" bs=1M iflag=direct status=none 2>"$T/dd.err" &&
	fail "read through a bad part"
grep -q "Input/output error" "$T/dd.err" || fail "bad part: $(cat "$T/dd.err")"
got=$(stat -c %s "$T/b.out")
[ "$got" -le "$before" ] && [ "$got" -gt $((before - (1 << 20))) ] ||
	fail "bad part: dd wrote $got bytes, part 3's bytes start at $before"
cmp "$T/b.out" <(head -c "$got" "$T/obj.bin") || fail "bad part: the bytes before it"
dd if="$T/b/objects/w.big" bs=1M count=1 iflag=direct status=none | cmp - <(head -c $((1 << 20)) "$T/obj.bin") ||
	fail "bad part: the daemon does not serve on"
$PY - "$T/b/files.json" "$T/b/stats" <<'PY' || fail "bad part: files.json: $(head -c 3000 "$T/b/files.json")"
import json, sys
fj, st = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert fj[3]["status"] == "bad" and fj[3]["reason"], fj[3]
assert [f["status"] for f in fj[:3]] == ["present"] * 3, fj[:3]
assert all(f["remote"]["requests"] == 0 for f in fj[4:]), fj[4:]
assert st["checks_ahead"] >= 3, st["checks_ahead"]
PY
umnt "$T/b"
ngx_settle
! grep -E '"GET /bad/set.ninfer.part-000[4-9]' "$NGX_LOG" || fail "bad part: later parts asked for"
[ "$(grep -c 'files\[3\]' "$T/b.log")" = 1 ] || fail "bad part: logged: $(cat "$T/b.log")"
ok "a part checked ahead and found bad: EIO where the object reaches it ($got exact bytes before), logged once, later parts never asked, the daemon serves on"

# the control: without prefetch nothing comes from chunks, bytes the same
mnt "$U" "$T/m" -o prefetch_mem=0
cmp "$T/m/objects/w.big" "$T/obj.bin" || fail "prefetch_mem=0"
read -r refs hits <<<"$(counters "$T/m")"
[ "$refs" = 0 ] && [ "$hits" = 0 ] || fail "prefetch_mem=0: ref_bytes $refs, prefetch_hits $hits"
umnt "$T/m"
ok "prefetch_mem=0: the same bytes, none from chunks"

# the hold itself (nf-remote-get held): bytes read by reference stay right
# while their stream is freed (its chunks cancelled) and a new stream's
# windows reuse the freed buffers, until released
p1=$(cd "$W/set" && ls | grep 'part-0001$')
"$NF_REMOTE_GET" -o max_request=69633,prefetch_min=65536,prefetch_max=1M,prefetch_mem=8M \
	-p "$p1" "$U" held 1 300007 2000000 300007 >"$T/held.out" 2>"$T/held.err" ||
	fail "held: $(cat "$T/held.err")"
read -r _ nrefs nheld <"$T/held.err"
[ "$nrefs" -gt 0 ] && [ "$nheld" = 300007 ] || fail "held: not read from chunks: $(cat "$T/held.err")"
cmp "$T/held.out" <(tail -c +300008 "$W/set/$p1" | head -c 2000000) || fail "held: bytes differ"
ok "bytes held by reference across their stream's end and buffer reuse: byte-exact ($nrefs refs)"

# A view of many small objects (bench/gen_large.py: 20000 tensors of
# 16-264 bytes, 256-byte aligned, bindings out of step with the objects,
# 2 parts), the decoded model.safetensors read once, cmp against the local
# mount's.  It is fetched in a few windows per file (24 GETs at most, the
# part's header check included; 12 seen), which takes:
#   - the path joins ranges that overlap or lie within PATH_GAP of each
#     other (before, a range and so a request per object: 26,504 GETs);
#   - fill_behind: the first read in the part lands megabytes past its
#     payload start (another FUSE thread's readahead got there first), and
#     the bytes before it are queued as a window, not asked one object at
#     a time (8,675 GETs without it).
# (path_range's look back through overlapping ranges, which the last
# binding makes here by reading object 0 again, is nginx.sh's: this read
# made 15 GETs without it, a 70,000-object set 28,692.)
mkdir -p "$W/many"
$PY "$REMOTE_TESTS/../../bench/gen_large.py" "$W/many/many.ninfer" --objects 20000 --parts 2 >/dev/null
mnt "$W/many/many.ninfer" "$T/ml"
mnt "$NGX_URL/many/many.ninfer" "$T/mu"
ngx_settle; ngx_clear
cmp "$T/mu/decoded/model.safetensors" "$T/ml/decoded/model.safetensors" ||
	fail "many small objects: decoded model.safetensors differs from the local mount's"
ngx_settle
gets=$(grep -c '"GET /many/' "$NGX_LOG" || true)
umnt "$T/mu"
umnt "$T/ml"
[ "$gets" -le 24 ] || fail "many small objects: $gets GETs for the decoded model.safetensors: $(head -20 "$NGX_LOG")"
ok "the decoded model.safetensors of 20000 small objects over HTTP: the local mount's bytes, in $gets GETs"
