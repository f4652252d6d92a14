#!/usr/bin/env bash
# SIGTERM (then SIGINT) to the daemon during concurrent reads (ninferfs(1):
# "SIGINT and SIGTERM unmount cleanly"; EXIT STATUS 0 with -f: "unmounted
# cleanly").
# 8 reader processes read random 1 MiB ranges of the raw, decoded and binding
# files of a 32 MiB bf16 set (page cache dropped for each range, every byte
# checked); half keep their descriptors open, half reopen the path for every
# read.  Then SIGTERM.  Asserted: the mountpoint is no longer a fuse mount
# within 5 s; the daemon exits within 5 s with status 0; every reader ends
# within 10 s with an error from {ENOTCONN, ECONNABORTED, EIO, ENOENT} (the
# connection is gone or the path is now the empty directory), and no reader
# ever got wrong bytes; the mountpoint is usable (an empty directory).
. "$(dirname "$0")/lib.sh"

big_set "$T/big"

cat >"$T/readers.py" <<'PY'
import errno, json, os, random, sys, time
import numpy as np
mnt, src, out = sys.argv[1], sys.argv[2], sys.argv[3]
big = open(os.path.join(src, "big.bin"), "rb").read()
dec = (np.frombuffer(big, "<u2").astype(np.uint32) << np.uint32(16)).astype("<u4").tobytes()
files = [("objects/big", big), ("decoded/objects/big", dec), ("bindings/w/big", big),
         ("decoded/bindings/w/big", dec), ("decoded/bindings/w/rows", dec[4096 * 100 * 4:4096 * 300 * 4])]
ALLOWED = {"ENOTCONN", "ECONNABORTED", "EIO", "ENOENT"}
def worker(w):
    rnd = random.Random(w)
    reopen = w % 2 == 1
    fds = {}
    good = 0
    short = [0]
    short_t = []
    end = time.time() + 30
    while time.time() < end:
        rel, want = rnd.choice(files)
        off = rnd.randrange(0, len(want))
        n = 1 << 20
        try:
            fd = fds.get(rel)
            if fd is None:
                fd = os.open(os.path.join(mnt, rel), os.O_RDONLY)
                if not reopen:
                    fds[rel] = fd
            os.posix_fadvise(fd, off, n, os.POSIX_FADV_DONTNEED)
            got = os.pread(fd, n, off)
            if reopen:
                os.close(fd)
        except OSError as e:
            return {"w": w, "good": good, "short": short[0], "short_t": short_t[:1],
                    "errno": errno.errorcode.get(e.errno, str(e.errno)), "t": time.time()}
        exp = want[off:off + n]
        if len(got) < len(exp) and got == exp[:len(got)]:
            # a short read: the pages before the failing one (read(2) returns
            # what it transferred before an error); the next read gets the error
            short[0] += 1
            short_t.append(time.time())
            continue
        if got != exp:
            return {"w": w, "good": good, "short": short[0], "short_t": short_t[:1], "errno": "MISMATCH %s off %d: %d bytes" % (rel, off, len(got)),
                    "t": time.time()}
        good += 1
        if good == 3:
            open(out + ".%d" % w, "w").close()   # "I am reading"
    return {"w": w, "good": good, "short": short[0], "short_t": short_t[:1], "errno": "NOERROR", "t": time.time()}
pids = []
for w in range(8):
    p = os.fork()
    if p == 0:
        r = worker(w)
        with open(out, "a") as f:
            f.write(json.dumps(r) + "\n")
        os._exit(0)
    pids.append(p)
for p in pids:
    os.waitpid(p, 0)
res = [json.loads(l) for l in open(out)]
bad = [r for r in res if r["errno"] not in ALLOWED]
sys.exit(1 if bad or len(res) != 8 else 0)
PY
cat >"$T/summary.py" <<'PY'
import json, sys
tt = float(open(sys.argv[2]).read())
for l in open(sys.argv[1]):
    r = json.loads(l)
    print("  reader %d (%s): %d exact reads, %d short exact prefixes, then %s"
          % (r["w"], "reopens" if r["w"] % 2 else "keeps fds", r["good"], r["short"], r["errno"]))
    # a short read is fine only once the connection goes away
    if r["short_t"] and r["short_t"][0] < tt:
        sys.exit("reader %d: short read %.3f s before the SIG%s" % (r["w"], tt - r["short_t"][0], sys.argv[3]))
PY
for sig in TERM INT; do
	mnt=$T/mnt.$sig
	# a background job of a non-interactive shell starts with SIGINT
	# ignored, and libfuse (fuse_set_signal_handlers) keeps an ignored
	# signal ignored: give the daemon the default disposition
	PREFIX="env --default-signal=INT" mount_fg "$T/big/big.ninfer" "$mnt"
	$PY "$T/readers.py" "$mnt" "$T/big/src" "$T/res.$sig" &
	rp=$!
	for _ in $(seq 200); do [ "$(ls "$T" | grep -c "^res\.$sig\.")" = 8 ] && break; kill -0 "$rp" 2>/dev/null || break; sleep 0.05; done
	[ "$(ls "$T" | grep -c "^res\.$sig\.")" = 8 ] || { kill "$rp"; fail "readers did not get going"; }
	sleep 0.5
	date +%s.%N >"$T/t_$sig"
	kill -s "$sig" "$DPID"
	t0=$(date +%s%N)
	wait_unmounted "$mnt" 5 || fail "still a fuse mount 5 s after SIG$sig"
	tu=$(( ($(date +%s%N) - t0) / 1000000 ))
	wait_gone "$DPID" 5 || fail "daemon still running 5 s after SIG$sig"
	drc=0; wait "$DPID" || drc=$?
	td=$(( ($(date +%s%N) - t0) / 1000000 ))
	gone=no
	for _ in $(seq 200); do kill -0 "$rp" 2>/dev/null || { gone=yes; break; }; sleep 0.05; done
	[ $gone = yes ] || { pkill -9 -P "$rp"; kill -9 "$rp"; fail "readers still running 10 s after SIG$sig (hang)"; }
	rrc=0; wait "$rp" || rrc=$?
	echo "SIG$sig: unmounted after ${tu} ms, daemon exited with status $drc after ${td} ms; readers:"
	$PY "$T/summary.py" "$T/res.$sig" "$T/t_$sig" "$sig" || fail "short read before the SIG$sig"
	[ "$drc" = 0 ] || fail "daemon exit status $drc after SIG$sig, want 0 (clean unmount)"
	[ "$rrc" = 0 ] || fail "a reader got wrong bytes, no error, or an unexpected error"
	ls -A "$mnt" | grep -q . && fail "the mountpoint is not the empty directory after the unmount"
	ok "SIG$sig during 8 concurrent readers: clean unmount, readers failed fast, no daemon left"
done
