#!/usr/bin/env python3
"""tests/cbmount/tree.py — the tree of a mounted calbin package (man
ninferfs.5, CALBIN PACKAGES) on the generated sparse package (--small),
each file against an independent oracle: the root listing; package/ files
cmp-equal to the originals; every params/ file equal to dd of its block
range, with its map line as xattrs; devices/ images read at random offsets
against the Python model and walked with SEEK_DATA/SEEK_HOLE; the reports
against calbin-check --json; memory.json; manifest.json and ops.json
against PyYAML; io.json, metadata.json, profparts and command summaries
against the text files parsed here."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mountlib import check, main  # noqa: E402
import oracle  # noqa: E402

ROOT = {"validation.json", "validation.public.json", "manifest.json", "memory.json",
        "files.json", "stats", "package", "params", "devices", "submodels"}


def body(env):
    pkg = env.package("clean", "--small")
    mnt = env.mount(pkg)
    model = oracle.model_of(pkg)
    check(set(os.listdir(mnt)) == ROOT, "root", sorted(os.listdir(mnt)))
    check(len(model.lines) > 900 and all(ln.valid for ln in model.lines), "the model's lines")
    n = oracle.check_package(mnt, model)
    print("ok  package/: %d files cmp-equal" % n)
    validation = oracle.check_reports(mnt, model)
    print("ok  validation.json, validation.public.json = calbin-check --json (--public)")
    print("ok  user.calbin.kind of %d package files" % oracle.check_kinds(mnt, validation))
    n = oracle.check_params(mnt, model)
    print("ok  params/: %d files = dd of their block ranges, xattrs = their map lines" % n)
    n = oracle.check_devices(mnt, model, reads=150)
    print("ok  devices/: %d images, %d random reads = the model, SEEK walks = the mapped "
          "intervals" % (len(model.images()), n))
    oracle.check_memory(mnt, model, validation)
    print("ok  memory.json")
    oracle.check_manifest(mnt, model)
    print("ok  manifest.json = PyYAML of the root manifest")
    n = oracle.check_submodels(mnt, model)
    print("ok  submodels/: io, metadata, ops.json and %d ops/<op>.json, profparts, commands" % n)
    env.unmount(mnt)


if __name__ == "__main__":
    main(body)
