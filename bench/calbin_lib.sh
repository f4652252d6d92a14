# bench/calbin_lib.sh — sourced by the calbin benchmarks (calbin_check.sh,
# calbin_mount.sh): their common options, the programs they need and their
# work directory.  POSIX sh.
#
#   cb_bench_args DEFAULT_REPEATS "$@"
#     parses [-b BUILD_DIR] [-d WORK_DIR] [-r REPEATS] [-k] into build,
#     work, reps and keep; fixture and check name cb-fixture and
#     calbin-check of the build.
#   cb_bench_need PROGRAM...
#     exits 8 naming the first PROGRAM that is not an executable file.
#   cb_bench_workdir TAG
#     without -d, work becomes a fresh directory ${TMPDIR:-/var/tmp}/TAG.XXXXXX
#     and made=1 (the caller's cleanup removes it unless keep=1).

cb_bench_args() {
	reps=$1
	shift
	build=build
	work=
	keep=0
	OPTIND=1
	while getopts b:d:r:k o; do
		case $o in
		b) build=$OPTARG ;;
		d) work=$OPTARG ;;
		r) reps=$OPTARG ;;
		k) keep=1 ;;
		*) echo "usage: $0 [-b BUILD_DIR] [-d WORK_DIR] [-r REPEATS] [-k]" >&2; exit 16 ;;
		esac
	done
	fixture=$build/tests/calbin/cb-fixture
	check=$build/tools/calbin-check
}

cb_bench_need() {
	for p in "$@"; do
		[ -x "$p" ] || { echo "$0: no $p (build with tests on, or give -b BUILD_DIR)" >&2; exit 8; }
	done
}

cb_bench_workdir() {
	made=0
	if [ -z "$work" ]; then
		work=$(mktemp -d "${TMPDIR:-/var/tmp}/$1.XXXXXX")
		made=1
	fi
}
