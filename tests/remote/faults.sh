#!/usr/bin/env bash
# The remote engine against a server that misbehaves on purpose
# (faultserver.py): a connection cut mid-body, 503 once, 503 forever,
# 429 with Retry-After, a body shorter than its Content-Length (once, and
# always), an ETag that changes mid-sequence, a stalled transfer, a
# redirect to another host.  Every outcome is checked for exact bytes, the
# error and its reason, and the time it took (bounded).
. "$(dirname "$0")/lib.sh"

W=$T/www
mkdir -p "$W"
mkfile "$W/f" 1500000 7
fault_server "$W" 150
fast=tries=5,retry_ms=8000,backoff_ms=50


# expect_bytes MODE TESTNAME [OPTS]: a 1 MB range read retried to success
expect_bytes() {
	local t0 dt
	t0=$(ms)
	rget -s "$T/st" -o "${3:-$fast}" "$S/$1/f" read 0 200000 1000000 >"$T/got" ||
		fail "$2: $(cat "$T/rget.err")"
	dt=$(($(ms) - t0))
	slice "$W/f" 200000 1000000 | cmp - "$T/got" || fail "$2: bytes differ"
	grep -q '"retries": [1-9]' "$T/st" || fail "$2: no retry counted: $(cat "$T/st")"
	echo "$dt"
}

dt=$(expect_bytes drop "connection cut mid-body")
# the retry resumed where the cut left off: the second range starts after byte 200000
grep '^GET /drop/f' "$T/log" | sed -n 2p | grep -q 'bytes=[0-9]*-1199999 206' || fail "drop: $(cat "$T/log")"
[ "$(grep '^GET /drop/f' "$T/log" | sed -n 2p | sed 's/.*bytes=\([0-9]*\)-.*/\1/')" -gt 200000 ] ||
	fail "drop: the retry did not resume: $(cat "$T/log")"
ok "connection cut mid-body: retried from the first missing byte, bytes exact (${dt} ms)"

dt=$(expect_bytes 503once "503 then success")
ok "503 then success: retried, bytes exact (${dt} ms)"

dt=$(expect_bytes short "short body")
ok "body shorter than Content-Length: retried, bytes exact (${dt} ms)"

dt=$(expect_bytes 429 "429" tries=5,retry_ms=8000,backoff_ms=1)
[ "$dt" -ge 950 ] || fail "429: Retry-After: 1 not honoured (${dt} ms)"
ok "429 with Retry-After: 1: waited ${dt} ms, then bytes exact"

# endless 503: an error after exactly 5 tries, in bounded time
t0=$(ms); rc=0
rget -s "$T/st" -o "$fast" "$S/503always/f" read 0 0 1000 >/dev/null || rc=$?
dt=$(($(ms) - t0))
[ "$rc" = 1 ] || fail "endless 503: exit $rc"
grep -q 'gave up after 5 tries in [0-9]* ms: HTTP 503' "$T/rget.err" || fail "endless 503: $(cat "$T/rget.err")"
[ "$(grep -c '^GET /503always/f' "$T/log")" = 5 ] || fail "endless 503: $(grep -c 503always "$T/log") requests"
[ "$dt" -lt 5000 ] || fail "endless 503 took ${dt} ms"
grep -q '"requests": 5, "retries": 4' "$T/st" || fail "endless 503 stats: $(cat "$T/st")"
ok "endless 503: EIO after 5 tries in ${dt} ms"

# the retry budget bounds it too: 100 tries allowed, 1.5 s budget
t0=$(ms); rc=0
rget -o tries=100,retry_ms=1500,backoff_ms=200 "$S/503always/f" read 0 0 1000 >/dev/null || rc=$?
dt=$(($(ms) - t0))
[ "$rc" = 1 ] && grep -q 'would pass retry_ms=1500' "$T/rget.err" && [ "$dt" -lt 3000 ] ||
	fail "retry budget: rc=$rc ${dt} ms $(cat "$T/rget.err")"
ok "the retry budget (retry_ms=1500) ends an endless 503 in ${dt} ms"

# always short: bounded, an error
rc=0; rget -o "$fast" "$S/short3/f" read 0 0 100000 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'gave up after 5 tries' "$T/rget.err" || fail "short3: $(cat "$T/rget.err")"
ok "a body always short: EIO after the bounded retries"

# ETag changes mid-sequence: reads 1, 2 fine, read 3 sees another ETag
rc=0
rget -k -s "$T/st" "$S/etag/f" read 0 0 100 read 0 100 100 read 0 200 100 read 0 300 100 >"$T/got" || rc=$?
[ "$rc" = 1 ] || fail "etag change: exit $rc"
[ "$(stat -c %s "$T/got")" = 200 ] || fail "etag change: $(stat -c %s "$T/got") bytes before the error"
grep -q 'changed on the server: ETag "changed-3", first seen "' "$T/rget.err" || fail "etag: $(cat "$T/rget.err")"
grep -q '"status": "changed"' "$T/st" || fail "etag stats"
# and the fourth read fails at once, without a request
n=$(grep -c '^GET /etag/f' "$T/log")
[ "$n" = 3 ] || fail "etag: $n requests"
ok "ETag changed mid-sequence: the third read fails (EIO), the file is 'changed', the fourth fails without a request"

# no ETag, only Last-Modified: sent back as If-Unmodified-Since, compared
rc=0
rget -s "$T/st" "$S/lastmod/f" read 0 0 100 read 0 100 100 read 0 200 100 >"$T/got" || rc=$?
[ "$rc" = 1 ] && [ "$(stat -c %s "$T/got")" = 200 ] || fail "lastmod: rc=$rc"
grep -q 'changed on the server: Last-Modified Mon, 02 Jun 2026 10:00:00 GMT, first seen Mon, 01 Jun' "$T/rget.err" ||
	fail "lastmod: $(cat "$T/rget.err")"
[ "$(grep -c '^GET /lastmod/f .* Mon,_01_Jun_2026_10:00:00_GMT$' "$T/log")" = 2 ] ||
	fail "If-Unmodified-Since not sent: $(grep lastmod "$T/log")"
ok "no ETag: Last-Modified sent back as If-Unmodified-Since; its change is caught (EIO)"

# stall: the low-speed timeout fires, twice (2 tries), bounded
t0=$(ms); rc=0
rget -o tries=2,retry_ms=20000,backoff_ms=10,low_speed_secs=1,low_speed_bytes=1000 \
	"$S/stall/f" read 0 0 100000 >/dev/null || rc=$?
dt=$(($(ms) - t0))
[ "$rc" = 1 ] && grep -q 'gave up after 2 tries.*timed out' "$T/rget.err" || fail "stall: $(cat "$T/rget.err")"
[ "$dt" -ge 1900 ] && [ "$dt" -lt 6000 ] || fail "stall took ${dt} ms"
ok "stalled server: the low-speed timeout fired on each of 2 tries, EIO in ${dt} ms"

# connect timeout / refused: a port nobody listens on
p=$(free_port); t0=$(ms); rc=0
rget -o tries=2,backoff_ms=10 "http://127.0.0.1:$p/ok/f" read 0 0 10 >/dev/null || rc=$?
dt=$(($(ms) - t0))
[ "$rc" = 1 ] && grep -q "Couldn't connect" "$T/rget.err" && [ "$dt" -lt 3000 ] ||
	fail "refused: rc=$rc ${dt} ms $(cat "$T/rget.err")"
ok "connection refused: EIO after 2 tries in ${dt} ms"

# a fetch-ahead window that stalls is dropped when the reader goes away:
# the process ends at once, not after the low-speed timeout
rm -f "$T/go"
rget -s "$T/st" -o prefetch_min=128K,low_speed_secs=20 "$S/stallfar/f" seq 0 0 400000 65536 \
	wait "$T/go" >"$T/got" &
rp=$!
past='GET /stallfar/f bytes=([3-9][0-9]{5}|[0-9]{7,})-'   # a window from 300000 on
for _ in $(seq 200); do grep -qE "$past" "$T/log" && break; sleep 0.05; done
grep -qE "$past" "$T/log" || fail "no window past 300000 was asked for: $(grep stallfar "$T/log")"
t0=$(ms)
touch "$T/go"
wait $rp || fail "stallfar: $(cat "$T/rget.err")"
dt=$(($(ms) - t0))
slice "$W/f" 0 400000 | cmp - "$T/got" || fail "stallfar bytes"
[ "$dt" -lt 3000 ] || fail "exit took ${dt} ms with a stalled window"
ok "a stalled fetch-ahead window is abandoned at close: exit ${dt} ms after the last read (low_speed_secs=20)"

# connect timeout: a listener whose accept queue is full (never accepts)
# drops new SYNs, so the connect hangs until connect_ms
$PY - "$T/bl" <<'PYEOF' &
import socket, sys, time, os
s = socket.socket(); s.bind(("127.0.0.1", 0)); s.listen(0)
port = s.getsockname()[1]
fill = []
for _ in range(4):
    c = socket.socket(); c.setblocking(False)
    try: c.connect(("127.0.0.1", port))
    except BlockingIOError: pass
    fill.append(c)
open(sys.argv[1] + ".tmp", "w").write(str(port)); os.rename(sys.argv[1] + ".tmp", sys.argv[1])
time.sleep(30)
PYEOF
SRV_PIDS+=($!)
for _ in $(seq 100); do [ -s "$T/bl" ] && break; sleep 0.05; done
t0=$(ms); rc=0
rget -o connect_ms=300,tries=2,backoff_ms=10 "http://127.0.0.1:$(cat "$T/bl")/ok/f" read 0 0 10 >/dev/null || rc=$?
dt=$(($(ms) - t0))
[ "$rc" = 1 ] && grep -q 'gave up after 2 tries.*timed out' "$T/rget.err" && [ "$dt" -ge 550 ] && [ "$dt" -lt 3000 ] ||
	fail "connect timeout: rc=$rc ${dt} ms $(cat "$T/rget.err")"
ok "connect timeout (connect_ms=300) on each of 2 tries: EIO in ${dt} ms"

# redirect to another host: refused, never requested; allowed with redirects=any
rc=0; rget "$S/redir/f" read 0 0 10 >/dev/null || rc=$?
[ "$rc" = 1 ] && grep -q 'refused: another host\|refused: redirects are not followed' "$T/rget.err" ||
	fail "redirect: $(cat "$T/rget.err")"
grep -q '^GET /ok/f' "$T/log" && fail "the redirect target was requested"
rget -o redirects=any "$S/redir/f" read 0 10 1000 >"$T/got" || fail "redirects=any: $(cat "$T/rget.err")"
slice "$W/f" 10 1000 | cmp - "$T/got" || fail "redirect bytes"
ok "redirect to another host refused unless redirects=any"

# SigV4 with a session token: the token header is sent and signed, and
# x-amz-content-sha256 goes with every signed request; the token and the
# secret are in no message
AWS_ACCESS_KEY_ID=AKIDTEST AWS_SECRET_ACCESS_KEY=SECRETVALUE AWS_SESSION_TOKEN=TOKENVALUE \
	HOME=$T AWS_REGION=eu-central-1 rget -s "$T/st" -o endpoint="$S/ok" s3://bkt/dir/f read 0 0 1000 >"$T/got" ||
	fail "s3 via the fault server: $(cat "$T/rget.err")"
slice "$W/f" 0 1000 | cmp - "$T/got" || fail "s3 bytes"
tail -1 "$T/log" | grep -q '^GET /ok/bkt/dir/f bytes=0-999 206 host;x-amz-content-sha256;x-amz-date;x-amz-security-token token -$' ||
	fail "signed headers: $(tail -1 "$T/log")"
grep -q '"url": "'"$S"'/ok/bkt/dir/f"' "$T/st" || fail "s3 url: $(cat "$T/st")"
! grep -q 'SECRETVALUE\|TOKENVALUE' "$T/st" "$T/rget.err" || fail "a secret in the output"
ok "SigV4 with a session token: x-amz-security-token and x-amz-content-sha256 signed and sent"
