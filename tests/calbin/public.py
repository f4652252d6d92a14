#!/usr/bin/env python3
"""tests/calbin/public.py FIXTURE CALBIN_CHECK — the sanitized report
(--public, seed §11 "去掉 vaddr、源绝对路径和命令地址") leaks nothing: every
address written in the package (reservation and map vaddrs, ibuf/obuf
ping/pong, op I/O addresses, command srcAddr/dstAddr), every absolute path
(model_path, symlink targets, the package's own path) is searched in the
--public JSON and text, in hex and decimal, and none is found; the internal
report does hold them (so the search can fail)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cblib import main  # noqa: E402

HEX = re.compile(r"0x[0-9a-f]+")


def addresses(pkg):
    """(addresses, absolute paths) written in the package's text files."""
    addrs, paths = set(), {os.path.abspath(pkg), os.path.realpath(pkg)}
    for root, _, files in os.walk(pkg):
        for name in files:
            full = os.path.join(root, name)
            if os.path.islink(full):
                paths.add(os.readlink(full))
                continue
            if not name.endswith((".txt", ".yaml", ".profparts")):
                continue
            with open(full, errors="replace") as f:
                for line in f:
                    for h in HEX.findall(line):
                        addrs.add(int(h, 16))
                    for m in re.finditer(r"(?:vaddr (?:0x)?)([0-9a-f]{16})", line):
                        addrs.add(int(m.group(1), 16))
                    m = re.match(r"\s*model_path: (/\S+)", line)
                    if m:
                        paths.add(m.group(1))
    return addrs, paths


def leaks(text, addrs, paths):
    found = [h for h in HEX.findall(text)]
    numbers = {int(n) for n in re.findall(r"(?<![0-9a-zA-Z])[0-9]{10,20}(?![0-9a-zA-Z])", text)}
    padded = set(re.findall(r"(?<![0-9a-f])[0-9a-f]{16}(?![0-9a-f])", text))
    for a in addrs:
        if a >= 1 << 32 and a in numbers:
            found.append(str(a))
        if a >= 1 << 16 and ("%016x" % a) in padded:
            found.append("%016x" % a)
    found += [p for p in paths if p in text]
    found += re.findall(r"\"/[^\"]*\"", text)   # any JSON string that is an absolute path
    return found


def body(env):
    total = 0
    for variant in ("clean", "sample", "map_overlap", "map_past_end", "symlink_passwd",
                    "symlink_parent", "cmd_syntax", "unknown_dtype", "meta_hex_no_0x"):
        pkg = env.package(variant, "--small")
        addrs, paths = addresses(pkg)
        assert len(addrs) > 1000, len(addrs)          # every map line, op, command
        rc, internal = env.run(pkg, "--json")
        assert leaks(internal.decode(), addrs, paths), variant   # the oracle can see them
        for opts in (("--json", "--public"), ("--public",)):
            rc, out = env.run(pkg, *opts)
            bad = leaks(out.decode(), addrs, paths)
            assert not bad, (variant, opts, bad[:10])
        total += len(addrs)
        print("ok  %-16s %d addresses, %d paths, none in --public" % (variant, len(addrs), len(paths)))
    assert total > 10000


if __name__ == "__main__":
    main(body)
