"""tests/cbmount/oracle.py — the checks the calbin mount tests share, each
against an independent oracle: the package's own files (cmp, dd), the
model of cbmodel.py (params, devices, xattrs), PyYAML (manifest.json,
ops.json), the metadata and dump text parsed here, calbin-check --json."""
import json
import os
import random
import re
import subprocess

import yaml

from cbmodel import Model
from mountlib import CALBIN_CHECK, check, load_json, pread, read

SEEK_DATA, SEEK_HOLE = 3, 4


def xattr(path, name):
    return os.getxattr(path, name).decode()


def check_package(mnt, model, public=False):
    """package/ is the package: every regular file byte-equal (cmp), every
    directory; nothing else; user.calbin.kind as validation.json says."""
    hidden = model.address_files() if public else set()
    want = {p + ("/" if t == "d" else "") for p, (t, _) in model.files.items() if p not in hidden}
    got = set()
    root = os.path.join(mnt, "package")
    for r, dirs, files in os.walk(root):
        rel = os.path.relpath(r, root)
        got |= {os.path.normpath(os.path.join(rel, d)) + "/" for d in dirs}
        got |= {os.path.normpath(os.path.join(rel, f)) for f in files}
    check(got == want, "package/ differs: extra", sorted(got - want)[:5], "missing",
          sorted(want - got)[:5])
    n = 0
    for p in sorted(want):
        if p.endswith("/"):
            continue
        a, b = os.path.join(root, p), os.path.join(model.pkg, p)
        check(os.stat(a).st_size == os.stat(b).st_size, "size of package/" + p)
        res = subprocess.run(["cmp", a, b], capture_output=True)
        check(res.returncode == 0, "cmp package/%s: %s" % (p, res.stdout + res.stderr))
        n += 1
    return n


def check_kinds(mnt, validation, public=False):
    kinds = {f["path"]: f["kind"] for f in validation["package"]["file_list"]}
    n = 0
    for p, k in kinds.items():
        path = os.path.join(mnt, "package", p)
        if not os.path.isfile(path):
            continue
        check(xattr(path, "user.calbin.kind") == k, "user.calbin.kind of", p)
        n += 1
    check(n > 0, "no package file with a kind")
    return n


def dd(block, off, size):
    res = subprocess.run(["dd", "if=" + block, "iflag=skip_bytes,count_bytes", "skip=%d" % off,
                          "count=%d" % size, "status=none"], capture_output=True)
    check(res.returncode == 0, "dd", block, res.stderr)
    return res.stdout


def check_params(mnt, model, use_dd=True, sample=None):
    """params/ holds exactly the model's files; each equals dd of its block
    range; its xattrs are its map line."""
    want = model.params()
    got = {p for p in walk_files(os.path.join(mnt, "params"), "params")}
    check(got == set(want), "params/ differs: extra", sorted(got - set(want))[:5], "missing",
          sorted(set(want) - got)[:5])
    # the directories: every chip, every reservation
    chips = model.tree_chips()
    check(sorted(os.listdir(os.path.join(mnt, "params"))) ==
          sorted("chip%d" % c for c in range(chips)), "params/ chips")
    for c in range(chips):
        check(sorted(os.listdir(os.path.join(mnt, "params", "chip%d" % c))) ==
              sorted(model.reservations), "params/chip%d domains" % c)
    items = sorted(want.items(), key=lambda kv: kv[0])
    if sample is not None and len(items) > sample:
        items = random.Random(7).sample(items, sample)
    for p, ln in items:
        path = os.path.join(mnt, p)
        check(os.stat(path).st_size == ln.size, p, "size", os.stat(path).st_size, ln.size)
        body = read(path)
        ref = dd(os.path.join(model.pkg, ln.file), ln.offset, ln.size) if use_dd else model.param_bytes(ln)
        check(body == ref, p, "differs from its block range")
        attrs = {a: xattr(path, a) for a in os.listxattr(path)}
        exp = {"user.calbin.file": ln.file, "user.calbin.offset": "0x%x" % ln.offset,
               "user.calbin.size": "0x%x" % ln.size, "user.calbin.vaddr": "0x%016x" % ln.vaddr,
               "user.calbin.chip_mask": ln.mask_text(), "user.calbin.domain": ln.domain,
               "user.calbin.line": str(ln.lineno)}
        check(attrs == exp, p, "xattrs", attrs, "want", exp)
    return len(items)


def walk_files(root, prefix):
    for r, _, files in os.walk(root):
        for f in files:
            yield os.path.normpath(os.path.join(prefix, os.path.relpath(r, root), f))


def seek_walk(path):
    """[begin, end) data intervals by SEEK_DATA / SEEK_HOLE."""
    fd = os.open(path, os.O_RDONLY)
    out, off = [], 0
    try:
        while True:
            try:
                a = os.lseek(fd, off, SEEK_DATA)
            except OSError as e:
                check(e.errno == 6, "SEEK_DATA", path, off, e)   # ENXIO: no more data
                break
            b = os.lseek(fd, a, SEEK_HOLE)
            check(b > a, "SEEK_HOLE did not move", path, a, b)
            out.append([a, b])
            off = b
    finally:
        os.close(fd)
    return out


def read_offsets(img, rng, n):
    """Offsets and lengths worth reading: piece edges, inside data, anywhere."""
    picks = []
    edges = [x for off, ln, _, _ in img.pieces for x in (off, off + ln)]
    for _ in range(n):
        k = rng.randrange(3)
        if k == 0 and edges:
            off = max(0, rng.choice(edges) + rng.randrange(-4096, 4096))
        elif k == 1 and img.data:
            a, b = rng.choice(img.data)
            off = rng.randrange(a, b)
        else:
            off = rng.randrange(img.size)
        length = rng.choice([1, 7, 4096, 65536, 300000, rng.randrange(1, 1 << 20)])
        picks.append((min(off, img.size), length))
    return picks + [(0, 4096), (max(0, img.size - 4096), 8192), (img.size, 10)]


def check_devices(mnt, model, reads=100, seed=1):
    """devices/ images: sizes, xattrs, random reads against the model, the
    SEEK_DATA/SEEK_HOLE walk against the mapped intervals."""
    rng = random.Random(seed)
    chips = model.tree_chips()
    check(sorted(os.listdir(os.path.join(mnt, "devices"))) ==
          sorted("chip%d" % c for c in range(chips)), "devices/ chips")
    total = 0
    for c, d in model.images():
        img = model.image(c, d)
        path = os.path.join(mnt, img.path())
        check(os.stat(path).st_size == img.size, path, "size")
        attrs = {a: xattr(path, a) for a in os.listxattr(path)}
        check(json.loads(attrs.pop("user.calbin.file")) == img.files(), path, "user.calbin.file")
        check(json.loads(attrs.pop("user.calbin.overlaps")) == img.overlap_entries(), path,
              "user.calbin.overlaps")
        exp = {"user.calbin.offset": "0x0", "user.calbin.size": "0x%x" % img.size,
               "user.calbin.vaddr": "0x%016x" % img.base,
               "user.calbin.chip_mask": "%08x %08x %08x" % ((1 << c) >> 64 & 0xffffffff,
                                                            (1 << c) >> 32 & 0xffffffff,
                                                            (1 << c) & 0xffffffff),
               "user.calbin.domain": d, "user.calbin.lines": str(len(img.lines))}
        check(attrs == exp, path, "xattrs", attrs, exp)
        for off, n in read_offsets(img, rng, reads):
            got = pread(path, n, off)
            check(got == img.read(off, n), path, "read at", off, "length", n, "differs")
            total += 1
        walk = seek_walk(path)
        check(walk == img.data, path, "SEEK walk", walk[:4], "want", img.data[:4], len(walk),
              len(img.data))
    return total


def calbin_check(pkg, *opts):
    res = subprocess.run([CALBIN_CHECK, pkg, "--json"] + list(opts), capture_output=True)
    return json.loads(res.stdout)


def without_tool(doc):
    doc = dict(doc)
    doc.pop("tool")
    return doc


def check_reports(mnt, model, public=False, internal=None):
    """validation(.public).json are calbin-check --json (--public) but for
    "tool"; the tool says ninferfs.  internal: calbin-check --json's report
    when the caller has it."""
    pub = load_json(os.path.join(mnt, "validation.public.json"))
    check(without_tool(pub) == without_tool(calbin_check(model.pkg, "--public")),
          "validation.public.json differs from calbin-check --json --public")
    check(pub["tool"]["name"] == "ninferfs" and pub["tool"]["public"] is True and
          "argv" not in pub["tool"], "validation.public.json tool", pub["tool"])
    if public:
        check(not os.path.exists(os.path.join(mnt, "validation.json")), "validation.json in public")
        return pub
    full = load_json(os.path.join(mnt, "validation.json"))
    check(without_tool(full) == without_tool(internal or calbin_check(model.pkg)),
          "validation.json differs from calbin-check --json")
    check(full["tool"]["name"] == "ninferfs" and full["tool"]["argv"][0].endswith("ninferfs"),
          "validation.json tool", full["tool"])
    return full


def check_memory(mnt, model, validation):
    mem = load_json(os.path.join(mnt, "memory.json"))
    base = dict(mem)
    for k in ("device_overlaps", "overlap_rule"):
        base.pop(k)
    want = json.loads(json.dumps(validation["memory"]))
    for e in want.get("overlap_list", []):
        e["wins"] = e["line_b"]
    for path, x in want["parameter_bytes"]["by_file"].items():
        lines = sorted((ln.offset, ln.offset + ln.size) for ln in model.lines
                       if ln.valid and ln.file == path and ln.size)
        gaps, reach = [], 0
        for a, b in lines + [(x["file_bytes"], x["file_bytes"])]:
            if a > reach:
                gaps.append([reach, a])
            reach = max(reach, b)
        x["uncovered_list"] = gaps
    check(base == want, "memory.json differs from validation.json's memory + the mount's lists")
    dev = []
    for c, d in model.images():
        img = model.image(c, d)
        dev += [dict(chip=c, domain=d, **e) for e in img.overlap_entries()]
    check(mem["device_overlaps"] == dev, "device_overlaps", mem["device_overlaps"][:3], dev[:3])
    return len(dev)


def meta_lines(path):
    with open(path, "rb") as f:
        return f.read().decode().split("\n")


BUF = re.compile(r"^(ibuf|obuf) (\S+) shape \[([0-9,]*)\] type (\S+) vaddr (0x[0-9a-f]+) "
                 r"(0x[0-9a-f]+) size ([0-9]+)$")
DTYPES = {"bfloat16": 2, "float16": 2, "float32": 4, "int32": 4, "int8": 1, "uint8": 1,
          "int64": 8, "bool": 1}


def expect_bufs(path, public):
    ins, outs = [], []
    for no, line in enumerate(meta_lines(path), 1):
        m = BUF.match(line)
        if not m:
            continue
        dims = [int(x) for x in m.group(3).split(",")] if m.group(3) else []
        db = DTYPES.get(m.group(4))
        prod = 1
        for x in dims:
            prod *= x
        e = {"name": m.group(2), "shape": dims, "dtype": m.group(4), "dtype_bytes": db,
             "bytes": int(m.group(7)), "size_ok": None if db is None else prod * db == int(m.group(7))}
        if not public:
            e["vaddr_ping"] = "0x%x" % int(m.group(5), 16)
            e["vaddr_pong"] = "0x%x" % int(m.group(6), 16)
        e["line"] = no
        (outs if m.group(1) == "obuf" else ins).append(e)
    return ins, outs


CMD_DEC = r"(?:0|[1-9][0-9]*)"
CMD = re.compile(r"^cmdId=(%s) chipMask95_64=0x[0-9a-f]{8} chipMask63_32=0x[0-9a-f]{8} "
                 r"chipMask31_0=0x[0-9a-f]{8} srcAddr=0x[0-9a-f]{1,16} dstAddr=0x[0-9a-f]{1,16} "
                 r"dataSize=(%s) syncRegIdx=(%s)$" % (CMD_DEC, CMD_DEC, CMD_DEC))
CMD_TYPE = re.compile(r"^# ([A-Z0-9_]+)$")


def dump_summary(path):
    """Command types and dataSize sums of a command text dump (§7.2, the
    conventions of calbin-check(1)): a comment line names the type of the one
    record line after it; a line of another form counts nothing."""
    by, kind, count, data = {}, None, 0, 0
    for line in meta_lines(path):
        m = CMD_TYPE.match(line)
        if m:
            kind = m.group(1)
            continue
        m = CMD.match(line)
        if m and kind:
            e = by.setdefault(kind, {"commands": 0, "data_bytes": 0})
            e["commands"] += 1
            e["data_bytes"] += int(m.group(2))
            count += 1
            data += int(m.group(2))
        if line:
            kind = None
    return by, count, data


def check_submodels(mnt, model, public=False):
    subs = sorted(p for p, (t, _) in model.files.items()
                  if t == "d" and re.match(r".+_(prefill|decode)_[0-9]+$", p) and "/" not in p)
    check(sorted(os.listdir(os.path.join(mnt, "submodels"))) == subs, "submodels/")
    man = yaml.safe_load(open(os.path.join(model.pkg, model.manifest_path()), "rb"))
    nops = 0
    for s in subs:
        d = os.path.join(mnt, "submodels", s)
        kind = "prefill" if "_prefill_" in s else "decode"
        meta = os.path.join(model.pkg, s, "submodel_memory_reserved_info.txt")
        ins, outs = expect_bufs(meta, public)
        shapes = man["one_model_cfg"][kind]["input_shape"]
        for e in ins:
            e["input_shape"] = shapes.get(e["name"])
        io = load_json(os.path.join(d, "io.json"))
        check(io["inputs"] == ins, s, "io.json inputs", io["inputs"][:1], ins[:1])
        check(io["outputs"] == outs, s, "io.json outputs", io["outputs"], outs)
        check(io["kind"] == kind and io["submodel"] == s, s, "io.json kind")
        md = load_json(os.path.join(d, "metadata.json"))
        check(md["file"] == s + "/submodel_memory_reserved_info.txt", s, "metadata.json file")
        decl = [ln for ln in meta_lines(meta) if re.match(r"^\S+\.(bin|elf) ", ln)]
        check(len(md["declarations"]) == len(decl), s, "declarations", len(md["declarations"]),
              len(decl))
        for e, ln in zip(md["declarations"], decl):
            check(ln.startswith(e["file"] + " ") and ln.endswith(" chip " + e["chip_mask"]), s,
                  "declaration", e, ln)
        check(md["ibuf"] == [{k: v for k, v in e.items() if k != "input_shape"} for e in ins] and
              md["obuf"] == outs, s, "metadata.json buffers")
        for e in md["icsr"]:
            check(("offset" in e) == (not public), s, "icsr offset in public", e)
        opio = os.path.join(model.pkg, s, s + "_op_io_buf_ptr.yaml")
        if public:
            check(not os.path.exists(os.path.join(d, "ops.json")) and
                  not os.path.exists(os.path.join(d, "ops")), s, "ops in public")
        else:
            ref = yaml.safe_load(open(opio, "rb"))
            ops = load_json(os.path.join(d, "ops.json"))
            check(ops == ref, s, "ops.json differs from the YAML (PyYAML)")
            check(list(ops) == list(ref), s, "ops.json key order")
            check(sorted(os.listdir(os.path.join(d, "ops"))) == sorted(k + ".json" for k in ref),
                  s, "ops/ names")
            for k, v in ref.items():
                f = os.path.join(d, "ops", k + ".json")
                check(load_json(f) == v, s, "ops/%s.json" % k)
                want = "{" + ",".join('"%s":[%s]' % (a, ",".join(str(x) for x in t[1]))
                                      for a, t in v.items()) + "}"
                check(xattr(f, "user.calbin.shapes") == want, s, k, "shapes",
                      xattr(f, "user.calbin.shapes"), want)
                nops += 1
        pp = sorted(os.listdir(os.path.join(d, "profparts")))
        want_pp = sorted(re.sub(r".*\.(chip[0-9]+)\.profparts$", r"\1", f)
                         for f in os.listdir(os.path.join(model.pkg, s)) if f.endswith(".profparts"))
        check(pp == want_pp, s, "profparts/", pp, want_pp)
        for c in pp:
            src = read(os.path.join(model.pkg, s, "%s.%s.profparts" % (s, c)))
            lines = [x for x in src.decode().split("\n") if x]
            check(read(os.path.join(d, "profparts", c)).decode() == "".join(x + "\n" for x in lines),
                  s, "profparts", c)
        dumps = sorted(f for f in os.listdir(os.path.join(model.pkg, s))
                       if re.match(r"(cpu|pld)_chip[0-9]+_(ping|pong)\.txt$", f))
        check(sorted(os.listdir(os.path.join(d, "commands"))) ==
              sorted(f[:-4] + ".json" for f in dumps), s, "commands/")
        for f in dumps:
            doc = load_json(os.path.join(d, "commands", f[:-4] + ".json"))
            by, count, data = dump_summary(os.path.join(model.pkg, s, f))
            check(doc["by_type"] == by and doc["commands"] == count and doc["data_bytes"] == data,
                  s, f, "command summary", doc["commands"], count)
            check(list(doc["by_type"]) == list(by), s, f, "type order")
            check(doc["file"] == s + "/" + f and doc["engine"] == f[:3] and
                  doc["chip"] == int(re.search(r"chip([0-9]+)", f).group(1)) and
                  doc["buffer"] == ("pong" if "pong" in f else "ping"), s, f, "command identity")
            b = os.path.join(model.pkg, s, f[:-4] + ".bin")
            if os.path.isfile(b):
                head = open(b, "rb").read(16)
                if head[:8] == b"CALCMD01":
                    check(doc["binary_commands"] == int.from_bytes(head[8:12], "little"), s, f,
                          "binary count")
    return nops


def check_manifest(mnt, model, public=False):
    man = yaml.safe_load(open(os.path.join(model.pkg, model.manifest_path()), "rb"))
    got = load_json(os.path.join(mnt, "manifest.json"))
    if public:
        def pub(v):
            if isinstance(v, dict):
                return {k: pub(x) for k, x in v.items()}
            if isinstance(v, list):
                return [pub(x) for x in v]
            if isinstance(v, str) and (v.startswith("/") or v.startswith("../")):
                return "<path>"
            return v
        man = pub(man)
    check(got == man, "manifest.json differs from the YAML (PyYAML)")
    check(list(got) == list(man), "manifest.json key order")


def model_of(pkg):
    return Model(pkg)
