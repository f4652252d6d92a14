"""tests/cbmount/cbmodel.py — an independent model of what a mounted calbin
package must show (man ninferfs.5, CALBIN PACKAGES), built from the
package's files alone: the metadata text parsed here by the grammar of
seed §4 and calbin-check(1)'s CONVENTIONS (never through the C parser), the
chips from the root manifest (PyYAML), the files from os.walk.

    Model(pkg)           the reservations, the map lines and their validity
    .params()            the expected params/ files: path -> line
    .image(chip, dom)    the expected devices/ image: pieces (later line wins),
                         data intervals, overlaps
    .read_image(...)     bytes of the image at any offset, from the blocks
    .package_files()     the expected package/ tree
"""
import os
import re

import yaml

HEX = r"0x[0-9a-f]{1,16}"
DEC = r"(?:0|[1-9][0-9]*)"
RESERVATION = re.compile(r"^(dram|sram|sync)_rsvd vaddr (%s) size (%s)$" % (HEX, DEC))
MAP = re.compile(r"^(\S+) offset (%s) vaddr (%s) size (%s) chip ([0-9a-f]{8}) ([0-9a-f]{8}) "
                 r"([0-9a-f]{8})$" % (HEX, HEX, HEX))
DOMAINS = ("dram", "sram", "sync")
MAX_CHIPS = 96
MAX_DEPTH = 8       # directory levels calbin-check lists (walk.c)


class Line:
    """One parameter-map line (seed §4.3)."""

    def __init__(self, index, lineno, file, offset, vaddr, size, words):
        self.index, self.lineno = index, lineno
        self.file, self.offset, self.vaddr, self.size = file, offset, vaddr, size
        self.words = words                      # the mask words as written, high first
        self.mask = int(words[0], 16) << 64 | int(words[1], 16) << 32 | int(words[2], 16)
        self.valid = False
        self.domain = None

    def chips(self):
        return [c for c in range(MAX_CHIPS) if self.mask >> c & 1]

    def mask_text(self):
        return " ".join(self.words)


def bad_path(p):
    if p.startswith("/"):
        return True
    return any(c in ("", ".", "..") for c in p.split("/"))


class Model:
    def __init__(self, pkg):
        self.pkg = pkg
        self.name = os.path.basename(os.path.normpath(pkg))
        self.files = self._walk()
        self.reservations = {}
        self.lines = []
        self._parse_top()
        self.chips = self._chips()
        for ln in self.lines:
            self._validate(ln)

    # ---- the package's files ----------------------------------------------------

    def _walk(self):
        """path -> ("f", size) for regular files (a symlink resolving inside to
        a regular file counts as one), ("d", 0) for real directories."""
        out = {}
        real_root = os.path.realpath(self.pkg)
        for root, dirs, files in os.walk(self.pkg):
            rel_root = os.path.relpath(root, self.pkg)
            if rel_root != "." and rel_root.count("/") + 1 >= MAX_DEPTH:
                dirs[:] = []          # calbin-check lists 8 levels (PKG_LIMIT)
                continue
            for d in list(dirs):
                full = os.path.join(root, d)
                rel = os.path.normpath(os.path.join(rel_root, d))
                if not os.path.islink(full):
                    out[rel] = ("d", 0)
            for f in files:
                full = os.path.join(root, f)
                rel = os.path.normpath(os.path.join(rel_root, f))
                if os.path.islink(full):
                    target = os.path.realpath(full)
                    if not (target + "/").startswith(real_root + "/") or not os.path.isfile(target):
                        continue
                    if os.path.isabs(os.readlink(full)):
                        continue            # absolute: leads out by the rule
                if os.path.isfile(full):
                    out[rel] = ("f", os.path.getsize(full))
        return out

    def regular(self):
        return sorted(p for p, (t, _) in self.files.items() if t == "f")

    # ---- model_memory_reserved_info.txt ---------------------------------------------

    def _parse_top(self):
        path = os.path.join(self.pkg, "model_memory_reserved_info.txt")
        if not os.path.isfile(path):
            return
        with open(path, "rb") as f:
            text = f.read().decode("utf-8", "replace")
        for lineno, raw in enumerate(text.split("\n"), 1):
            m = RESERVATION.match(raw)
            if m:
                if m.group(1) not in self.reservations:
                    self.reservations[m.group(1)] = (int(m.group(2), 16), int(m.group(3)), lineno)
                continue
            m = MAP.match(raw)
            if m and m.group(1) not in ("dram_rsvd", "sram_rsvd", "sync_rsvd"):
                self.lines.append(Line(len(self.lines), lineno, m.group(1), int(m.group(2), 16),
                                       int(m.group(3), 16), int(m.group(4), 16),
                                       (m.group(5), m.group(6), m.group(7))))

    def _chips(self):
        """device_cfg.chip_nums when both submodels agree, else the file names'."""
        man = self.manifest_path()
        nums = set()
        if man:
            try:
                doc = yaml.safe_load(open(os.path.join(self.pkg, man), "rb"))
                for sub in (doc.get("one_model_cfg") or {}).values():
                    v = ((sub or {}).get("device_cfg") or {}).get("chip_nums")
                    if isinstance(v, int) and not isinstance(v, bool):
                        nums.add(v)
            except Exception:
                nums = set()
        if len(nums) == 1 and 1 <= min(nums) <= MAX_CHIPS:
            return min(nums)
        chips = 0
        for p in self.files:
            for m in re.finditer(r"(?:param_blk|_chip|\.chip)([0-9]+)", os.path.basename(p)):
                chips = max(chips, int(m.group(1)) + 1)
        return chips

    def manifest_path(self):
        tops = sorted(p for p, (t, _) in self.files.items()
                      if t == "f" and "/" not in p and p.endswith(".yaml") and p != "hparam.yaml")
        if self.name + ".yaml" in tops:
            return self.name + ".yaml"
        return tops[0] if tops else None

    def _validate(self, ln):
        f = None if bad_path(ln.file) else self.files.get(ln.file)
        if not f or f[0] != "f":
            return
        fsize = f[1]
        if ln.offset > fsize or ln.size > fsize - ln.offset:
            return
        if ln.mask == 0 or (self.chips and ln.mask >> self.chips):
            return
        dom = None
        for d in DOMAINS:
            r = self.reservations.get(d)
            if r and r[0] <= ln.vaddr < r[0] + r[1]:
                dom = d
        if dom is None:
            return
        base, size, _ = self.reservations[dom]
        if ln.vaddr + ln.size > base + size:
            return
        ln.domain, ln.valid = dom, True

    def tree_chips(self):
        if self.chips:
            return self.chips
        n = 0
        for ln in self.lines:
            if ln.valid and ln.mask:
                n = max(n, ln.mask.bit_length())
        return n

    # ---- params/ ----------------------------------------------------------------------

    def params(self):
        """path (relative to the mount) -> Line, in line order."""
        out, seen = {}, {}
        for ln in self.lines:
            if not ln.valid:
                continue
            for c in ln.chips():
                key = (c, ln.domain, ln.vaddr)
                k = seen.get(key, 0)
                seen[key] = k + 1
                name = "0x%016x" % ln.vaddr + ("~%d" % k if k else "")
                out["params/chip%d/%s/%s" % (c, ln.domain, name)] = ln
        return out

    def param_bytes(self, ln):
        with open(os.path.join(self.pkg, ln.file), "rb") as f:
            f.seek(ln.offset)
            return f.read(ln.size)

    # ---- devices/ ----------------------------------------------------------------------

    def image(self, chip, dom):
        return Image(self, chip, dom)

    def images(self):
        return [(c, d) for c in range(self.tree_chips()) for d in DOMAINS if d in self.reservations]

    # ---- package/ and -o public --------------------------------------------------------

    def address_files(self):
        """The package files -o public hides (ninferfs.5, -o public)."""
        out = set()
        man = self.manifest_path()
        if man:
            out.add(man)
        for p, (t, _) in self.files.items():
            if t != "f":
                continue
            parts = p.split("/")
            if parts == ["model_memory_reserved_info.txt"]:
                out.add(p)
            if len(parts) == 2 and re.match(r".+_(prefill|decode)_[0-9]+$", parts[0]):
                d, n = parts
                if n == "submodel_memory_reserved_info.txt" or n == d + "_op_io_buf_ptr.yaml":
                    out.add(p)
                if re.match(r"(cpu|pld)_chip[0-9]+_(ping|pong)\.(bin|txt)$", n):
                    out.add(p)
        return out


class Image:
    """devices/chip<chip>/<dom>: the valid lines of that chip and domain laid at
    vaddr - base, the later line showing where they overlap."""

    def __init__(self, model, chip, dom):
        self.model, self.chip, self.dom = model, chip, dom
        self.base, self.size, _ = model.reservations[dom]
        lines = [ln for ln in model.lines
                 if ln.valid and ln.domain == dom and ln.size and ln.mask >> chip & 1]
        self.lines = lines
        bounds = sorted({x for ln in lines for x in (ln.vaddr - self.base,
                                                      ln.vaddr - self.base + ln.size)})
        by_start = sorted(lines, key=lambda ln: ln.vaddr)
        active, nxt = [], 0
        self.pieces, self.overlaps = [], []    # (offset, length, line, file_offset)
        for a, b in zip(bounds, bounds[1:]):
            while nxt < len(by_start) and by_start[nxt].vaddr - self.base <= a:
                active.append(by_start[nxt])
                nxt += 1
            active = [ln for ln in active if ln.vaddr - self.base + ln.size > a]
            if not active:
                continue
            w = max(active, key=lambda ln: ln.index)
            fo = w.offset + a - (w.vaddr - self.base)
            last = self.pieces[-1] if self.pieces else None
            if last and last[2] is w and last[0] + last[1] == a:
                self.pieces[-1] = (last[0], last[1] + b - a, w, last[3])
            else:
                self.pieces.append((a, b - a, w, fo))
            if len(active) >= 2:
                lo = self.overlaps[-1] if self.overlaps else None
                if lo and lo[2] is w and lo[3] == len(active) and lo[0] + lo[1] == a:
                    self.overlaps[-1] = (lo[0], lo[1] + b - a, w, lo[3])
                else:
                    self.overlaps.append((a, b - a, w, len(active)))
        self.data = []
        for off, n, _, _ in self.pieces:
            if self.data and self.data[-1][1] == off:
                self.data[-1][1] = off + n
            else:
                self.data.append([off, off + n])

    def path(self):
        return "devices/chip%d/%s" % (self.chip, self.dom)

    def read(self, off, n):
        """The image's bytes [off, off + n) (cut at its size)."""
        n = max(0, min(n, self.size - off))
        out = bytearray(n)
        for p_off, p_len, ln, fo in self.pieces:
            a, b = max(off, p_off), min(off + n, p_off + p_len)
            if a >= b:
                continue
            with open(os.path.join(self.model.pkg, ln.file), "rb") as f:
                f.seek(fo + a - p_off)
                chunk = f.read(b - a)
            out[a - off:b - off] = chunk.ljust(b - a, b"\0")
        return bytes(out)

    def files(self):
        return sorted({ln.file for _, _, ln, _ in self.pieces})

    def overlap_entries(self):
        return [{"vaddr": "0x%x" % (self.base + off), "offset": off, "bytes": n,
                 "lines": count, "wins": w.lineno} for off, n, w, count in self.overlaps]
