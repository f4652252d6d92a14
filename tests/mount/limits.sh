#!/usr/bin/env bash
# Limits of the daemon (issue 11).
#  item 5: -o max_json=BYTES, the ceiling on the JSON directory's claimed
#  size: a claim above it is refused before it is read (JSON_TOO_LARGE on
#  stderr, exit 8: ninferfs(1) EXIT STATUS), a bad value is a usage error
#  (16), and a ceiling above the claim mounts.
. "$(dirname "$0")/lib.sh"

d=$(fixture text)
jb=$(python3 -c 'import struct,sys; print(struct.unpack_from("<Q", open(sys.argv[1],"rb").read(16), 8)[0])' "$d/text.ninfer")
mkdir -p "$T/mnt"
set +e
"$NINFERFS" "$d/text.ninfer" "$T/mnt" -f -o max_json=$((jb - 1)) 2>"$T/err1"; rc1=$?
"$NINFERFS" "$d/text.ninfer" "$T/mnt" -f -o max_json=12abc 2>"$T/err2"; rc2=$?
"$NINFERFS" "$d/text.ninfer" "$T/mnt" -f -o max_json=0 2>/dev/null; rc3=$?
set -e
is_mounted "$T/mnt" && { MOUNTS+=("$T/mnt"); fail "mounted above -o max_json"; }
[ "$rc1" = 8 ] || fail "json_bytes $jb above max_json: exit $rc1, want 8 ($(cat "$T/err1"))"
grep -q "JSON_TOO_LARGE  header: json_bytes $jb is above the ceiling of $((jb - 1)) bytes" "$T/err1" ||
	fail "no JSON_TOO_LARGE finding: $(cat "$T/err1")"
[ "$rc2" = 16 ] && [ "$rc3" = 16 ] || fail "bad max_json values: exit $rc2, $rc3, want 16"
grep -q "max_json must be a positive size" "$T/err2" || fail "bad max_json: $(cat "$T/err2")"
mount_fg "$d/text.ninfer" "$T/mnt" -o max_json=$jb
cmp -s <(tail -c +33 "$d/text.ninfer" | head -c "$jb") "$T/mnt/artifact.json" || fail "artifact.json"
unmount "$T/mnt"
ok "-o max_json: $jb-byte JSON refused at $((jb - 1)) (exit 8, JSON_TOO_LARGE), mounted at $jb"

#  item 2: a set with more parts than the descriptor limit.  A 300-part set
#  written by ninfer-pack, then everything under `prlimit --nofile=64:64`
#  (hard limit 64, so raising the soft limit cannot help): ninfer-check
#  passes (exit 0), the daemon mounts it and every object reads byte-exact
#  (cmp against the manifest's source files), and ninfer-pack creates a
#  300-part set and reshards it.  EMFILE and ENFILE are operational, never
#  findings about the files (ninfer-check(1), FILE_OPEN_LIMIT).
: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}"
: "${NINFER_CHECK:?NINFER_CHECK must point at ninfer-check}"
LIM="prlimit --nofile=64:64"
mkdir -p "$T/many"
python3 - "$T/many" <<'PY' || fail "sources"
import json, os, random, sys
d = sys.argv[1]
rnd = random.Random(2)
objs = []
for i in range(40):                       # 40 bf16 tensors, 8.6 MB in all
    n = rnd.randrange(80000, 135000)
    name = "t%02d.bin" % i
    open(os.path.join(d, name), "wb").write(rnd.randbytes(2 * n))
    objs.append({"id": "w%02d" % i, "kind": "tensor", "shape": [n], "format": "bf16",
                 "layout": "contiguous_le_v1", "source": name})
m = {"components": {"text": {"config": {"architectures": ["Limits"]}}}, "objects": objs,
     "bindings": {o["id"]: {"object": o["id"]} for o in objs}, "uses": []}
json.dump(m, open(os.path.join(d, "m.json"), "w"))
PY
# 32 KiB files: 28 KiB of payload in each part
"$NINFER_PACK" create -q --manifest "$T/many/m.json" --max-file-bytes 32K "$T/many/s.ninfer" ||
	fail "ninfer-pack create"
nparts=$(ls "$T/many" | grep -c '^s\.ninfer\.part-')
[ "$nparts" -ge 299 ] || fail "only $nparts parts"
rc=0
$LIM "$NINFER_CHECK" "$T/many/s.ninfer" > "$T/check.txt" 2>&1 || rc=$?
[ "$rc" = 0 ] || fail "ninfer-check of $nparts parts under ulimit -n 64: exit $rc: $(grep -v '^$' "$T/check.txt" | head -3)"
$LIM "$NINFER_CHECK" --deep "$T/many/s.ninfer" > "$T/check.txt" 2>&1 || fail "ninfer-check --deep under ulimit -n 64: $(head -3 "$T/check.txt")"
ok "ninfer-check, $nparts parts, ulimit -n 64: pass (also --deep)"
# 5 descriptors: stdio, the entry and its directory, none left for a part:
# operational (exit 8, FILE_OPEN_LIMIT), never a finding about the files
rc=0
prlimit --nofile=5:5 "$NINFER_CHECK" "$T/many/s.ninfer" > "$T/check5.txt" 2>&1 || rc=$?
[ "$rc" = 8 ] || fail "ninfer-check under ulimit -n 5: exit $rc, want 8: $(head -3 "$T/check5.txt")"
grep -q 'error   FILE_OPEN_LIMIT  files\[1\] s.ninfer.part-0001: .*Too many open files' "$T/check5.txt" ||
	fail "no FILE_OPEN_LIMIT: $(head -3 "$T/check5.txt")"
grep -q 'FILE_UNREADABLE\|FILE_MISSING' "$T/check5.txt" && fail "the descriptor limit blamed on the files"
grep -q "error   FILE_OPEN_LIMIT  files: $((nparts - 1)) more parts, up to files\[$nparts\], could not be opened" \
	"$T/check5.txt" || fail "the other parts are not summed up in one finding: $(head -4 "$T/check5.txt")"
[ "$(grep -c FILE_OPEN_LIMIT "$T/check5.txt")" = 2 ] || fail "FILE_OPEN_LIMIT not 2 findings"
rc=0
prlimit --nofile=5:5 "$NINFERFS" "$T/many/s.ninfer" "$T/mnt" -f > "$T/fs5.txt" 2>&1 || rc=$?
is_mounted "$T/mnt" && { MOUNTS+=("$T/mnt"); fail "mounted under ulimit -n 5"; }
[ "$rc" = 8 ] || fail "ninferfs under ulimit -n 5: exit $rc, want 8: $(tail -2 "$T/fs5.txt")"
grep -q 'no descriptor left to open its parts' "$T/fs5.txt" || fail "ninferfs message: $(tail -2 "$T/fs5.txt")"
ok "ulimit -n 5: ninfer-check and ninferfs exit 8 (FILE_OPEN_LIMIT), no finding blames a file"

PREFIX=$LIM
mkdir -p "$T/mnt2"
MOUNTS+=("$T/mnt2")
$LIM "$NINFERFS" "$T/many/s.ninfer" "$T/mnt2" -f 2>>"$T/daemon.log" &
PIDS+=($!)
for _ in $(seq 100); do is_mounted "$T/mnt2" && break; sleep 0.05; done
is_mounted "$T/mnt2" || fail "no mount under ulimit -n 64: $(cat "$T/daemon.log")"
grep -q 'Too many open files\|FILE_UNREADABLE\|FILE_OPEN_LIMIT' "$T/daemon.log" &&
	fail "descriptor trouble at mount: $(cat "$T/daemon.log")"
python3 - "$T/many" "$T/mnt2" <<'PY' || fail "reads under ulimit -n 64"
import json, os, sys, threading
src, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(src, "m.json")))
fj = json.load(open(os.path.join(mnt, "files.json")))
bad = [f for f in fj if f["status"] != "present"]
assert not bad, bad
errs = []
def reader(k):
    try:
        for o in m["objects"][k::4]:
            want = open(os.path.join(src, o["source"]), "rb").read()
            with open(os.path.join(mnt, "objects", o["id"]), "rb", buffering=0) as f:
                os.posix_fadvise(f.fileno(), 0, 0, os.POSIX_FADV_DONTNEED)
                got = f.read()
            if got != want:
                errs.append("%s: %d bytes differ" % (o["id"], len(got)))
            with open(os.path.join(mnt, "decoded/objects", o["id"]), "rb") as f:
                if len(f.read()) != 2 * len(want):
                    errs.append("decoded %s" % o["id"])
    except OSError as e:
        errs.append(str(e))
ts = [threading.Thread(target=reader, args=(k,)) for k in range(4)]
for t in ts: t.start()
for t in ts: t.join()
assert not errs, errs[:5]
st = json.load(open(os.path.join(mnt, "stats")))
assert st["errors"] == 0, st["errors"]
dsc = st["descriptors"]
# the cache was in use: plain descriptors, parts closed and opened again
assert not dsc["fixed_files"] and dsc["evictions"] > 0 and dsc["reopens"] > 0, dsc
assert dsc["open"] <= dsc["open_max"] < 64, dsc
print("%d objects exact through %d files, 4 readers; descriptors %s"
      % (len(m["objects"]), len(fj), dsc))
PY
for o in w00 w17 w39; do
	cmp "$T/mnt2/objects/$o" "$T/many/t${o#w}.bin" || fail "cmp $o"
done
unmount "$T/mnt2"
ok "mounted under ulimit -n 64: every object byte-exact (cmp), raw and decoded"

$LIM "$NINFER_PACK" create -q --manifest "$T/many/m.json" --max-file-bytes 32K "$T/many/c.ninfer" \
	2>"$T/pack.err" || fail "ninfer-pack create under ulimit -n 64: $(cat "$T/pack.err")"
$LIM "$NINFER_PACK" reshard -q "$T/many/c.ninfer" "$T/many/r.ninfer" --max-file-bytes 40K \
	2>"$T/pack.err" || fail "ninfer-pack reshard under ulimit -n 64: $(cat "$T/pack.err")"
$LIM "$NINFER_CHECK" --deep "$T/many/r.ninfer" >/dev/null || fail "resharded set does not pass"
ok "ninfer-pack create ($nparts parts) and reshard under ulimit -n 64"
