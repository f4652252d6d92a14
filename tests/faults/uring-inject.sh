#!/usr/bin/env bash
# Syscall faults in the daemon's read engine, injected with strace (ptrace)
# into the running daemon (-s: one worker, so the injection hits the ring
# that serves the reads):
#  1. io_uring_enter fails with EINTR, EAGAIN or EBUSY on every third call
#     (what a signal or a full completion queue gives): every object, raw
#     and decoded, still reads exactly and stats counts no error;
#  2. io_uring_enter fails with ENOMEM every time and pread64 with EIO on
#     calls 3, 7, 11, ...: no wrong bytes — a read either is exact or fails
#     with EIO — the daemon stays up and serves exact bytes once the
#     injection stops.
# Skipped (77) when strace is missing or cannot attach.
. "$(dirname "$0")/lib.sh"

command -v strace >/dev/null || { echo "SKIP: no strace"; exit 77; }
d=$(fixture mixed)
SPID=
stop_strace() {
	[ -n "$SPID" ] || return 0
	kill "$SPID" 2>/dev/null; wait "$SPID" 2>/dev/null || true; SPID=
}
n=0
for inj in EINTR EAGAIN EBUSY; do
	n=$((n + 1)); mnt=$T/mnt$n
	mount_fg "$d/mixed.ninfer" "$mnt" -s
	strace -f -qq -p "$DPID" -e trace=io_uring_enter -e inject=io_uring_enter:error=$inj:when=2+3 \
		-o "$T/strace.$inj" 2>"$T/strace.err" &
	SPID=$!
	for _ in $(seq 100); do grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$DPID/status" && break; sleep 0.05; done
	grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$DPID/status" ||
		{ stop_strace; echo "SKIP: strace cannot attach: $(cat "$T/strace.err")"; exit 77; }
	check_objects "$mnt" "$d" || { stop_strace; fail "reads with io_uring_enter failing $inj"; }
	stop_strace
	k=$(grep -c 'INJECTED' "$T/strace.$inj" || true)
	[ "$k" -gt 0 ] || fail "no $inj was injected (the daemon made no io_uring_enter call?)"
	errs=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["errors"])' "$mnt/stats")
	[ "$errs" = 0 ] || fail "stats errors $errs after retryable $inj"
	alive "$DPID" || fail "daemon died"
	unmount "$mnt" "$DPID"
	ok "io_uring_enter -> $inj on every third call ($k injected): exact bytes, no error"
done

mnt=$T/mnt-eio
mount_fg "$d/mixed.ninfer" "$mnt" -s
strace -f -qq -p "$DPID" -e trace=io_uring_enter,pread64 -e inject=io_uring_enter:error=ENOMEM \
	-e inject=pread64:error=EIO:when=3+4 -o "$T/strace.eio" 2>"$T/strace.err" &
SPID=$!
for _ in $(seq 100); do grep -q "^TracerPid:[[:space:]]*[1-9]" "/proc/$DPID/status" && break; sleep 0.05; done
$PY - "$mnt" "$d" <<'PY' || { stop_strace; fail "reads under injected ENOMEM/EIO"; }
import os, sys
sys.path.insert(0, os.environ["PYTHONPATH"].split(":")[0])
import faultlib as fl
mnt, d = sys.argv[1], sys.argv[2]
m = fl.manifest(d)
ok = eio = 0
for o in m["objects"]:
    views = [("objects", o["expect_bytes"])]
    if o.get("expect_decoded"):
        views.append(("decoded/objects", o["expect_decoded"]))
    for view, rel in views:
        p = os.path.join(mnt, view, fl.esc(o["id"]))
        fd = os.open(p, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        got = fl.read_file(p)
        if got == "EIO":
            eio += 1
        elif got == fl.expect(d, rel):
            ok += 1
        else:
            sys.exit("%s: %s" % (p, got if isinstance(got, str) else "wrong bytes (%d)" % len(got)))
print("under injected ENOMEM/EIO: %d exact, %d EIO, no wrong bytes" % (ok, eio))
assert eio > 0, "no EIO although pread64 failed"
PY
stop_strace
alive "$DPID" || fail "daemon died"
drop_mount_cache "$mnt"
check_objects "$mnt" "$d" || fail "reads after the injection stopped"
unmount "$mnt" "$DPID"
ok "io_uring_enter ENOMEM + pread64 EIO: EIO or exact bytes, exact again afterwards"
