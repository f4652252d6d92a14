#!/bin/sh
# issue 11 item 13: the temporary directory of a SIGKILLed ninfer-pack
# (.OUT.ninfer.tmp-XXXXXX beside the target) is removed by the next run
# that writes the same OUT.ninfer, but never while its writer is alive
# (man ninfer-pack(1), NOTES: the writer holds an flock on the directory's
# .owner file for its whole run).
#   1. writer A is stopped (SIGSTOP) while its temporary files exist, a
#      second writer B of the same target runs: A's directory is left alone
#      (A holds its lock) and B succeeds;
#   2. A is SIGKILLed: its directory stays (nothing could remove it);
#   3. the next run of that target removes it and says so (info
#      WRITE_TMP_REMOVED naming A's pid), here failing afterwards only
#      because B published the target (exit 8, WRITE_TARGET_EXISTS);
#   4. a writer SIGKILLed in the middle of copying a big object, then a
#      rerun of the same command: exit 0, no temporary directory left, and
#      the set is exactly the input (cmp of the object bytes).
# usage: stale_tmp.sh PATH/TO/ninfer-pack
set -u
PACK=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/nfstale-XXXXXX")
APID=
cleanup() {
	[ -n "$APID" ] && kill -9 "$APID" 2>/dev/null
	rm -rf "$T"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
tmps() { ls -a "$T/out" | grep '^\.set\.ninfer\.tmp-' || true; }

# a 64 MiB bf16 tensor (a sparse source: its bytes read as zeros) and a
# small random one
mkdir "$T/src" "$T/out"
truncate -s 64M "$T/src/big.bin"
head -c 4096 /dev/urandom > "$T/src/small.bin"
cat > "$T/src/m.json" <<'JSON'
{"components": {"text": {"config": {"architectures": ["Synthetic"]}}},
 "objects": [
   {"id": "big", "kind": "tensor", "shape": [8192, 4096], "format": "bf16",
    "layout": "contiguous_le_v1", "source": "big.bin"},
   {"id": "small", "kind": "tensor", "shape": [2048], "format": "bf16",
    "layout": "contiguous_le_v1", "source": "small.bin"}],
 "bindings": {"big": {"object": "big"}, "small": {"object": "small"}}, "uses": []}
JSON

# start_a: writer A in the background, stopped as soon as its temporary
# directory holds its .owner (pid written) and the files of the set
start_a() {
	"$PACK" create -q --manifest "$T/src/m.json" --max-file-bytes 16M "$T/out/set.ninfer" \
		2>"$T/a.err" &
	APID=$!
	i=0
	while :; do
		d=$(tmps | head -n 1)
		if [ -n "$d" ] && [ "$(cat "$T/out/$d/.owner" 2>/dev/null)" = "$APID" ] &&
		   [ -e "$T/out/$d/set.ninfer.part-0004" ]; then
			kill -STOP "$APID"
			break
		fi
		kill -0 "$APID" 2>/dev/null || fail "writer A finished before it could be stopped"
		i=$((i + 1))
		[ $i -lt 2000 ] || fail "no temporary directory of writer A"
		sleep 0.005
	done
	ADIR=$d
}

# 1. a live (stopped) writer's directory is never removed
start_a
"$PACK" create -q --manifest "$T/src/m.json" --max-file-bytes 16M "$T/out/set.ninfer" \
	2>"$T/b.err" || { cat "$T/b.err" >&2; fail "writer B failed beside a live writer"; }
[ -d "$T/out/$ADIR" ] || fail "writer B removed the directory of live writer A"
grep -q WRITE_TMP_REMOVED "$T/b.err" && fail "writer B reports removing a live writer's directory"
echo "ok: a live writer's temporary directory is left alone"

# 2, 3. A killed: its directory stays until the next run of the target
kill -9 "$APID"
wait "$APID" 2>/dev/null
APID=
[ -d "$T/out/$ADIR" ] || fail "A's directory vanished by itself"
rc=0
"$PACK" create -q --manifest "$T/src/m.json" "$T/out/set.ninfer" 2>"$T/c.err" || rc=$?
[ "$rc" = 8 ] || { cat "$T/c.err" >&2; fail "run over an existing target: exit $rc, want 8"; }
grep -q "WRITE_TARGET_EXISTS" "$T/c.err" || fail "no WRITE_TARGET_EXISTS"
[ -z "$(tmps)" ] || fail "the stale directory $(tmps) of killed writer A is still there"
grep -q "info WRITE_TMP_REMOVED: .*$ADIR: left by process [0-9]*, which is gone" "$T/c.err" ||
	{ cat "$T/c.err" >&2; fail "the removal is not reported"; }
echo "ok: $(grep WRITE_TMP_REMOVED "$T/c.err")"

# 4. killed in the middle of the copy, then the same command again
rm -f "$T/out"/set.ninfer*
"$PACK" create -q --manifest "$T/src/m.json" --max-file-bytes 16M "$T/out/set.ninfer" \
	2>"$T/a.err" &
APID=$!
i=0
while :; do
	d=$(tmps | head -n 1)
	# some object bytes are in a part: the copy is under way
	if [ -n "$d" ] && [ -e "$T/out/$d/set.ninfer.part-0001" ] &&
	   [ "$(du -k "$T/out/$d/set.ninfer.part-0001" | cut -f1)" -gt 0 ]; then
		kill -9 "$APID"
		break
	fi
	kill -0 "$APID" 2>/dev/null || fail "the writer finished before it could be killed"
	i=$((i + 1))
	[ $i -lt 4000 ] || fail "no copy under way"
	sleep 0.002
done
wait "$APID" 2>/dev/null
APID=
[ -n "$(tmps)" ] || fail "SIGKILL left no temporary directory (nothing tested)"
"$PACK" create -q --manifest "$T/src/m.json" --max-file-bytes 16M "$T/out/set.ninfer" \
	2>"$T/d.err" || { cat "$T/d.err" >&2; fail "the rerun after SIGKILL failed"; }
[ -z "$(tmps)" ] || fail "temporary directory left after the rerun: $(tmps)"
grep -q WRITE_TMP_REMOVED "$T/d.err" || fail "the rerun does not say it removed the stale directory"
# the published set holds the input: the small object's bytes, at their offset
off=$(python3 -c '
import json, struct, sys
b = open(sys.argv[1], "rb").read(4096 * 64)
n = struct.unpack_from("<Q", b, 8)[0]
j = json.loads(b[32:32 + n])
o = [o for o in j["objects"] if o["id"] == "small"][0]
print(o["offset"])' "$T/out/set.ninfer")
python3 - "$T/out" "$T/src/small.bin" "$off" <<'PY' || fail "published bytes differ from the source"
import json, os, struct, sys
out, src, off = sys.argv[1], sys.argv[2], int(sys.argv[3])
e = open(os.path.join(out, "set.ninfer"), "rb").read()
n = struct.unpack_from("<Q", e, 8)[0]
j = json.loads(e[32:32 + n])
eps = (32 + n + 4095) // 4096 * 4096
want = open(src, "rb").read()
got = b""
for i, f in enumerate(j["files"]):
    lo = sum(x["payload_bytes"] for x in j["files"][:i])
    hi = lo + f["payload_bytes"]
    a, b = max(lo, off), min(hi, off + len(want))
    if a < b:
        data = open(os.path.join(out, f["path"] or "set.ninfer"), "rb")
        data.seek((eps if i == 0 else 4096) + a - lo)
        got += data.read(b - a)
assert got == want, "small differs"
PY
echo "ok: SIGKILL during the copy, then a rerun: exit 0, no temporary directory left"
