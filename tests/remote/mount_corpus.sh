#!/usr/bin/env bash
# ninferfs URL MOUNTPOINT on the hostile corpus (tests/hostile/corpus.py):
# every case written under nginx's root and mounted twice, from the local
# files and from its URL.  Proves, case by case:
#   - a set the local mount refuses is refused over HTTP with the same exit
#     status, and the message names the URL;
#   - a set that mounts locally mounts from the URL, and the two trees are
#     the same: the same names, the same bytes in every file, and a read that
#     fails locally (a part missing, bad or of another artifact; an unknown
#     format's decoded view) fails over HTTP with the same error;
#   - nginx is asked for no name but the case's two files (a part path that
#     breaks seed §3.3 is never requested, not even by a read).
. "$(dirname "$0")/lib.sh"
. "$REMOTE_TESTS/ngx.sh"
. "$REMOTE_TESTS/mnt.sh"
: "${NF_CORPUS:?}"

W=$T/www
mkdir -p "$W/corpus"
ngx_start "$W"
U=$NGX_URL
# ngx_start's own probe of / may be logged after it cleared the log
ngx_settle
ngx_clear

# try SOURCE DIR: a daemonizing mount; $rc its exit status, DIR.err its
# stderr (sanitizer-clean); a mount that appeared is recorded for the trap
try() {
	mkdir -p "$2"
	MNTS+=("$2")
	rc=0
	timeout 30 "$NINFERFS" "$1" "$2" 2>"$2.err" || rc=$?
	san_clean "$2.err"
	[ "$rc" != 124 ] || fail "$1: the mount did not return within 30 s"
}
# off DIR: unmount a daemonized mount (its daemon is not our child)
off() {
	fusermount3 -u "$1" || fail "fusermount3 -u $1"
	for _ in $(seq 100); do is_mounted "$1" || return 0; sleep 0.05; done
	fail "still mounted: $1"
}

refused=0 mounted=0 files=0 errs=0
while read -r name _ _ want; do
	d=$W/corpus/$name
	mkdir -p "$d"
	$PY "$NF_CORPUS" make "$name" "$d" >/dev/null || fail "corpus.py make $name"
	try "$d/h.ninfer" "$T/l-$name"
	lrc=$rc
	try "$U/corpus/$name/h.ninfer" "$T/r-$name"
	[ "$want" = refused ] && [ "$lrc" = 0 ] && fail "$name: corpus.py says refused, it mounted locally"
	[ "$want" != refused ] && [ "$lrc" != 0 ] && fail "$name: corpus.py says it mounts, locally exit $lrc"
	if [ "$lrc" != 0 ]; then
		is_mounted "$T/l-$name" && fail "$name: refused locally (exit $lrc) but mounted"
		[ "$rc" = "$lrc" ] || fail "$name: refused locally with exit $lrc, over HTTP exit $rc: $(cat "$T/r-$name.err")"
		is_mounted "$T/r-$name" && fail "$name: refused over HTTP but mounted"
		grep -qF "$U/corpus/$name/h.ninfer" "$T/r-$name.err" ||
			fail "$name: the refusal does not name the URL: $(cat "$T/r-$name.err")"
		refused=$((refused + 1))
	else
		[ "$rc" = 0 ] && is_mounted "$T/r-$name" ||
			fail "$name: mounts locally, over HTTP exit $rc: $(cat "$T/r-$name.err")"
		tree_same "$T/l-$name" "$T/r-$name"
		off "$T/r-$name"
		off "$T/l-$name"
		mounted=$((mounted + 1))
		files=$((files + TREE_FILES))
		errs=$((errs + TREE_ERRS))
	fi
done < <($PY "$NF_CORPUS" list)
[ "$mounted" -gt 0 ] || fail "no case mounted"
[ "$errs" -gt 0 ] || fail "no read failed in any mounted case: the failing parts were not read"

ngx_settle
bad=$(awk '{print $3}' "$NGX_LOG" | grep -v '^/.nf-settle/' |
	grep -vE '^/corpus/[a-z0-9-]+/h\.ninfer(\.part-0001)?$' | sort -u || true)
[ -z "$bad" ] || fail "requested names outside the cases' own files: $bad"
ok "hostile corpus over HTTP: $refused cases refused with the local exit status and the URL named, $mounted mounted with the same $files files ($errs failing reads with the same error), no request for another name"
