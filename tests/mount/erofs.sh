#!/usr/bin/env bash
# Every write-like operation fails with EROFS.
. "$(dirname "$0")/lib.sh"

d=$(fixture text)
mnt=$T/mnt
mount_fg "$d/text.ninfer" "$mnt"
obj=$mnt/objects/$(ls "$mnt/objects" | sed -n 1p)
expect_erofs() {
	local out
	if out=$("$@" 2>&1); then fail "succeeded: $*"; fi
	case $out in *"Read-only file system"*) ;; *) fail "not EROFS: $* -> $out" ;; esac
}
expect_erofs sh -c "echo x > '$obj'"
expect_erofs sh -c "echo x >> '$obj'"
expect_erofs touch "$mnt/newfile"
expect_erofs mkdir "$mnt/newdir"
expect_erofs rm -f "$obj"
expect_erofs rmdir "$mnt/objects"
expect_erofs mv "$obj" "$mnt/objects/renamed"
expect_erofs chmod 777 "$obj"
expect_erofs truncate -s 0 "$obj"
expect_erofs ln -s x "$mnt/link"
expect_erofs ln "$obj" "$mnt/hard"
expect_erofs setfattr -n user.x -v 1 "$obj"
expect_erofs setfattr -x user.ninfer.kind "$obj"
expect_erofs mknod "$mnt/fifo" p
python3 - "$obj" <<'PY' || fail "open for write"
import errno, os, sys
for flags in (os.O_WRONLY, os.O_RDWR, os.O_RDONLY | os.O_TRUNC):
    try:
        os.close(os.open(sys.argv[1], flags)); raise SystemExit("opened with %o" % flags)
    except OSError as e:
        assert e.errno == errno.EROFS, e
PY
ok "EROFS everywhere"
