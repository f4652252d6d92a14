#!/bin/sh
# tests/calbin/man_codes.sh SRCROOT — every finding code calbin/ and
# calbin-check can emit is defined in man/calbin-check.1 (with its gate,
# severity, class and seed section), and the page defines no code the
# sources lack.
set -eu
root=$1
tmp=${TMPDIR:-/tmp}/cb-man-codes.$$
trap 'rm -f "$tmp".src "$tmp".man' EXIT
grep -ohE '"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+"' "$root"/calbin/*.c "$root"/tools/calbin-check.c \
    | tr -d '"' | grep -vE '^(BLOCKED_REPRODUCIBILITY|WARNING_VENDOR|WARNING_SERVICE)$' \
    | sort -u > "$tmp".src
grep -E '^\.TP' -A1 "$root"/man/calbin-check.1 | grep -E '^\.BR? [A-Z]' \
    | grep -oE '[A-Z][A-Z0-9]*(_[A-Z0-9]+)+' | sort -u > "$tmp".man
status=0
if comm -23 "$tmp".src "$tmp".man | grep .; then
    echo "^ emitted by the sources but not defined in man/calbin-check.1" >&2; status=1
fi
if comm -13 "$tmp".src "$tmp".man | grep .; then
    echo "^ defined in man/calbin-check.1 but emitted nowhere" >&2; status=1
fi
# Each definition says its gate, severity and class: ".B CODE" then a line
# "gate X, SEVERITY, class CLASS, seed §N".
bad=$(awk '/^\.TP/{getline code; getline info; if (code ~ /^\.B [A-Z]/ && info !~ /^gate (A|B|C|D|E|F|service), (error|warning|info), class [A-Za-z_]+, seed ..sc[0-9]/) print code}' "$root"/man/calbin-check.1)
if [ -n "$bad" ]; then
    echo "$bad"; echo "^ no 'gate X, severity, class C, seed §N' line" >&2; status=1
fi
n=$(wc -l < "$tmp".src)
echo "$n finding codes, sources and man page agree"
exit $status
