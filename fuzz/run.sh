#!/bin/sh
# fuzz/run.sh [SECONDS] [TARGET...] — build the libFuzzer targets, make the
# seed corpora, run each target for SECONDS (default 60) one after another
# and print executions and coverage.  TARGETs: reader rangemap codecs
# manifest calbin-meta remote (default: all).
#
# Environment: BUILD (default build-fuzz: clang, ASan+UBSan, fuzz on),
# TOOLS_BUILD (default build-fuzz-tools: the default compiler with tests on,
# only nf-fixture is built from it), RSS_MB (default 2048), JOBS (default 1:
# one process; N > 1 passes -jobs=N -workers=N, logs fuzz-N.log in $BUILD/fuzz).  Crashes land in $BUILD/fuzz/crashes-TARGET/,
# logs in $BUILD/fuzz/log-TARGET.txt; the corpora grow in
# $BUILD/corpus-TARGET/.  Exit status: 0, or 1 when a target crashed.
set -eu
secs=${1:-60}
[ $# -gt 0 ] && shift
targets=${*:-reader rangemap codecs manifest calbin-meta remote}
src=$(cd "$(dirname "$0")/.." && pwd)
build=${BUILD:-$src/build-fuzz}
tools=${TOOLS_BUILD:-$src/build-fuzz-tools}
rss=${RSS_MB:-2048}
jobs=${JOBS:-1}

if [ ! -f "$build/build.ninja" ]; then
	CC=clang CFLAGS=-fsanitize=fuzzer-no-link meson setup "$build" "$src" -Dfuzz=true \
		-Db_sanitize=address,undefined -Db_lundef=false -Dtests=false >/dev/null
fi
ninja -C "$build" fuzz/fuzz-reader fuzz/fuzz-rangemap fuzz/fuzz-codecs fuzz/fuzz-manifest \
	fuzz/fuzz-calbin-meta fuzz/fuzz-remote >/dev/null
if [ ! -f "$tools/build.ninja" ]; then
	meson setup "$tools" "$src" -Dtests=true >/dev/null
fi
ninja -C "$tools" tests/fixtures/nf-fixture tests/calbin/cb-fixture >/dev/null
if [ ! -d "$build/corpus-reader" ]; then
	"$src/fuzz/make-corpus.sh" "$tools/tests/fixtures/nf-fixture" "$build"
fi
if [ ! -d "$build/corpus-remote" ]; then
	"$src/fuzz/make-corpus.sh" --remote "$build"
fi
if [ ! -d "$build/corpus-calbin-meta" ]; then
	"$src/fuzz/make-corpus.sh" --calbin "$tools/tests/calbin/cb-fixture" "$build"
fi

# UBSan findings must stop the run (meson's -fsanitize=undefined recovers).
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1}
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
status=0
printf '%-10s %8s %12s %10s %8s %8s %s\n' target seconds execs exec/s cov ft result
for t in $targets; do
	crashes="$build/fuzz/crashes-$t"
	log="$build/fuzz/log-$t.txt"
	mkdir -p "$crashes" "$build/corpus-$t"
	par=
	[ "$jobs" -gt 1 ] && par="-jobs=$jobs -workers=$jobs"
	set +e
	# shellcheck disable=SC2086
	(cd "$build/fuzz" && "./fuzz-$t" "$build/corpus-$t" -max_total_time="$secs" \
		-rss_limit_mb="$rss" -timeout=30 $par -print_final_stats=1 \
		-artifact_prefix="$crashes/") >"$log" 2>&1
	rc=$?
	set -e
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
	last=$(grep -E '^#[0-9]+' "$log" | grep 'cov:' | tail -n 1)
	cov=$(printf '%s\n' "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(printf '%s\n' "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	eps=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -n 1)
	result=ok
	if [ "$rc" -ne 0 ] || ls "$crashes" | grep -q .; then
		result="CRASH (see $crashes, $log)"
		status=1
	fi
	printf '%-10s %8s %12s %10s %8s %8s %s\n' "$t" "$secs" "${execs:-?}" "${eps:-?}" \
		"${cov:-?}" "${ft:-?}" "$result"
done
exit $status
