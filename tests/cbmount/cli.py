#!/usr/bin/env python3
"""tests/cbmount/cli.py — how ninferfs takes a calbin package (man
ninferfs.1, ninferfs.5 CALBIN PACKAGES): detection, -o format=calbin and
=ninfer, exit statuses (4 refused, 8 cannot read, 16 usage), the
daemonizing mount (the parent exits 0 once the tree answers; a refused
package exits 4 and leaves no mount), and the read-only tree: every change
fails with EROFS, attribute namespaces other than user are EOPNOTSUPP."""
import errno
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mountlib import NINFERFS, check, errno_of, main, mounted  # noqa: E402


def run(*args, timeout=120):
    return subprocess.run([NINFERFS] + list(args), capture_output=True, text=True,
                          timeout=timeout)


def erofs(mnt):
    f = os.path.join(mnt, "package", "version.py")
    p = next(os.path.join(r, n) for r, _, ns in os.walk(os.path.join(mnt, "params")) for n in ns)
    cases = {
        "create": lambda: open(os.path.join(mnt, "package", "new"), "wb"),
        "open for writing": lambda: open(f, "r+b"),
        "unlink": lambda: os.unlink(f),
        "mkdir": lambda: os.mkdir(os.path.join(mnt, "devices", "x")),
        "rename": lambda: os.rename(f, f + ".x"),
        "truncate": lambda: os.truncate(p, 0),
        "chmod": lambda: os.chmod(p, 0o644),
        "setxattr": lambda: os.setxattr(p, "user.calbin.file", b"x"),
        "removexattr": lambda: os.removexattr(p, "user.calbin.file"),
        "symlink": lambda: os.symlink("x", os.path.join(mnt, "package", "l")),
    }
    for what, fn in cases.items():
        try:
            fn()
        except OSError as e:
            check(e.errno == errno.EROFS, what, "failed with", errno.errorcode.get(e.errno))
            continue
        raise AssertionError(what + " succeeded on a read-only tree")
    check(errno_of(os.getxattr, p, "security.selinux") in ("EOPNOTSUPP", "ENOTSUP"), "security namespace")
    check(errno_of(os.getxattr, p, "user.nothing") == "ENODATA", "missing attribute")
    return len(cases)


def body(env):
    pkg = env.package("clean", "--small")
    # detection, and forced
    for opts in ((), ("-o", "format=calbin")):
        mnt = env.mount(pkg, *opts)
        check(os.path.isdir(os.path.join(mnt, "params")), opts, "not a calbin tree")
        env.unmount(mnt)
    print("ok  detected, and -o format=calbin")
    n = 0
    mnt = env.mount(pkg)
    n = erofs(mnt)
    env.unmount(mnt)
    print("ok  %d kinds of change fail with EROFS; security.* EOPNOTSUPP; missing ENODATA" % n)
    rc, log = env.refused(pkg, "-o", "format=ninfer")
    check(rc == 8, "format=ninfer on a package directory: exit", rc, log)
    rc, log = env.refused(pkg, "-o", "format=bogus")
    check(rc == 16 and "format" in log, "format=bogus: exit", rc, log)
    empty = os.path.join(env.tmp, "empty")
    os.mkdir(empty)
    rc, log = env.refused(empty)
    check(rc == 8, "a directory that is no package and no NInfer entry: exit", rc, log)
    rc, log = env.refused(empty, "-o", "format=calbin")
    check(rc == 4 and "FILE_MISSING" in log, "format=calbin on an empty directory: exit", rc,
          log[-300:])
    rc, log = env.refused(os.path.join(env.tmp, "nothing"), "-o", "format=calbin")
    check(rc == 8, "a missing directory: exit", rc, log)
    print("ok  -o format=ninfer 8, format=bogus 16, not a package 8, empty forced 4, missing 8")
    # the daemonizing way: the parent exits 0 once the tree is there
    mnt = env.mountpoint()
    res = run(pkg, mnt)
    check(res.returncode == 0, "daemonized mount: exit", res.returncode, res.stderr)
    check(mounted(mnt) and os.path.isdir(os.path.join(mnt, "devices")), "daemonized tree")
    subprocess.run(["fusermount3", "-u", mnt], check=True)
    for _ in range(100):
        if not mounted(mnt):
            break
        time.sleep(0.05)
    check(not mounted(mnt), "still mounted after fusermount3 -u")
    bad = env.package("map_past_end", "--small")
    mnt = env.mountpoint()
    res = run(bad, mnt)
    check(res.returncode == 4 and "MAP_RANGE" in res.stderr and "refused" in res.stderr,
          "daemonized refusal: exit", res.returncode, res.stderr[-300:])
    check(not mounted(mnt), "a refused package left a mount")
    print("ok  daemonized: exit 0 with the tree ready; a refused package exits 4, no mount")


if __name__ == "__main__":
    main(body)
