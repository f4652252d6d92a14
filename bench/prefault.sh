# bench/prefault.sh — sourced by the read benchmarks: keep the VM's
# memory backed by its host while they run.
#
# Why: these VMs report free memory back to their host (virtio free page
# reporting, /sys/module/page_reporting: blocks of order 9 and up, as
# soon as they are free).  A page first touched after its block was
# reported costs a host fault, charged as guest CPU to whoever writes it
# first, and every unmount frees a GiB of page cache to be reported.  A
# reader that fills fresh page cache (a buffered read through the mount,
# a cold native read) then ran at half speed in some rounds and at full
# speed in others (bench/README.md, issue 14, seventh pass).
#
# prefault_begin (once, before the first timed reader): reporting off
# (page_reporting_order 11: no block is that large), then PREFAULT_MB MiB
# of anonymous memory written (dd's own buffer, filled from /dev/zero) and
# freed, so that the memory the rounds take is backed and stays so.
# PREFAULT_MB: "all" (the default) is the free memory but 1 GiB, so that
# no round lands on a page the host took back (with 4096 the first round
# of a reader was often the slow one: it took memory beyond those 4 GiB);
# 0 leaves the machine as it is.  "all" costs up to a minute when the
# host holds the memory (20 GiB in 58 s on the bench machine), a second
# or so when it does not.  prefault_end (at exit) puts the order back.
# Writing and freeing memory before each round instead was tried: its
# free set the reporting off during the timed read (a cold native read
# fell from 1701 to 423 MiB/s).
PREFAULT_MB=${PREFAULT_MB:-all}
PREFAULT_PARAM=/sys/module/page_reporting/parameters/page_reporting_order
PREFAULT_ORDER=
PREFAULT_DONE=0

prefault_begin() {
	[ "$PREFAULT_MB" = 0 ] && return 0
	if [ -w "$PREFAULT_PARAM" ]; then
		PREFAULT_ORDER=$(cat "$PREFAULT_PARAM")
		echo 11 >"$PREFAULT_PARAM"
	fi
	PREFAULT_DONE=$PREFAULT_MB
	[ "$PREFAULT_MB" != all ] ||
		PREFAULT_DONE=$(awk '/^MemFree:/ {m = int($2 / 1024) - 1024; print (m > 0 ? m : 0)}' /proc/meminfo)
	[ "$PREFAULT_DONE" -gt 0 ] || return 0
	# one block of that size: dd's buffer is the memory; fullblock makes
	# it fill all of it (one read(2) stops at 2 GiB)
	dd if=/dev/zero of=/dev/null bs="${PREFAULT_DONE}M" count=1 iflag=fullblock status=none
}

prefault_end() {
	[ -z "$PREFAULT_ORDER" ] || echo "$PREFAULT_ORDER" >"$PREFAULT_PARAM"
	PREFAULT_ORDER=
}

# one line for a benchmark's header
prefault_status() {
	if [ ! -r "$PREFAULT_PARAM" ]; then
		echo "no free page reporting here; $PREFAULT_DONE MiB prefaulted"
	elif [ "$PREFAULT_MB" = 0 ]; then
		echo "free page reporting is on (order $(cat "$PREFAULT_PARAM")) and left so (PREFAULT_MB=0)"
	elif [ -z "$PREFAULT_ORDER" ]; then
		echo "free page reporting is on and could not be turned off ($PREFAULT_PARAM not writable); $PREFAULT_DONE MiB prefaulted"
	else
		echo "free page reporting off while this runs (order ${PREFAULT_ORDER:-?} -> $(cat "$PREFAULT_PARAM")), $PREFAULT_DONE MiB prefaulted"
	fi
}
