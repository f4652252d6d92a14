#!/usr/bin/env python3
"""tests/cbmount/variants.py — every hostile variant of cb-fixture --list
(issue 12) mounted or refused as man ninferfs.5 says: a package with a
Gate A, B or C error (as calbin-check --json reports it) is refused with
exit status 4, the findings on stderr and nothing left mounted; -o lenient
mounts it; any other package mounts without it.  Every mount that comes up
shows package/ files cmp-equal to the originals, params/ files equal to
their block ranges with the map line as xattrs, and devices/ reads equal to
the Python model; validation.json is calbin-check's.

Run as `variants.py K/N` it takes every N-th variant from the K-th (0 <= K <
N): meson runs the shards as separate tests beside each other, so the 90
mounts use both cores; the shards together still cover every variant."""
import os
import shutil
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mountlib import CB_FIXTURE, check, main  # noqa: E402
import oracle  # noqa: E402


def variants():
    out = subprocess.run([CB_FIXTURE, "--list"], capture_output=True, text=True).stdout
    return [ln.split()[0] for ln in out.splitlines() if ln.strip()]


def gate_errors(doc):
    return sorted({f["code"] for f in doc["findings"]
                   if f["severity"] == "error" and f["gate"] in ("A", "B", "C")})


def shard():
    if len(sys.argv) < 2:
        return 0, 1
    k, n = (int(x) for x in sys.argv[1].split("/"))
    if not 0 <= k < n:
        raise SystemExit("variants.py: shard %s: want K/N with 0 <= K < N" % sys.argv[1])
    return k, n


def body(env):
    names = variants()
    check(len(names) >= 90, "variants", len(names))
    k, n = shard()
    names = names[k::n]
    refused = mounted = 0
    for v in names:
        pkg = env.package(v, "--small")
        doc = oracle.calbin_check(pkg)
        errs = gate_errors(doc)
        opts = ()
        if errs:
            rc, log = env.refused(pkg)
            check(rc == 4, v, "exit", rc, "want 4:", log[-400:])
            check("refused" in log and all(e in log for e in errs), v,
                  "the findings are not on stderr", errs, log[-400:])
            refused += 1
            opts = ("-o", "lenient")
        mnt = env.mount(pkg, *opts)
        model = oracle.model_of(pkg)
        oracle.check_package(mnt, model)
        oracle.check_params(mnt, model, use_dd=False)
        oracle.check_devices(mnt, model, reads=20, seed=len(v))
        oracle.check_reports(mnt, model, internal=doc)
        env.unmount(mnt)
        shutil.rmtree(os.path.dirname(pkg))
        mounted += 1
        print("ok  %-22s %s" % (v, "refused (%s), lenient mounts" % ",".join(errs) if errs
                                else "mounts"))
    print("ok  shard %d/%d, %d variants: %d refused without -o lenient, %d mounts checked" %
          (k, n, len(names), refused, mounted))


if __name__ == "__main__":
    main(body)
