#!/usr/bin/env python3
"""Stress test of a mounted ninferfs (issue 7 item 3); driven by stress.sh.

    stress.py gen  WORKDIR GIB         write WORKDIR/src/pool.bin, the manifest
                                       WORKDIR/src/manifest.json and the plan
                                       WORKDIR/plan.json (what every file holds)
    stress.py run  WORKDIR MNT PID SECONDS [READERS]
                                       READERS (default 32) processes read random
                                       ranges for SECONDS and check every byte;
                                       samples the daemon's VmRSS and fd count

Content.  Every object is a window of one pool file: object byte o is pool
byte source_offset + o, and pool word i (little-endian uint32) is
mix32(i) (a fixed integer hash), so the expected bytes of any range of any
file are recomputed with a few numpy operations, without reading anything
but the mount.  Formats: bf16 (decoded f32 = word << 16, NaN payloads kept,
codecs.md 0.1), fp32 (decoded = raw), int32 (decoded = raw); all
contiguous_le_v1, which accepts every bit pattern.

Files read: objects/<id>, decoded/objects/<id>, bindings/<name> (whole-object
bindings and parts bindings over bf16 objects, whole rows and flat element
ranges, so raw bindings are byte-range concatenations),
decoded/bindings/<name> and decoded/model.safetensors (its header as served,
checked for one tensor per binding at contiguous data_offsets of the right
sizes; its data checked like decoded/bindings).
"""
import bisect
import errno
import json
import multiprocessing as mp
import os
import random
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "pylib"))
from nfnames import esc  # noqa: E402  the naming rule, shared with the tests

POOL_BYTES = 256 << 20
M32 = np.uint32(0xFFFFFFFF)


def mix32(idx):
    """lowbias32 of the uint32 word index (numpy, wrapping arithmetic)."""
    x = idx.astype(np.uint32)
    x = x * np.uint32(0x9E3779B1)
    x ^= x >> np.uint32(16)
    x *= np.uint32(0x7FEB352D)
    x ^= x >> np.uint32(15)
    x *= np.uint32(0x846CA68B)
    x ^= x >> np.uint32(16)
    return x


def pool_bytes(start, n):
    """Bytes [start, start+n) of the pool."""
    if n <= 0:
        return b""
    w0 = start // 4
    w1 = (start + n + 3) // 4
    words = mix32(np.arange(w0, w1, dtype=np.uint64)).astype("<u4")
    b = words.view(np.uint8)
    s = start - 4 * w0
    return b[s:s + n].tobytes()


# ---------------------------------------------------------------- gen

ESIZE = {"bf16": 2, "fp32": 4, "int32": 4}


def gen(work, gib):
    rnd = random.Random(7)
    total = int(gib * (1 << 30))
    src = os.path.join(work, "src")
    os.makedirs(src, exist_ok=True)
    pool = os.path.join(src, "pool.bin")
    with open(pool, "wb") as f:
        step = 16 << 20
        for s in range(0, POOL_BYTES, step):
            f.write(pool_bytes(s, step))
    objects = []   # manifest records
    plan_objs = []  # {id, fmt, shape, so, bytes}
    used = 0

    def add(fmt, shape):
        nonlocal used
        el = 1
        for d in shape:
            el *= d
        nb = el * ESIZE[fmt]
        assert nb <= POOL_BYTES
        so = rnd.randrange(0, (POOL_BYTES - nb) // 4096 + 1) * 4096
        oid = "w.%s.%05d" % (fmt, len(objects))
        objects.append({"id": oid, "kind": "tensor", "shape": shape, "format": fmt,
                        "layout": "contiguous_le_v1", "source": "pool.bin",
                        "source_offset": so, "bytes": nb})
        plan_objs.append({"id": oid, "fmt": fmt, "shape": shape, "so": so, "bytes": nb})
        used += nb
        return len(plan_objs) - 1

    # 30%: large bf16 [16384|8192, 4096] (128 / 64 MiB); 20%: fp32 [4096, 1024]
    # (16 MiB); 25%: medium bf16/fp32/int32 0.25-8 MiB; 25%: many small
    # objects 1-256 KiB.
    big = []
    while used < 0.30 * total:
        rows = 16384 if total >= (2 << 30) else 8192
        big.append(add("bf16", [rows, 4096]))
    while used < 0.50 * total:
        add("fp32", [4096, 1024])
    while used < 0.75 * total:
        fmt = rnd.choice(["bf16", "fp32", "int32"])
        k = rnd.choice([256, 512, 1024, 2048])
        rows = rnd.randrange(64, (8 << 20) // (k * ESIZE[fmt]))
        add(fmt, [rows, k])
    while used < total:
        fmt = rnd.choice(["bf16", "bf16", "fp32", "int32"])
        n = rnd.randrange(256, (256 << 10) // ESIZE[fmt])
        add(fmt, [n] if rnd.random() < 0.5 else [n // 16 or 1, 16])
    # bindings: every object whole, plus parts over the bf16 objects
    bindings = {}
    plan_bind = []
    for i, o in enumerate(plan_objs):
        name = "m/%s/%05d" % (o["fmt"], i)
        bindings[name] = {"object": o["id"]}
        plan_bind.append({"name": name, "parts": [[i, 0, elements(o)]]})
    bf = [i for i, o in enumerate(plan_objs) if o["fmt"] == "bf16" and len(o["shape"]) == 2]
    for j in range(200):
        parts = []
        for _ in range(rnd.randrange(1, 4)):
            i = rnd.choice(big if (j % 2 == 0 and big) else bf)
            o = plan_objs[i]
            rows, k = o["shape"]
            if j % 4 == 0:   # flat element range, not row aligned
                b = rnd.randrange(0, rows * k - 1)
                e = rnd.randrange(b + 1, min(rows * k, b + (8 << 20)) + 1)
            else:            # whole rows (K differs between parents: shape [elements])
                r0 = rnd.randrange(0, rows)
                r1 = rnd.randrange(r0 + 1, min(rows, r0 + 2048) + 1)
                b, e = r0 * k, r1 * k
            parts.append([i, b, e])
        name = "p/%03d" % j
        bindings[name] = {"parts": [{"object": plan_objs[i]["id"], "range": [b, e]}
                                    for i, b, e in parts]}
        plan_bind.append({"name": name, "parts": parts})
    manifest = {"components": {"text": {"config": {"architectures": ["Stress"]}}},
                "objects": objects, "bindings": bindings, "uses": [],
                "metadata": {"name": "ninferfs-stress"}}
    with open(os.path.join(src, "manifest.json"), "w") as f:
        json.dump(manifest, f)
    with open(os.path.join(work, "plan.json"), "w") as f:
        json.dump({"objects": plan_objs, "bindings": plan_bind}, f)
    print("objects %d (bf16 large %d), bindings %d, payload %.2f GiB"
          % (len(objects), len(big), len(bindings), used / (1 << 30)))


def elements(o):
    el = 1
    for d in o["shape"]:
        el *= d
    return el


# ---------------------------------------------------------------- run

def make_file(objs, path, segs, dec, prefix=b""):
    """A readable file: prefix bytes, then the element ranges segs (obj, begin,
    end) of objects, raw or decoded; starts[k] is where segment k begins."""
    starts, pos = [], len(prefix)
    for i, b, e in segs:
        starts.append(pos)
        pos += (e - b) * (4 if dec else ESIZE[objs[i]["fmt"]])
    return {"path": path, "size": pos, "segs": segs, "dec": dec, "prefix": prefix,
            "starts": starts}


def build_files(plan, mnt):
    """Every file the readers use, by kind: obj, dobj, bind, dbind, st."""
    objs = plan["objects"]
    g = {"obj": [], "dobj": [], "bind": [], "dbind": [], "st": []}
    for i, o in enumerate(objs):
        n = elements(o)
        g["obj"].append(make_file(objs, os.path.join(mnt, "objects", esc(o["id"])), [(i, 0, n)], False))
        g["dobj"].append(make_file(objs, os.path.join(mnt, "decoded/objects", esc(o["id"])),
                                   [(i, 0, n)], True))
    segs_of = {}
    for b in plan["bindings"]:
        segs = [tuple(p) for p in b["parts"]]
        segs_of[b["name"]] = segs
        path = "/".join(esc(c) for c in b["name"].split("/"))
        g["bind"].append(make_file(objs, os.path.join(mnt, "bindings", path), segs, False))
        g["dbind"].append(make_file(objs, os.path.join(mnt, "decoded/bindings", path), segs, True))
    # decoded/model.safetensors: its header as the daemon serves it (8-byte
    # length + JSON), then every binding's decoded bytes at its data_offsets
    st = os.path.join(mnt, "decoded/model.safetensors")
    with open(st, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        hdr = f.read(n)
    h = json.loads(hdr)
    ts = sorted((v["data_offsets"][0], v["data_offsets"][1], k) for k, v in h.items()
                if k != "__metadata__")
    segs, pos = [], 0
    for b, e, k in ts:
        if b != pos or k not in segs_of:
            raise SystemExit("safetensors header: %s at %d, expected at %d%s"
                             % (k, b, pos, "" if k in segs_of else " (not a binding)"))
        sz = sum((e_ - b_) * 4 for _, b_, e_ in segs_of[k])
        if e - b != sz:
            raise SystemExit("safetensors header: %s is %d bytes, its binding %d" % (k, e - b, sz))
        segs += segs_of[k]
        pos = e
    if len(ts) != len(segs_of):
        raise SystemExit("safetensors header has %d tensors, %d bindings" % (len(ts), len(segs_of)))
    g["st"].append(make_file(objs, st, segs, True, n.to_bytes(8, "little") + hdr))
    return g


def expected(objs, f, off, n):
    """Expected bytes [off, off+n) of file f (make_file)."""
    res = []
    pre = f["prefix"]
    if off < len(pre):
        res.append(pre[off:off + n])
    dec, segs, starts = f["dec"], f["segs"], f["starts"]
    k = max(0, bisect.bisect_right(starts, off) - 1)
    while k < len(segs):
        i, b, e = segs[k]
        pos = starts[k]
        if pos >= off + n:
            break
        o = objs[i]
        w = ESIZE[o["fmt"]]
        seglen = (e - b) * (4 if dec else w)
        lo = max(off, pos)
        hi = min(off + n, pos + seglen)
        if lo < hi:
            a, z = lo - pos, hi - pos   # byte range inside this segment's output
            if dec and o["fmt"] == "bf16":
                e0, e1 = b + a // 4, b + (z + 3) // 4
                raw = pool_bytes(o["so"] + 2 * e0, 2 * (e1 - e0))
                v = (np.frombuffer(raw, "<u2").astype(np.uint32) << np.uint32(16)).astype("<u4")
                s = a - (e0 - b) * 4
                res.append(v.view(np.uint8)[s:s + (z - a)].tobytes())
            else:   # raw bytes, or fp32/int32 decoded (identical to raw)
                res.append(pool_bytes(o["so"] + b * w + a, z - a))
        k += 1
    return b"".join(res)


SIZES = [1, 7, 4096, 65536, 131072, 1 << 20, 4 << 20]


def worker(args):
    wid, plan, groups, secs, q = args
    objs = plan["objects"]
    rnd = random.Random(1000 + wid)
    # weights: objects/ 4, decoded/objects/ 3, bindings/ 1, decoded/bindings/ 2,
    # decoded/model.safetensors 1
    kinds = ["obj"] * 4 + ["dobj"] * 3 + ["bind"] * 1 + ["dbind"] * 2 + ["st"]
    fds = {}
    stat = {"reads": 0, "bytes": 0, "errors": 0, "short": 0, "first_errors": [],
            "by_kind": {k: 0 for k in groups}}
    end = time.time() + secs
    while time.time() < end:
        kind = rnd.choice(kinds)
        f = rnd.choice(groups[kind])
        path, size = f["path"], f["size"]
        if size == 0:
            continue
        n = rnd.choice(SIZES)
        if rnd.random() < 0.5:
            off = rnd.randrange(0, (size - 1) // 4096 + 1) * 4096
        else:
            off = rnd.randrange(0, size)
        try:
            fd = fds.get(path)
            if fd is None:
                if len(fds) >= 128:
                    k = rnd.choice(list(fds))
                    os.close(fds.pop(k))
                fd = os.open(path, os.O_RDONLY)
                fds[path] = fd
            if rnd.random() < 0.5:
                # drop the cached pages of the range so the daemon does the work
                os.posix_fadvise(fd, off, n, os.POSIX_FADV_DONTNEED)
            got = os.pread(fd, n, off)
        except OSError as e:
            stat["errors"] += 1
            if len(stat["first_errors"]) < 5:
                stat["first_errors"].append("%s off %d n %d: %s" % (path, off, n,
                                                                    errno.errorcode.get(e.errno, e.errno)))
            continue
        want = expected(objs, f, off, min(n, size - off))
        if got != want:
            stat["errors"] += 1
            if len(got) != len(want):
                stat["short"] += 1
            if len(stat["first_errors"]) < 5:
                first = next((k for k in range(min(len(got), len(want))) if got[k] != want[k]), None)
                stat["first_errors"].append("%s off %d n %d: got %d bytes, want %d, first diff at %s"
                                            % (path, off, n, len(got), len(want), first))
        stat["reads"] += 1
        stat["bytes"] += len(got)
        stat["by_kind"][kind] += 1
    for fd in fds.values():
        os.close(fd)
    q.put(stat)


def proc_rss(pid):
    d = {}
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(("VmRSS:", "VmHWM:")):
                d[line.split(":")[0]] = int(line.split()[1])
    return d


def nfds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def fd_kinds(pid):
    """The daemon's fds by kind: io_uring rings, part files, other; and threads."""
    k = {"uring": 0, "files": 0, "other": 0}
    for fd in os.listdir("/proc/%d/fd" % pid):
        try:
            t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
        except OSError:
            continue
        if "io_uring" in t:
            k["uring"] += 1
        elif t.startswith("/"):
            k["files"] += 1
        else:
            k["other"] += 1
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Threads:"):
                k["threads"] = int(line.split()[1])
    return k


def run(work, mnt, pid, secs, readers):
    plan = json.load(open(os.path.join(work, "plan.json")))
    files = build_files(plan, mnt)
    nfiles = sum(len(v) for v in files.values())
    # every file exists with the expected size (a cheap sanity pass)
    for group in files.values():
        for f in group:
            st = os.stat(f["path"])
            if st.st_size != f["size"]:
                print("size mismatch: %s is %d, expected %d" % (f["path"], st.st_size, f["size"]))
                return 1
    rss0 = proc_rss(pid)["VmRSS"]
    fd0 = nfds(pid)
    k0 = fd_kinds(pid)
    kw = None
    warm = min(30.0, secs / 4)
    peak = rss0
    ctx = mp.get_context("fork")
    q = ctx.Queue()
    procs = [ctx.Process(target=worker, args=((w, plan, files, secs, q),)) for w in range(readers)]
    t0 = time.time()
    for p in procs:
        p.start()
    samples = []
    stats = []
    while len(stats) < readers:
        try:
            stats.append(q.get(timeout=1.0))
        except Exception:
            pass
        try:
            r = proc_rss(pid)["VmRSS"]
        except FileNotFoundError:
            print("daemon %d is gone" % pid)
            for p in procs:
                p.kill()
            return 1
        peak = max(peak, r)
        if not samples or time.time() - t0 - samples[-1][0] >= 0.95:
            samples.append((time.time() - t0, r, nfds(pid)))
        if kw is None and time.time() - t0 >= warm:
            kw = fd_kinds(pid)
            rssw = r
            fdw = samples[-1][2]
        if time.time() - t0 > secs + 120:
            print("readers did not finish within %d s" % (secs + 120))
            for p in procs:
                p.kill()
            return 1
    el = time.time() - t0
    for p in procs:
        p.join()
    time.sleep(1.0)   # let the kernel send the last RELEASEs
    st = proc_rss(pid)
    rss1, hwm = st["VmRSS"], st["VmHWM"]
    peak = max(peak, rss1)
    fd1 = nfds(pid)
    k1 = fd_kinds(pid)
    if kw is None:
        kw, rssw, fdw = k1, rss1, fd1
    reads = sum(s["reads"] for s in stats)
    nbytes = sum(s["bytes"] for s in stats)
    errs = sum(s["errors"] for s in stats)
    kinds = {k: sum(s["by_kind"][k] for s in stats) for k in stats[0]["by_kind"]}
    try:
        dstats = json.load(open(os.path.join(mnt, "stats")))
    except Exception as e:
        dstats = {"error": str(e)}
    print()
    print("ninferfs stress: %d readers, %.0f s, %d files (%d objects, %d bindings)"
          % (readers, el, nfiles, len(plan["objects"]), len(plan["bindings"])))
    print("  reads by kind: objects %d, decoded/objects %d, bindings %d, decoded/bindings %d, "
          "decoded/model.safetensors %d"
          % (kinds["obj"], kinds["dobj"], kinds["bind"], kinds["dbind"], kinds["st"]))
    rows = [
        ("reads", "%d" % reads),
        ("reads/s", "%.0f" % (reads / el)),
        ("bytes/s", "%.1f MiB/s" % (nbytes / el / (1 << 20))),
        ("bytes read and checked", "%.2f GiB" % (nbytes / (1 << 30))),
        ("errors (EIO, wrong or short bytes)", "%d" % errs),
        ("daemon VmRSS start", "%d kB" % rss0),
        ("daemon VmRSS after %.0f s warm-up" % warm, "%d kB" % rssw),
        ("daemon VmRSS end", "%d kB" % rss1),
        ("daemon VmRSS peak (1 s samples)", "%d kB" % peak),
        ("daemon VmHWM (kernel peak)", "%d kB" % hwm),
        ("daemon fds start / after warm-up / end", "%d / %d / %d" % (fd0, fdw, fd1)),
        ("daemon fds max (1 s samples)", "%d" % max(s[2] for s in samples)),
    ]
    for name, k in (("start", k0), ("after warm-up", kw), ("end", k1)):
        rows.append(("  %s: io_uring / files / other fds, threads" % name,
                     "%d / %d / %d, %d" % (k["uring"], k["files"], k["other"], k["threads"])))
    w0 = max(len(r[0]) for r in rows)
    w1 = max(len(r[1]) for r in rows)
    print()
    print("| %-*s | %*s |" % (w0, "metric", w1, "value"))
    print("|%s|%s|" % ("-" * (w0 + 2), "-" * (w1 + 2)))
    for n_, v in rows:
        print("| %-*s | %*s |" % (w0, n_, w1, v))
    step = max(1, len(samples) // 10)
    print("daemon VmRSS kB / fds over time:",
          ", ".join("%.0fs %d/%d" % (t, r, f) for t, r, f in samples[::step] + samples[-1:]))
    print()
    print("daemon stats:", json.dumps({k: v for k, v in dstats.items() if k != "files"}))
    for s in stats:
        for e in s["first_errors"]:
            print("  error:", e)
    # flat: no fd other than the io_uring rings (one per FUSE worker thread,
    # man ninferfs(1)) appears, and the rings stay within the thread cap
    # (-o threads, default 16): libfuse starts workers on demand, so the
    # ring count climbs to the cap under load and stays there.
    cap = int(os.environ.get("THREADS", "16"))
    flat = (k1["files"] == k0["files"] and k1["other"] == k0["other"]
            and k1["uring"] <= min(k1["threads"], cap))
    ok = errs == 0 and flat
    if not flat:
        print("FAIL: daemon fds not flat: start %s, after warm-up %s, end %s" % (k0, kw, k1))
    elif fd1 != fd0:
        print("note: the fd count moved from %d to %d only by io_uring rings of new worker "
              "threads (%d rings, %d threads, cap %d); file and other fds flat"
              % (fd0, fd1, k1["uring"], k1["threads"], cap))
    return 0 if ok else 1


def main():
    if len(sys.argv) >= 4 and sys.argv[1] == "gen":
        gen(sys.argv[2], float(sys.argv[3]))
        return 0
    if len(sys.argv) >= 6 and sys.argv[1] == "run":
        readers = int(sys.argv[6]) if len(sys.argv) > 6 else 32
        return run(sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), readers)
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main())
