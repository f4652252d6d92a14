#!/usr/bin/env bash
# The fault path of a mapping gets the same large requests as read(2)
# (issue 15, item 3; man ninferfs.5, stats: read_sizes).  A split set of a
# bf16 [2048, 2048] object (16 MiB decoded to f32) and a q4 [1024, 4096]
# one, parts of at most 3 MiB.  On a fresh mount (nothing of it in the
# page cache), every page touched in order, the way safetensors' safe_open
# faults them in: each tensor of decoded/model.safetensors through
# numpy.memmap at its data_offsets, a decoded binding file through
# numpy.memmap, and its .npy through np.load(mmap_mode="r").  For each,
# the stats' read_sizes: the 1 MiB bucket carries at least 90% of the
# file's bytes and at most 4 requests are of 4 KiB or less.  Control: with the mount's bdi read_ahead_kb put back
# to the kernel's 128 the same pass sends no 1 MiB request, so the check
# sees the difference the readahead makes.  Root only (ninferfs raises the
# readahead only when started as root).
. "$(dirname "$0")/lib.sh"
: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}"
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (readahead)"; exit 77; }

mkdir -p "$T/src"
python3 - "$T/src" <<'PY' || fail "sources"
import json, os, sys
import numpy as np
out = sys.argv[1]
rng = np.random.default_rng(15)
# finite bf16 words (exponent 100..149), q4 codes any, binary16 scales positive
w = (rng.integers(0, 1 << 16, 2048 * 2048, dtype=np.uint32) & 0x807F |
     (100 + rng.integers(0, 50, 2048 * 2048, dtype=np.uint32)) << 7).astype("<u2")
w.tofile(os.path.join(out, "w.bin"))
K, N = 4096, 1024
with open(os.path.join(out, "q.bin"), "wb") as f:
    f.write(rng.bytes(N * K // 2))                                   # codes plane
    s = (0x3000 + rng.integers(0, 0x800, N * K // 64)).astype("<u2")  # scales plane
    f.write(s.tobytes())
json.dump({"components": {"text": {"config": {}}},
           "objects": [{"id": "w", "kind": "tensor", "shape": [2048, 2048], "format": "bf16",
                        "layout": "contiguous_le_v1", "source": "w.bin"},
                       {"id": "q", "kind": "tensor", "shape": [N, K], "format": "q4_g64_fp16",
                        "layout": "row_split_k128_v1", "source": "q.bin"}],
           "bindings": {"m/w": {"object": "w"}, "m/q": {"object": "q"}}, "uses": []},
          open(os.path.join(out, "m.json"), "w"))
PY
mkdir -p "$T/set"
"$NINFER_PACK" create -q --manifest "$T/src/m.json" --max-file-bytes 3M "$T/set/s.ninfer" ||
	fail "ninfer-pack"
rm -rf "$T/src"

# PASS FILE [RA_KB]: a fresh mount, optionally its readahead set to RA_KB,
# then one mapping pass of FILE (model.safetensors, a decoded binding, an
# .npy); prints the file's size and the read_sizes delta as JSON.
pass() {
	local what=$1 ra=${2:-} mnt=$T/mnt
	mount_fg "$T/set/s.ninfer" "$mnt"
	if [ -n "$ra" ]; then
		local dev
		dev=$(stat -c '%Hd:%Ld' "$mnt")
		echo "$ra" >"/sys/class/bdi/$dev/read_ahead_kb" || fail "set read_ahead_kb"
	fi
	python3 - "$mnt" "$what" <<'PY' || fail "mapping pass of $what"
import json, os, sys
import numpy as np
mnt, what = sys.argv[1], sys.argv[2]
dec = os.path.join(mnt, "decoded")
sizes = lambda: json.load(open(os.path.join(mnt, "stats")))["read_sizes"]
before = sizes()
if what == "safetensors":
    p = os.path.join(dec, "model.safetensors")
    with open(p, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        h = json.loads(f.read(n))
    for k, t in sorted(((k, t) for k, t in h.items() if k != "__metadata__"),
                       key=lambda kt: kt[1]["data_offsets"][0]):
        a, b = t["data_offsets"]
        m = np.memmap(p, dtype=np.uint8, mode="r", offset=8 + n + a, shape=(b - a,))
        m[::4096].sum()                       # every page, in order
        del m
elif what == "binding":
    p = os.path.join(dec, "bindings/m/w")
    m = np.memmap(p, dtype=np.uint8, mode="r")
    m[::4096].sum()
else:
    p = os.path.join(dec, "npy/bindings/m/q.npy")
    a = np.load(p, mmap_mode="r")
    m = a.view(np.uint8).reshape(-1)
    m[::4096].sum()
after = sizes()
delta = {k: after[k] - before[k] for k in after}
print(json.dumps({"file": os.stat(p).st_size, "sizes": delta}))
PY
	unmount "$mnt"
}

check() { # JSON LABEL: most bytes in 1 MiB requests, few 4 KiB ones
	python3 - "$1" "$2" <<'PY'
import json, sys
r, label = json.loads(sys.argv[1]), sys.argv[2]
s, size = r["sizes"], r["file"]
big = s["1048576"] << 20
print(label, "file", size, "read_sizes", {k: v for k, v in s.items() if v})
assert big >= 0.9 * size, (label, "1 MiB requests carry", big, "of", size)
assert s["4096"] <= 4, (label, s["4096"], "requests of 4 KiB or less")
PY
}

for what in safetensors binding npy; do
	out=$(pass $what) || fail "pass of $what"
	check "$(tail -1 <<<"$out")" "$what" || fail "mmap of $what: small requests"
	ok "mmap of $what: 1 MiB requests"
done
# the control: the kernel's default readahead, no 1 MiB request
out=$(pass safetensors 128) || fail "control pass"
python3 - "$(tail -1 <<<"$out")" <<'PY' || fail "control: the readahead made no difference"
import json, sys
s = json.loads(sys.argv[1])["sizes"]
print("control (read_ahead_kb 128)", {k: v for k, v in s.items() if v})
assert s["1048576"] == 0 and s["more"] == 0, s
PY
ok "control: read_ahead_kb 128 sends no 1 MiB request"
