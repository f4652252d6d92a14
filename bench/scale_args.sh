# bench/scale_args.sh — the options and work directory shared by
# scale_open.sh and scale_mount.sh (sourced; NAME must be set).
#
#   [-b BUILD_DIR] [-d WORK_DIR] [-k] [N ...]
#
# Sourced without arguments, so that it parses and shifts the caller's own
# positional parameters: sets here, root, build, work (maybe empty), keep,
# and leaves the sizes (default 10000 100000 1000000) as "$@".
# scale_workdir (call it after the script's own checks) creates the work
# directory when none was given and sets made=1 then.
here=$(cd "$(dirname "$0")" && pwd)
root=$(dirname "$here")
build="$root/build"
work=""
keep=0
while getopts b:d:k opt; do
	case $opt in
	b) build=$OPTARG ;;
	d) work=$OPTARG ;;
	k) keep=1 ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-d WORK_DIR] [-k] [N ...]" >&2; exit 16 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 10000 100000 1000000
scale_workdir() {
	if [ -z "$work" ]; then
		work=$(mktemp -d "${TMPDIR:-/tmp}/$NAME.XXXXXX")
		made=1
	else
		mkdir -p "$work"
		made=0
	fi
}
