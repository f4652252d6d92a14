#!/usr/bin/env bash
# ninfer-check URL (issue 14, the reader's side) against nginx on loopback.
# Proves, each time against the same set checked from the directory nginx
# serves it from (reports.py same: findings, verdict, exit status, counts;
# evidence too but where a file could not be read):
#   - the fixture sets text (one file) and mixed (47 files) check the same,
#     with and without --deep;
#   - laziness, from the access log: a check asks for exactly the entry's
#     [0, 32) and its JSON, and [0, 32) of every part, nothing else;
#     --deep asks for every byte of every file exactly once (each file's
#     ranges disjoint and covering it), and $bytes_sent is the set's size
#     plus the response headers;
#   - the reader's API on the remote set (nf-reader-api: -EREMOTE, URLs,
#     nf_file_pread, objects through the engine, uses.json, a part changed
#     on the server);
#   - all 95 cases of the hostile corpus check the same, with and without
#     --deep, and nginx is asked for no name but the case's own two (a part
#     path that breaks seed §3.3 is never requested); a part name that
#     needs encoding is requested as one encoded segment;
#   - a part missing (404): FILE_MISSING naming the URL and HTTP 404; a
#     part refused (403): FILE_UNREADABLE naming them; the entry missing:
#     exit 8 naming the URL and HTTP 404;
#   - https with a private CA: ENTRY_UNREADABLE (exit 8) naming the
#     certificate problem without -o cafile=, the same report with it;
#   - credentials in the URL (and in a -o value) appear in no output;
#   - a JSON directory claimed 1 GiB and broken at byte 6 is not
#     downloaded: one 64 KiB chunk, the same JSON_SYNTAX as locally; broken
#     after 3 MB of a 256 MiB claim: under 8 MiB fetched; a claim above
#     --max-json: only the header fetched; a valid 3 MB directory is
#     fetched in doubling chunks, each byte once;
#   - usage errors: an unknown -o key, -o with a local path; ninfer-pack
#     refuses a URL.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"
: "${NINFER_CHECK:?}" "${NINFER_PACK:?}" "${NF_FIXTURE:?}" "${NF_READER_API:?}" "${NF_CORPUS:?}"

RP() { $PY "$REMOTE_TESTS/reports.py" "$@"; }
# chk ARGS...: ninfer-check, stderr in $T/chk.err (sanitizer-clean), exit status in $rc
chk() {
	rc=0
	"$NINFER_CHECK" "$@" 2>"$T/chk.err" || rc=$?
	san_clean "$T/chk.err"
}
# the access log once every request made so far is in it (ngx_settle), less
# the sentinel: $T/access.log
settle() { ngx_settle; grep -v ' "GET /.nf-settle/' "$NGX_LOG" >"$T/access.log" || true; }
LOG=$T/access.log

W=$T/www
mkdir -p "$W"
"$NF_FIXTURE" text "$W/text" >/dev/null
"$NF_FIXTURE" mixed "$W/mixed" >/dev/null
NGX_TLS=1 ngx_start "$W" 'location = /deny/mixed.ninfer.part-0009 { return 403; }'
U=$NGX_URL

# --- the fixture sets: the same report locally and over HTTP
for s in text mixed; do
	for d in "" --deep; do
		chk --json $d "$W/$s/$s.ninfer" >"$T/l.json"
		[ "$rc" = 0 ] || fail "$s $d locally: exit $rc"
		chk --json $d "$U/$s/$s.ninfer" >"$T/r.json"
		[ "$rc" = 0 ] || fail "$s $d over HTTP: exit $rc: $(cat "$T/r.json" "$T/chk.err")"
		RP same "$T/l.json" "$T/r.json" || fail "$s $d: the reports differ"
	done
done
grep -q "\"entry\": \"$U/mixed/mixed.ninfer\"" "$T/r.json" || fail "artifact.entry: $(head -20 "$T/r.json")"
ok "text (1 file) and mixed (47 files): the same report locally and over HTTP, with and without --deep"

# --- what a check fetches: the header, the JSON, the part headers
J=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["json_bytes"])' "$W/mixed/expect/manifest.json")
ngx_settle; ngx_clear
chk "$U/mixed/mixed.ninfer" >/dev/null
[ "$rc" = 0 ] || fail "mixed: exit $rc"
settle
RP ranges "$LOG" /mixed "$W/mixed" >"$T/ranges"
grep -qx "mixed.ninfer 2 0-32,32-$((32 + J))" "$T/ranges" || fail "entry: $(grep '^mixed.ninfer ' "$T/ranges")"
[ "$(grep -c '^mixed.ninfer.part-[0-9]* 1 0-32$' "$T/ranges")" = 46 ] || fail "parts: $(cat "$T/ranges")"
[ "$(wc -l <"$LOG")" = 48 ] || fail "$(wc -l <"$LOG") requests: $(cat "$LOG")"
read -r sent nreq < <(RP sent "$LOG")
body=$((32 + J + 46 * 32))
[ "$sent" -ge "$body" ] && [ "$sent" -le $((body + nreq * 400)) ] || fail "bytes sent $sent for $body"
ok "a check of the 47-file set: 48 requests (entry [0,32) and [32,$((32 + J))), [0,32) of each part), $sent bytes sent for $body of content"

# --- --deep: every byte of every file, once
ngx_settle; ngx_clear
chk --deep "$U/mixed/mixed.ninfer" >/dev/null
[ "$rc" = 0 ] || fail "deep: exit $rc"
settle
RP ranges "$LOG" /mixed "$W/mixed" --once >"$T/ranges" || fail "deep ranges: $(cat "$T/ranges")"
total=$(cat "$W"/mixed/mixed.ninfer* | wc -c)
grep -qx "total [0-9]* requests $total body bytes" "$T/ranges" || fail "deep: $(tail -1 "$T/ranges"), set $total"
read -r sent nreq < <(RP sent "$LOG")
[ "$sent" -ge "$total" ] && [ "$sent" -le $((total + nreq * 400)) ] || fail "deep: $sent bytes sent for $total"
ok "--deep: every byte of the 47 files fetched exactly once ($total bytes in $nreq requests, $sent bytes sent)"

# --- the reader's API on a remote set (its own copy: it changes a part)
cp -r "$W/mixed" "$W/api"
"$NF_READER_API" "$W/api/mixed.ninfer" "$U/api/mixed.ninfer" >"$T/api.out" 2>"$T/api.err" ||
	fail "nf-reader-api: $(cat "$T/api.out" "$T/api.err")"
san_clean "$T/api.err"
sed 's/^/  /' "$T/api.out"
ok "the reader's API on a remote set (nf-reader-api)"

# --- the hostile corpus, locally and over HTTP
RP corpus "$NF_CORPUS" "$NINFER_CHECK" "$W" "$U" "$NGX_LOG" >"$T/corpus" || fail "$(cat "$T/corpus")"
ok "$(tail -1 "$T/corpus") (with and without --deep; no request for another name, none for a path that breaks seed §3.3)"
chk --json "$U/corpus/part-other-artifact/h.ninfer" >"$T/r.json"
grep -q '"code": "FILE_ARTIFACT_ID_MISMATCH"' "$T/r.json" && [ "$rc" = 4 ] || fail "part of another set: $rc $(cat "$T/r.json")"
chk --json "$U/corpus/files-path-dotdot-slash/h.ninfer" >/dev/null
[ "$rc" = 4 ] || fail "dotdot-slash: exit $rc"
ok "a part of another artifact: FILE_ARTIFACT_ID_MISMATCH, exit 4, as locally"

# --- https with a private CA: verified by default, -o cafile= names the CA
chk --json "$NGX_TLS_URL/mixed/mixed.ninfer" >"$T/r.json"
[ "$rc" = 8 ] && grep -q '"code": "ENTRY_UNREADABLE"' "$T/r.json" &&
	grep -q "\"evidence\": \"$NGX_TLS_URL/mixed/mixed.ninfer: .*SSL certificate problem" "$T/r.json" ||
	fail "https, unknown CA: exit $rc $(cat "$T/r.json")"
chk --json "$W/mixed/mixed.ninfer" >"$T/l.json"
chk --json -o cafile="$NGX_DIR/ca.pem" "$NGX_TLS_URL/mixed/mixed.ninfer" >"$T/r.json"
[ "$rc" = 0 ] || fail "https with cafile=: exit $rc $(cat "$T/r.json" "$T/chk.err")"
RP same "$T/l.json" "$T/r.json" || fail "https with cafile=: the reports differ"
ok "https with a private CA: ENTRY_UNREADABLE (exit 8, certificate problem) without cafile=, the same report as locally with it"

# --- a part name that needs encoding: one segment
RP rename-part "$W/mixed/mixed.ninfer" "$W/enc2" 3 'p art%2F..?#3'
ngx_settle; ngx_clear
chk --json "$W/enc2/mixed.ninfer" >"$T/l.json"
chk --json "$U/enc2/mixed.ninfer" >"$T/r.json"
[ "$rc" = 0 ] || fail "encoded part name: exit $rc $(cat "$T/r.json")"
RP same "$T/l.json" "$T/r.json" || fail "encoded part name: the reports differ"
settle
grep -q '"GET /enc2/p%20art%252F..%3F%233 HTTP/1.1" "bytes=0-31"' "$LOG" ||
	fail "encoded name: $(grep enc2 "$LOG" | head)"
ok "a part named 'p art%2F..?#3' is requested as one encoded segment and checks clean"

# --- a part missing: 404 -> FILE_MISSING naming it
cp -r "$W/mixed" "$W/miss"
rm "$W/miss/mixed.ninfer.part-0007"
chk "$W/miss/mixed.ninfer" >"$T/l.txt"
chk --json "$U/miss/mixed.ninfer" >"$T/r.json"
[ "$rc" = 1 ] || fail "missing part: exit $rc"
grep -q "\"evidence\": \"mixed.ninfer.part-0007: $U/miss/mixed.ninfer.part-0007: HTTP 404; reads that need this part fail\"" "$T/r.json" ||
	fail "missing part: $(grep -A3 FILE_MISSING "$T/r.json")"
grep -q '"severity": "warning"' "$T/r.json" && grep -q '"where": "files\[7\] mixed.ninfer.part-0007"' "$T/r.json" ||
	fail "missing part: $(cat "$T/r.json")"
grep -q 'FILE_MISSING  files\[7\] mixed.ninfer.part-0007' "$T/l.txt" || fail "locally: $(cat "$T/l.txt")"
ok "a part missing on the server: FILE_MISSING (warning, exit 1) naming its URL and HTTP 404"

# --- a part refused: 403 -> FILE_UNREADABLE naming it
cp -r "$W/mixed" "$W/deny"
chk --json "$U/deny/mixed.ninfer" >"$T/r.json"
[ "$rc" = 4 ] || fail "refused part: exit $rc"
grep -q "\"evidence\": \"mixed.ninfer.part-0009: $U/deny/mixed.ninfer.part-0009: HTTP 403\"" "$T/r.json" &&
	grep -q '"code": "FILE_UNREADABLE"' "$T/r.json" && [ "$(grep -c '"code":' "$T/r.json")" = 1 ] ||
	fail "refused part: $(cat "$T/r.json")"
ok "a part refused by the server: FILE_UNREADABLE (error, exit 4) naming its URL and HTTP 403"

# --- the entry missing: exit 8 naming the URL
chk "$U/miss/nope.ninfer" >"$T/r.txt"
[ "$rc" = 8 ] && grep -q "ENTRY_UNREADABLE  header: $U/miss/nope.ninfer: HTTP 404" "$T/r.txt" ||
	fail "entry 404: exit $rc $(cat "$T/r.txt")"
ok "the entry missing: exit 8, ENTRY_UNREADABLE naming the URL and HTTP 404"

# --- credentials in the URL and in -o: in no output
secret=pw$RANDOM$RANDOM
cred=${U/http:\/\//http://nfuser:$secret@}
chk --json -o "tries=2,endpoint=http://k:$secret@127.0.0.1:1/x" "$cred/text/text.ninfer" >"$T/r.json"
[ "$rc" = 0 ] || fail "with credentials: exit $rc $(cat "$T/r.json" "$T/chk.err")"
chk "$cred/miss/mixed.ninfer" >"$T/r.txt"
chk "$cred/miss/nope.ninfer" >>"$T/r.txt"
if grep -q "$secret\|nfuser" "$T/r.json" "$T/r.txt" "$T/chk.err"; then fail "a credential in the output: $(grep "$secret\|nfuser" "$T/r.json" "$T/r.txt")"; fi
grep -qF "\"${U/http:\/\//http://***@}/text/text.ninfer\"" "$T/r.json" && grep -qF '"tries=2,endpoint=http://***@127.0.0.1:1/x"' "$T/r.json" ||
	fail "redacted argv: $(head -14 "$T/r.json")"
# (the engine keeps the user and password apart: part URLs are shown without them)
grep -qF "$U/miss/mixed.ninfer.part-0007: HTTP 404" "$T/r.txt" || fail "redacted finding: $(cat "$T/r.txt")"
ok "user:password@ in the URL and in a -o value: ***@ in argv, entry and findings; the password nowhere"

# --- a JSON claim broken at byte 6, 1 GiB long: one chunk, not the claim
mkdir -p "$W/claim"
RP claim "$W/claim/early.ninfer" $((1 << 30)) early
chk --json "$W/claim/early.ninfer" >"$T/l.json"
ngx_settle; ngx_clear
chk --json "$U/claim/early.ninfer" >"$T/r.json"
[ "$rc" = 4 ] || fail "broken claim: exit $rc $(cat "$T/r.json")"
RP same "$T/l.json" "$T/r.json" || fail "broken claim: the reports differ"
grep -q '"code": "JSON_SYNTAX"' "$T/r.json" || fail "broken claim: $(cat "$T/r.json")"
settle
[ "$(RP spans "$LOG" /claim/early.ninfer)" = "0-32,32-65568" ] || fail "broken claim fetched: $(RP spans "$LOG" /claim/early.ninfer)"
ok "a 1 GiB JSON claim broken at byte 6: JSON_SYNTAX as locally, 64 KiB of it fetched"

RP claim "$W/claim/late.ninfer" $((256 << 20)) late:3000000
chk --json "$W/claim/late.ninfer" >"$T/l.json"
ngx_settle; ngx_clear
chk --json "$U/claim/late.ninfer" >"$T/r.json"
RP same "$T/l.json" "$T/r.json" || fail "late error: the reports differ"
grep -q '"code": "JSON_SYNTAX"' "$T/r.json" || fail "late error: $(cat "$T/r.json")"
settle
read -r sent nreq < <(RP sent "$LOG")
[ "$sent" -lt $((8 << 20)) ] || fail "late error: $sent bytes fetched"
ok "a 256 MiB claim broken after 3 MB: the same JSON_SYNTAX, $sent bytes fetched in $nreq requests"

ngx_settle; ngx_clear
chk --max-json=1M "$U/claim/early.ninfer" >"$T/r.txt"
[ "$rc" = 8 ] && grep -q JSON_TOO_LARGE "$T/r.txt" || fail "max-json: exit $rc $(cat "$T/r.txt")"
settle
[ "$(RP spans "$LOG" /claim/early.ninfer)" = "0-32" ] || fail "max-json fetched: $(cat "$LOG")"
ok "a claim above --max-json: JSON_TOO_LARGE, exit 8, only the header fetched"

# --- a valid 3 MB directory: fetched whole, in doubling chunks, once
RP pad "$W/mixed/mixed.ninfer" "$W/pad" 3000000
chk --json "$W/pad/mixed.ninfer" >"$T/l.json"
ngx_settle; ngx_clear
chk --json "$U/pad/mixed.ninfer" >"$T/r.json"
[ "$rc" = 0 ] || fail "padded: exit $rc $(cat "$T/r.json")"
RP same "$T/l.json" "$T/r.json" || fail "padded: the reports differ"
PJ=$($PY -c 'import sys; d=open(sys.argv[1],"rb").read(16); print(int.from_bytes(d[8:16],"little"))' "$W/pad/mixed.ninfer")
settle
spans=$(RP spans "$LOG" /pad/mixed.ninfer $((32 + PJ))) || fail "padded JSON spans: $spans"
[ "${spans%%,*}" = 0-32 ] && echo "$spans" | grep -q ',32-65568,65568-196640,' || fail "padded chunks: $spans"
ok "a valid ${PJ}-byte directory: fetched once, in $(($(echo "$spans" | tr ',' '\n' | wc -l) - 1)) doubling chunks, the same report"

# --- usage errors
chk -o nosuchkey=1 "$U/text/text.ninfer" >/dev/null
[ "$rc" = 16 ] && grep -q 'unknown option "nosuchkey"' "$T/chk.err" || fail "unknown -o: $rc $(cat "$T/chk.err")"
chk -o tries=3 "$W/text/text.ninfer" >/dev/null
[ "$rc" = 16 ] && grep -q 'is a local path' "$T/chk.err" || fail "-o with a path: $rc $(cat "$T/chk.err")"
rc=0; "$NINFER_PACK" reshard "$cred/text/text.ninfer" "$T/out.ninfer" 2>"$T/pack.err" || rc=$?
[ "$rc" = 16 ] && grep -q 'a URL; ninfer-pack reads and writes local files only' "$T/pack.err" &&
	! grep -q "$secret" "$T/pack.err" && [ ! -e "$T/out.ninfer" ] || fail "ninfer-pack URL: $rc $(cat "$T/pack.err")"
ok "usage: an unknown -o key and -o with a local path exit 16; ninfer-pack refuses a URL (16, redacted)"
