#!/bin/sh
# tests/remote/man_opts.sh SRCROOT — every option key remote/opts.c accepts
# is described in man/ninferfs-remote.7 and in the "Remote options" of
# man/ninfer-check.1, and neither page names a key the code lacks.
set -eu
root=$1
src=$(grep -oE 'IS\("[a-z_]+"\)' "$root/remote/opts.c" | sed 's/IS("\(.*\)")/\1/' | sort -u)
man=$(sed -n '/^\.SH OPTIONS/,/^\.SH EXAMPLES/p' "$root/man/ninferfs-remote.7" |
	grep -E '^\.(BI|BR|TQ) ' | grep -oE '^\.B[IR] [a-z_]+=' | sed 's/^\.B[IR] //; s/=$//' | sort -u)
status=0
for k in $src; do echo "$man" | grep -qx "$k" || { echo "option $k is not in man/ninferfs-remote.7" >&2; status=1; }; done
for k in $man; do echo "$src" | grep -qx "$k" || { echo "man/ninferfs-remote.7 names option $k, remote/opts.c does not" >&2; status=1; }; done
# ninfer-check(1) lists the same keys (its "Remote options")
chk=$(sed -n '/^\.SS Remote options/,/^\.S[HS] /p' "$root/man/ninfer-check.1" |
	grep -E '^\.(BI|BR|TQ) ' | grep -oE '^\.B[IR] [a-z_]+=' | sed 's/^\.B[IR] //; s/=$//' | sort -u)
for k in $src; do echo "$chk" | grep -qx "$k" || { echo "option $k is not in man/ninfer-check.1" >&2; status=1; }; done
for k in $chk; do echo "$src" | grep -qx "$k" || { echo "man/ninfer-check.1 names option $k, remote/opts.c does not" >&2; status=1; }; done
echo "$(echo "$src" | wc -l) options, code and man pages agree"
exit $status
