#!/usr/bin/env python3
"""tests/calbin/schema.py FIXTURE CALBIN_CHECK — validation.json has the
shape of seed §11 plus issue 12's additions, written here from the spec
with plain asserts: schema, package, model, submodels with inputs and
outputs, memory, graph with op counts and histogram, supply_chain,
findings {gate, code, severity, class, where {file, line, key}, evidence},
gates (A-F and service: status and counts that agree with the findings),
reproducible (false exactly when a BLOCKED_REPRODUCIBILITY finding stands)
and verdict (fail exactly when an error stands)."""
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cblib import main  # noqa: E402

GATES = ["A", "B", "C", "D", "E", "F", "service"]
CLASSES = {"ERROR", "BLOCKED_REPRODUCIBILITY", "WARNING_VENDOR", "WARNING_SERVICE", None}


def is_int(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_buf(b, public):
    keys = {"name", "shape", "dtype", "bytes"} | (set() if public else {"vaddr_ping", "vaddr_pong"})
    assert set(b) == keys, (set(b), keys)
    assert isinstance(b["name"], str) and isinstance(b["dtype"], str) and is_int(b["bytes"])
    assert all(is_int(d) and d >= 0 for d in b["shape"])
    if not public:
        assert re.fullmatch(r"0x[0-9a-f]+", b["vaddr_ping"]) and re.fullmatch(r"0x[0-9a-f]+", b["vaddr_pong"])


def check(doc, public, readable=True):
    assert doc["schema"] == "calculet-package-validation/v1"
    t = doc["tool"]
    assert t["name"] == "calbin-check" and isinstance(t["version"], str) and is_int(t["exit_status"])
    assert ("argv" in t) is (not public) and t["public"] is public
    top = {"schema", "tool", "findings", "gates", "reproducible", "verdict",
           "package", "model", "submodels", "memory", "graph", "supply_chain"}
    assert set(doc) == top, set(doc) ^ top
    for f in doc["findings"]:
        assert set(f) == {"gate", "code", "severity", "class", "where", "evidence"}, f
        assert f["gate"] in GATES, f
        assert re.fullmatch(r"[A-Z][A-Z0-9]*(_[A-Z0-9]+)+", f["code"]), f
        assert f["severity"] in ("error", "warning", "info") and f["class"] in CLASSES, f
        assert set(f["where"]) == {"file", "line", "key"}, f
        w = f["where"]
        assert w["file"] is None or (isinstance(w["file"], str) and not w["file"].startswith("/")), f
        assert w["line"] is None or (is_int(w["line"]) and w["line"] >= 1), f
        assert w["key"] is None or isinstance(w["key"], str), f
        assert isinstance(f["evidence"], str) and f["evidence"], f
        if f["class"] == "ERROR":
            assert f["severity"] == "error", f
        if f["class"] in ("BLOCKED_REPRODUCIBILITY", "WARNING_VENDOR", "WARNING_SERVICE"):
            assert f["severity"] == "warning", f
    g = doc["gates"]
    assert set(g) == set(GATES), set(g)
    for name in GATES:
        x = g[name]
        assert x["status"] in ("passed", "failed", "not_run"), x
        for sev, key in (("error", "errors"), ("warning", "warnings"), ("info", "infos")):
            n = sum(1 for f in doc["findings"] if f["gate"] == name and f["severity"] == sev)
            assert x[key] == n, (name, key, x[key], n)
        if readable and name != "F":
            assert x["status"] == ("failed" if x["errors"] else "passed"), (name, x)
    assert g["F"]["status"] == "not_run" and isinstance(g["F"]["reason"], str)
    warn = sorted(f["code"] for f in doc["findings"] if f["severity"] == "warning")
    assert sorted(c["code"] for c in g["F"]["carry_forward"]) == warn
    blocked = any(f["class"] == "BLOCKED_REPRODUCIBILITY" for f in doc["findings"])
    assert doc["reproducible"] is (readable and not blocked), doc["reproducible"]
    errors = any(f["severity"] == "error" for f in doc["findings"])
    warnings = any(f["severity"] == "warning" for f in doc["findings"])
    want = "fail" if errors else "pass_with_warnings" if warnings else "pass"
    assert doc["verdict"] == want, (doc["verdict"], want)
    assert t["exit_status"] == (8 if any(f["code"] == "PKG_UNREADABLE" for f in doc["findings"])
                                else 4 if errors else 1 if warnings else 0)
    if not readable:
        return
    p = doc["package"]
    assert isinstance(p["name"], str) and is_int(p["files"]) and is_int(p["bytes"])
    assert p["sha256_manifest"] is None or re.fullmatch(r"[0-9a-f]{64}", p["sha256_manifest"])
    assert p["integrity"] in ("verified", "partial", "not_proven")
    m = doc["model"]
    for k in ("batch", "max_seq", "chips"):
        assert m[k] is None or is_int(m[k]), (k, m[k])
    for s in doc["submodels"]:
        assert isinstance(s["name"], str) and s["kind"] in ("prefill", "decode"), s
        for b in s["inputs"] + s["outputs"]:
            check_buf(b, public)
        assert s["partition_report"] in ("ok", "refused")
        for c in s["commands"]:
            assert is_int(c["commands"]) and is_int(c["data_bytes"]) and c["engine"] in ("cpu", "pld")
    mem = doc["memory"]
    assert isinstance(mem["parameter_bytes"], dict) and isinstance(mem["reservations"], dict)
    assert mem["kv_bytes"] is None or is_int(mem["kv_bytes"])
    for r in mem["reservations"].values():
        assert set(r) == ({"size"} if public else {"size", "vaddr"}), r
    assert ("overlap_list" in mem) is (not public)
    assert mem["capacity_report"] in ("ok", "refused")
    gr = doc["graph"]
    assert isinstance(gr["op_histogram"], dict)
    for k in ("prefill_ops", "decode_ops"):
        assert k not in gr or gr[k] is None or is_int(gr[k])
    sc = doc["supply_chain"]
    assert isinstance(sc["onnx_hash"], list) and isinstance(sc["compiler_commits"], dict)


def body(env):
    for variant in ("clean", "sample", "map_overlap", "unknown_dtype", "two_prefill", "kv_unpaired",
                    "symlink_passwd", "yaml_alias_bomb"):
        pkg = env.package(variant, "--small")
        for public in (False, True):
            rc, doc = env.report(pkg, *(["--public"] if public else []))
            check(doc, public)
        if variant == "clean":
            assert doc["graph"]["prefill_ops"] == 1496 and doc["graph"]["decode_ops"] == 1398
            assert doc["memory"]["kv_bytes"] == 4026531840
            assert sum(doc["graph"]["op_histogram"]["prefill"].values()) == 1496
            assert doc["graph"]["op_histogram"]["decode"]["nbu_flash_attention"] == 48
            assert [s["kind"] for s in doc["submodels"]] == ["prefill", "decode"]
            assert [b["name"] for b in doc["submodels"][0]["inputs"]] == ["input_ids", "position_ids"]
            assert doc["submodels"][1]["outputs"][0]["shape"] == [1, 1, 151936]
        print("ok ", variant)
    rc, doc = env.report(os.path.join(env.tmp, "absent"))
    check(doc, False, readable=False)


if __name__ == "__main__":
    main(body)
