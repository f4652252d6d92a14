#!/usr/bin/env bash
# ninfer-check URL against a server that misbehaves on purpose
# (faultserver.py) serving the 47-file fixture set.  Proves, each in
# bounded time:
#   - one part that answers 503 forever: FILE_UNREADABLE for that part only,
#     naming its URL, the tries and HTTP 503; every other part present;
#   - the entry answering 503 forever, the entry missing (404), nobody
#     listening: exit 8, ENTRY_UNREADABLE naming the URL and the failure;
#   - every file's first response cut mid-body: --deep retries and checks
#     clean, the same report as locally;
#   - every file's ETag changing after its second response (If-Match
#     ignored, as by a server that does not support it): --deep reports
#     FILE_CHANGED for the files read a third time, naming the new ETag.
. "$(dirname "$0")/lib.sh"
: "${NINFER_CHECK:?}" "${NF_FIXTURE:?}"

RP() { $PY "$REMOTE_TESTS/reports.py" "$@"; }
chk() {
	rc=0
	"$NINFER_CHECK" "$@" 2>"$T/chk.err" || rc=$?
	san_clean "$T/chk.err"
}

"$NF_FIXTURE" mixed "$T/set" >/dev/null
W=$T/set   # the fault server serves a flat directory: the set's own
fault_server "$W" 170
fast=tries=3,retry_ms=5000,backoff_ms=20
chk --json "$W/mixed.ninfer" >"$T/local.json"
chk --json --deep "$W/mixed.ninfer" >"$T/local-deep.json"

# --- one part 503 forever
t0=$(ms)
chk --json -o "$fast" "$S/503on-part-0007/mixed.ninfer" >"$T/r.json"
dt=$(($(ms) - t0))
[ "$rc" = 4 ] || fail "503 part: exit $rc $(cat "$T/r.json")"
[ "$dt" -lt 10000 ] || fail "503 part took $dt ms"
[ "$(grep -c '"code": "FILE_UNREADABLE"' "$T/r.json")" = 1 ] && [ "$(grep -c '"code":' "$T/r.json")" = 1 ] ||
	fail "503 part findings: $(cat "$T/r.json")"
grep -q "\"evidence\": \"mixed.ninfer.part-0007: $S/503on-part-0007/mixed.ninfer.part-0007: gave up after 3 tries in [0-9]* ms: HTTP 503\"" "$T/r.json" ||
	fail "503 part evidence: $(grep evidence "$T/r.json")"
grep -q '"where": "files\[7\] mixed.ninfer.part-0007"' "$T/r.json" || fail "503 part where"
n=$(grep -c '^GET /503on-part-0007/mixed.ninfer.part-0007 ' "$T/log")
[ "$n" = 3 ] || fail "503 part: $n GETs of it (want 3 tries): $(grep part-0007 "$T/log")"
ok "a part answering 503 forever: FILE_UNREADABLE for it alone (3 tries, HTTP 503, its URL), exit 4, in ${dt} ms"

# --- the entry: 503 forever, 404, nobody listening -> exit 8 naming the URL
t0=$(ms)
chk -o "$fast" "$S/503always/mixed.ninfer" >"$T/r.txt"
dt=$(($(ms) - t0))
[ "$rc" = 8 ] && grep -q "ENTRY_UNREADABLE  header: $S/503always/mixed.ninfer: gave up after 3 tries in [0-9]* ms: HTTP 503" "$T/r.txt" ||
	fail "entry 503: exit $rc $(cat "$T/r.txt")"
[ "$dt" -lt 10000 ] || fail "entry 503 took $dt ms"
chk "$S/ok/nosuch.ninfer" >"$T/r.txt"
[ "$rc" = 8 ] && grep -q "ENTRY_UNREADABLE  header: $S/ok/nosuch.ninfer: HTTP 404" "$T/r.txt" ||
	fail "entry 404: exit $rc $(cat "$T/r.txt")"
p=$(free_port)
chk -o tries=2,backoff_ms=10 "http://127.0.0.1:$p/m.ninfer" >"$T/r.txt"
[ "$rc" = 8 ] && grep -q "ENTRY_UNREADABLE  header: http://127.0.0.1:$p/m.ninfer: gave up after 2 tries.*Couldn't connect" "$T/r.txt" ||
	fail "entry refused: exit $rc $(cat "$T/r.txt")"
ok "the entry: 503 forever (${dt} ms), 404, nobody listening: exit 8, ENTRY_UNREADABLE naming the URL and the failure"

# --- every first response cut mid-body: retried, the same report
chk --json --deep -o "$fast" "$S/drop/mixed.ninfer" >"$T/r.json"
[ "$rc" = 0 ] || fail "drop: exit $rc $(cat "$T/r.json")"
RP same "$T/local-deep.json" "$T/r.json" || fail "drop: the reports differ"
n=$(grep -c '^GET /drop/' "$T/log")
[ "$n" -gt 200 ] || fail "drop: only $n requests"
ok "every file's first response cut mid-body: --deep retries ($n requests) and reports as locally"

# --- the ETag changes after the second response of each file
chk --json --deep "$S/etag/mixed.ninfer" >"$T/r.json"
[ "$rc" = 4 ] || fail "etag: exit $rc $(cat "$T/r.json")"
n=$(grep -c '"code": "FILE_CHANGED"' "$T/r.json")
[ "$n" -ge 1 ] || fail "etag: no FILE_CHANGED: $(cat "$T/r.json")"
grep -q '"evidence": "mixed.ninfer.part-[0-9]*: changed on the server at '"$S"'/etag/mixed.ninfer.part-[0-9]* (changed on the server: ETag \\"changed-3\\", first seen \\"' "$T/r.json" ||
	fail "etag evidence: $(grep -A1 FILE_CHANGED "$T/r.json" | head)"
ok "ETags changing after the second response: --deep reports FILE_CHANGED for $n files, naming the new ETag"
