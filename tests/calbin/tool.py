#!/usr/bin/env python3
"""tests/calbin/tool.py FIXTURE CALBIN_CHECK — calbin-check as a program:
exit statuses 0/1/4/8/16 (ninfer-check's), --help/--version, the text
report's summary, --fast vs --hash: the digests equal sha256sum's (a real
program as the oracle), a wrong digest of a file over 64 MiB is found by
--hash only."""
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cblib import MODEL, codes, findings, main  # noqa: E402


def body(env):
    def status(*args):
        return subprocess.run([env.check] + list(args), capture_output=True).returncode

    clean = env.package("clean", "--small")
    # usage: 16
    assert status() == 16
    assert status(clean, clean) == 16
    assert status(clean, "--bogus") == 16
    assert status(clean, "--fast", "--hash") == 16
    assert status("--help") == 0 and status("-V") == 0
    out = subprocess.run([env.check, "--version"], capture_output=True, text=True).stdout
    assert out.startswith("calbin-check "), out
    # could not read: 8 (no such directory; a regular file)
    assert status(os.path.join(env.tmp, "absent")) == 8
    rc, doc = env.report(os.path.join(clean, "hparam.yaml"))
    assert rc == 8 and findings(doc, "PKG_UNREADABLE")[0]["where"]["file"] is None
    assert doc["gates"]["A"]["status"] == "failed" and doc["gates"]["C"]["status"] == "not_run"
    # 0, 1, 4 and the text summary
    rc, out = env.run(clean)
    text = out.decode()
    assert rc == 0, rc
    last = text.strip().split("\n")[-1]
    assert last.endswith("0 errors, 0 warnings; reproducible: yes; pass"), last
    assert "prefill 1496 ops, decode 1398 ops, KV 4026531840 bytes" in last, last
    assert "gates: A passed, B passed, C passed, D passed, E passed, service passed, F not_run" in text
    rc, out = env.run(env.package("smodel_type", "--small"))
    assert rc == 1 and b"warning META_SMODEL_TYPE  " in out, out
    rc, out = env.run(env.package("map_past_end", "--small"))
    assert rc == 4 and b"error   MAP_RANGE  model_memory_reserved_info.txt:" in out

    # --hash: every regular file's digest equals sha256sum's.
    rc, doc = env.report(clean, "--hash")
    assert rc == 0 and doc["package"]["integrity"] == "verified", doc["package"]["integrity"]
    listed = {f["path"]: f for f in doc["package"]["file_list"]}
    names = sorted(p for p, f in listed.items())
    res = subprocess.run(["sha256sum", "--"] + names, cwd=clean, capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    oracle = {l[66:]: l[:64] for l in res.stdout.splitlines()}
    for p, f in listed.items():
        assert f["sha256"] == oracle[p], (p, f["sha256"], oracle[p])
        assert f["integrity"] == ("computed" if p == "SHA256SUMS" else "verified"), (p, f)
    assert doc["package"]["sha256_manifest"] == oracle["SHA256SUMS"]
    # --fast verifies the small digests too (all of a --small package)
    rc, doc = env.report(clean)
    assert all(f["integrity"] in ("verified", "computed") for f in doc["package"]["file_list"])

    # A wrong digest of a 65 MiB file: --fast cannot see it, --hash can.
    big = env.package("big_hash_wrong", "--small")
    rc, doc = env.report(big, "--fast")
    assert rc == 0 and codes(doc) == [], codes(doc)
    onnx = [f for f in doc["package"]["file_list"] if f["path"] == "qwen3_30b_a3b.onnx"][0]
    assert onnx["integrity"] == "not_verified" and onnx["sha256"] is None, onnx
    rc, doc = env.report(big, "--hash")
    assert rc == 4 and codes(doc) == ["HASH_MISMATCH"], codes(doc)
    f = findings(doc, "HASH_MISMATCH")[0]
    assert f["where"]["file"] == "SHA256SUMS" and f["where"]["key"] == "qwen3_30b_a3b.onnx", f
    assert not findings(doc, "HASH_NOT_VERIFIED")
    rc, doc = env.report(env.package("big_file", "--small"), "--hash")
    assert rc == 0 and doc["package"]["integrity"] == "verified"
    assert not findings(doc, "SUPPLY_ONNX_NOT_VERIFIED")
    # no SHA256SUMS: --hash still reports every digest
    rc, doc = env.report(env.package("no_hash_manifest", "--small"), "--hash")
    assert rc == 1 and all(f["sha256"] for f in doc["package"]["file_list"])
    assert doc["package"]["name"] == MODEL


if __name__ == "__main__":
    main(body)
