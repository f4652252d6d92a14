#!/usr/bin/env bash
# uses.json costs one copy however many opens hold it (issue 11, item 4):
# a set with 100,000 uses (uses.json ~10 MB, made from the entry when first
# opened); 40 processes open it at once and hold it; the daemon's VmRSS
# (/proc/PID/status) may grow by about one copy, not forty.  Every holder
# reads the right document.  Once all are closed the copy is released.
# Plain builds only: ASan's quarantine and shadow memory change RSS.
. "$(dirname "$0")/lib.sh"

case "${NF_SANITIZE:-none}" in
none | '') ;;
*) echo "skipped: RSS checks need a plain build (b_sanitize=$NF_SANITIZE)"; exit 77 ;;
esac
: "${NINFER_PACK:?NINFER_PACK must point at ninfer-pack}"

s=$T/set
mkdir -p "$s"
printf '\x80\x3f\x00\x40\x40\x40\x80\x40' > "$s/w.bin"
python3 - "$s" <<'PY'
import json, sys
uses = [{"parameter": "w", "input": "text/layers/%d/input_%06d" % (i % 48, i),
         "activation_policy": "A16Only"} for i in range(100000)]
json.dump({"components": {"text": {"config": {}}},
           "objects": [{"id": "w", "kind": "tensor", "shape": [4], "format": "bf16",
                        "layout": "contiguous_le_v1", "source": "w.bin"}],
           "bindings": {"w": {"object": "w"}}, "uses": uses}, open(sys.argv[1] + "/m.json", "w"))
PY
"$NINFER_PACK" create -q --manifest "$s/m.json" "$s/u.ninfer" || fail "ninfer-pack create"
mnt=$T/mnt
mount_fg "$s/u.ninfer" "$mnt"
pid=${PIDS[-1]}

python3 - "$mnt" "$s/m.json" "$pid" <<'PY' || fail "uses.json memory"
import json, os, sys, time
mnt, manifest, pid = sys.argv[1], sys.argv[2], sys.argv[3]
want = json.load(open(manifest))["uses"]
path = os.path.join(mnt, "uses.json")
size = os.stat(path).st_size
assert size > 8_000_000, size

def rss():
    for line in open("/proc/%s/status" % pid):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) * 1024
base = rss()
def holders(n):
    """n processes that open uses.json, read a page and hold it."""
    r, w = os.pipe()
    kids = []
    for k in range(n):
        p = os.fork()
        if p == 0:
            os.close(r)
            fd = os.open(path, os.O_RDONLY)
            os.pread(fd, 4096, 0)   # the open made the copy; one page read
            os.write(w, b"1")
            time.sleep(60)          # hold it until the parent kills us
            os._exit(0)
        kids.append(p)
    os.close(w)
    got = 0
    while got < n:
        b = os.read(r, 64)
        assert b, "a holder died"
        got += len(b)
    os.close(r)
    return kids
kids = holders(1)
one = rss()
kids += holders(39)
held = rss()
# one full read of the document, while the 40 hold it: right bytes
doc = json.loads(open(path, "rb").read())
assert doc == want, "uses.json differs from the manifest's uses"
peak = rss()
for p in kids:
    os.kill(p, 9)
    os.waitpid(p, 0)
grow = held - base
print("uses.json %d bytes; daemon VmRSS %.1f MB at mount, %.1f MB with 1 holder, %.1f MB with 40 "
      "(+%.1f MB), %.1f MB after a full read" % (size, base / 1e6, one / 1e6, held / 1e6,
                                                grow / 1e6, peak / 1e6))
# the 39 later opens cost no copy; all 40 about one
assert held - one <= size // 2, "39 more opens grew RSS by %.1f MB" % ((held - one) / 1e6)
assert grow <= 2 * size + (8 << 20), "40 opens grew RSS by %.1f MB (%.1f copies of %d bytes)" % (
    grow / 1e6, grow / size, size)
# released once nobody holds it (RELEASE comes from the kernel a little
# later): from the RSS after the full read, whose reply buffers (each
# worker thread's work area, kept for its next read) stay
for _ in range(100):
    if rss() < peak - size // 2:
        break
    time.sleep(0.05)
else:
    sys.exit("the copy was not released after the last close: %.1f MB" % (rss() / 1e6))
print("released: %.1f MB" % (rss() / 1e6))
PY
ok "uses.json: 40 concurrent opens cost one copy"
