# tests/remote/lib.sh — shared helpers of the remote engine tests (sourced).
#
# Every test gets its own temp dir; every server it starts is recorded by
# PID and killed in the EXIT trap (TERM, then KILL), even on failure.  All
# servers listen on 127.0.0.1 on a port picked at run time.  Loops that wait
# for a server are bounded in count and time.
set -euo pipefail

: "${NF_REMOTE_GET:?NF_REMOTE_GET must point at nf-remote-get}"
REMOTE_TESTS=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
PY=/usr/bin/python3
# short: Ceph's unix sockets live under it (sun_path is 108 bytes)
T=$(mktemp -d /tmp/nfr.XXXXXX)
SRV_PIDS=()
CLEANUPS=()

cleanup() {
	local p c
	set +e
	for c in "${CLEANUPS[@]}"; do $c; done
	for p in "${SRV_PIDS[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		kill "$p" 2>/dev/null
		for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$p" 2>/dev/null
		wait "$p" 2>/dev/null
	done
	for p in $(jobs -p); do kill -9 "$p" 2>/dev/null; done
	wait 2>/dev/null
	if [ -n "${REMOTE_KEEP:-}" ]; then echo "kept $T" >&2; else rm -rf "$T"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

fail() { echo "FAIL: $*" >&2; exit 1; }
ok() { echo "ok: $*"; }

# a TCP port free on 127.0.0.1 right now (the kernel picks it)
free_port() {
	$PY -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

# wait_http URL SECS: 0 once URL answers any HTTP status
wait_http() {
	local i
	for i in $(seq $(($2 * 20))); do
		curl -s -o /dev/null --max-time 1 "$1" && return 0
		sleep 0.05
	done
	return 1
}

# no sanitizer report in FILE
san_clean() {
	if grep -q 'runtime error:\|AddressSanitizer\|LeakSanitizer\|ThreadSanitizer' "$1"; then
		cat "$1" >&2
		fail "sanitizer report in $1"
	fi
}

# rget ARGS...: nf-remote-get with stderr kept in $T/rget.err (printed on failure)
rget() {
	"$NF_REMOTE_GET" "$@" 2>"$T/rget.err"
	local rc=$?
	san_clean "$T/rget.err"
	return $rc
}

# random fixture file: mkfile PATH BYTES [SEED]
mkfile() {
	$PY -c 'import random,sys; r=random.Random(int(sys.argv[3])); open(sys.argv[1],"wb").write(r.randbytes(int(sys.argv[2])))' \
		"$1" "$2" "${3:-1}"
}

# milliseconds since the epoch (fault tests time their bounds with it)
ms() { date +%s%3N; }

# bf16_set SRC ENTRY [MAX_FILE_BYTES]: ninfer-pack a set of one bf16 object
# w.big (binding t/w) whose bytes are the file SRC (a multiple of 32 KiB:
# rows of 16384), split into parts of 3 MiB (or MAX_FILE_BYTES), at ENTRY
bf16_set() {
	: "${NINFER_PACK:?}"
	local rows=$(($(stat -c %s "$1") / 32768))
	cat >"$T/bf16_set.json" <<JSON
{"components": {"t": {"config": {}}},
 "objects": [{"id": "w.big", "kind": "tensor", "format": "bf16", "layout": "contiguous_le_v1",
              "shape": [$rows, 16384], "source": "$1"}],
 "bindings": {"t/w": {"object": "w.big"}}, "uses": []}
JSON
	"$NINFER_PACK" create -q --manifest "$T/bf16_set.json" --max-file-bytes "${3:-3M}" "$2" ||
		fail "ninfer-pack $2"
}

# slice PATH OFF LEN -> bytes on stdout (the oracle for range reads)
slice() { dd if="$1" bs=1M iflag=skip_bytes,count_bytes skip="$2" count="$3" status=none; }

# fault_server ROOT LIFETIME: faultserver.py serving ROOT on a free
# loopback port for at most LIFETIME seconds, its requests logged to
# $T/log, killed by the EXIT trap; S is its URL
fault_server() {
	$PY "$REMOTE_TESTS/faultserver.py" "$1" "$T/port" "$T/log" "$2" &
	SRV_PIDS+=($!)
	for _ in $(seq 100); do [ -s "$T/port" ] && break; sleep 0.05; done
	[ -s "$T/port" ] || fail "fault server did not start"
	S=http://127.0.0.1:$(cat "$T/port")
}
