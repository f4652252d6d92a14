#!/usr/bin/env bash
# -o lenient over a files table whose payload_bytes is not a PositiveU64
# (seed §2.2: the logical address space is then undefined): the set still
# mounts, as every other directory error does; artifact.json (bytes of the
# entry outside the payload) reads exactly, files.json says which part is
# bad, and reads of payload files fail with EIO instead of wrong bytes.
. "$(dirname "$0")/lib.sh"

: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}"
mkdir -p "$T/s"
"$NINFER_PACK" sample "$T/s/s.ninfer" > /dev/null || fail "ninfer-pack sample"
python3 - "$T/s/s.ninfer" <<'PY' || fail "could not patch the files table"
import re, sys
p = sys.argv[1]
e = bytearray(open(p, "rb").read())
# the second part's payload_bytes, as a negative number of the same length
m = re.search(rb'"path":"s\.ninfer\.part-0002","payload_bytes":(\d+)', e)
assert m, "no part-0002 record"
digits = m.group(1)
e[m.start(1):m.end(1)] = b"-" + digits[:-1]
open(p, "wb").write(e)
PY
mkdir -p "$T/strict"
rc=0
"$NINFERFS" "$T/s/s.ninfer" "$T/strict" -f 2> "$T/strict.err" || rc=$?
[ "$rc" = 4 ] || fail "without -o lenient: exit $rc"
is_mounted "$T/strict" && fail "without -o lenient: mounted"
mount_fg "$T/s/s.ninfer" "$T/mnt" -o lenient
python3 - "$T/s/s.ninfer" "$T/mnt" <<'PY' || fail "lenient mount of a broken files table"
import errno, json, os, struct, sys
entry, mnt = sys.argv[1], sys.argv[2]
raw = open(entry, "rb").read()
json_bytes = struct.unpack_from("<Q", raw, 8)[0]   # seed §3.1: magic, json_bytes, id
assert open(os.path.join(mnt, "artifact.json"), "rb").read() == raw[32:32 + json_bytes]
files = json.load(open(os.path.join(mnt, "files.json")))
assert files[2]["status"] == "bad", files[2]
objs = os.listdir(os.path.join(mnt, "objects"))
assert objs, "no objects"
failed = 0
for o in objs:
    p = os.path.join(mnt, "objects", o)
    if os.path.getsize(p) == 0:
        continue
    try:
        open(p, "rb").read()
    except OSError as e:
        assert e.errno == errno.EIO, e
        failed += 1
assert failed > 0, "no object read failed"
print("lenient: artifact.json exact, files[2] bad, %d object reads EIO" % failed)
PY
ok "-o lenient over an undefined address space: mounted, artifact.json exact, payload reads EIO"
unmount "$T/mnt"
