#!/usr/bin/env bash
# ninferfs URL MOUNTPOINT against a server that stalls (faultserver.py,
# mode stallfar), with the default options: the read fails with EIO within
# retry_ms (no FUSE request hangs: cat returns), the next at once while the
# file rests, and after the rest an object before the stall reads.
# Apart from mount_faults.sh because most of its half minute is a wait:
# it runs beside other tests (its bound has 3 s of slack over retry_ms, the
# rest check 1 s), not alone.
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NF_FIXTURE:?}"

"$NF_FIXTURE" text "$T/set" >/dev/null
fault_server "$T/set" 120

# Ranges from byte 300000 on never come.  Bound: retry_ms (30 s) + 3 s of
# slack; two attempts of the 15 s low-speed limit, then EIO; the next read
# fails at once (the file rests), no FUSE request hangs (cat returns)
mnt "$S/stallfar/text.ninfer" "$T/s"
mnt "$T/set/text.ninfer" "$T/lt"
far="" near=""
for o in $(cd "$T/lt/objects" && ls); do
	off=$(getfattr --only-values -n user.ninfer.segments "$T/lt/objects/$o" |
		$PY -c 'import json,sys; print(json.load(sys.stdin)[0]["file_offset"])')
	[ "$off" -ge 300000 ] && [ -z "$far" ] && far=$o
	[ "$off" -lt 200000 ] && [ -z "$near" ] && near=$o
done
[ -n "$far" ] && [ -n "$near" ] || fail "text: no object past 300000 ($far) or before ($near)"
t0=$(ms)
timeout 60 cat "$T/s/objects/$far" >/dev/null 2>"$T/cat.err" && fail "objects/$far read from a stalled server"
rc=$?
dt=$(($(ms) - t0))
[ "$rc" != 124 ] || fail "cat of objects/$far hung (killed by timeout after 60 s)"
grep -q "Input/output error" "$T/cat.err" || fail "stall: $(cat "$T/cat.err")"
[ "$dt" -lt 33000 ] || fail "a stall with the default options took $dt ms (bound 33000)"
t0=$(ms)
cat "$T/s/objects/$far" >/dev/null 2>&1 && fail "objects/$far read the second time"
dt2=$(($(ms) - t0))
[ "$dt2" -lt 1000 ] || fail "the second read of the stalled part took $dt2 ms"
# the whole file rests (1 s), then its ranges that do come read again
sleep 1.1
cmp "$T/lt/objects/$near" "$T/s/objects/$near" || fail "objects/$near"
umnt "$T/s"
umnt "$T/lt"
ok "a stalled server, default options: objects/$far fails with EIO in $dt ms (bound 33 s), again in $dt2 ms, objects/$near reads after the 1 s rest"

