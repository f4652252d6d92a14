#!/usr/bin/env bash
# -o format=NAME picks the family (fs/main.c): ninfer mounts an NInfer set
# as detection does (same tree, same bytes, the family's own options
# still apply); an unknown format is a usage error (exit 16) that names it
# and mounts nothing.
. "$(dirname "$0")/lib.sh"

d=$(fixture text)
mount_fg "$d/text.ninfer" "$T/auto"
mount_fg "$d/text.ninfer" "$T/named" -o format=ninfer,decoded_dtype=bf16
(cd "$T/auto" && find . | LC_ALL=C sort) > "$T/auto.list"
(cd "$T/named" && find . | LC_ALL=C sort) > "$T/named.list"
cmp "$T/auto.list" "$T/named.list" || fail "format=ninfer: another tree"
[ "$(wc -l < "$T/auto.list")" -gt 20 ] || fail "a tree of $(wc -l < "$T/auto.list") names"
for f in artifact.json uses.json $(cd "$T/auto" && find objects bindings -type f | head -20); do
	cmp "$T/auto/$f" "$T/named/$f" || fail "format=ninfer: $f differs"
done
v=$(getfattr --absolute-names --only-values -n user.ninfer.dtype "$T/named/decoded/model.safetensors")
[ "$v" = bf16 ] || fail "decoded_dtype=bf16 beside format=ninfer: dtype $v"
unmount "$T/auto"
unmount "$T/named"
ok "-o format=ninfer: the detected tree, byte for byte; family options still apply"

mkdir -p "$T/bad"
rc=0
"$NINFERFS" "$d/text.ninfer" "$T/bad" -f -o format=calbinx 2> "$T/err" || rc=$?
[ "$rc" = 16 ] || fail "format=calbinx: exit $rc"
grep -q "format must be one of ninfer, calbin, not 'calbinx'" "$T/err" || fail "message: $(cat "$T/err")"
is_mounted "$T/bad" && fail "format=calbinx: mounted"
ok "-o format=calbinx: exit 16, named, nothing mounted"
