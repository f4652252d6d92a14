#!/usr/bin/env bash
# A read interrupted by a signal in the reader.  A python3 reader loops over
# whole-file reads of a 64 MiB decoded file (page cache dropped before each,
# so every read reaches the daemon and decodes); once it is inside read(2)
# (sampled from /proc/PID/syscall), it gets SIGKILL, SIGINT (python: KeyboardInterrupt,
# i.e. a FUSE_INTERRUPT for the pending request) or SIGTERM.  Asserted each
# time: the reader is gone within 10 s (no hang in the kernel or daemon),
# the daemon is alive, and the next reads of every file of the set (raw,
# decoded, bindings) return exact bytes.
. "$(dirname "$0")/lib.sh"

big_set "$T/big"
mnt=$T/mnt
mount_fg "$T/big/big.ninfer" "$mnt"
$PY -m faultlib check-big "$mnt" "$T/big/src" >/dev/null || fail "reads before the signals"

cat >"$T/reader.py" <<'PY'
import os, signal, sys, time
# bash starts background jobs with SIGINT ignored: restore python's handler
signal.signal(signal.SIGINT, signal.default_int_handler)
signal.signal(signal.SIGTERM, signal.SIG_DFL)
path, prog = sys.argv[1], sys.argv[2]
fd = os.open(path, os.O_RDONLY)
size = os.fstat(fd).st_size
i = 0
while True:
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    t = time.time()
    n = len(os.pread(fd, size, 0))
    i += 1
    with open(prog, "w") as f:
        f.write("%d %d %.3f\n" % (i, n, time.time() - t))
PY

round=0
for sig in KILL INT TERM; do
	round=$((round + 1))
	prog=$T/prog.$round
	$PY "$T/reader.py" "$mnt/decoded/objects/big" "$prog" 2>"$T/reader.err" &
	rp=$!
	# one whole read done, then wait until it is inside the next read (0
	# read, 17 pread64 on x86_64; the first field of /proc/PID/syscall)
	for _ in $(seq 400); do [ -s "$prog" ] && break; sleep 0.025; done
	[ -s "$prog" ] || fail "reader made no progress"
	# the loop spends nearly all its time inside pread (0.1-0.4 s per
	# 64 MiB decode); land the signal 50-250 ms into the next one and
	# record whether the reader was in a read syscall (first field of
	# /proc/PID/syscall: 0 read, 17 pread64 on x86_64; "running" when on CPU)
	sleep 0.$((RANDOM % 200 + 50))
	insys=$(cut -d' ' -f1 "/proc/$rp/syscall" 2>/dev/null || echo gone)
	case $insys in 0 | 17) insys="yes (syscall $insys)" ;; running) insys="on CPU (in the read's copy or between reads)" ;; esac
	kill -s "$sig" "$rp"
	t0=$(date +%s%N)
	gone=no
	for _ in $(seq 200); do kill -0 "$rp" 2>/dev/null || { gone=yes; break; }; sleep 0.05; done
	[ $gone = yes ] || { kill -9 "$rp"; fail "reader still alive 10 s after SIG$sig"; }
	rrc=0; wait "$rp" || rrc=$?
	case $sig in KILL) want=137 ;; INT) want=130 ;; TERM) want=143 ;; esac
	# killed by the signal (INT: python's KeyboardInterrupt), not by a read error
	[ "$rrc" = "$want" ] || fail "reader exit status $rrc after SIG$sig, want $want: $(cat "$T/reader.err")"
	if [ "$sig" = INT ]; then
		grep -q KeyboardInterrupt "$T/reader.err" || fail "SIGINT: $(cat "$T/reader.err")"
		# python raises it where the interrupted call returns: inside pread?
		grep -q "os.pread" "$T/reader.err" && insys="$insys; KeyboardInterrupt raised at the pread" || insys="$insys; KeyboardInterrupt at: $(grep -A1 "line [0-9]" "$T/reader.err" | tail -1 | tr -s " ")"
	fi
	ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	echo "SIG$sig: reader state at the signal: $insys, exit status $rrc after ${ms} ms; last whole read: $(cat "$prog")"
	alive "$DPID" || fail "daemon died after SIG$sig to a reader"
	$PY -m faultlib check-big "$mnt" "$T/big/src" quick || fail "reads after SIG$sig to a reader"
done
$PY -m faultlib check-big "$mnt" "$T/big/src" || fail "reads after the signals"
# the daemon did not count the interrupted reads as I/O errors of the set
$PY -c 'import json,sys; s=json.load(open(sys.argv[1])); print("stats:", s["reads"], "reads,", s["errors"], "errors")' "$mnt/stats"
unmount "$mnt" "$DPID"
ok "readers killed mid-read (KILL, INT, TERM): daemon serves exact bytes after, clean unmount"
