"""Python side of the fault-injection tests (tests/faults/*.sh).

    python3 -m faultlib check MNT FIXDIR [BADFILE REMAIN]

Reads every object of an nf-fixture set through the mount, raw
(objects/<id>) and decoded (decoded/objects/<id>), and compares them with
FIXDIR/expect.  Without BADFILE every read must succeed with the exact
bytes.  With BADFILE (a file index) and REMAIN (how many payload bytes of
that file are still there; 0: none), a read of an object whose logical
range touches the lost bytes must fail with EIO, every other read must
return the exact bytes, and the whole pages of a touching object before and
after the lost range must still read (readahead off, man ninferfs(1) BUGS).  The entry
is checked too: artifact.json equals the JSON bytes of the entry file, or
fails with EIO when the entry is the file removed (BADFILE 0, REMAIN 0).
Prints a one-line summary; exits 1 on the first violation.

    python3 -m faultlib make-big SRCDIR      sources + manifest of a set with a
                                             32 MiB bf16 tensor (64 MiB decoded)
    python3 -m faultlib check-big MNT SRCDIR [quick]
                                             every file of that set, exact
                                             (quick: three of them)
"""
import errno
import json
import os
import sys

from nfnames import esc


def errname(e):
    return errno.errorcode.get(e, str(e))


def read_file(path):
    """The whole file, or the errno name of the failure."""
    try:
        with open(path, "rb", buffering=0) as f:
            return f.read()
    except OSError as e:
        return errname(e.errno)


def pread_norah(path, n, off=0):
    fd = os.open(path, os.O_RDONLY)
    try:
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        return os.pread(fd, n, off)
    except OSError as e:
        return errname(e.errno)
    finally:
        os.close(fd)


def stats(mnt):
    with open(os.path.join(mnt, "stats")) as f:
        return json.load(f)


def manifest(fixdir):
    return json.load(open(os.path.join(fixdir, "expect/manifest.json")))


def expect(fixdir, rel):
    return open(os.path.join(fixdir, "expect", rel), "rb").read()


def check(mnt, fixdir, bad=None, remain=0):
    m = manifest(fixdir)
    lost = None
    if bad is not None:
        f = [x for x in m["files"] if x["index"] == bad][0]
        lost = (f["logical_start"] + remain, f["logical_start"] + f["payload_bytes"])
        assert lost[0] < lost[1], "nothing lost"
    reads0 = stats(mnt)["reads"]
    # the entry: artifact.json is the stored JSON, read from the entry file,
    # so it fails with EIO as every read of the entry once that is removed
    entry = open(os.path.join(fixdir, m["entry"]), "rb").read()
    got = read_file(os.path.join(mnt, "artifact.json"))
    want = "EIO" if bad == 0 and remain == 0 else entry[32:32 + m["json_bytes"]]
    if got != want:
        sys.exit("artifact.json: %r, want %r" % (got[:40], want[:40]))
    good = eio = pages = 0
    for o in m["objects"]:
        lo, hi = o["offset"], o["offset"] + o["bytes"]
        touches = lost is not None and lo < lost[1] and lost[0] < hi
        views = [("objects", o["expect_bytes"])]
        if o.get("expect_decoded"):
            views.append(("decoded/objects", o["expect_decoded"]))
        for view, rel in views:
            path = os.path.join(mnt, view, esc(o["id"]))
            want = expect(fixdir, rel)
            got = read_file(path)
            if touches:
                if got != "EIO":
                    sys.exit("%s touches the lost bytes %s of file %d: read gave %s, want EIO"
                             % (path, lost, bad, got if isinstance(got, str) else "%d bytes" % len(got)))
                eio += 1
                if view == "objects":
                    # whole pages of the object before the lost range still read
                    n = max(0, lost[0] - lo) // 4096 * 4096
                    if n:
                        got = pread_norah(path, n)
                        if got != want[:n]:
                            sys.exit("%s: the %d bytes before the lost range: %s"
                                     % (path, n, got if isinstance(got, str) else "differ"))
                        pages += 1
                    # and the whole pages after it
                    a = -(-(lost[1] - lo) // 4096) * 4096
                    if 0 < a < o["bytes"]:
                        got = pread_norah(path, o["bytes"] - a, a)
                        if got != want[a:]:
                            sys.exit("%s: the bytes from %d, after the lost range: %s"
                                     % (path, a, got if isinstance(got, str) else "differ"))
                        pages += 1
            else:
                if got != want:
                    sys.exit("%s: %s" % (path, got if isinstance(got, str) else
                                         "%d bytes differ from expect/%s" % (len(got), rel)))
                good += 1
    if lost is not None and not (eio and good):
        sys.exit("expected both failing and good reads (good %d, eio %d)" % (good, eio))
    # the reads reached the daemon (the page cache of the mount was dropped)
    served = stats(mnt)["reads"] - reads0
    if served < good // 2:
        sys.exit("only %d reads reached the daemon for %d good files: page cache not dropped?"
                 % (served, good))
    print("checked: %d exact reads, %d EIO, %d partial reads around the lost bytes; "
          "daemon served %d read requests" % (good, eio, pages, served))


# ------------------------------------------------------------ a big set

BIG_ROWS, BIG_K = 4096, 4096      # bf16: 32 MiB raw, 64 MiB decoded f32


def make_big(srcdir):
    """Sources and manifest of a set with one big bf16 tensor and a small fp32."""
    import numpy as np
    os.makedirs(srcdir, exist_ok=True)
    rng = np.random.default_rng(11)
    big = rng.integers(0, 1 << 16, BIG_ROWS * BIG_K, dtype=np.uint32).astype("<u2")
    big.tofile(os.path.join(srcdir, "big.bin"))
    rng.integers(0, 1 << 32, 1024, dtype=np.uint64).astype("<u4").tofile(
        os.path.join(srcdir, "small.bin"))
    m = {"components": {"text": {"config": {"architectures": ["Faults"]}}},
         "objects": [
             {"id": "big", "kind": "tensor", "shape": [BIG_ROWS, BIG_K], "format": "bf16",
              "layout": "contiguous_le_v1", "source": "big.bin"},
             {"id": "small", "kind": "tensor", "shape": [1024], "format": "fp32",
              "layout": "contiguous_le_v1", "source": "small.bin"}],
         "bindings": {"w/big": {"object": "big"}, "w/small": {"object": "small"},
                      "w/rows": {"parts": [{"object": "big", "range": [BIG_K * 100, BIG_K * 300]}]}},
         "uses": []}
    with open(os.path.join(srcdir, "manifest.json"), "w") as f:
        json.dump(m, f)


def check_big(mnt, srcdir, quick=False):
    """Every file of the big set read whole and compared; exits 1 on a difference."""
    import numpy as np
    big = open(os.path.join(srcdir, "big.bin"), "rb").read()
    small = open(os.path.join(srcdir, "small.bin"), "rb").read()
    dec = (np.frombuffer(big, "<u2").astype(np.uint32) << np.uint32(16)).astype("<u4").tobytes()
    want = {"objects/big": big, "objects/small": small,
            "decoded/objects/big": dec, "decoded/objects/small": small,
            "bindings/w/big": big, "decoded/bindings/w/big": dec,
            "decoded/bindings/w/rows": dec[BIG_K * 100 * 4:BIG_K * 300 * 4]}
    if quick:   # the decoded object (the interrupted file), a raw and a binding
        want = {k: want[k] for k in ("decoded/objects/big", "objects/small",
                                      "decoded/bindings/w/rows")}
    for rel, w in want.items():
        path = os.path.join(mnt, rel)
        fd = os.open(path, os.O_RDONLY)
        os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        os.close(fd)
        got = read_file(path)
        if got != w:
            sys.exit("%s: %s" % (path, got if isinstance(got, str) else
                                 "%d bytes, want %d, differ" % (len(got), len(w))))
    print("big set: %d files exact" % len(want))


def main(argv):
    if len(argv) >= 3 and argv[0] == "check":
        bad = int(argv[3]) if len(argv) > 3 else None
        remain = int(argv[4]) if len(argv) > 4 else 0
        check(argv[1], argv[2], bad, remain)
        return 0
    if len(argv) == 2 and argv[0] == "make-big":
        make_big(argv[1])
        return 0
    if len(argv) in (3, 4) and argv[0] == "check-big":
        check_big(argv[1], argv[2], len(argv) == 4 and argv[3] == "quick")
        return 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
