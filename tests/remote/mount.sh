#!/usr/bin/env bash
# ninferfs URL MOUNTPOINT against nginx on loopback (issue 14, the daemon's
# side).  Proves:
#   - the mount test matrix over HTTP: every fixture set of the local
#     mount tests (text: one file; mixed: 47 files; interleaved, shared,
#     nvfp4rows, unknown, names, hostile: 300 hostile binding names), and
#     mixed again with decoded_dtype=bf16,
#     mounted from their URLs give the same tree, the same bytes (cmp of
#     every file: objects, planes, bindings, decoded views and npy,
#     model.safetensors, artifact.json, uses.json) and the same xattrs as
#     the same sets mounted from the directory nginx serves; mixed also
#     with decoded_dtype=f16 and with -o direct_io;
#   - https with a private CA (in no system store): refused without
#     -o cafile= (exit 8 naming the URL and the certificate problem), the
#     same tree and bytes with it, over HTTP/2;
#   - laziness, from the access log: the mount asks for exactly the entry's
#     [0, 32) and its JSON; reading one object (spread over 12 parts) asks
#     only for the parts it spans, each part's 32-byte header once and
#     each byte of the object once, nothing else; a second cat makes no
#     request;
#     stats counts the same requests per file;
#   - a daemonized mount (no -f) of a URL serves;
#   - credentials in the URL and in a -o value appear nowhere: not in
#     /proc/mounts, the daemon's log, stats, files.json, validation.json,
#     any xattr;
#   - a part missing (404): EIO, logged once naming its URL and HTTP 404;
#   - the entry missing (404) or nobody listening: exit 8 naming the URL and
#     the failure; a remote option with a local path, or a bad value: 16;
#   - a part path '../evil' (seed §3.3, mounted with -o lenient) is never
#     requested; a part named 'x%2F..%2Fevil' is requested as one encoded
#     segment and reads the same bytes as locally.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NF_FIXTURE:?}"

RP() { $PY "$REMOTE_TESTS/reports.py" "$@"; }
settle() { ngx_settle; grep -v ' "GET /.nf-settle/' "$NGX_LOG" >"$T/access.log" || true; }
LOG=$T/access.log
xattrs() { (cd "$1" && getfattr -R -d -m - . 2>/dev/null); }

W=$T/www
mkdir -p "$W"
# every fixture set the local mount tests use (tests/mount/): one-file and
# split sets, interleaved and shared payloads, nvfp4 rows, unknown formats,
# odd names
SETS="text mixed interleaved shared nvfp4rows unknown names hostile"
for s in $SETS; do "$NF_FIXTURE" $s "$W/$s" >/dev/null || fail "nf-fixture $s"; done
NGX_TLS=1 ngx_start "$W"
U=$NGX_URL

# --- the matrix: the same tree, bytes and xattrs locally and over HTTP,
# each set with the default decoded dtype (f32) and mixed (every codec of
# the fixtures) also with bf16
matrix() { # SET LABEL [ninferfs args...]
	local s=$1 label=$2
	shift 2
	mnt "$W/$s/$s.ninfer" "$T/l-$s" "$@"
	mnt "$U/$s/$s.ninfer" "$T/r-$s" "$@"
	tree_same "$T/l-$s" "$T/r-$s"
	xattrs "$T/l-$s" >"$T/xl"
	xattrs "$T/r-$s" >"$T/xr"
	cmp -s "$T/xl" "$T/xr" || fail "$label: xattrs differ: $(diff "$T/xl" "$T/xr" | head)"
	grep -q '"engine": "remote"' "$T/r-$s/stats" || fail "$label: engine: $(head -5 "$T/r-$s/stats")"
	grep -q '"engine": "io_uring"' "$T/l-$s/stats" || fail "$label: local engine"
	umnt "$T/r-$s"
	umnt "$T/l-$s"
	ok "$label over HTTP ($(ls "$W/$s" | grep -c "^$s.ninfer") files on the server): $((TREE_FILES - TREE_ERRS)) files byte-identical to the local mount (cmp), $TREE_ERRS failing alike on both (EOPNOTSUPP), the same xattrs"
}
t0=$(date +%s)
for s in $SETS; do matrix "$s" "$s"; done
matrix mixed "mixed, decoded_dtype=bf16" -o decoded_dtype=bf16
matrix mixed "mixed, decoded_dtype=f16" -o decoded_dtype=f16
matrix mixed "mixed, direct_io" -o direct_io
echo "matrix: $(($(date +%s) - t0)) s"

# mmap(2) and np.load(mmap_mode="r") of the remote mount: the same bytes,
# dtypes and shapes as the local mount (page faults reach the engine, not read(2))
mnt "$W/mixed/mixed.ninfer" "$T/lm"
mnt "$U/mixed/mixed.ninfer" "$T/rm"
n=$($PY - "$T/lm" "$T/rm" <<'PY'
import mmap, os, sys
import numpy as np
l, r = sys.argv[1], sys.argv[2]
n = 0
for d in ("objects", "decoded/objects"):
    for f in sorted(os.listdir(os.path.join(r, d))):
        want = open(os.path.join(l, d, f), "rb").read()
        with open(os.path.join(r, d, f), "rb") as fh:
            if not want:   # mmap(2) of 0 bytes is EINVAL
                assert os.fstat(fh.fileno()).st_size == 0, f
                continue
            m = mmap.mmap(fh.fileno(), 0, prot=mmap.PROT_READ)
            assert m[:] == want, f
            m.close()
        n += 1
for root, _, names in os.walk(os.path.join(r, "decoded", "npy")):
    for f in names:
        p = os.path.join(root, f)
        x = np.load(p, mmap_mode="r")
        y = np.load(os.path.join(l, os.path.relpath(p, r)), mmap_mode="r")
        assert (x.dtype, x.shape) == (y.dtype, y.shape) and np.asarray(x).tobytes() == np.asarray(y).tobytes(), p
        n += 1
print(n)
PY
) || fail "mmap over HTTP"
umnt "$T/rm"
umnt "$T/lm"
[ "$n" -ge 100 ] || fail "mmap: only $n files"
ok "mmap and np.load(mmap_mode=\"r\") over HTTP: $n objects, decoded views and npy files as on the local mount"

# --- https with a private CA: verified by default, -o cafile= names the CA
TU=$NGX_TLS_URL/mixed/mixed.ninfer
mkdir -p "$T/tx"
MNTS+=("$T/tx")
rc=0
timeout 30 "$NINFERFS" "$TU" "$T/tx" -f 2>"$T/e" || rc=$?
san_clean "$T/e"
[ "$rc" != 124 ] || fail "https with an unknown CA: mounted (the daemon served until killed)"
[ "$rc" = 8 ] && grep -q "$TU: .*SSL certificate problem" "$T/e" || fail "unknown CA: exit $rc $(cat "$T/e")"
is_mounted "$T/tx" && fail "mounted with an unverified certificate"
ngx_settle; ngx_clear
mnt "$W/mixed/mixed.ninfer" "$T/lt"
mnt "$TU" "$T/rt" -o cafile="$NGX_DIR/ca.pem"
tree_same "$T/lt" "$T/rt"
umnt "$T/rt"
umnt "$T/lt"
settle
h2=$(grep -c '"GET /mixed/mixed.ninfer[^"]* HTTP/2.0"' "$LOG" || true)
[ "$h2" -ge 47 ] && ! grep -q 'HTTP/1' "$LOG" || fail "https mount: $h2 HTTP/2 requests: $(head "$LOG")"
ok "https with a private CA: refused without cafile= (exit 8, certificate problem named); with it $TREE_FILES files byte-identical to the local mount, $h2 requests over HTTP/2"

# --- laziness
J=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["json_bytes"])' "$W/mixed/expect/manifest.json")
ngx_settle; ngx_clear
mnt "$U/mixed/mixed.ninfer" "$T/r"
settle
[ "$(wc -l <"$LOG")" = 2 ] &&
	grep -q '"GET /mixed/mixed.ninfer HTTP/1.1" "bytes=0-31"' "$LOG" &&
	grep -q "\"GET /mixed/mixed.ninfer HTTP/1.1\" \"bytes=32-$((32 + J - 1))\"" "$LOG" ||
	fail "mount requests: $(cat "$LOG")"
ok "mounting asks for the entry's [0, 32) and its JSON [32, $((32 + J))) only"

# the object spread over the most parts, from its segments
mnt "$W/mixed/mixed.ninfer" "$T/l"
obj=$(cd "$T/l/objects" && for f in *; do
	printf '%s %s\n' "$(getfattr --only-values -n user.ninfer.segments "$f" |
		$PY -c 'import json,sys; print(len(json.load(sys.stdin)))')" "$f"
done | sort -rn | head -1 | cut -d' ' -f2)
getfattr --only-values -n user.ninfer.segments "$T/l/objects/$obj" >"$T/segs.json"
ngx_settle; ngx_clear
cmp "$T/l/objects/$obj" "$T/r/objects/$obj" || fail "object $obj differs"
settle
$PY - "$T/segs.json" "$LOG" /mixed <<'PY' || fail "object $obj: requests: $(cat "$LOG")"
import json, re, sys
segs = json.load(open(sys.argv[1]))
want = {}
for s in segs:
    want.setdefault(s["path"], []).append((s["file_offset"], s["file_offset"] + s["length"]))
got = {}
for line in open(sys.argv[2]):
    m = re.match(r'\d+ "GET %s/(\S+) HTTP/1.1" "bytes=(\d+)-(\d+)" "[^"]*" 206 ' % sys.argv[3], line)
    assert m, line
    got.setdefault(m.group(1), []).append((int(m.group(2)), int(m.group(3)) + 1))
assert set(got) == set(want), (sorted(got), sorted(want))
def merge(spans):
    """adjacent spans joined; an overlap (a byte asked for twice) fails"""
    out = []
    for a, b in sorted(spans):
        assert not out or out[-1][1] <= a, ("overlap", spans)
        if out and out[-1][1] == a:
            out[-1] = (out[-1][0], b)
        else:
            out.append((a, b))
    return out
for name, spans in want.items():
    g = sorted(got[name])
    if name != "mixed.ninfer":
        assert g.count((0, 32)) == 1, (name, g)   # the part's header, once
        g.remove((0, 32))
    assert merge(g) == merge(spans), (name, g, spans)
print("%d parts, %d requests" % (len(got), sum(len(v) for v in got.values())))
PY
ok "reading objects/$obj ($(tr -cd '{' <"$T/segs.json" | wc -c) segments) asks only for the parts it spans: each part's header once and each byte of the object once"
ngx_clear
cat "$T/r/objects/$obj" >/dev/null
settle
[ "$(wc -l <"$LOG")" = 0 ] || fail "second cat: $(cat "$LOG")"
ok "a second cat of it makes no request"
# stats and files.json count the requests of each file
f=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))[0]["file"])' "$T/segs.json")
$PY - "$T/r/stats" "$T/r/files.json" "$f" "$U" <<'PY' || fail "stats/files.json: $(cat "$T/r/stats" | head -60)"
import json, sys
st, fj, f, u = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), int(sys.argv[3]), sys.argv[4]
r = st["files"][f]["remote"]
assert r["url"] == "%s/mixed/mixed.ninfer.part-%04d" % (u, f) and r["status"] == "ok", r
assert r["requests"] == 2 and r["retries"] == 0 and r["bytes_fetched"] > 32, r
assert st["files"][f]["path"] == r["url"], st["files"][f]
assert fj[f]["url"] == r["url"] and fj[f]["remote"]["requests"] == 2, fj[f]
assert fj[f]["status"] == "present", fj[f]
untouched = [x for x in fj if x["status"] == "unchecked"]
assert len(untouched) > 20 and all(x["remote"]["requests"] == 0 for x in untouched), untouched[:2]
PY
ok "stats and files.json: the part's URL, status, 2 requests; parts never read are unchecked, 0 requests"
umnt "$T/r"
umnt "$T/l"

# --- daemonized
mkdir -p "$T/bg"
MNTS+=("$T/bg")
"$NINFERFS" "$U/mixed/mixed.ninfer" "$T/bg" 2>"$T/bg.err" || fail "daemonized mount: $(cat "$T/bg.err")"
p=$(pgrep -n -f "^$NINFERFS $U/mixed/mixed.ninfer $T/bg" || true)
[ -n "$p" ] && DPIDS+=("$p")
mnt "$W/mixed/mixed.ninfer" "$T/l2"
tree_same "$T/l2" "$T/bg"
umnt "$T/l2"
grep -q "$U/mixed/mixed.ninfer $T/bg fuse.ninferfs" /proc/mounts || fail "fsname: $(grep "$T/bg" /proc/mounts)"
fusermount3 -u "$T/bg"
ok "a daemonized mount of a URL serves: $TREE_FILES files as locally (fsname is the URL)"

# --- credentials appear nowhere
V=http://nfuser:s3cr3tPW@127.0.0.1:$NGX_PORT/mixed/mixed.ninfer
mnt "$V" "$T/c" -o "endpoint=http://k:s3cr3tEP@127.0.0.1:1/,tries=2"
for o in "$T"/c/objects/* "$T"/c/decoded/*; do [ -f "$o" ] && cat "$o" >/dev/null; done
{ cat /proc/mounts "$T/c/stats" "$T/c/files.json" "$T/c/validation.json"; xattrs "$T/c"; } >"$T/seen"
umnt "$T/c"
cat "$T/c.log" >>"$T/seen"
grep -q 's3cr3t' "$T/seen" && fail "a credential shows: $(grep -n s3cr3t "$T/seen" | head)"
grep -q 'http://\*\*\*@127.0.0.1' "$T/seen" || fail "no redacted URL in what was seen"
ok "credentials in the URL and in -o endpoint= appear in no mount entry, log, stats, files.json, validation.json or xattr"

# --- refusals
mkdir -p "$T/x"
rc=0
"$NINFERFS" "$U/mixed/nothere.ninfer" "$T/x" -f 2>"$T/e" || rc=$?
[ "$rc" = 8 ] && grep -q "$U/mixed/nothere.ninfer: HTTP 404" "$T/e" || fail "404 entry: $rc $(cat "$T/e")"
san_clean "$T/e"
rc=0
timeout 30 "$NINFERFS" "http://nfuser:s3cr3tPW@127.0.0.1:$NGX_PORT/mixed/nothere.ninfer" "$T/x" -f 2>"$T/e" || rc=$?
[ "$rc" = 8 ] && grep -q "http://\*\*\*@127.0.0.1:$NGX_PORT/mixed/nothere.ninfer: HTTP 404" "$T/e" &&
	! grep -q 's3cr3t\|nfuser' "$T/e" || fail "404 entry with credentials: $rc $(cat "$T/e")"
port=$(free_port)
rc=0
"$NINFERFS" "http://127.0.0.1:$port/x/e.ninfer" "$T/x" -f -o tries=1 2>"$T/e" || rc=$?
[ "$rc" = 8 ] && grep -q "http://127.0.0.1:$port/x/e.ninfer: .*onnect" "$T/e" || fail "no listener: $rc $(cat "$T/e")"
rc=0
"$NINFERFS" "$W/mixed/mixed.ninfer" "$T/x" -f -o cache=/tmp 2>"$T/e" || rc=$?
[ "$rc" = 16 ] && grep -q "cache=/tmp is an option of remote sources" "$T/e" || fail "local + remote option: $rc $(cat "$T/e")"
rc=0
"$NINFERFS" "$U/mixed/mixed.ninfer" "$T/x" -f -o tries=0 2>"$T/e" || rc=$?
[ "$rc" = 16 ] && grep -q 'option tries: bad value "0"' "$T/e" || fail "bad value: $rc $(cat "$T/e")"
is_mounted "$T/x" && fail "mounted after a refusal"
ok "the entry missing (HTTP 404) or nobody listening: exit 8 naming the URL (user:password@ as ***@); remote options with a local path, a bad value: exit 16"

# --- a part missing on the server (404): its reads fail with EIO, logged
# once naming its URL and the status, files.json says missing and why
cp -r "$W/mixed" "$W/miss"
rm "$W/miss/mixed.ninfer.part-0007"
mnt "$U/miss/mixed.ninfer" "$T/m7"
nerr=0
for o in "$T"/m7/objects/*; do cat "$o" >/dev/null 2>&1 || nerr=$((nerr + 1)); done
[ "$nerr" -ge 1 ] || fail "no object read failed with part 7 missing"
$PY - "$T/m7/files.json" "$U/miss/mixed.ninfer.part-0007" <<'PY' || fail "files.json: $(head -c 3000 "$T/m7/files.json")"
import json, sys
f = json.load(open(sys.argv[1]))[7]
assert f["status"] == "missing" and f["reason"].endswith(sys.argv[2] + ": HTTP 404"), f
assert f["remote"]["status"] == "missing" and f["remote"]["http_status"] == 404, f
PY
umnt "$T/m7"
[ "$(grep -c 'files\[7\]' "$T/m7.log")" = 1 ] && grep -q "files\[7\]: .*$U/miss/mixed.ninfer.part-0007: HTTP 404; reads touching it fail with EIO" "$T/m7.log" ||
	fail "part 7's 404 in the log: $(cat "$T/m7.log")"
ok "a part missing on the server: $nerr objects fail with EIO, logged once naming its URL and HTTP 404, files.json: missing, HTTP 404"

# --- part paths: '../evil' never requested; 'x%2F..%2Fevil' as one encoded segment
RP rename-part "$W/mixed/mixed.ninfer" "$W/dd" 3 '../evil'
RP rename-part "$W/mixed/mixed.ninfer" "$W/enc" 3 'x%2F..%2Fevil'
ngx_settle; ngx_clear
mnt "$U/dd/mixed.ninfer" "$T/dd" -o lenient
find "$T/dd" -type f ! -name stats -exec cat {} + >/dev/null 2>&1 || true
settle
grep -q evil "$LOG" && fail "'../evil' was requested: $(grep evil "$LOG")"
grep -q '"path": "../evil"' "$T/dd/files.json" || fail "files.json: $(head -30 "$T/dd/files.json")"
umnt "$T/dd"
mnt "$W/enc/mixed.ninfer" "$T/le"
mnt "$U/enc/mixed.ninfer" "$T/re"
ngx_settle; ngx_clear
tree_same "$T/le" "$T/re"
settle
grep -v '"GET /enc/mixed.ninfer\(.part-[0-9]*\)\? HTTP/1.1"' "$LOG" | grep -vq '"GET /enc/x%252F..%252Fevil HTTP/1.1"' &&
	fail "other names requested: $(grep -v '/enc/mixed' "$LOG" | head)"
grep -q '"GET /enc/x%252F..%252Fevil HTTP/1.1" "bytes=0-31"' "$LOG" || fail "encoded part: $(grep -v /enc/mixed "$LOG" | head)"
umnt "$T/re"
umnt "$T/le"
ok "a part path '../evil' is never requested (lenient mount); 'x%2F..%2Fevil' is one encoded segment, the same bytes as locally"
