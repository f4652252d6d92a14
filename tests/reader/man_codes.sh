#!/bin/sh
# tests/reader/man_codes.sh SRCROOT — every finding code the reader,
# ninfer-check and the codec invariants can emit is defined in
# man/ninfer-check.1, and the page defines no code the sources lack.
set -eu
root=$1
tmp=${TMPDIR:-/tmp}/nf-man-codes.$$
trap 'rm -f "$tmp".src "$tmp".man' EXIT
# writer*.c and manifest.c belong to ninfer-pack (their codes are in
# ninfer-pack(1)); ninfer-check never runs them.
srcs=$(ls "$root"/reader/*.c | grep -vE '/(writer[^/]*|manifest)\.c$')
grep -ohE '"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+"' $srcs "$root"/tools/ninfer-check.c \
    "$root"/codecs/invariants.c | tr -d '"' | sort -u > "$tmp".src
grep -E '^\.TP' -A1 "$root"/man/ninfer-check.1 | grep -E '^\.BR? [A-Z]' \
    | grep -oE '[A-Z][A-Z0-9]*(_[A-Z0-9]+)+' | sort -u > "$tmp".man
status=0
if comm -23 "$tmp".src "$tmp".man | grep .; then
    echo "^ emitted by the sources but not defined in man/ninfer-check.1" >&2; status=1
fi
if comm -13 "$tmp".src "$tmp".man | grep .; then
    echo "^ defined in man/ninfer-check.1 but emitted nowhere" >&2; status=1
fi
n=$(wc -l < "$tmp".src)
echo "$n finding codes, sources and man page agree"
exit $status
