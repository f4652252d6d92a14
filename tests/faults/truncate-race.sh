#!/usr/bin/env bash
# A part truncated while reads are in flight.  6 reader processes read random
# ranges (4 KiB .. 1 MiB, readahead off, page cache of the range dropped) of
# objects/big and decoded/objects/big of a 32 MiB bf16 set split in 4 MiB
# files; after 1 s part-0003 is truncated inside a page.  A file whose size
# changed since it was first opened is treated like a replaced one (issue
# 11), so all of part-0003 is lost, not only its cut tail.  Asserted for
# every read: it never returns wrong bytes (a short read must be an exact
# prefix that stops at a page boundary: for a read started after the
# truncation, at the first page of part-0003; one in flight when the change
# is noticed may stop at any page of the part); reads that
# started before the truncation and ended before it are exact and whole;
# reads that started after it are exact and whole when their pages do not
# touch part-0003, and fail with EIO (or return the exact prefix before its
# first page) when they do ("after" = started 1 s after the truncation, so
# that no read that was in flight across it can have refilled the page
# cache); the daemon stays up and unmounts cleanly.
. "$(dirname "$0")/lib.sh"

big_set "$T/big" 4M
mnt=$T/mnt
mount_fg "$T/big/big.ninfer" "$mnt"

cat >"$T/race.py" <<'PY'
import errno, json, os, random, sys, time
import numpy as np
mnt, src, part, keep, tdir = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
files = json.load(open(os.path.join(mnt, "files.json")))
files = files if isinstance(files, list) else files["files"]
idx = int(part.rsplit("-", 1)[1])
f = [x for x in files if x["index"] == idx][0]
begin = f.get("payload_begin", f.get("logical_start"))
end_ = f.get("payload_end", begin + f.get("payload_bytes", 0))
lost = (begin, end_)   # the whole part: changed since it was opened (keep is where it is cut)
assert int(os.getxattr(os.path.join(mnt, "objects/big"), "user.ninfer.offset")) == 0
big = open(os.path.join(src, "big.bin"), "rb").read()
dec = (np.frombuffer(big, "<u2").astype(np.uint32) << np.uint32(16)).astype("<u4").tobytes()
views = {"objects/big": (big, 1), "decoded/objects/big": (dec, 2)}
def stamp(name):
    p = os.path.join(tdir, name)
    return float(open(p).read()) if os.path.exists(p) else None
def worker(w):
    rnd = random.Random(w)
    fds = {}
    for rel in views:
        fds[rel] = os.open(os.path.join(mnt, rel), os.O_RDONLY)
        os.posix_fadvise(fds[rel], 0, 0, os.POSIX_FADV_RANDOM)
    c = {"before": 0, "after_ok": 0, "after_eio": 0, "after_short": 0, "during": 0}
    bad = []
    stop = time.time() + 4
    while time.time() < stop:
        rel = rnd.choice(list(views))
        want, div = views[rel]
        n = rnd.choice([4096, 65536, 131072, 1 << 20])
        off = rnd.randrange(0, len(want) - 1)
        if rnd.random() < 0.5:
            off = off // 4096 * 4096
        fd = fds[rel]
        p0 = off // 4096 * 4096
        p1 = min(-(-(off + n) // 4096) * 4096, len(want))
        os.posix_fadvise(fd, p0, p1 - p0, os.POSIX_FADV_DONTNEED)
        touch = p0 // div < lost[1] and lost[0] < p1 // div
        t0 = time.time()
        try:
            got, res = os.pread(fd, n, off), "ok"
        except OSError as e:
            got, res = b"", errno.errorcode.get(e.errno, str(e.errno))
        t1 = time.time()
        tb, ta = stamp("t_before"), stamp("t_after")
        exp = want[off:off + n]
        where = "%s off %d n %d: %s %d bytes" % (rel, off, n, res, len(got))
        after = ta is not None and t0 > ta + 1.0
        if res == "ok" and got != exp[:len(got)]:
            bad.append("wrong bytes: " + where)
        elif res == "ok" and len(got) < len(exp) and (off + len(got)) % 4096:
            bad.append("short read not ending at a page: " + where)
        elif res == "ok" and len(got) < len(exp) and after and (
                not touch or (off + len(got)) // div > lost[0]):
            # (a read in flight when the change is noticed may stop at
            # any page of the part: its earlier requests were served)
            bad.append("short read not ending at the lost page: " + where)
        elif tb is None or t1 < tb:
            c["before"] += 1
            if res != "ok" or got != exp:
                bad.append("before the truncation: " + where)
        elif after:
            if not touch:
                c["after_ok"] += 1
                if res != "ok" or got != exp:
                    bad.append("after, not touching the lost bytes: " + where)
            elif res == "EIO":
                c["after_eio"] += 1
            elif res == "ok" and len(got) < len(exp):
                c["after_short"] += 1
            else:
                bad.append("after, touching the lost bytes %s: %s" % (lost, where))
        else:
            c["during"] += 1
            if res not in ("ok", "EIO"):
                bad.append("during: " + where)
    line = json.dumps({"w": w, "counts": c, "bad": len(bad), "first": bad[:3]})
    print(line, flush=True)
    open(os.path.join(tdir, "counts.%d" % w), "w").write(line)
    os._exit(1 if bad else 0)
pids = []
for w in range(6):
    p = os.fork()
    if p == 0:
        worker(w)
    pids.append(p)
time.sleep(1)
open(os.path.join(tdir, "t_before.tmp"), "w").write(repr(time.time()))
os.rename(os.path.join(tdir, "t_before.tmp"), os.path.join(tdir, "t_before"))
os.truncate(part, 4096 + keep)
open(os.path.join(tdir, "t_after.tmp"), "w").write(repr(time.time()))
os.rename(os.path.join(tdir, "t_after.tmp"), os.path.join(tdir, "t_after"))
rc = 0
for p in pids:
    rc |= os.waitpid(p, 0)[1]
tot = {}
for w in range(6):
    for k, v in json.load(open(os.path.join(tdir, "counts.%d" % w)))["counts"].items():
        tot[k] = tot.get(k, 0) + v
print("all readers:", tot)
if not (tot["after_eio"] + tot["after_short"] and tot["after_ok"] and tot["before"]):
    sys.exit("not every case was exercised: %s" % tot)
sys.exit(1 if rc else 0)
PY
timeout 30 $PY "$T/race.py" "$mnt" "$T/big/src" "$T/big/big.ninfer.part-0003" 2000123 "$T" ||
	fail "reads racing a truncation (see above)"
alive "$DPID" || fail "daemon died"
n=$(grep -c 'part-0003' "$LOG" || true)
echo "daemon log lines naming part-0003: $n"
[ "$n" -ge 1 ] && [ "$n" -le 3 ] || fail "the failing part was logged $n times (want once, no flood): $(head -5 "$LOG")"
$PY -m faultlib check-big "$mnt" "$T/big/src" >/dev/null 2>&1 &&
	fail "after the truncation the whole files still read"
unmount "$mnt" "$DPID"
ok "part truncated during concurrent reads: no wrong bytes, EIO exactly where the lost bytes are"
