#!/usr/bin/env bash
# issue 11 item 7: an entry path that is not UTF-8.  ninfer-check(1) REPORT
# FORMAT: "File names and arguments that are not UTF-8 appear with U+FFFD in
# place of each invalid byte".  Both documents (ninfer-check --json and the
# mounted validation.json) are parsed with python3 json.load and compared
# with the exact strings: artifact.entry and the entry's element of
# tool.argv.
. "$(dirname "$0")/lib.sh"
: "${NINFER_CHECK:?NINFER_CHECK must point at ninfer-check}"

d=$(fixture text)
# bytes: ff (never UTF-8), c3 28 (a lead byte without its continuation),
# e2 82 (a cut 3-byte sequence), c0 af (overlong '/'), ed a0 80 (a UTF-16
# surrogate), f4 90 80 80 (above U+10FFFF); then a valid "é" (c3 a9)
bad=$(printf 'bad\377\303(\342\202x\300\257\355\240\200\364\220\200\200\303\251')
mkdir "$T/$bad"
mv "$d"/text.ninfer* "$T/$bad/"
entry="$T/$bad/text.ninfer"
# every invalid byte is one U+FFFD; valid characters stay as they are
want="$T/bad"$'\xef\xbf\xbd\xef\xbf\xbd'"("$'\xef\xbf\xbd\xef\xbf\xbd'"x"
want+=$'\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd'
want+=$'\xc3\xa9'"/text.ninfer"
printf '%s' "$want" > "$T/want.txt"

rc=0
"$NINFER_CHECK" --json "$entry" > "$T/check.json" || rc=$?
[ "$rc" = 0 ] || fail "ninfer-check exit $rc"

mnt=$T/mnt
mount_fg "$entry" "$mnt"
cp "$mnt/validation.json" "$T/validation.json"
unmount "$mnt"

python3 - "$T/want.txt" "$T/check.json" "$T/validation.json" <<'PY' || fail "report documents"
import sys, json
want = open(sys.argv[1], "rb").read().decode("utf-8")
assert want.count("\ufffd") == 13, want
for path, tool in ((sys.argv[2], "ninfer-check"), (sys.argv[3], "ninferfs")):
    doc = json.load(open(path, "rb"))
    assert doc["tool"]["name"] == tool, doc["tool"]
    got = doc["artifact"]["entry"]
    assert got == want, "%s: artifact.entry %r, want %r" % (path, got, want)
    argv = doc["tool"]["argv"]
    assert want in argv, "%s: tool.argv %r lacks %r" % (path, argv, want)
    assert doc["verdict"] == "pass", doc["verdict"]
    print("%s: entry and argv carry U+FFFD for each of the 13 invalid bytes" % tool)
PY
ok "non-UTF-8 entry path: U+FFFD per invalid byte in ninfer-check --json and validation.json"
