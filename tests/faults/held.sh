#!/usr/bin/env bash
# SIGTERM, SIGINT and SIGHUP to the daemon while a client holds generated
# files open (issue 11, item 8): uses.json twice and stats, each read from.
# Asserted: the daemon unmounts and exits with status 0 (ninferfs(1)), and
# no sanitizer report (LeakSanitizer: the per-open buffers of those files
# were never released, as the kernel sends no RELEASE once the connection
# is gone) is in its log.  The sanitizer build is where this can fail.
. "$(dirname "$0")/lib.sh"

d=$(fixture text)
for sig in TERM INT HUP; do
	mnt=$T/mnt.$sig
	PREFIX="env --default-signal=INT" mount_fg "$d/text.ninfer" "$mnt"
	exec 3<"$mnt/uses.json" 4<"$mnt/uses.json" 5<"$mnt/stats"
	head -c 100 <&3 >/dev/null
	head -c 100 <&5 >/dev/null
	kill -s "$sig" "$DPID"
	wait_unmounted "$mnt" 5 || fail "still a fuse mount 5 s after SIG$sig"
	wait_gone "$DPID" 10 || fail "daemon still running 10 s after SIG$sig"
	drc=0; wait "$DPID" || drc=$?
	exec 3<&- 4<&- 5<&-
	log_clean
	[ "$drc" = 0 ] || fail "daemon exit status $drc after SIG$sig with open files, want 0: $(tail -20 "$LOG")"
	ok "SIG$sig with uses.json and stats held open: exit 0, nothing leaked"
done
