#!/bin/sh
# fuzz/make-corpus.sh NF_FIXTURE OUTDIR — seed corpora for the fuzz targets,
# generated (never committed): OUTDIR/corpus-{reader,rangemap,codecs,manifest}/.
#
#   NF_FIXTURE  the built tests/fixtures/nf-fixture (any build with tests on)
#   OUTDIR      usually the fuzz build directory
#
# Sources: `nf-fixture all` (six valid sets, one split into many parts) and
# every case of tests/hostile/corpus.py (`corpus.py list`, `corpus.py make`).
#   reader:   each set as one input: NAME\n BYTES, then for every part
#             "\nNF-FUZZ-FILE:" NAME\n BYTES (the format fuzz_reader.c reads)
#   codecs:   every tensor object of the fixtures whose shape the target can
#             express, with its exact encoded bytes, plus a few ranges
#   manifest: a ninfer-pack manifest made from each set's JSON directory
#             (offsets, bytes and files removed, a source added)
#   rangemap: a handful of files tables and queries
set -eu
# fuzz/make-corpus.sh --calbin CB_FIXTURE OUTDIR: OUTDIR/corpus-calbin-meta/
# from the metadata text of every cb-fixture variant (byte 0: 0 for the top
# file, 1 for a submodel's, as fuzz_calbin_meta.c reads it).
if [ "${1:-}" = --calbin ]; then
	[ $# -eq 3 ] || { echo "usage: $0 --calbin CB_FIXTURE OUTDIR" >&2; exit 16; }
	work=$(mktemp -d "${TMPDIR:-/tmp}/cb-corpus.XXXXXX")
	trap 'rm -rf "$work"' EXIT INT TERM
	mkdir -p "$3/corpus-calbin-meta"
	for v in $("$2" --list | cut -f1); do
		case $v in meta_*|map_*|decl_*|io_*|ibuf_*|smodel_type|clean) ;; *) continue ;; esac
		pkg=$("$2" "$work/$v" --small --variant "$v")
		for f in "$pkg"/model_memory_reserved_info.txt "$pkg"/*/submodel_memory_reserved_info.txt; do
			case $f in */submodel_*) k=1 ;; *) k=0 ;; esac
			out="$3/corpus-calbin-meta/$v-$k-$(basename "$(dirname "$f")" | tail -c 9)"
			{ printf "\\$(printf %03o "$k")"; cat "$f"; } > "$out"
		done
		rm -rf "$work/$v"
	done
	exit 0
fi
# fuzz/make-corpus.sh --remote OUTDIR: OUTDIR/corpus-remote/, a few header
# blocks, URLs with part names and S3 error bodies (byte 0: the mode of
# fuzz_remote.c: 0 headers, 1 URL, 2 S3 body).
if [ "${1:-}" = --remote ]; then
	[ $# -eq 2 ] || { echo "usage: $0 --remote OUTDIR" >&2; exit 16; }
	d="$2/corpus-remote"
	mkdir -p "$d"
	printf '\000HTTP/1.1 206 Partial Content\r\nETag: "5f-1"\r\nContent-Range: bytes 0-99/1000\r\nContent-Length: 100\r\n\r\n' >"$d/h206"
	printf '\000HTTP/1.1 503 Busy\r\nRetry-After: 3\r\n\r\nHTTP/1.1 200 OK\r\nLast-Modified: Wed, 01 Jan 2025 00:00:00 GMT\r\n\r\n' >"$d/h503"
	printf '\000HTTP/2 302 \r\nlocation: http://127.0.0.1:9/x\r\nretry-after: Wed, 01 Jan 2025 00:01:00 GMT\r\n\r\n' >"$d/h302"
	printf '\001http://127.0.0.1:8080/sets/a/m.ninfer\000m.ninfer.part-0001' >"$d/u-http"
	printf '\001https://user:pw@host/dir/m.ninfer?x=1\000..%%2Fetc' >"$d/u-userinfo"
	printf '\001s3://bucket/dir/m.ninfer\000m.ninfer.part-0002\000http://127.0.0.1:7480' >"$d/u-s3"
	printf '\002<?xml version="1.0"?><Error><Code>SignatureDoesNotMatch</Code></Error>' >"$d/s3"
	exit 0
fi
[ $# -eq 2 ] || { echo "usage: $0 NF_FIXTURE OUTDIR" >&2; exit 16; }
fixture=$1
out=$2
here=$(cd "$(dirname "$0")" && pwd)
src=$(dirname "$here")
work=$(mktemp -d "${TMPDIR:-/tmp}/nf-corpus.XXXXXX")
trap 'rm -rf "$work"' EXIT INT TERM

mkdir -p "$work/fixtures" "$work/hostile"
"$fixture" all "$work/fixtures" >/dev/null
python3 "$src/tests/hostile/corpus.py" list | while read -r name _; do
	python3 "$src/tests/hostile/corpus.py" make "$name" "$work/hostile/$name" >/dev/null
done

python3 - "$work" "$out" <<'PY'
import glob, hashlib, json, os, struct, sys
work, out = sys.argv[1], sys.argv[2]
MARK = b"\nNF-FUZZ-FILE:"
dirs = {t: os.path.join(out, "corpus-" + t) for t in ("reader", "rangemap", "codecs", "manifest")}
for d in dirs.values():
    os.makedirs(d, exist_ok=True)

def save(target, data):
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(dirs[target], name), "wb") as f:
        f.write(data)

sets = sorted(glob.glob(os.path.join(work, "fixtures", "*"))) + \
       sorted(glob.glob(os.path.join(work, "hostile", "*")))
for s in sets:
    entries = sorted(p for p in os.listdir(s) if p.endswith(".ninfer"))
    if not entries:
        continue
    entry = entries[0]
    parts = sorted(p for p in os.listdir(s) if p.startswith(entry + ".part-"))
    blob = entry.encode() + b"\n" + open(os.path.join(s, entry), "rb").read()
    for p in parts:
        blob += MARK + p.encode() + b"\n" + open(os.path.join(s, p), "rb").read()
    save("reader", blob)
    # manifest from the JSON directory
    raw = open(os.path.join(s, entry), "rb").read()
    if len(raw) >= 32:
        jb = struct.unpack("<Q", raw[8:16])[0]
        try:
            d = json.loads(raw[32:32 + jb].decode())
        except Exception:
            d = None
        if isinstance(d, dict):
            d.pop("files", None)
            for i, o in enumerate(d.get("objects", []) if isinstance(d.get("objects"), list) else []):
                if isinstance(o, dict):
                    o.pop("offset", None)
                    if i % 2:
                        o.pop("bytes", None)
                    o["source"] = "obj%d.bin" % i
                    if i % 3 == 0:
                        o["source_offset"] = i
            save("manifest", json.dumps(d, ensure_ascii=False).encode())

FORMATS = ["bf16", "fp32", "int32", "q2_g64_fp16", "q4_g64_fp16", "q5_g64_fp16", "q6_g64_fp16",
           "q8_g32_fp16", "t2_g128_fp16", "nvfp4", "fp8_e4m3fn_row_bf16"]
LAYOUTS = ["contiguous_le_v1", "row_split_k128_v1", "block_scale_k16_m128x4_v1", "row_scale_v1",
           "raw_bytes_v1"]

def dim_code(d):
    if d < 512:
        return 0x6000 | d
    for k in range(4):
        if d == 128 << k:
            return k
    if d & (d - 1) == 0:
        return 0x4000 | (d.bit_length() - 1)
    return None

for m in glob.glob(os.path.join(work, "fixtures", "*", "expect", "manifest.json")):
    man = json.load(open(m))
    for o in man["objects"]:
        if o.get("kind") != "tensor" or o["format"] not in FORMATS or o["layout"] not in LAYOUTS:
            continue
        shape = o["shape"]
        codes = [dim_code(x) for x in shape]
        if len(shape) > 3 or None in codes or o["bytes"] > (1 << 20):
            continue
        dv = o.get("divisors", 1)
        if dv == 1:
            dsel = 0
        elif 2 <= dv <= 7:
            dsel = 160 + dv
        else:
            continue
        data = open(os.path.join(os.path.dirname(m), o["expect_bytes"]), "rb").read()
        el = o["elements"]
        for rb, re, mid in ((0, el, el // 2), (el // 3, el // 4, 7), (1, 1, 0)):
            head = bytes([FORMATS.index(o["format"]), LAYOUTS.index(o["layout"]), len(shape)])
            head += b"".join(struct.pack("<H", c) for c in codes) + bytes([dsel])
            head += struct.pack("<QQQII", rb, re, mid, 1, 1)
            save("codecs", head + data)

# rangemap: nfiles-1, then per file (kind, u64), then queries
import random
rnd = random.Random(7)
for n in (1, 2, 3, 9):
    for _ in range(4):
        b = bytes([n - 1])
        for i in range(n):
            b += bytes([rnd.randrange(4)]) + struct.pack("<Q", rnd.getrandbits(64))
        for q in range(8):
            b += bytes([rnd.randrange(256)]) + struct.pack("<QQ", rnd.getrandbits(64), rnd.getrandbits(64))
        save("rangemap", b)
for t, d in dirs.items():
    print("corpus-%s: %d inputs" % (t, len(os.listdir(d))))
PY
