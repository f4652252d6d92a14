# tests/remote/mnt.sh — ninferfs mounts for the remote tests (sourced after
# lib.sh).  Every mount is recorded and unmounted by lib.sh's EXIT trap
# (before the servers are killed), every daemon killed by PID, even when
# the test fails.
: "${NINFERFS:?NINFERFS must point at the ninferfs binary}"
MNTS=()
DPIDS=()
declare -A MPID

mnt_cleanup() {
	local m p
	for m in "${MNTS[@]}"; do
		grep -q " $m fuse" /proc/mounts 2>/dev/null &&
			{ fusermount3 -u "$m" 2>/dev/null || umount -l "$m" 2>/dev/null; }
	done
	for p in "${DPIDS[@]}"; do
		kill -0 "$p" 2>/dev/null || continue
		kill "$p" 2>/dev/null
		for _ in $(seq 40); do kill -0 "$p" 2>/dev/null || break; sleep 0.05; done
		kill -9 "$p" 2>/dev/null
	done
}
CLEANUPS+=(mnt_cleanup)

is_mounted() { grep -q " $1 fuse" /proc/mounts; }

# mnt SOURCE DIR [ninferfs args...]: a foreground daemon in the background
# of this shell (stderr in DIR.log); waits until the mount answers.
mnt() {
	local src=$1 dir=$2; shift 2
	mkdir -p "$dir"
	MNTS+=("$dir")
	"$NINFERFS" "$src" "$dir" -f "$@" 2>"$dir.log" &
	DPIDS+=($!)
	MNT_PID=$!
	MPID[$dir]=$!
	for _ in $(seq 200); do
		if is_mounted "$dir" && stat "$dir" >/dev/null 2>&1; then return 0; fi
		kill -0 "$MNT_PID" 2>/dev/null || fail "ninferfs $src exited: $(cat "$dir.log")"
		sleep 0.05
	done
	fail "mount of $src did not appear"
}

# umnt DIR: unmount, wait for the daemon, check its log is sanitizer-clean
umnt() {
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	for _ in $(seq 100); do is_mounted "$1" || break; sleep 0.05; done
	is_mounted "$1" && fail "still mounted: $1"
	wait "${MPID[$1]}" 2>/dev/null || true
	san_clean "$1.log"
}

# fill_cache URL LOCAL CACHE [ninferfs args...]: a mount of URL with
# cache=CACHE reads every file (tree_same against the mount LOCAL of the
# same set), then unmounts; TREE_FILES as tree_same leaves it
fill_cache() {
	local url=$1 local_=$2 cache=$3
	shift 3
	mkdir -p "$cache"
	mnt "$url" "$T/fill" -o cache="$cache" "$@"
	tree_same "$local_" "$T/fill"
	umnt "$T/fill"
}

# read_err DIR FILE: the error a read of DIR/FILE fails with ("" if none)
read_err() { (cd "$1" && cat "$2" 2>&1 >/dev/null) || true; }

# tree_same A B: the same names (any bytes in them: the hostile set's
# names hold newlines and escapes) and the same bytes in every regular
# file, but the documents that name the source or count requests; a file
# whose reads fail (an unknown format's decoded view: EOPNOTSUPP) must
# fail with the same errno on both (TREE_ERRS counts them).  Sets
# TREE_FILES (files compared) and TREE_ERRS.
tree_same() {
	local out
	out=$($PY - "$1" "$2" <<'PY'
import os, stat, sys
a, b = (os.fsencode(x) for x in sys.argv[1:3])

def walk(root):
    names = set()
    for d, dirs, files in os.walk(root):
        rel = os.path.relpath(d, root)
        names.update(os.path.normpath(os.path.join(rel, n)) for n in dirs + files)
    return names

def read(path):
    try:
        with open(path, "rb") as f:
            return f.read(), None
    except OSError as e:
        return None, e.errno

na, nb = walk(a), walk(b)
if na != nb:
    print("FAIL the trees differ: only in %r: %r; only in %r: %r"
          % (a, sorted(na - nb)[:5], b, sorted(nb - na)[:5]))
    sys.exit(0)
files = errs = 0
for rel in sorted(na):
    pa, pb = os.path.join(a, rel), os.path.join(b, rel)
    if not stat.S_ISREG(os.lstat(pa).st_mode) or rel in (b"stats", b"files.json", b"validation.json"):
        continue
    (da, ea), (db, eb) = read(pa), read(pb)
    if da is None or db is None:
        if ea is None or ea != eb:
            print("FAIL bytes differ: %r (errno %s and %s)" % (rel, ea, eb))
            sys.exit(0)
        errs += 1
    elif da != db:
        k = next((i for i in range(min(len(da), len(db))) if da[i] != db[i]), min(len(da), len(db)))
        print("FAIL bytes differ: %r at byte %d (sizes %d and %d)" % (rel, k, len(da), len(db)))
        sys.exit(0)
    files += 1
print("OK", files, errs)
PY
)
	case $out in
	"OK "*) read -r _ TREE_FILES TREE_ERRS <<<"$out" ;;
	*) fail "${out#FAIL }" ;;
	esac
}

# object_parts DIR: one line per file of DIR/objects, "<id> <file>...": the
# set's files its segments lie in (user.ninfer.segments of a local mount)
object_parts() {
	(cd "$1/objects" && for f in *; do
		getfattr --only-values -n user.ninfer.segments "$f" |
			$PY -c 'import json,sys; print(sys.argv[1], " ".join(str(s["file"]) for s in json.load(sys.stdin)))' "$f"
	done)
}

# shared_part PARTS: "<part> <id1> <id2>": the first part two objects lie
# in, among the objects that do not touch the entry (file 0); PARTS as
# object_parts wrote it; nothing when there is no such part
shared_part() {
	$PY - "$1" <<'PY'
import sys
objs = [l.split() for l in open(sys.argv[1])]
objs = [(o[0], [int(x) for x in o[1:]]) for o in objs if "0" not in o[1:]]
for p in sorted({x for _, ps in objs for x in ps}):
    on = [name for name, ps in objs if p in ps]
    if len(on) >= 2:
        print(p, on[0], on[1])
        break
PY
}
