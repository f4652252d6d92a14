#!/usr/bin/env bash
# Permissions of the backing files.  As root the daemon bypasses file modes,
# so it runs here as root *without* CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH and
# CAP_FOWNER (setpriv --bounding-set): it still may open /dev/fuse and mount,
# but mode bits apply to it like to any user (/dev/fuse is 0600 root, so a
# really unprivileged uid cannot mount here at all).  The readers are plain
# root, so the mount needs no allow_other.
#  1. the backing directory and every file made mode 000 after the mount:
#     a chmod changes a file's ctime, and a file whose ctime changed since it
#     was first opened is treated like a replaced one (issue 11, contract
#     §5): every read fails with EIO (artifact.json too: the entry changed),
#     none returns bytes, files.json says "bad" with the ctime for every
#     file, and the daemon keeps answering;
#  2. a part of mode 000 before the mount: it is a file error (contract §5):
#     the mount proceeds, files.json does not say "present" for it, reads
#     touching it fail with EIO, everything else reads exactly;
#  3. the entry of mode 000: exit status 8 (ninferfs(1) EXIT STATUS), nothing
#     mounted.
. "$(dirname "$0")/lib.sh"

NOCAP="setpriv --bounding-set=-dac_override,-dac_read_search,-fowner --inh-caps=-dac_override,-dac_read_search,-fowner"
$NOCAP true 2>/dev/null || { echo "SKIP: setpriv cannot drop capabilities here"; exit 77; }

# 1. chmod 000 after the mount
d=$(fixture mixed)
mkdir -p "$T/art1" && mv "$d"/mixed.ninfer* "$T/art1/" && ln -s "$T/art1/mixed.ninfer" "$d/mixed.ninfer"
mnt=$T/mnt1
PREFIX=$NOCAP mount_fg "$T/art1/mixed.ninfer" "$mnt"
# the daemon really runs without the DAC capabilities (bits 1, 2, 3)
eff=$(awk '/^CapEff/ {print $2}' "/proc/$DPID/status")
[ $(( 0x$eff & 0xe )) = 0 ] || fail "daemon CapEff $eff still has DAC override/read search/fowner"
check_objects "$mnt" "$d" >/dev/null || fail "reads before chmod"
chmod 000 "$T/art1"/* "$T/art1"
$NOCAP cat "$T/art1/mixed.ninfer.part-0001" >/dev/null 2>&1 && fail "a capability-less process still reads the files"
drop_mount_cache "$mnt"
$PY - "$mnt" "$d" <<'PY' || fail "reads after chmod 000 of the directory and files"
import json, os, sys
import faultlib as fl
mnt, d = sys.argv[1], sys.argv[2]
m = fl.manifest(d)
assert fl.read_file(os.path.join(mnt, "artifact.json")) == "EIO", "artifact.json"
got = {o["id"]: fl.read_file(os.path.join(mnt, "objects", fl.esc(o["id"]))) for o in m["objects"]}
assert all(v == "EIO" for v in got.values()), [k for k, v in got.items() if v != "EIO"][:5]
files = json.load(open(os.path.join(mnt, "files.json")))
assert all(f["status"] == "bad" and "ctime " in f["reason"] for f in files), \
    [(f["index"], f["status"]) for f in files if f["status"] != "bad"][:5]
print("after chmod 000: %d objects EIO, %d files bad (ctime)" % (len(got), len(files)))
PY
chmod 755 "$T/art1"; chmod 644 "$T/art1"/*
alive "$DPID" || fail "daemon died"
unmount "$mnt" "$DPID"
ok "directory and parts made mode 000 after the mount: a ctime change, every read EIO"

# 2. a part of mode 000 before the mount
d=$(fixture mixed -p)
chmod 000 "$d/mixed.ninfer.part-0003"
mnt=$T/mnt2
PREFIX=$NOCAP mount_fg "$d/mixed.ninfer" "$mnt"
st=$($PY -c '
import json, sys
f = json.load(open(sys.argv[1]))
f = f if isinstance(f, list) else f.get("files", f)
x = [x for x in f if x["index"] == 3][0]
print(x["status"], x.get("reason", ""))
' "$mnt/files.json")
echo "files.json: part-0003 $st"
case $st in present*) fail "files.json says part-0003 is present" ;; esac
# ninfer-check(1): FILE_UNREADABLE, a file that exists but cannot be read
$PY -c '
import json, sys
v = json.load(open(sys.argv[1]))
f = [x for x in v["findings"] if "part-0003" in x.get("where", "") + x.get("evidence", "")]
assert any(x["code"] == "FILE_UNREADABLE" for x in f), f
print("validation.json:", [(x["severity"], x["code"]) for x in f])
' "$mnt/validation.json" || fail "validation.json has no FILE_UNREADABLE for part-0003"
check_objects "$mnt" "$d" 3 0 || fail "reads with an unreadable part"
alive "$DPID" || fail "daemon died"
unmount "$mnt" "$DPID"
ok "part of mode 000 before the mount: file error, touching reads EIO, the rest exact"

# 3. the entry of mode 000
d=$(fixture mixed -e)
chmod 000 "$d/mixed.ninfer"
mkdir -p "$T/mnt3"
rc=0
$NOCAP "$NINFERFS" "$d/mixed.ninfer" "$T/mnt3" -f 2>"$T/err3" || rc=$?
is_mounted "$T/mnt3" && { MOUNTS+=("$T/mnt3"); fail "mounted with an unreadable entry"; }
[ "$rc" = 8 ] || fail "exit status $rc with an unreadable entry, want 8: $(cat "$T/err3")"
grep -qi 'denied\|EACCES\|permission' "$T/err3" || fail "no permission message: $(cat "$T/err3")"
ok "entry of mode 000: exit 8 ($(head -1 "$T/err3"))"
