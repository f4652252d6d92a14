#!/bin/sh
# Tool-level test of ninfer-pack: create, reshard, sample, exit statuses.
# usage: test_pack.sh PATH/TO/ninfer-pack
set -u
PACK=$1
T=$(mktemp -d "${TMPDIR:-/tmp}/nfpack-XXXXXX")
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
expect() { # expect STATUS cmd...
	want=$1; shift
	"$@" >"$T/out" 2>"$T/err"; got=$?
	[ "$got" -eq "$want" ] || { cat "$T/err" >&2; fail "$* -> $got, want $want"; }
}

expect 0 "$PACK" --version
grep -q '^ninfer-pack ' "$T/out" || fail "--version output"
expect 0 "$PACK" -h
grep -q 'reshard' "$T/out" || fail "--help output"
expect 16 "$PACK"
expect 16 "$PACK" frobnicate x
expect 16 "$PACK" create "$T/x.ninfer"
expect 16 "$PACK" sample "$T/x.ninfer" --max-file-bytes 12abc

# sample: deterministic payload, split into several files
expect 0 "$PACK" sample "$T/s.ninfer"
[ -f "$T/s.ninfer.part-0001" ] || fail "sample not split"
[ -f "$T/s.ninfer.part-0003" ] || fail "sample has fewer than 4 files"
expect 8 "$PACK" sample "$T/s.ninfer"      # never replaces
mkdir "$T/again"
expect 0 "$PACK" sample "$T/again/s.ninfer"
n=0
for f in "$T"/s.ninfer*; do
	b=$(basename "$f"); n=$((n + 1))
	# the same bytes apart from the artifact_id (header bytes 16..31)
	head -c 16 "$f" > "$T/a"; tail -c +33 "$f" >> "$T/a"
	head -c 16 "$T/again/$b" > "$T/b"; tail -c +33 "$T/again/$b" >> "$T/b"
	cmp -s "$T/a" "$T/b" || fail "sample not deterministic ($b)"
done
[ "$n" -ge 4 ] && [ "$n" -le 6 ] || fail "sample has $n files"
cmp -s "$T/s.ninfer" "$T/again/s.ninfer" && fail "sample artifact_id not fresh"

# reshard to one file and back
expect 0 "$PACK" reshard "$T/s.ninfer" "$T/one.ninfer"
[ -e "$T/one.ninfer.part-0001" ] && fail "reshard to one file made parts"
expect 0 "$PACK" reshard "$T/one.ninfer" "$T/back.ninfer" --max-file-bytes 64K
[ -f "$T/back.ninfer.part-0002" ] || fail "reshard back not split"
expect 8 "$PACK" reshard "$T/one.ninfer" "$T/back.ninfer"
expect 8 "$PACK" reshard "$T/none.ninfer" "$T/z.ninfer"
printf 'NINFER\0\003garbage' > "$T/bad.ninfer"
expect 4 "$PACK" reshard "$T/bad.ninfer" "$T/z.ninfer"
[ -e "$T/z.ninfer" ] && fail "reshard of bad input wrote something"

# create from a manifest
mkdir "$T/src"
printf '\200\077\000\100\100\100\200\277' > "$T/src/w.bin"          # bf16 [4]: 1, 2, 3, -1
printf 'xxxx\000\000\200\077' > "$T/src/off.bin"                   # fp32 [] = 1.0 at offset 4
printf '{"eos_token_id": 2}\n' > "$T/src/gen.json"
cat > "$T/src/m.json" <<'JSON'
{"components": {"text": {"config": {"architectures": ["Synthetic"]},
                         "resources": {"generation_config.json": "r.gen"}}},
 "objects": [
   {"id": "w", "kind": "tensor", "shape": [4], "format": "bf16", "layout": "contiguous_le_v1", "source": "w.bin"},
   {"id": "r.gen", "kind": "resource", "encoding": "raw_bytes_v1", "source": "gen.json"},
   {"id": "d", "kind": "tensor", "shape": [], "format": "fp32", "layout": "contiguous_le_v1",
    "source": "off.bin", "source_offset": 4, "bytes": 4}],
 "bindings": {"w": {"object": "w"}, "d": {"object": "d"}},
 "uses": [{"parameter": "w", "input": "x", "activation_policy": "A16Only",
           "auxiliaries": {"activation_input_divisor": {"object": "d"}}}],
 "metadata": {"name": "tiny"}, "provenance": {}}
JSON
expect 0 "$PACK" create --manifest "$T/src/m.json" "$T/c.ninfer"
tail -c +4097 "$T/c.ninfer" | head -c 8 > "$T/w.out"
cmp -s "$T/w.out" "$T/src/w.bin" || fail "create: object bytes"
[ "$(wc -c < "$T/c.ninfer")" -eq $((4096 + 260)) ] || fail "create: file size"
expect 8 "$PACK" create --manifest "$T/src/m.json" "$T/c.ninfer"
sed 's/"source": "w.bin"/"source": "w.bin", "bytes": 6/' "$T/src/m.json" > "$T/src/bad.json"
expect 4 "$PACK" create --manifest "$T/src/bad.json" "$T/c2.ninfer"
sed 's/w.bin/missing.bin/' "$T/src/m.json" > "$T/src/miss.json"
expect 8 "$PACK" create --manifest "$T/src/miss.json" "$T/c2.ninfer"
sed 's/"object": "w"}, "d"/"object": "nope"}, "d"/' "$T/src/m.json" > "$T/src/ref.json"
expect 4 "$PACK" create --manifest "$T/src/ref.json" "$T/c2.ninfer"
echo '{' > "$T/src/broken.json"
expect 4 "$PACK" create --manifest "$T/src/broken.json" "$T/c2.ninfer"
expect 8 "$PACK" create --manifest "$T/src/absent.json" "$T/c2.ninfer"
expect 4 "$PACK" create --manifest "$T/src/m.json" --max-file-bytes 4200 "$T/c2.ninfer"
# issue 11 items 6, 11: a source that is not a regular file is named with
# what it is; a FIFO must not hang the writer (a blocking open would)
mkfifo "$T/src/fifo.bin"
mkdir "$T/src/dir.bin"
sed 's/"source": "w.bin"/"source": "fifo.bin", "bytes": 8/' "$T/src/m.json" > "$T/src/fifo.json"
sed 's/"source": "w.bin"/"source": "dir.bin"/' "$T/src/m.json" > "$T/src/dir.json"
sed 's/"source": "w.bin"/"source": "dir.bin", "bytes": 8/' "$T/src/m.json" > "$T/src/dirb.json"
for m in fifo dir dirb; do
	case $m in fifo) what="is a FIFO" ;; *) what="is a directory" ;; esac
	expect 4 timeout 20 "$PACK" create --manifest "$T/src/$m.json" "$T/c2.ninfer"
	grep -q "objects\[0\] w: $T/src/${m%b}.bin $what, not a regular file" "$T/err" ||
		{ cat "$T/err" >&2; fail "$m source: no message naming the object, the path and what it is"; }
	grep -q 'WRITE_SIZE_MISMATCH' "$T/err" && fail "$m source: reported as a size mismatch"
done
# issue 11 item 11: reshard onto a full disk names the destination as full
# (a 1 MiB tmpfs; needs root to mount it)
head -c 3000000 /dev/urandom > "$T/src/big.bin"
cat > "$T/src/big.json" <<'JSON'
{"components": {"text": {"config": {"architectures": ["Synthetic"]}}},
 "objects": [{"id": "big", "kind": "tensor", "shape": [1500000], "format": "bf16",
              "layout": "contiguous_le_v1", "source": "big.bin"}],
 "bindings": {"big": {"object": "big"}}, "uses": []}
JSON
expect 0 "$PACK" create -q --manifest "$T/src/big.json" --max-file-bytes 1M "$T/big.ninfer"
mkdir "$T/full"
if mount -t tmpfs -o size=1m nf-pack-test "$T/full" 2>/dev/null; then
	trap 'umount "$T/full" 2>/dev/null; rm -rf "$T"' EXIT
	for cmd in "reshard $T/big.ninfer" "create --manifest $T/src/big.json"; do
		# shellcheck disable=SC2086
		expect 8 "$PACK" $cmd "$T/full/out.ninfer" -q
		grep -q 'No space left on device' "$T/err" || { cat "$T/err" >&2; fail "$cmd onto a full disk: no ENOSPC"; }
		grep -q 'WRITE_IO: out.ninfer[.a-z0-9-]*: writing object big: No space left on device: the destination file system is full' "$T/err" ||
			{ cat "$T/err" >&2; fail "$cmd onto a full disk: the destination is not named as full"; }
		grep -q 'WRITE_SOURCE\|reading source' "$T/err" && { cat "$T/err" >&2; fail "$cmd: a full destination blamed on the source"; }
		[ -z "$(ls -A "$T/full")" ] || fail "$cmd onto a full disk left $(ls -A "$T/full")"
	done
	umount "$T/full"
	trap 'rm -rf "$T"' EXIT
else
	echo "skip: cannot mount a tmpfs (not root?): full-disk messages not checked"
fi
ls "$T" | grep -q 'c2' && fail "failed create left files"
ls -a "$T" | grep -q '\.tmp-' && fail "temporary directory left behind"
echo "ok"
