#!/bin/sh
# tests/remote/man_opts.sh SRCROOT — every option key remote/opts.c accepts
# is described in man/ninferfs-remote.7, and the page's OPTIONS section
# names no key the code lacks.
set -eu
root=$1
src=$(grep -oE 'IS\("[a-z_]+"\)' "$root/remote/opts.c" | sed 's/IS("\(.*\)")/\1/' | sort -u)
man=$(sed -n '/^\.SH OPTIONS/,/^\.SH EXAMPLES/p' "$root/man/ninferfs-remote.7" |
	grep -E '^\.(BI|BR|TQ) ' | grep -oE '^\.B[IR] [a-z_]+=' | sed 's/^\.B[IR] //; s/=$//' | sort -u)
status=0
for k in $src; do echo "$man" | grep -qx "$k" || { echo "option $k is not in man/ninferfs-remote.7" >&2; status=1; }; done
for k in $man; do echo "$src" | grep -qx "$k" || { echo "man/ninferfs-remote.7 names option $k, remote/opts.c does not" >&2; status=1; }; done
echo "$(echo "$src" | wc -l) options, code and man page agree"
exit $status
