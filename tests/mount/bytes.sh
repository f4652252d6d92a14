#!/usr/bin/env bash
# Raw bytes: cmp of every object, dd at offsets, odd-sized reads at random
# offsets, reads past EOF, hexdump of a plane, mmap == read.
. "$(dirname "$0")/lib.sh"

for set in text mixed; do
	d=$(fixture $set)
	mnt=$T/mnt-$set
	mount_fg "$d/$set.ninfer" "$mnt"
	python3 - "$d" "$mnt" >"$T/list-$set.txt" <<PY || fail "list"
import json, os, sys
$PY_ESC
m = json.load(open(os.path.join(sys.argv[1], "expect/manifest.json")))
for o in m["objects"]:
    print(esc(o["id"]) + "\t" + o["expect_bytes"])
PY
	n=0
	while IFS=$'\t' read -r name exp; do
		cmp "$mnt/objects/$name" "$d/expect/$exp" || fail "cmp objects/$name ($set)"
		n=$((n + 1))
	done <"$T/list-$set.txt"
	ok "cmp of $n objects ($set)"

	# the largest object: real dd lines at block offsets
	big=$(ls -S "$mnt/objects" | sed -n 1p)
	exp=$(awk -F'\t' -v n="$big" '$1 == n {print $2}' "$T/list-$set.txt")
	for args in "skip=0 count=1" "skip=1 count=2" "skip=3 count=1" "skip=0 count=1000"; do
		a=$(dd if="$mnt/objects/$big" bs=4096 $args status=none | sha256sum)
		b=$(dd if="$d/expect/$exp" bs=4096 $args status=none | sha256sum)
		[ "$a" = "$b" ] || fail "dd $args of objects/$big"
	done
	a=$(dd if="$mnt/objects/$big" bs=1 skip=4097 count=3000 status=none | sha256sum)
	b=$(dd if="$d/expect/$exp" bs=1 skip=4097 count=3000 status=none | sha256sum)
	[ "$a" = "$b" ] || fail "dd bs=1 of objects/$big"
	ok "dd of objects/$big ($set)"

	python3 - "$d" "$mnt" <<PY || fail "random reads ($set)"
import json, mmap, os, random, sys
$PY_ESC
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
rnd = random.Random(7)
nreads = 0
for o in m["objects"]:
    want = open(os.path.join(d, "expect", o["expect_bytes"]), "rb").read()
    p = os.path.join(mnt, "objects", esc(o["id"]))
    fd = os.open(p, os.O_RDONLY)
    size = os.fstat(fd).st_size
    assert size == len(want)
    for n in (1, 4095, 4096, 1 << 20 | 1, 7, 65536):
        for _ in range(4):
            off = rnd.randrange(0, size + 2)
            got = os.pread(fd, n, off)
            assert got == want[off:off + n], (o["id"], off, n)
            nreads += 1
    assert os.pread(fd, 100, size) == b"", "read at EOF"
    assert os.pread(fd, 100, size + 12345) == b"", "read past EOF"
    if size:
        with mmap.mmap(fd, size, prot=mmap.PROT_READ) as mm:
            assert mm[:] == want, "mmap of " + o["id"]
    os.close(fd)
# planes: each plane is the slice of the object at its xattr offset
for o in m["objects"]:
    pd = os.path.join(mnt, "planes", esc(o["id"]))
    if not os.path.isdir(pd):
        continue
    want = open(os.path.join(d, "expect", o["expect_bytes"]), "rb").read()
    for pl in os.listdir(pd):
        p = os.path.join(pd, pl)
        off = int(os.getxattr(p, "user.ninfer.offset")) - o["offset"]
        got = open(p, "rb").read()
        assert got == want[off:off + len(got)], (o["id"], pl)
print("random reads", nreads)
PY
	ok "random reads, EOF, mmap, planes ($set)"
	unmount "$mnt"
done

# hexdump of a scales plane equals hexdump of the expected slice
d=$T/mixed
mnt=$T/mnt-mixed
mount_fg "$d/mixed.ninfer" "$mnt"
read -r id exp off len < <(python3 - "$d" "$mnt" <<PY
import json, os, sys
$PY_ESC
d, mnt = sys.argv[1], sys.argv[2]
m = json.load(open(os.path.join(d, "expect/manifest.json")))
for o in m["objects"]:
    p = os.path.join(mnt, "planes", esc(o["id"]), "scales")
    if o.get("layout") == "row_split_k128_v1" and os.path.exists(p):
        off = int(os.getxattr(p, "user.ninfer.offset")) - o["offset"]
        print(esc(o["id"]), o["expect_bytes"], off, os.path.getsize(p))
        break
PY
)
a=$(hexdump -C "$mnt/planes/$id/scales" | sed -n 1,20p)
b=$(dd if="$d/expect/$exp" bs=1 skip="$off" count="$len" status=none | hexdump -C | sed -n 1,20p)
[ "$a" = "$b" ] || fail "hexdump of planes/$id/scales"
ok "hexdump planes/$id/scales"
python3 -c "
import numpy as np, sys
a = np.memmap(sys.argv[1], dtype=np.uint8, mode='r')
b = np.fromfile(sys.argv[2], dtype=np.uint8)
assert (a == b).all()
" "$mnt/objects/$id" "$d/expect/$exp" || fail "numpy memmap"
ok "numpy memmap"
