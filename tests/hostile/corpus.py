#!/usr/bin/env python3
"""Hostile-input corpus: malformed NInfer v3 artifact sets, kept as code.

Each case starts from one small valid set (3 tensors, a resource, two
components, parts bindings, a use with an auxiliary, payload split over an
entry and one part), breaks exactly one rule, and names the finding code and
severity ninfer-check must report for it and whether a mount must be refused.

The framing is written here from the spec, independently of the C writer,
so the corpus is also a second implementation of seed §3.

    corpus.py list
    corpus.py make NAME DIR            write one case to DIR/h.ninfer (+ part)
    corpus.py run --check BIN [--mount BIN] [--strace] [--only NAME...]

`run` writes every case to a fresh directory, runs ninfer-check --json on it
(bounded in time), checks exit status, code and severity, then (with
--mount) tries a mount: directory errors must be refused with nothing
mounted, file/object findings must mount (and are unmounted again).  With
--strace it also checks, for the path cases, that no file outside the
case's directory was opened.  Ends with 'hostile: N passed, M failed'.
"""
import argparse
import copy
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ENTRY = "h.ninfer"
PART = ENTRY + ".part-0001"
AID = bytes(range(16))


def base_directory():
    return {
        "components": {
            "text": {"config": {"architectures": ["Qwen3_5ForCausalLM"],
                                "model_type": "qwen3_5_text", "hidden_size": 8},
                     "resources": {"tokenizer.json": "r.tok"}},
            "mtp": {"config": {"architectures": ["Qwen3_5MTP"]}, "target": "text"},
        },
        "objects": [
            {"id": "w.embed", "shape": [16, 8], "format": "bf16",
             "layout": "contiguous_le_v1", "offset": 0, "bytes": 256, "kind": "tensor"},
            {"id": "w.q4", "shape": [2, 64], "format": "q4_g64_fp16",
             "layout": "row_split_k128_v1", "offset": 256, "bytes": 264, "kind": "tensor"},
            {"id": "w.i32", "shape": [4], "format": "int32",
             "layout": "contiguous_le_v1", "offset": 768, "bytes": 16, "kind": "tensor"},
            {"id": "r.tok", "encoding": "raw_bytes_v1", "offset": 784, "bytes": 10,
             "kind": "resource"},
        ],
        "bindings": {
            "text/embed": {"object": "w.embed"},
            "text/q": {"parts": [{"object": "w.q4", "range": [0, 64]}]},
            "text/k": {"parts": [{"object": "w.q4", "range": [64, 128]}]},
            "text/ids": {"object": "w.i32"},
        },
        "uses": [
            {"parameter": "text/q", "input": "text/layers/0/x",
             "activation_policy": "AllowA8",
             "auxiliaries": {"activation_input_divisor":
                             {"parts": [{"object": "w.i32", "range": [0, 1]}]}}},
        ],
        "metadata": {"name": "hostile-base"},
        "provenance": {},
        "files": [{"path": None, "payload_bytes": 512},
                  {"path": PART, "payload_bytes": 282}],
    }


class Set:
    """One artifact set being built: directory, JSON text, header fields."""

    def __init__(self):
        self.d = base_directory()
        self.text = None          # JSON bytes override
        self.magic = b"NINFER\x00\x03"
        self.json_bytes = None    # header override
        self.entry_delta = 0      # bytes added (+) or cut (-) at the entry's end
        self.header_cut = None    # truncate the entry to this many bytes
        self.part_magic = b"NINPRT\x00\x03"
        self.part_index = 1
        self.part_aid = AID
        self.part_delta = 0
        self.part_missing = False

    def write(self, dirname):
        text = self.text
        if text is None:
            text = json.dumps(self.d, separators=(",", ":"), ensure_ascii=False).encode()
        jb = (32 + len(text) + 4095) // 4096 * 4096 - 32
        text = text + b" " * (jb - len(text))
        eps = 32 + jb
        hdr_jb = jb if self.json_bytes is None else self.json_bytes
        b0 = 512
        entry = (self.magic + hdr_jb.to_bytes(8, "little") + AID + text +
                 b"\0" * (eps + b0 - 32 - len(text)))
        if self.entry_delta > 0:
            entry += b"\0" * self.entry_delta
        elif self.entry_delta < 0:
            entry = entry[:self.entry_delta]
        if self.header_cut is not None:
            entry = entry[:self.header_cut]
        with open(os.path.join(dirname, ENTRY), "wb") as f:
            f.write(entry)
        if not self.part_missing:
            part = (self.part_magic + self.part_index.to_bytes(8, "little") +
                    self.part_aid + b"\0" * (4096 - 32) + b"\0" * 282)
            if self.part_delta > 0:
                part += b"\0" * self.part_delta
            elif self.part_delta < 0:
                part = part[:self.part_delta]
            with open(os.path.join(dirname, PART), "wb") as f:
                f.write(part)


def obj(s, oid):
    return next(o for o in s.d["objects"] if o["id"] == oid)


def raw_json(s, mutate):
    """Edit the serialised JSON text (for things a dict cannot express)."""
    text = json.dumps(s.d, separators=(",", ":"), ensure_ascii=False).encode()
    s.text = mutate(text)


# name -> (mutation, code, severity, mount refused?)
CASES = {}


def case(name, code, severity="error", refused=True):
    def deco(fn):
        CASES[name] = (fn, code, severity, refused)
        return fn
    return deco


# ---- framing (seed §3.1) --------------------------------------------------
@case("header-bad-magic", "HEADER_BAD_MAGIC")
def _(s): s.magic = b"NINFEX\x00\x03"


@case("header-bad-version", "HEADER_BAD_VERSION")
def _(s): s.magic = b"NINFER\x00\x02"


@case("header-truncated", "HEADER_TRUNCATED")
def _(s): s.header_cut = 20


@case("header-json-bytes-zero", "HEADER_JSON_BYTES_ZERO")
def _(s): s.json_bytes = 0


@case("header-json-past-eof", "HEADER_JSON_PAST_EOF")
def _(s): s.json_bytes = 1 << 40


@case("header-json-bytes-max", "HEADER_JSON_PAST_EOF")
def _(s): s.json_bytes = (1 << 64) - 1


@case("json-trailing-garbage", "JSON_TRAILING_GARBAGE")
def _(s): raw_json(s, lambda t: t + b" }x")


@case("json-syntax", "JSON_SYNTAX")
def _(s): raw_json(s, lambda t: t[:-1])


@case("json-invalid-utf8", "JSON_INVALID_UTF8")
def _(s): raw_json(s, lambda t: t.replace(b"hostile-base", b"host\xffile"))


@case("json-nul-escape", "JSON_NUL")
def _(s): raw_json(s, lambda t: t.replace(b"hostile-base", b"host\\u0000ile"))


@case("json-duplicate-member", "JSON_DUPLICATE_MEMBER")
def _(s): raw_json(s, lambda t: t.replace(b'{"id":"w.embed",', b'{"id":"w.embed","id":"w.x",'))


@case("json-too-deep", "JSON_TOO_DEEP")
def _(s): raw_json(s, lambda t: t.replace(b'"provenance":{}',
                                          b'"provenance":{"x":' + b"[" * 5000 + b"]" * 5000 + b"}"))


@case("entry-too-long", "ENTRY_BAD_LENGTH")
def _(s): s.entry_delta = 1


@case("entry-too-short", "ENTRY_BAD_LENGTH")
def _(s): s.entry_delta = -1


# ---- root record (seed §4.1) ---------------------------------------------
@case("root-unknown-field", "FIELD_UNKNOWN")
def _(s): s.d["extra"] = 1


for _f in ("components", "objects", "bindings", "uses", "files"):
    case(f"root-missing-{_f}", "FIELD_MISSING")(lambda s, f=_f: s.d.pop(f))


@case("components-empty", "COMPONENTS_EMPTY")
def _(s):
    s.d["components"] = {}
    s.d["uses"] = []


@case("objects-empty", "OBJECTS_EMPTY")
def _(s):
    s.d["objects"] = []
    s.d["bindings"] = {}
    s.d["uses"] = []
    s.d["components"]["text"].pop("resources")


@case("files-empty", "FILES_EMPTY")
def _(s): s.d["files"] = []


@case("components-wrong-type", "FIELD_TYPE")
def _(s): s.d["components"] = []


@case("metadata-wrong-type", "FIELD_TYPE")
def _(s): s.d["metadata"] = "x"


@case("uses-wrong-type", "FIELD_TYPE")
def _(s): s.d["uses"] = {}


# ---- files table (seed §3.3) ----------------------------------------------
@case("files-entry-path-not-null", "FILES_ENTRY_PATH_NOT_NULL")
def _(s): s.d["files"][0]["path"] = ENTRY


for _n, _p in (("dotdot-slash", "../x"), ("slash", "a/b"), ("backslash", "a\\b"),
               ("dot", "."), ("dotdot", ".."), ("absolute", "/etc/passwd"), ("empty", "")):
    case(f"files-path-{_n}", "FILES_PATH_INVALID")(
        lambda s, p=_p: s.d["files"][1].__setitem__("path", p))


@case("files-path-is-entry", "FILES_PATH_IS_ENTRY")
def _(s): s.d["files"][1]["path"] = ENTRY


@case("files-path-duplicate", "FILES_PATH_DUPLICATE")
def _(s):
    s.d["files"][1]["payload_bytes"] = 141
    s.d["files"].append({"path": PART, "payload_bytes": 141})


@case("files-payload-zero", "INT_ZERO")
def _(s): s.d["files"][1]["payload_bytes"] = 0


@case("files-payload-negative", "INT_NEGATIVE")
def _(s): s.d["files"][1]["payload_bytes"] = -282


@case("files-payload-float", "FIELD_TYPE")
def _(s): s.d["files"][1]["payload_bytes"] = 282.0


@case("files-payload-u64-max", "INT_OUT_OF_RANGE")
def _(s): raw_json(s, lambda t: t.replace(b'"payload_bytes":282', b'"payload_bytes":18446744073709551615'))


@case("files-payload-huge", "INT_OUT_OF_RANGE")
def _(s): raw_json(s, lambda t: t.replace(b'"payload_bytes":282', b'"payload_bytes":99999999999999999999'))


@case("files-unknown-field", "FIELD_UNKNOWN")
def _(s): s.d["files"][1]["sha256"] = "00"


@case("files-path-wrong-type", "FIELD_TYPE")
def _(s): s.d["files"][1]["path"] = 7


# ---- part files (file scope: the mount proceeds) --------------------------
@case("part-missing", "FILE_MISSING", "warning", refused=False)
def _(s): s.part_missing = True


@case("part-bad-magic", "FILE_BAD_MAGIC", refused=False)
def _(s): s.part_magic = b"NINFER\x00\x03"


@case("part-bad-index", "FILE_BAD_INDEX", refused=False)
def _(s): s.part_index = 2


@case("part-other-artifact", "FILE_ARTIFACT_ID_MISMATCH", refused=False)
def _(s): s.part_aid = bytes(16)


@case("part-too-long", "FILE_BAD_LENGTH", refused=False)
def _(s): s.part_delta = 1


@case("part-too-short", "FILE_BAD_LENGTH", refused=False)
def _(s): s.part_delta = -1


# ---- objects (seed §5) -----------------------------------------------------
@case("object-id-duplicate", "OBJECT_ID_DUPLICATE")
def _(s): obj(s, "w.i32")["id"] = "w.q4"


@case("object-id-empty", "ID_EMPTY")
def _(s):
    obj(s, "w.i32")["id"] = ""
    s.d["bindings"].pop("text/ids")
    s.d["uses"] = []


@case("object-overlap", "OBJECT_OVERLAP")
def _(s): obj(s, "w.i32")["offset"] = 512


@case("object-order", "OBJECT_ORDER")
def _(s): s.d["objects"][0], s.d["objects"][1] = s.d["objects"][1], s.d["objects"][0]


@case("object-misaligned", "OBJECT_MISALIGNED")
def _(s): obj(s, "w.i32")["offset"] = 770


@case("object-past-end", "OBJECT_OUT_OF_BOUNDS")
def _(s): obj(s, "r.tok")["bytes"] = 11


@case("object-rank-17", "SHAPE_RANK")
def _(s): obj(s, "w.i32")["shape"] = [1] * 16 + [4]


@case("object-dim-zero", "SHAPE_DIM_ZERO")
def _(s): obj(s, "w.i32")["shape"] = [0, 4]


@case("object-shape-overflow", "SHAPE_OVERFLOW")
def _(s): obj(s, "w.i32")["shape"] = [1 << 40, 1 << 40]


@case("object-kind-unknown", "OBJECT_KIND_UNKNOWN")
def _(s): obj(s, "w.i32")["kind"] = "blob"


@case("object-unknown-field", "FIELD_UNKNOWN")
def _(s): obj(s, "w.i32")["dtype"] = "int32"


@case("object-bytes-bool", "FIELD_TYPE")
def _(s): obj(s, "w.i32")["bytes"] = True


@case("object-missing-format", "FIELD_MISSING")
def _(s): obj(s, "w.i32").pop("format")


@case("object-format-unknown", "OBJECT_FORMAT_UNKNOWN", "warning", refused=False)
def _(s): obj(s, "w.i32")["format"] = "int64"


@case("object-layout-unknown", "OBJECT_LAYOUT_UNKNOWN", "warning", refused=False)
def _(s): obj(s, "w.q4")["layout"] = "ternary_row_k128_v1"


@case("object-size-mismatch", "OBJECT_SIZE_MISMATCH", refused=False)
def _(s): obj(s, "w.embed")["bytes"] = 250


@case("object-divisors-not-allowed", "OBJECT_DIVISORS_NOT_ALLOWED", refused=False)
def _(s): obj(s, "w.q4")["divisors"] = 2


@case("object-pair-not-allowed", "OBJECT_PAIR_NOT_ALLOWED", refused=False)
def _(s): obj(s, "w.q4")["layout"] = "contiguous_le_v1"


@case("object-bad-shape-for-layout", "OBJECT_BAD_SHAPE", refused=False)
def _(s): obj(s, "w.q4")["shape"] = [128]


@case("resource-encoding-unknown", "OBJECT_ENCODING_UNKNOWN", "warning", refused=False)
def _(s): obj(s, "r.tok")["encoding"] = "gzip_v1"


# ---- bindings, uses, components (seed §4.2, §7, §8, §9) --------------------
@case("binding-object-missing", "BINDING_REF_MISSING")
def _(s): s.d["bindings"]["text/embed"] = {"object": "w.nope"}


@case("binding-to-resource", "BINDING_REF_KIND")
def _(s): s.d["bindings"]["text/embed"] = {"object": "r.tok"}


@case("binding-parts-empty", "BINDING_PARTS_EMPTY")
def _(s): s.d["bindings"]["text/k"] = {"parts": []}


@case("binding-both-forms", "BINDING_FORM")
def _(s): s.d["bindings"]["text/embed"]["parts"] = [{"object": "w.q4", "range": [0, 1]}]


@case("binding-no-form", "BINDING_FORM")
def _(s): s.d["bindings"]["text/embed"] = {}


@case("part-range-past-end", "PART_RANGE_OUT_OF_BOUNDS")
def _(s): s.d["bindings"]["text/k"]["parts"][0]["range"] = [64, 129]


@case("part-range-reversed", "PART_RANGE_REVERSED")
def _(s): s.d["bindings"]["text/k"]["parts"][0]["range"] = [100, 64]


@case("part-range-empty", "PART_RANGE_EMPTY")
def _(s): s.d["bindings"]["text/k"]["parts"][0]["range"] = [64, 64]


@case("part-object-missing", "BINDING_REF_MISSING")
def _(s): s.d["bindings"]["text/k"]["parts"][0]["object"] = "w.gone"


@case("part-unknown-field", "FIELD_UNKNOWN")
def _(s): s.d["bindings"]["text/k"]["parts"][0]["stride"] = 2


@case("part-range-three", "FIELD_TYPE")
def _(s): s.d["bindings"]["text/k"]["parts"][0]["range"] = [64, 100, 128]


@case("use-parameter-missing", "USE_PARAMETER_MISSING")
def _(s): s.d["uses"][0]["parameter"] = "text/nope"


@case("use-duplicate", "USE_DUPLICATE")
def _(s): s.d["uses"].append(copy.deepcopy(s.d["uses"][0]))


@case("use-policy-unknown", "USE_POLICY_UNKNOWN")
def _(s): s.d["uses"][0]["activation_policy"] = "allowA8"


@case("use-unknown-field", "FIELD_UNKNOWN")
def _(s): s.d["uses"][0]["weight"] = 1


@case("use-missing-input", "FIELD_MISSING")
def _(s): s.d["uses"][0].pop("input")


@case("use-aux-dangling", "BINDING_REF_MISSING")
def _(s): s.d["uses"][0]["auxiliaries"]["activation_input_divisor"] = {"object": "w.none"}


@case("resource-ref-missing", "RESOURCE_REF_MISSING")
def _(s): s.d["components"]["text"]["resources"]["tokenizer.json"] = "r.none"


@case("resource-ref-to-tensor", "RESOURCE_REF_KIND")
def _(s): s.d["components"]["text"]["resources"]["tokenizer.json"] = "w.embed"


@case("target-missing", "COMPONENT_TARGET_MISSING")
def _(s): s.d["components"]["mtp"]["target"] = "vision"


@case("component-unknown-field", "FIELD_UNKNOWN")
def _(s): s.d["components"]["mtp"]["weights"] = {}


@case("component-missing-config", "FIELD_MISSING")
def _(s): s.d["components"]["mtp"].pop("config")


@case("proposal-not-text", "PROPOSAL_NOT_TEXT")
def _(s): s.d["components"]["mtp"]["proposal"] = {"domain": "full"}


@case("proposal-bad-domain", "PROPOSAL_DOMAIN")
def _(s): s.d["components"]["text"]["proposal"] = {"domain": "partial"}


@case("proposal-indexed-no-rows", "PROPOSAL_ROWS")
def _(s): s.d["components"]["text"]["proposal"] = {"domain": "indexed"}


@case("proposal-full-with-rows", "PROPOSAL_ROWS")
def _(s): s.d["components"]["text"]["proposal"] = {"domain": "full", "rows": 4}


# ---------------------------------------------------------------------------
def make(name, dirname):
    s = Set()
    CASES[name][0](s)
    s.write(dirname)
    return os.path.join(dirname, ENTRY)


def opened_outside(log, dirname):
    """Paths opened (successfully or not) that are outside the case's dir."""
    bad = []
    allowed = ("/usr/", "/lib", "/etc/ld.so", "/proc/", "/sys/", "/dev/", "/etc/localtime")
    with open(log) as f:
        for line in f:
            if "open" not in line or '"' not in line:
                continue
            path = line.split('"')[1]
            if path.startswith(allowed) or path.startswith(dirname) or not path.startswith("/"):
                # relative names are resolved against the case's directory fd
                continue
            bad.append(path)
    return bad


def try_mount(ninferfs, entry, mnt):
    """Mount (daemonizing); return (exit status, mounted?, stderr)."""
    os.makedirs(mnt, exist_ok=True)
    try:
        p = subprocess.run([ninferfs, entry, mnt], capture_output=True, timeout=20)
        rc, err = p.returncode, p.stderr.decode(errors="replace")
    except subprocess.TimeoutExpired:
        rc, err = -1, "timeout"
    mounted = os.path.ismount(mnt)
    if mounted:
        subprocess.run(["fusermount3", "-u", mnt], capture_output=True, timeout=20)
        for _ in range(50):
            if not os.path.ismount(mnt):
                break
            time.sleep(0.1)
    return rc, mounted, err


def run_base(args, root):
    """The unbroken set must be clean and must mount: the cases mean nothing otherwise."""
    d = os.path.join(root, "base")
    os.makedirs(d)
    s = Set()
    s.write(d)
    entry = os.path.join(d, ENTRY)
    p = subprocess.run([args.check, "--json", entry], capture_output=True, timeout=30)
    problems = []
    if p.returncode != 0 or json.loads(p.stdout)["findings"]:
        problems.append(f"base set not clean: exit {p.returncode}: {p.stdout[:300]!r}")
    if args.mount:
        rc, mounted, err = try_mount(args.mount, entry, os.path.join(root, "base.mnt"))
        if rc != 0 or not mounted:
            problems.append(f"base set did not mount (exit {rc}): {err[-300:]}")
    return problems


def run_case(name, args, root):
    _, code, severity, refused = CASES[name]
    d = os.path.join(root, name)
    os.makedirs(d)
    entry = make(name, d)
    problems = []
    cmd = [args.check, "--json", entry]
    try:
        p = subprocess.run(cmd, capture_output=True, timeout=30)
    except subprocess.TimeoutExpired:
        return ["ninfer-check timed out"]
    want_exit = 1 if severity == "warning" else 4
    if p.returncode != want_exit:
        problems.append(f"exit {p.returncode}, want {want_exit}")
    try:
        rep = json.loads(p.stdout)
        hits = [f for f in rep["findings"] if f["code"] == code]
        if not hits:
            problems.append(f"no {code} in {[f['code'] for f in rep['findings']]}")
        elif hits[0]["severity"] != severity:
            problems.append(f"{code} has severity {hits[0]['severity']}, want {severity}")
        elif not hits[0].get("where") or not hits[0].get("evidence"):
            problems.append(f"{code} lacks where/evidence")
    except (ValueError, KeyError, TypeError) as e:
        problems.append(f"bad JSON report: {e}: {p.stdout[:200]!r}")
    if p.returncode < 0 or b"Sanitizer" in p.stderr:
        problems.append(f"crashed: {p.stderr.decode(errors='replace')[-400:]}")
    if args.strace and ("path" in name or "part" in name):
        # A second, traced run: LeakSanitizer cannot work under ptrace, so
        # leaks are judged by the untraced run above and not here.
        trace = os.path.join(root, name + ".strace")
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = (env.get("ASAN_OPTIONS", "") + ":detect_leaks=0").lstrip(":")
        try:
            subprocess.run(["strace", "-f", "-qq", "-e", "trace=open,openat,openat2", "-o", trace]
                           + cmd, capture_output=True, timeout=60, env=env)
            outside = opened_outside(trace, d)
            if outside:
                problems.append(f"opened outside the set's directory: {outside}")
        except subprocess.TimeoutExpired:
            problems.append("ninfer-check under strace timed out")
    if args.mount:
        rc, mounted, err = try_mount(args.mount, entry, os.path.join(root, name + ".mnt"))
        if refused and (rc == 0 or mounted):
            problems.append(f"mount not refused (exit {rc})")
        if refused and code not in err:
            problems.append(f"refused mount did not print {code}")
        if not refused and (rc != 0 or not mounted):
            problems.append(f"mount failed (exit {rc}): {err[-300:]}")
    return problems


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    m = sub.add_parser("make")
    m.add_argument("name")
    m.add_argument("dir")
    r = sub.add_parser("run")
    r.add_argument("--check", required=True)
    r.add_argument("--mount")
    r.add_argument("--strace", action="store_true")
    r.add_argument("--only", nargs="*")
    a = ap.parse_args()
    if a.cmd == "list":
        for n, (_, code, sev, refused) in CASES.items():
            print(f"{n:32} {sev:8} {code:28} {'refused' if refused else 'mounts'}")
        return 0
    if a.cmd == "make":
        os.makedirs(a.dir, exist_ok=True)
        print(make(a.name, a.dir))
        return 0
    if a.strace and not shutil.which("strace"):
        # scripts/setup installs it; a silent skip would pass without checking
        print("corpus.py: --strace given but strace is not installed", file=sys.stderr)
        return 2
    root = tempfile.mkdtemp(prefix="nf-hostile.")
    passed = failed = 0
    try:
        for name in ["base"] + list(a.only or CASES):
            problems = run_base(a, root) if name == "base" else run_case(name, a, root)
            if problems:
                failed += 1
                print(f"FAIL {name}: " + "; ".join(problems))
            else:
                passed += 1
    finally:
        shutil.rmtree(root, ignore_errors=True)
    print(f"hostile: {passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
