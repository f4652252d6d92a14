#!/usr/bin/env bash
# ninferfs s3://BUCKET/KEY MOUNTPOINT against a real S3 implementation: a
# one-node Ceph cluster with a RADOS Gateway (ceph.sh), cephx on, SigV4
# checked.  The 47-file set is uploaded with curl --aws-sigv4 (an
# independent client).  Proves: a wrong secret is exit 8 naming HTTP 403
# and the S3 code (SignatureDoesNotMatch), an unknown key the same with
# InvalidAccessKeyId, and nothing is mounted; the right credentials (from
# the environment, endpoint from -o endpoint=) mount the split set and
# every file reads byte-identical to the local mount; a part overwritten
# in the bucket while mounted fails the reads that touch it with EIO
# (ETag), files.json says why; the secret appears in no output (log,
# stats, files.json, validation.json, /proc/mounts, any xattr); once read
# with cache=, the set mounts with the gateway stopped (-o offline), and
# the secret is in no cache file.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ceph.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NF_FIXTURE:?}"

for b in ceph-mon ceph-osd radosgw radosgw-admin ceph-authtool monmaptool; do
	command -v "$b" >/dev/null || fail "$b is not installed (scripts/setup installs ceph-mon ceph-osd radosgw ceph-common)"
done

"$NF_FIXTURE" mixed "$T/set" >/dev/null
ceph_start
echo "ceph: cluster up in ${CEPH_START_MS} ms"
s3mb nfsets
for f in "$T"/set/mixed.ninfer*; do s3put nfsets "models/m1/$(basename "$f")" "$f"; done
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL \
	AWS_REGION AWS_DEFAULT_REGION AWS_SHARED_CREDENTIALS_FILE
export HOME=$T/home
mkdir -p "$HOME" "$T/x"
E=s3://nfsets/models/m1/mixed.ninfer

# --- wrong credentials: a clear refusal
rc=0
AWS_ACCESS_KEY_ID=$RGW_KEY AWS_SECRET_ACCESS_KEY=${RGW_SECRET}x \
	"$NINFERFS" "$E" "$T/x" -f -o endpoint="$RGW_URL" 2>"$T/e1" || rc=$?
[ "$rc" = 8 ] && grep -q "$E: HTTP 403 (SignatureDoesNotMatch); signed with credentials from the environment" "$T/e1" ||
	fail "wrong secret: exit $rc $(cat "$T/e1")"
rc=0
AWS_ACCESS_KEY_ID=NOSUCHKEY0000000000 AWS_SECRET_ACCESS_KEY=$RGW_SECRET \
	"$NINFERFS" "$E" "$T/x" -f -o endpoint="$RGW_URL" 2>"$T/e2" || rc=$?
[ "$rc" = 8 ] && grep -q "$E: HTTP 403 (InvalidAccessKeyId)" "$T/e2" || fail "unknown key: exit $rc $(cat "$T/e2")"
is_mounted "$T/x" && fail "mounted with wrong credentials"
san_clean "$T/e1"
ok "a wrong secret / an unknown key: exit 8 naming HTTP 403 SignatureDoesNotMatch / InvalidAccessKeyId, nothing mounted"

# --- the right ones: the split set, byte-exact
export AWS_ACCESS_KEY_ID=$RGW_KEY AWS_SECRET_ACCESS_KEY=$RGW_SECRET
mnt "$T/set/mixed.ninfer" "$T/l"
mnt "$E" "$T/r" -o endpoint="$RGW_URL"
tree_same "$T/l" "$T/r"
grep -q "\"url\": \"$RGW_URL/nfsets/models/m1/mixed.ninfer.part-0005\"" "$T/r/files.json" ||
	fail "files.json URL: $(grep url "$T/r/files.json" | head -3)"
ok "s3://: the 47-file set in a bucket mounts (SigV4), $TREE_FILES files byte-identical to the local mount"

# --- a part overwritten in the bucket while mounted: EIO (ETag)
umnt "$T/r"
mnt "$E" "$T/r" -o endpoint="$RGW_URL"
# two objects that share a part (not the entry): the first read records
# the part's ETag, the second comes after the overwrite
object_parts "$T/l" >"$T/parts"
read -r p o1 o2 < <(shared_part "$T/parts")
[ -n "$o2" ] || fail "no part with two objects: $(cat "$T/parts")"
cmp "$T/l/objects/$o1" "$T/r/objects/$o1" || fail "objects/$o1 before the overwrite"
P=$(printf 'mixed.ninfer.part-%04d' "$p")
cp "$T/set/$P" "$T/pp"
printf 'X' | dd of="$T/pp" bs=1 seek=100 conv=notrunc status=none
s3put nfsets "models/m1/$P" "$T/pp"
cat "$T/r/objects/$o2" >/dev/null 2>"$T/cat.err" && fail "objects/$o2 read after $P was overwritten"
grep -q "Input/output error" "$T/cat.err" || fail "overwritten: $(cat "$T/cat.err")"
$PY - "$T/r/files.json" "$p" <<'PY' || fail "files.json: $(cat "$T/r/files.json" | head -120)"
import json, sys
f = json.load(open(sys.argv[1]))[int(sys.argv[2])]
assert f["status"] == "bad" and "changed on the server" in f["reason"], f
assert f["remote"]["status"] == "changed", f
PY
{ cat "$T/r/stats" "$T/r/files.json" "$T/r/validation.json" /proc/mounts
  (cd "$T/r" && getfattr -R -d -m - . 2>/dev/null) || true; } >"$T/seen"
grep -q 'user.ninfer' "$T/seen" || fail "no xattr in what was seen"
umnt "$T/r"
umnt "$T/l"
cat "$T/r.log" "$T/e1" "$T/e2" >>"$T/seen"
grep -qF "$RGW_SECRET" "$T/seen" && fail "the secret leaked: $(grep -nF "$RGW_SECRET" "$T/seen" | head -3)"
ok "$P overwritten in the bucket while mounted: objects/$o2 fails with EIO, files.json: bad, changed on the server; the secret in no log, stats, report, mount entry or xattr"

# --- offline: one mount with cache= reads the set, then the gateway is
# stopped and the set mounts from that cache alone (-o offline: the 47
# files' records, no request); the secret is in no cache file either
s3put nfsets "models/m1/$P" "$T/set/$P"   # the part as it was
C=$T/cache
mnt "$T/set/mixed.ninfer" "$T/l"
fill_cache "$E" "$T/l" "$C" -o endpoint="$RGW_URL"
kill "$CEPH_RGW_PID"
wait "$CEPH_RGW_PID" 2>/dev/null || true
curl -s -o /dev/null --max-time 2 "$RGW_URL/" && fail "radosgw still answers"
mnt "$E" "$T/c2" -o endpoint="$RGW_URL",cache="$C",offline
tree_same "$T/l" "$T/c2"
grep -q '"requests": [1-9]' "$T/c2/files.json" && fail "offline: requests counted: $(grep requests "$T/c2/files.json" | sort | uniq -c)"
umnt "$T/c2"
umnt "$T/l"
grep -rqF "$RGW_SECRET" "$C" "$T/fill.log" "$T/c2.log" && fail "the secret is in the cache or a log"
ok "s3:// offline: radosgw stopped, the set mounts from the cache, $TREE_FILES files byte-identical, no request; no secret in the cache"
