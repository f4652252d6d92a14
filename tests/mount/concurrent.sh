#!/usr/bin/env bash
# 16 concurrent readers, random reads over the split set (raw and decoded
# files) for 20 s, every byte checked; no error; the daemon's RSS stays stable.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt" -o threads=16
pid=${PIDS[-1]}
rss() { awk '/^VmRSS/ {print $2}' "/proc/$pid/status"; }
cat >"$T/readers.py" <<PY
import json, os, random, sys, time
from multiprocessing import Pool
$PY_ESC
d, mnt, secs = sys.argv[1], sys.argv[2], float(sys.argv[3])
m = json.load(open(os.path.join(d, "expect/manifest.json")))
objs = [(os.path.join(mnt, "objects", esc(o["id"])),
         open(os.path.join(d, "expect", o["expect_bytes"]), "rb").read()) for o in m["objects"]]
# and the decoded views (f32 / int32), which go through the codecs
objs += [(os.path.join(mnt, "decoded/objects", esc(o["id"])),
          open(os.path.join(d, "expect", o["expect_decoded"]), "rb").read())
         for o in m["objects"] if o.get("expect_decoded")]
def worker(seed):
    rnd = random.Random(seed)
    fds = [os.open(p, os.O_RDONLY) for p, _ in objs]
    n = nbytes = 0
    end = time.time() + secs
    while time.time() < end:
        i = rnd.randrange(len(objs))
        want = objs[i][1]
        off = rnd.randrange(0, len(want) + 1)
        size = rnd.choice((1, 17, 4096, 65536, 300000))
        # bypass the page cache now and then so the daemon does the work
        if rnd.random() < 0.05:
            os.posix_fadvise(fds[i], 0, 0, os.POSIX_FADV_DONTNEED)
        got = os.pread(fds[i], size, off)
        if got != want[off:off + size]:
            return ("mismatch", objs[i][0], off, size)
        n += 1; nbytes += len(got)
    for fd in fds: os.close(fd)
    return ("ok", n, nbytes)
with Pool(16) as pool:
    res = pool.map(worker, range(16))
bad = [r for r in res if r[0] != "ok"]
assert not bad, bad
print("reads", sum(r[1] for r in res), "bytes", sum(r[2] for r in res))
PY
python3 "$T/readers.py" "$d" "$mnt" 3 >/dev/null || fail "warm-up readers"
before=$(rss)
python3 "$T/readers.py" "$d" "$mnt" 20 || fail "concurrent readers"
after=$(rss)
echo "daemon VmRSS before ${before} kB, after ${after} kB"
if [ "${NF_SANITIZE:-none}" = none ]; then
	[ "$after" -le $((before + 8192)) ] || fail "RSS grew from $before to $after kB"
else
	echo "RSS growth not judged: built with -fsanitize=$NF_SANITIZE (ASan quarantine)"
fi
python3 -c "
import json,sys; s=json.load(open('$mnt/stats')); assert s['errors'] == 0, s; print('stats reads', s['reads'], 'uring submissions', s['uring_submissions'])"
kill -0 "$pid" || fail "daemon died"
ok "16 concurrent readers"
