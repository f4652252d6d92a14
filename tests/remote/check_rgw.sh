#!/usr/bin/env bash
# ninfer-check s3://BUCKET/KEY against a real S3 implementation: a one-node
# Ceph cluster with a RADOS Gateway (ceph.sh), cephx on, SigV4 checked.  The
# 47-file fixture set is uploaded with curl --aws-sigv4 (an independent
# client).  Proves: with the right credentials (environment, endpoint from
# -o endpoint= or AWS_ENDPOINT_URL) the split set in the bucket checks
# clean, with the same report as locally, also with --deep; a wrong secret
# is exit 8 naming HTTP 403 SignatureDoesNotMatch and where the
# credentials came from; a part missing from the bucket is FILE_MISSING
# naming HTTP 404 NoSuchKey; the secret appears in no output.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ceph.sh"
: "${NINFER_CHECK:?}" "${NF_FIXTURE:?}"

for b in ceph-mon ceph-osd radosgw radosgw-admin ceph-authtool monmaptool; do
	command -v "$b" >/dev/null || fail "$b is not installed (scripts/setup installs ceph-mon ceph-osd radosgw ceph-common)"
done
RP() { $PY "$REMOTE_TESTS/reports.py" "$@"; }
chk() {
	rc=0
	"$NINFER_CHECK" "$@" 2>"$T/chk.err" || rc=$?
	san_clean "$T/chk.err"
}

"$NF_FIXTURE" mixed "$T/set" >/dev/null
chk --json "$T/set/mixed.ninfer" >"$T/local.json"
chk --json --deep "$T/set/mixed.ninfer" >"$T/local-deep.json"
ceph_start
echo "ceph: cluster up in ${CEPH_START_MS} ms"
s3mb nfsets
for f in "$T"/set/mixed.ninfer*; do
	n=$(basename "$f")
	s3put nfsets "models/m1/$n" "$f"
	[ "$n" = mixed.ninfer.part-0005 ] || s3put nfsets "models/m2/$n" "$f"   # m2 lacks part 5
done
unset AWS_ACCESS_KEY_ID AWS_SECRET_ACCESS_KEY AWS_SESSION_TOKEN AWS_PROFILE AWS_ENDPOINT_URL \
	AWS_REGION AWS_DEFAULT_REGION AWS_SHARED_CREDENTIALS_FILE
export HOME=$T/home
mkdir -p "$HOME"

export AWS_ACCESS_KEY_ID=$RGW_KEY AWS_SECRET_ACCESS_KEY=$RGW_SECRET
chk --json -o endpoint="$RGW_URL" s3://nfsets/models/m1/mixed.ninfer >"$T/r.json"
[ "$rc" = 0 ] || fail "right credentials: exit $rc $(cat "$T/r.json" "$T/chk.err")"
RP same "$T/local.json" "$T/r.json" || fail "the reports differ"
grep -q '"entry": "s3://nfsets/models/m1/mixed.ninfer"' "$T/r.json" || fail "entry: $(grep entry "$T/r.json")"
AWS_ENDPOINT_URL=$RGW_URL chk --json --deep s3://nfsets/models/m1/mixed.ninfer >"$T/r.json"
[ "$rc" = 0 ] || fail "--deep: exit $rc $(cat "$T/r.json" "$T/chk.err")"
RP same "$T/local-deep.json" "$T/r.json" || fail "--deep: the reports differ"
ok "a 47-file set in a bucket: clean, the same report as locally, with and without --deep (SigV4, endpoint from -o and AWS_ENDPOINT_URL)"

chk -o endpoint="$RGW_URL" s3://nfsets/models/m2/mixed.ninfer >"$T/r.txt"
[ "$rc" = 1 ] && grep -q "FILE_MISSING  files\[5\] mixed.ninfer.part-0005: mixed.ninfer.part-0005: $RGW_URL/nfsets/models/m2/mixed.ninfer.part-0005: HTTP 404 (NoSuchKey)" "$T/r.txt" ||
	fail "missing part: exit $rc $(cat "$T/r.txt")"
ok "a part missing from the bucket: FILE_MISSING naming its URL and HTTP 404 (NoSuchKey), exit 1"

export AWS_SECRET_ACCESS_KEY=${RGW_SECRET}x
chk --json -o endpoint="$RGW_URL" s3://nfsets/models/m1/mixed.ninfer >"$T/r.json"
[ "$rc" = 8 ] || fail "wrong secret: exit $rc"
grep -q '"evidence": "s3://nfsets/models/m1/mixed.ninfer: HTTP 403 (SignatureDoesNotMatch); signed with credentials from the environment"' "$T/r.json" ||
	fail "wrong secret: $(cat "$T/r.json")"
grep -q '"code": "ENTRY_UNREADABLE"' "$T/r.json" || fail "wrong secret: code"
chk -o endpoint="$RGW_URL" s3://nfsets/models/m1/mixed.ninfer >"$T/r.txt"
if grep -qF "$RGW_SECRET" "$T/r.json" "$T/r.txt" "$T/chk.err"; then fail "the secret leaked"; fi
ok "a wrong secret: exit 8, ENTRY_UNREADABLE naming HTTP 403 (SignatureDoesNotMatch) and where the credentials came from; the secret in no output"
