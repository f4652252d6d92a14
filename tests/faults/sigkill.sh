#!/usr/bin/env bash
# The daemon killed with SIGKILL.  Asserted: the mount stays in /proc/mounts
# with a dead connection: a read through a descriptor opened before the kill
# fails with ENOTCONN (or ECONNABORTED if it was in flight); open, readdir
# and the stat of a name not looked up yet fail with ENOTCONN (the stat of
# the mountpoint itself may be answered from the kernel's cached
# attributes, so it is only printed); `fusermount3 -u` then removes the
# mount (-u is tried first and must succeed once no descriptor is open; -z
# only if -u fails, which is reported); a new daemon mounts on the same
# mountpoint and serves exact bytes (every object, raw and decoded, cmp'd
# against the fixture's expect/ files), and unmounts cleanly.  Then the same
# with a reader blocked inside a 64 MiB decoded read at the moment of the
# kill: it must fail with ENOTCONN/ECONNABORTED within 5 s.
. "$(dirname "$0")/lib.sh"

d=$(fixture mixed)
mnt=$T/mnt
mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" >/dev/null || fail "reads before the kill"

# a holder with descriptors opened before the kill
cat >"$T/holder.py" <<'PY'
import errno, os, sys, time
mnt, go, out = sys.argv[1:4]
fd = os.open(os.path.join(mnt, "objects/w.embed"), os.O_RDONLY)
dfd = os.open(os.path.join(mnt, "decoded/objects/w.mlp.down"), os.O_RDONLY)
assert len(os.pread(fd, 100, 0)) == 100
open(go + ".ready", "w").close()
while not os.path.exists(go):
    time.sleep(0.02)
res = []
for f in (fd, dfd):
    os.posix_fadvise(f, 0, 0, os.POSIX_FADV_DONTNEED)
    try:
        os.pread(f, 4096, 8192)
        res.append("OK")
    except OSError as e:
        res.append(errno.errorcode.get(e.errno, str(e.errno)))
os.close(fd); os.close(dfd)
open(out, "w").write(" ".join(res))
PY
$PY "$T/holder.py" "$mnt" "$T/go" "$T/held" &
hp=$!
for _ in $(seq 200); do [ -e "$T/go.ready" ] && break; sleep 0.05; done
[ -e "$T/go.ready" ] || fail "holder did not start"

kill -KILL "$DPID"
wait_gone "$DPID" 5 || fail "daemon survives SIGKILL?"
{ wait "$DPID"; } 2>/dev/null || true
is_mounted "$mnt" || fail "the mount vanished without an unmount"
alive "$DPID" && fail "daemon alive after SIGKILL"
touch "$T/go"
timeout 10 tail --pid="$hp" -f /dev/null || fail "holder hangs on the dead mount"
wait "$hp" || fail "holder failed"
held=$(cat "$T/held")
echo "descriptors opened before SIGKILL: pread gives $held"
for e in $held; do
	case $e in ENOTCONN | ECONNABORTED) ;; *) fail "pread on a dead mount gave $e, want ENOTCONN" ;; esac
done
$PY - "$mnt" <<'PY' || fail "errors on the dead mount"
import errno, os, sys
mnt = sys.argv[1]
def err(f, *a):
    try:
        f(*a)
        return "OK"
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
got = {"open artifact.json": err(os.open, os.path.join(mnt, "artifact.json"), os.O_RDONLY),
       "listdir /": err(os.listdir, mnt),
       "stat uses.json": err(os.stat, os.path.join(mnt, "uses.json"))}
print("dead mount:", got, "(stat of the mountpoint itself: %s, the kernel's cached attributes)"
      % err(os.stat, mnt))
assert all(v == "ENOTCONN" for v in got.values()), got
PY

how="fusermount3 -u"
if ! fusermount3 -u "$mnt" 2>"$T/fu.err"; then
	echo "note: fusermount3 -u failed ($(cat "$T/fu.err")); trying -z"
	how="fusermount3 -uz"
	fusermount3 -uz "$mnt" || fail "fusermount3 -uz failed too"
fi
wait_unmounted "$mnt" 5 || fail "still mounted after $how"
[ "$how" = "fusermount3 -u" ] || fail "fusermount3 -u did not work after SIGKILL (-z did)"
ok "SIGKILL: ENOTCONN on the dead mount, $how works"

mount_fg "$d/mixed.ninfer" "$mnt"
check_objects "$mnt" "$d" || fail "reads after the remount"
cmp "$mnt/objects/w.embed" "$d/expect/objects/w.embed.bin" || fail "cmp w.embed"
cmp "$mnt/decoded/objects/w.mlp.down" "$d/expect/decoded/w.mlp.down.f32" || fail "cmp decoded w.mlp.down"
unmount "$mnt" "$DPID"
ok "remount on the same mountpoint serves exact bytes; clean unmount"

# SIGKILL while a reader is inside a large decoded read: the reader gets
# ENOTCONN or ECONNABORTED within 5 s (no hang); fusermount3 -u works again
# and a remount serves exact bytes (cmp with the source files).
big_set "$T/big"
mount_fg "$T/big/big.ninfer" "$mnt"
cat >"$T/busy.py" <<'PY'
import errno, os, sys
import numpy as np
big = np.fromfile(sys.argv[3], "<u2")
want = (big.astype(np.uint32) << np.uint32(16)).astype("<u4").tobytes()
fd = os.open(sys.argv[1], os.O_RDONLY)
size = os.fstat(fd).st_size
n = 0
try:
    while True:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        got = os.pread(fd, size, 0)
        n += 1
        if got != want[:len(got)]:
            open(sys.argv[2], "w").write("WRONG-BYTES")
            sys.exit(1)
        if len(got) != size:
            # a short read is allowed only as the connection dies
            open(sys.argv[2] + ".short", "w").write("%d" % len(got))
        open(sys.argv[2] + ".n", "w").write("%d" % n)
except OSError as e:
    open(sys.argv[2], "w").write(errno.errorcode.get(e.errno, str(e.errno)))
PY
$PY "$T/busy.py" "$mnt/decoded/objects/big" "$T/busy" "$T/big/src/big.bin" &
bp=$!
for _ in $(seq 200); do [ -s "$T/busy.n" ] && break; sleep 0.05; done
[ -s "$T/busy.n" ] || fail "busy reader made no progress"
# nearly all of the loop is inside pread: kill 50-250 ms into the next one
sleep 0.$((RANDOM % 200 + 50))
insys=$(cut -d' ' -f1 "/proc/$bp/syscall" 2>/dev/null || echo gone)
case $insys in 0 | 17) insys="in syscall $insys" ;; running) insys="on CPU" ;; esac
kill -KILL "$DPID"
timeout 5 tail --pid="$bp" -f /dev/null || { kill -9 "$bp"; fail "reader hangs after the daemon's SIGKILL"; }
wait "$bp" || fail "busy reader: $(cat "$T/busy" 2>/dev/null)"
got=$(cat "$T/busy" 2>/dev/null || echo none)
echo "reader state at SIGKILL: $insys; it got $got after $(cat "$T/busy.n") whole reads"
case $got in ENOTCONN | ECONNABORTED) ;; *) fail "reader got $got, want ENOTCONN/ECONNABORTED" ;; esac
if [ -e "$T/busy.short" ]; then
	[ -s "$T/busy.short" ] && echo "(a short read of $(cat "$T/busy.short") bytes, an exact prefix, before the error)"
fi
wait_gone "$DPID" 5 || fail "daemon survives SIGKILL?"
{ wait "$DPID"; } 2>/dev/null || true
fusermount3 -u "$mnt" || fail "fusermount3 -u after SIGKILL (with the reader gone)"
wait_unmounted "$mnt" 5 || fail "still mounted"
mount_fg "$T/big/big.ninfer" "$mnt"
cmp "$mnt/objects/big" "$T/big/src/big.bin" || fail "cmp objects/big"
cmp "$mnt/objects/small" "$T/big/src/small.bin" || fail "cmp objects/small"
$PY -m faultlib check-big "$mnt" "$T/big/src" || fail "reads after the second remount"
unmount "$mnt" "$DPID"
ok "SIGKILL during a large read: reader gets $got at once; unmount, remount, exact bytes"
