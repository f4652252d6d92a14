#!/usr/bin/env python3
"""tests/cbmount/public.py — -o public exposes no address anywhere (man
ninferfs.5, -o public; seed §11): every address written in the package
(reservation and map vaddrs, ibuf/obuf ping/pong, CSR offsets, op I/O
addresses, command srcAddr/dstAddr) and every absolute source path is
searched in every name, every extended attribute and every file's bytes
of the mount: as 0x hex, as 16 bare hex digits, in decimal, and as 8 bytes
little-endian (the command binaries hold them so); none is found.  The
same search finds them in the mount without -o public (so it can fail).
The tree is the public one: what is hidden is absent, the rest as without
the option."""
import os
import re
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from craft import craft  # noqa: E402
from mountlib import check, main, read  # noqa: E402
import oracle  # noqa: E402

HEX = re.compile(rb"0x([0-9a-fA-F]+)")
BARE16 = re.compile(rb"(?<![0-9a-fA-F])([0-9a-f]{16})(?![0-9a-fA-F])")
DEC = re.compile(rb"(?<![0-9])([0-9]{10,20})(?![0-9])")
PUBLIC_ROOT = {"validation.public.json", "manifest.json", "memory.json", "files.json", "stats",
               "package", "submodels"}


def secrets(pkg):
    """(addresses, absolute paths) of the package's text files."""
    addrs, paths = set(), {os.path.abspath(pkg), os.path.realpath(pkg)}
    for root, _, files in os.walk(pkg):
        for name in files:
            full = os.path.join(root, name)
            if os.path.islink(full):
                paths.add(os.readlink(full))
                continue
            if not name.endswith((".txt", ".yaml", ".profparts")):
                continue
            with open(full, "rb") as f:
                for line in f:
                    for h in HEX.findall(line):
                        addrs.add(int(h, 16))
                    for m in re.finditer(rb"vaddr (?:0x)?([0-9a-f]{16})", line):
                        addrs.add(int(m.group(1), 16))
                    m = re.match(rb"\s*model_path: (/\S+)", line)
                    if m:
                        paths.add(m.group(1).decode())
    return {a for a in addrs if a >= 0x10000}, {p for p in paths if p.startswith("/")}


class Scan:
    def __init__(self, addrs, paths):
        self.addrs = addrs
        self.paths = [p.encode() for p in paths]
        le = [a for a in addrs if a < 1 << 64 and sum(1 for b in a.to_bytes(8, "little") if b) >= 3]
        self.le = np.array(sorted(le), dtype="<u8")
        self.found = []

    def text(self, where, data):
        for h in HEX.findall(data):
            if int(h, 16) in self.addrs:
                self.found.append((where, "0x" + h.decode()))
        for h in BARE16.findall(data):
            if int(h, 16) in self.addrs:
                self.found.append((where, h.decode()))
        for d in DEC.findall(data):
            if int(d) >= 1 << 32 and int(d) in self.addrs:
                self.found.append((where, d.decode()))
        for p in self.paths:
            if p in data:
                self.found.append((where, p.decode()))

    def binary(self, where, data):
        if len(data) < 8 or not len(self.le):
            return
        for k in range(8):
            n = (len(data) - k) // 8
            if n <= 0:
                continue
            words = np.frombuffer(data, dtype="<u8", count=n, offset=k)
            at = np.minimum(np.searchsorted(self.le, words), len(self.le) - 1)
            hit = self.le[at] == words
            if hit.any():
                self.found.append((where, "LE 0x%x" % int(words[np.argmax(hit)])))
                return


def scan_mount(mnt, scan, skip_big=False):
    """Scan every name, xattr and file; skip_big (the control only): not the
    bytes of files over 64 MiB (the 15 GB device images)."""
    files = 0
    for root, dirs, names in os.walk(mnt):
        for n in dirs + names:
            full = os.path.join(root, n)
            rel = os.path.relpath(full, mnt)
            scan.text("name " + rel, n.encode())
            for a in os.listxattr(full):
                v = os.getxattr(full, a)
                scan.text("xattr %s %s" % (rel, a), a.encode() + b" " + v)
                scan.binary("xattr %s %s" % (rel, a), v)
        for n in names:
            full = os.path.join(root, n)
            if os.stat(full).st_size > 64 << 20:
                check(skip_big, "a file over 64 MiB in a public mount", full)
                continue
            data = read(full)
            rel = os.path.relpath(full, mnt)
            scan.text(rel, data)
            scan.binary(rel, data)
            files += 1
    return files


def body(env):
    pkgs = [env.package("clean", "--small"), env.package("sample", "--small"),
            env.package("map_overlap", "--small"), env.package("cmd_syntax", "--small"),
            env.package("symlink_inside", "--small"), craft(env.package("clean", "--small"))]
    total = 0
    for i, pkg in enumerate(pkgs):
        model = oracle.model_of(pkg)
        addrs, paths = secrets(pkg)
        check(len(addrs) > 5000, "addresses", len(addrs))
        opts = ("-o", "lenient") if i == 3 else ()
        if i == 0:   # the control: the search sees them without -o public
            mnt = env.mount(pkg, *opts)
            scan = Scan(addrs, paths)
            scan_mount(mnt, scan, skip_big=True)
            kinds = {w.split()[0] for w, _ in scan.found}
            check(len(scan.found) > 1000 and "name" in kinds and "xattr" in kinds and
                  any(s.startswith("LE ") for _, s in scan.found), "the control found too little",
                  len(scan.found), kinds)
            env.unmount(mnt)
        mnt = env.mount(pkg, "-o", "public", *opts)
        check(set(os.listdir(mnt)) == PUBLIC_ROOT, "public root", sorted(os.listdir(mnt)))
        oracle.check_package(mnt, model, public=True)
        oracle.check_reports(mnt, model, public=True)
        oracle.check_manifest(mnt, model, public=True)
        oracle.check_submodels(mnt, model, public=True)
        scan = Scan(addrs, paths)
        files = scan_mount(mnt, scan)
        check(not scan.found, os.path.basename(os.path.dirname(pkg)), "leaks", scan.found[:10])
        total += len(addrs)
        print("ok  %-16s %d addresses, %d paths: none in %d files, their names and xattrs" %
              (os.path.basename(os.path.dirname(pkg)), len(addrs), len(paths), files))
        env.unmount(mnt)
    check(total > 30000, "total", total)


if __name__ == "__main__":
    main(body)
