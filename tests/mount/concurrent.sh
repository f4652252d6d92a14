#!/usr/bin/env bash
# 16 concurrent readers, random reads over the split set (raw and decoded
# files) for 20-30 s, every byte checked; no error; the daemon's RSS stays
# stable while its thread pool does.
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
# Passes of 10 s; a pass is judged when the daemon's thread count is the
# same at its start and end (libfuse starts workers as the load asks, up
# to threads=16, and each new one brings about 5 MiB of buffers: a pass
# in which the pool grew from 8 to 10 threads grew by 10 MiB, no leak).
# Each judged pass may grow by 4 MiB (8 MiB in 20 s, as before); at
# least one of three must be judged.
threads() { awk '/^Threads/ {print $2}' "/proc/$pid/status"; }
judged=0
for pass in 1 2 3; do
	before=$(rss) tb=$(threads)
	python3 "$T/readers.py" "$d" "$mnt" 10 || fail "concurrent readers (pass $pass)"
	after=$(rss) ta=$(threads)
	echo "pass $pass: daemon VmRSS before ${before} kB, after ${after} kB; threads $tb -> $ta"
	[ "$tb" = "$ta" ] || continue
	judged=$((judged + 1))
	if [ "${NF_SANITIZE:-none}" = none ]; then
		[ "$after" -le $((before + 4096)) ] || fail "RSS grew from $before to $after kB in pass $pass ($ta threads)"
	fi
	[ $judged -ge 2 ] && break
done
[ $judged -ge 1 ] || fail "the thread pool grew in every pass: RSS not judged"
[ "${NF_SANITIZE:-none}" = none ] ||
	echo "RSS growth not judged: built with -fsanitize=$NF_SANITIZE (ASan quarantine)"
python3 -c "
import json,sys; s=json.load(open('$mnt/stats')); assert s['errors'] == 0, s; print('stats reads', s['reads'], 'uring submissions', s['uring_submissions'])"
kill -0 "$pid" || fail "daemon died"
ok "16 concurrent readers"
