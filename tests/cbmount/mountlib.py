"""tests/cbmount/mountlib.py — what the calbin mount tests share: packages
from cb-fixture in a private temp dir, ninferfs mounts in the foreground
(started, waited for, and always unmounted and killed by pid), small file
helpers.  Paths come from the environment meson sets: NINFERFS, CB_FIXTURE,
CALBIN_CHECK."""
import errno
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

NINFERFS = os.environ.get("NINFERFS", "")
CB_FIXTURE = os.environ.get("CB_FIXTURE", "")
CALBIN_CHECK = os.environ.get("CALBIN_CHECK", "")
MODEL = "Qwen3-30B-A3B-bs1-ctx40960-2chip"


class Fail(Exception):
    pass


def check(cond, *msg):
    if not cond:
        raise Fail(" ".join(str(m) for m in msg))


def mounted(mnt):
    with open("/proc/mounts", errors="surrogateescape") as f:
        return any(line.split()[1] == mnt for line in f)


class Env:
    def __init__(self):
        self.tmp = tempfile.mkdtemp(prefix="cbmount-test.")
        self.procs = []          # (Popen, mountpoint)
        self.n = 0

    def package(self, variant="clean", *extra):
        self.n += 1
        out = os.path.join(self.tmp, "pkg%d-%s" % (self.n, variant))
        res = subprocess.run([CB_FIXTURE, out, "--variant", variant] + list(extra),
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise Fail("cb-fixture %s: %s" % (variant, res.stderr))
        return res.stdout.strip()

    def mountpoint(self):
        self.n += 1
        m = os.path.join(self.tmp, "mnt%d" % self.n)
        os.mkdir(m)
        return m

    def start(self, src, *opts, mnt=None):
        """Start ninferfs -f; returns (mnt, proc); the mount may still fail."""
        mnt = mnt or self.mountpoint()
        log = open(os.path.join(self.tmp, "daemon%d.log" % self.n), "w+b")
        args = [NINFERFS, src, mnt, "-f"] + list(opts)
        p = subprocess.Popen(args, stdout=log, stderr=log)
        p.log = log
        self.procs.append((p, mnt))
        return mnt, p

    def mount(self, src, *opts, mnt=None, timeout=120):
        """Mount and wait until the tree answers; raises Fail with the log."""
        mnt, p = self.start(src, *opts, mnt=mnt)
        t0 = time.monotonic()
        while time.monotonic() - t0 < timeout:
            if mounted(mnt):
                try:
                    os.stat(mnt)
                    return mnt
                except OSError:
                    pass
            if p.poll() is not None:
                raise Fail("ninferfs exited %d: %s" % (p.returncode, self.log_of(p)))
            time.sleep(0.02)
        raise Fail("mount of %s did not appear" % src)

    def log_of(self, p):
        p.log.flush()
        p.log.seek(0)
        return p.log.read().decode("utf-8", "replace")

    def refused(self, src, *opts, timeout=120):
        """Run ninferfs -f expecting it to refuse: (exit status, log)."""
        mnt, p = self.start(src, *opts)
        try:
            p.wait(timeout)
        except subprocess.TimeoutExpired:
            raise Fail("ninferfs did not refuse %s" % src)
        check(not mounted(mnt), "a refused mount is still mounted", mnt)
        return p.returncode, self.log_of(p)

    def unmount(self, mnt):
        """fusermount3 -u (again while the kernel says busy: a client of ours
        may still be closing a file), then wait for the daemon."""
        err = b""
        for _ in range(50):
            res = subprocess.run(["fusermount3", "-u", mnt], capture_output=True)
            if res.returncode == 0 or not mounted(mnt):
                break
            err = res.stderr
            time.sleep(0.1)
        for _ in range(200):
            if not mounted(mnt):
                break
            time.sleep(0.02)
        check(not mounted(mnt), "still mounted", mnt, err.decode(errors="replace"))
        for p, m in self.procs:
            if m == mnt:
                try:
                    p.wait(30)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()

    def close(self):
        # every mount below our temp dir, also those of daemonized runs
        with open("/proc/mounts", errors="surrogateescape") as f:
            ours = [ln.split()[1] for ln in f if ln.split()[1].startswith(self.tmp + "/")]
        for m in ours:
            subprocess.run(["fusermount3", "-u", m], capture_output=True)
            if mounted(m):
                subprocess.run(["umount", "-l", m], capture_output=True)
        for p, m in self.procs:
            if mounted(m):
                subprocess.run(["fusermount3", "-u", m], capture_output=True)
                if mounted(m):
                    subprocess.run(["umount", "-l", m], capture_output=True)
            if p.poll() is None:
                try:
                    p.wait(2)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
            p.log.close()
        shutil.rmtree(self.tmp, ignore_errors=True)


def read(path):
    with open(path, "rb", buffering=0) as f:
        return f.read()


def pread(path, n, off, norah=False):
    fd = os.open(path, os.O_RDONLY)
    try:
        if norah:
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_RANDOM)
        out = b""
        while len(out) < n:
            chunk = os.pread(fd, n - len(out), off + len(out))
            if not chunk:
                break
            out += chunk
        return out
    finally:
        os.close(fd)


def errno_of(fn, *args):
    """The errno name fn(*args) fails with, or None."""
    try:
        fn(*args)
    except OSError as e:
        return errno.errorcode.get(e.errno, str(e.errno))
    return None


def load_json(path):
    with open(path, "rb") as f:
        return json.load(f)


def drop_cache(path):
    fd = os.open(path, os.O_RDONLY)
    os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
    os.close(fd)


def tree(mnt):
    """Every path below mnt (relative), directories with a trailing '/'."""
    out = set()
    for root, dirs, files in os.walk(mnt):
        rel = os.path.relpath(root, mnt)
        for d in dirs:
            out.add(os.path.normpath(os.path.join(rel, d)) + "/")
        for f in files:
            out.add(os.path.normpath(os.path.join(rel, f)))
    return out


def main(body):
    """Run body(env); exit 0/1; mounts and packages removed on any exit
    (also on meson's SIGTERM at a timeout)."""
    for k, v in (("NINFERFS", NINFERFS), ("CB_FIXTURE", CB_FIXTURE)):
        if not v:
            print("%s is not set" % k)
            sys.exit(1)
    env = Env()
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    rc = 1
    try:
        body(env)
        rc = 0
    except Fail as e:
        import traceback
        traceback.print_exc()
        print("FAIL:", e)
    finally:
        env.close()
    if rc == 0:
        print("ok")
    sys.exit(rc)
