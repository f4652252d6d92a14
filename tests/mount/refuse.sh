#!/usr/bin/env bash
# Directory errors refuse the mount (exit 4, findings on stderr, nothing
# mounted) unless -o lenient; an unreadable entry exits 8; usage exits 16.
. "$(dirname "$0")/lib.sh"

d=$(fixture text)
# A JSON that no longer parses: overwrite its first byte.
cp -r "$d" "$T/broken"
printf 'X' | dd of="$T/broken/text.ninfer" bs=1 seek=32 conv=notrunc status=none
mkdir -p "$T/mnt"
set +e
"$NINFERFS" "$T/broken/text.ninfer" "$T/mnt" 2>"$T/err.txt"
rc=$?
set -e
[ "$rc" = 4 ] || fail "broken JSON: exit $rc, want 4 ($(cat "$T/err.txt"))"
[ -s "$T/err.txt" ] || fail "no findings on stderr"
is_mounted "$T/mnt" && { MOUNTS+=("$T/mnt"); fail "mounted anyway"; }
ok "broken JSON refused (exit $rc): $(head -1 "$T/err.txt")"

# A record error (JSON parses): an object id made empty, same JSON length.
cp -r "$d" "$T/rec"
python3 - "$T/rec/text.ninfer" <<'PY' || fail "edit"
import json, struct, sys
p = sys.argv[1]
b = bytearray(open(p, "rb").read())
n = struct.unpack_from("<Q", b, 8)[0]
text = b[32:32 + n].decode()
j = json.loads(text)
b0 = j["bindings"][0] if isinstance(j["bindings"], list) else None
# point the first use at a parameter that has no binding: a reference error
old = '"%s"' % j["objects"][0]["id"]
i = text.index('"id"')
k = text.index(old, i)
new = '"' + "z" * (len(old) - 2) + '"'
text = text[:k] + new + text[k + len(old):]
assert len(text.encode()) == n
b[32:32 + n] = text.encode()
open(p, "wb").write(b)
PY
set +e
"$NINFERFS" "$T/rec/text.ninfer" "$T/mnt" 2>"$T/err2.txt"
rc=$?
set -e
is_mounted "$T/mnt" && { MOUNTS+=("$T/mnt"); fail "record error mounted without lenient"; }
[ "$rc" = 4 ] || fail "record error: exit $rc, want 4 ($(cat "$T/err2.txt"))"
ok "record error refused (exit 4)"
mount_fg "$T/rec/text.ninfer" "$T/mnt" -o lenient
ls "$T/mnt/objects" >/dev/null || fail "lenient mount not listable"
grep -q '"fail"' "$T/mnt/validation.json" || fail "validation.json verdict"
unmount "$T/mnt"
ok "-o lenient mounts it"

set +e
"$NINFERFS" "$T/nonexistent.ninfer" "$T/mnt" 2>/dev/null; rc1=$?
"$NINFERFS" 2>/dev/null; rc2=$?
"$NINFERFS" "$d/text.ninfer" "$T/mnt" -o decoded_dtype=f64 2>/dev/null; rc3=$?
"$NINFERFS" --version >/dev/null; rc4=$?
"$NINFERFS" -h >/dev/null; rc5=$?
"$NINFERFS" "$d/text.ninfer" "$T/no-such-dir" 2>/dev/null; rc6=$?
touch "$T/a-file"
"$NINFERFS" "$d/text.ninfer" "$T/a-file" 2>/dev/null; rc7=$?
set -e
[ "$rc6" = 16 ] || fail "missing mountpoint: exit $rc6, want 16"
[ "$rc7" = 32 ] || fail "mountpoint is a file: exit $rc7, want 32"
[ "$rc1" = 8 ] || fail "missing entry: exit $rc1"
[ "$rc2" = 16 ] || fail "no args: exit $rc2"
[ "$rc3" = 16 ] || fail "bad decoded_dtype: exit $rc3"
[ "$rc4" = 0 ] && [ "$rc5" = 0 ] || fail "-V/-h"
is_mounted "$T/mnt" && fail "something mounted"
ok "exit statuses 8, 16, 32, 0"
