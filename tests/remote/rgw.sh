#!/usr/bin/env bash
# The remote engine against a real S3 implementation: a one-node Ceph
# cluster with a RADOS Gateway (ceph.sh), cephx on, SigV4 checked.  The
# objects are uploaded with curl --aws-sigv4 (an independent client; the
# engine only reads).  Proves: wrong secret -> 403 SignatureDoesNotMatch
# named, unknown key -> 403 InvalidAccessKeyId, no credentials -> 403
# AccessDenied; right credentials (environment, or a profile of a shared
# credentials file, endpoint from -o endpoint= or AWS_ENDPOINT_URL) read
# byte-exact ranges of an entry and its parts, one with a name that needs
# encoding (the SigV4 canonical URI); stat = the object's MD5 ETag; an
# object overwritten between reads -> 412 on If-Match -> 'changed'; the
# secret appears in no output.  Prints the cluster's start time and RSS.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ceph.sh"

for b in ceph-mon ceph-osd radosgw radosgw-admin ceph-authtool monmaptool; do
	command -v "$b" >/dev/null || fail "$b is not installed (scripts/setup installs ceph-mon ceph-osd radosgw ceph-common)"
done
ceph_start
echo "ceph: cluster up in ${CEPH_START_MS} ms, mon+osd+rgw RSS $(($(ceph_rss_kib) / 1024)) MiB"

mkdir -p "$T/up"
mkfile "$T/up/e" 3000000 21
mkfile "$T/up/p1" 2000000 22
mkfile "$T/up/p2" 100000 23
s3mb nfbucket
s3put nfbucket sets/a/e.ninfer "$T/up/e"
s3put nfbucket sets/a/e.ninfer.part-0001 "$T/up/p1"
s3put nfbucket "sets/a/p%20art%2B%3D2" "$T/up/p2"   # the key "p art+=2"
E=s3://nfbucket/sets/a/e.ninfer
clean_env() { unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE \
	AWS_ENDPOINT_URL AWS_REGION AWS_DEFAULT_REGION AWS_SHARED_CREDENTIALS_FILE; export HOME=$T/home; }
clean_env
mkdir -p "$HOME"

# no credentials at all: unsigned requests, refused
rc=0; rget -o endpoint="$RGW_URL" "$E" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'HTTP 403 (AccessDenied); unsigned: no credentials found' "$T/rget.err" ||
	fail "anonymous: $(cat "$T/rget.err")"
ok "no credentials: 403 AccessDenied"

export AWS_ACCESS_KEY_ID=$RGW_KEY AWS_SECRET_ACCESS_KEY=${RGW_SECRET}x
rc=0; rget -s "$T/st" -o endpoint="$RGW_URL" "$E" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'HTTP 403 (SignatureDoesNotMatch); signed with credentials from the environment' "$T/rget.err" ||
	fail "wrong secret: $(cat "$T/rget.err")"
grep -q '"status": "bad", "http": 403' "$T/st" || fail "wrong secret stats: $(cat "$T/st")"
ok "wrong secret: 403 SignatureDoesNotMatch"
export AWS_ACCESS_KEY_ID=NOSUCHKEY0000 AWS_SECRET_ACCESS_KEY=$RGW_SECRET
rc=0; rget -o endpoint="$RGW_URL" "$E" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'HTTP 403 (InvalidAccessKeyId)' "$T/rget.err" || fail "unknown key: $(cat "$T/rget.err")"
ok "unknown access key: 403 InvalidAccessKeyId"

# right credentials from the environment
export AWS_ACCESS_KEY_ID=$RGW_KEY AWS_SECRET_ACCESS_KEY=$RGW_SECRET
P=(-p e.ninfer.part-0001 -p 'p art+=2')
rget -s "$T/st" -o endpoint="$RGW_URL" "${P[@]}" "$E" read 0 0 4096 read 0 1000000 1500000 \
	segs 1 0:1000,1000:1998000,1999000:1000 read 2 0 100000 >"$T/got" ||
	fail "right credentials: $(cat "$T/rget.err")"
{ slice "$T/up/e" 0 4096; slice "$T/up/e" 1000000 1500000; cat "$T/up/p1" "$T/up/p2"; } |
	cmp - "$T/got" || fail "bytes from RGW"
grep -q "\"file\": 2, \"url\": \"$RGW_URL/nfbucket/sets/a/p%20art%2B%3D2\", \"status\": \"ok\"" "$T/st" ||
	fail "part url: $(cat "$T/st")"
ok "signed range reads of an entry and two parts (one named 'p art+=2'): byte-exact"

# stat: RGW's ETag of a single PUT is the MD5 of the object
want="$(stat -c %s "$T/up/p1") \"$(md5sum "$T/up/p1" | cut -d' ' -f1)\""
[ "$(rget -o endpoint="$RGW_URL" "${P[@]}" "$E" stat 1)" = "$want" ] || fail "stat: $(cat "$T/rget.err")"
ok "stat = size and MD5 ETag"

# a profile of a shared credentials file, the endpoint from AWS_ENDPOINT_URL
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY
mkdir -p "$HOME/.aws"
# the default profile holds a wrong pair: the refusal names where it came from
printf '[default]\naws_access_key_id = %s\naws_secret_access_key = nope\n' "$RGW_KEY" >"$HOME/.aws/credentials"
rc=0; AWS_ENDPOINT_URL=$RGW_URL rget "$E" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q "SignatureDoesNotMatch); signed with credentials from profile default of $HOME/.aws/credentials" "$T/rget.err" ||
	fail "profile refusal: $(cat "$T/rget.err")"
printf '[default]\naws_access_key_id = nope\naws_secret_access_key = nope\n[nf]\naws_access_key_id = %s\naws_secret_access_key = %s\n' \
	"$RGW_KEY" "$RGW_SECRET" >"$HOME/.aws/credentials"
export AWS_PROFILE=nf AWS_ENDPOINT_URL=$RGW_URL
rget "$E" read 0 2999000 1000 >"$T/got" || fail "profile: $(cat "$T/rget.err")"
slice "$T/up/e" 2999000 1000 | cmp - "$T/got" || fail "profile bytes"
ok "credentials from profile nf of ~/.aws/credentials, endpoint from AWS_ENDPOINT_URL"

# overwritten between two reads: If-Match gets 412, the file is 'changed'
rm -f "$T/go" "$T/r1"
rget -s "$T/st" "$E" read 0 0 100 touch "$T/r1" wait "$T/go" read 0 100 100 >/dev/null &
rp=$!
for _ in $(seq 200); do [ -e "$T/r1" ] && break; sleep 0.05; done
[ -e "$T/r1" ] || fail "first read did not happen: $(cat "$T/rget.err")"
mkfile "$T/up/e2" 3000000 29
s3put nfbucket sets/a/e.ninfer "$T/up/e2"
touch "$T/go"
rc=0; wait $rp || rc=$?
[ "$rc" = 1 ] && grep -q 'If-Match failed (HTTP 412 (PreconditionFailed))' "$T/rget.err" ||
	fail "overwrite: rc=$rc $(cat "$T/rget.err")"
grep -q '"status": "changed", "http": 412' "$T/st" || fail "overwrite stats: $(cat "$T/st")"
ok "object overwritten between reads: 412 PreconditionFailed, the file is 'changed'"

# prefetching sequential reads of the new object
rget -s "$T/st" -o prefetch_min=256K,prefetch_max=1M "$E" seq 0 0 3000000 65536 >"$T/got" ||
	fail "seq: $(cat "$T/rget.err")"
cmp "$T/up/e2" "$T/got" || fail "seq bytes"
grep -q '"prefetch_hits": [1-9]' "$T/st" || fail "no prefetch: $(cat "$T/st")"
ok "sequential reads through the prefetcher: byte-exact"

# the secret is in no output, stats or message
if grep -rqF "$RGW_SECRET" "$T/rget.err" "$T/st" "$T/got" 2>/dev/null; then fail "the secret leaked"; fi
ok "the secret appears in no message or stats"
