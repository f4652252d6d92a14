#!/usr/bin/env python3
"""tests/remote/reports.py — oracles of the remote ninfer-check tests.

  reports.py same LOCAL.json REMOTE.json
      The two validation reports (ninferfs-validation/v1) say the same:
      exit status, verdict, artifact (but its entry), and the findings in
      order, each with the same severity, scope, code and where, and the
      same evidence except for the findings that say why a file could not
      be opened or read (FILE_MISSING, FILE_UNREADABLE, ENTRY_UNREADABLE:
      a path against a URL and an HTTP status).  tool.argv and
      artifact.entry differ by nature and are not compared.

  reports.py ranges LOG URLDIR DIR [--once]
      The nginx access log (ngx.sh's format) against the files of DIR
      served under URLDIR: prints one line per file "NAME REQUESTS RANGES"
      and the totals; with --once, fails unless every file's ranges are
      disjoint and cover [0, size) exactly (every byte fetched once).

  reports.py sent LOG
      The sum of $bytes_sent (bodies and response headers) and the number
      of requests.

  reports.py spans LOG TARGET [END]
      The ranges nginx served for TARGET (a request path), sorted, as
      "A-B,..." (B exclusive); with END, fails unless they are disjoint
      and cover [0, END) exactly.

  reports.py claim OUT JSON_BYTES early|late:N
      A sparse entry OUT whose header claims JSON_BYTES of JSON that is
      broken at byte 6 ('{"a": @') or after an N-byte string ('{"pad":
      "xxx...", @'); the rest is zeros.  Written here from seed section
      3.1, independently of the C code.

  reports.py pad SRCDIR/ENTRY OUTDIR BYTES
      A copy of the set in OUTDIR whose JSON is BYTES longer: a string of
      BYTES 'x' as metadata.pad (an open object: still a valid set; the
      entry is laid out again, the parts copied).

  reports.py rename-part SRCDIR/ENTRY OUTDIR INDEX NAME
      A copy of the set in OUTDIR with part INDEX named NAME (in the files
      table and on disk).

  reports.py corpus CORPUS.py CHECK WWW URL LOG
      Every case of the hostile corpus written to WWW/corpus/NAME/, checked
      by CHECK locally and at URL/corpus/NAME/h.ninfer, with and without
      --deep: the reports must be the same (as `same`), and nginx must have
      been asked only for the case's own two file names (a part path that
      breaks seed section 3.3 is never requested).
"""
import json
import os
import re
import subprocess
import sys

LOOSE = {"FILE_MISSING", "FILE_UNREADABLE", "ENTRY_UNREADABLE"}
LINE = re.compile(r'^(\S+) "(\S+) (\S+) [^"]*" "([^"]*)" "([^"]*)" (\d+) (\d+)$')


def same(local, remote):
    """a list of differences (empty: the same)"""
    diffs = []
    for k in ("verdict",):
        if local[k] != remote[k]:
            diffs.append("%s: %r vs %r" % (k, local[k], remote[k]))
    if local["tool"]["exit_status"] != remote["tool"]["exit_status"]:
        diffs.append("exit_status: %r vs %r" % (local["tool"]["exit_status"],
                                                remote["tool"]["exit_status"]))
    la = dict(local["artifact"]); ra = dict(remote["artifact"])
    la.pop("entry"); ra.pop("entry")
    if la != ra:
        diffs.append("artifact: %r vs %r" % (la, ra))
    lf, rf = local["findings"], remote["findings"]
    if len(lf) != len(rf):
        diffs.append("%d findings vs %d: %r vs %r" % (len(lf), len(rf), lf, rf))
    for a, b in zip(lf, rf):
        keys = ("severity", "scope", "code", "where")
        if a["code"] not in LOOSE:
            keys += ("evidence",)
        for k in keys:
            if a[k] != b[k]:
                diffs.append("finding %s %s: %r vs %r" % (a["code"], k, a[k], b[k]))
    return diffs


SETTLE = "/.nf-settle/"


def parse_log(path):
    """the requests of an access log, less ngx.sh's sentinels"""
    out = []
    for line in open(path, encoding="utf-8", errors="replace"):
        m = LINE.match(line.strip())
        if not m:
            raise SystemExit("unparsed log line: %r" % line)
        conn, method, target, rng, _, status, sent = m.groups()
        if not target.startswith(SETTLE):
            out.append((method, target, rng, int(status), int(sent)))
    return out


def settle(url, log):
    """every request made so far is in the log (ngx.sh's ngx_settle)"""
    import random
    import time
    import urllib.error
    import urllib.request
    path = "%s%d" % (SETTLE, random.randrange(1 << 30))
    try:
        urllib.request.urlopen(url + path, timeout=5).close()
    except urllib.error.HTTPError:
        pass   # a 404, as it should be
    for _ in range(250):
        if ("GET %s " % path) in open(log, encoding="utf-8", errors="replace").read():
            return
        time.sleep(0.02)
    raise SystemExit("nginx did not log the sentinel %s" % path)


def cmd_ranges(log, urldir, d, once):
    reqs = parse_log(log)
    bad = 0
    total_req = total_body = 0
    for name in sorted(os.listdir(d)):
        p = os.path.join(d, name)
        if not os.path.isfile(p):
            continue
        size = os.path.getsize(p)
        target = urldir.rstrip("/") + "/" + name
        spans = []
        for method, t, rng, status, _ in reqs:
            if t != target:
                continue
            m = re.match(r"bytes=(\d+)-(\d+)$", rng)
            if method != "GET" or not m or status != 206:
                raise SystemExit("%s: %s %s %s %d: not a range GET" % (name, method, t, rng, status))
            spans.append((int(m.group(1)), int(m.group(2)) + 1))
        spans.sort()
        body = sum(b - a for a, b in spans)
        total_req += len(spans)
        total_body += body
        print("%s %d %s" % (name, len(spans), ",".join("%d-%d" % s for s in spans)))
        if once:
            at = 0
            for a, b in spans:
                if a != at:
                    print("  %s: %s at %d (after %d)" % (name, "overlap" if a < at else "hole", a, at))
                    bad += 1
                at = b
            if at != size:
                print("  %s: covered to %d of %d" % (name, at, size))
                bad += 1
    print("total %d requests %d body bytes" % (total_req, total_body))
    return 1 if bad else 0


def cmd_sent(log):
    reqs = parse_log(log)
    print("%d %d" % (sum(r[4] for r in reqs), len(reqs)))
    return 0


def cmd_spans(log, target, end):
    spans = []
    for method, t, rng, status, _ in parse_log(log):
        if t == target:
            m = re.match(r"bytes=(\d+)-(\d+)$", rng)
            if not m:
                raise SystemExit("%s: %s %s %d: not a range" % (t, method, rng, status))
            spans.append((int(m.group(1)), int(m.group(2)) + 1))
    spans.sort()
    print(",".join("%d-%d" % sp for sp in spans))
    if end is None:
        return 0
    at = 0
    for a, b in spans:
        if a != at:
            print("%s at %d (after %d)" % ("overlap" if a < at else "hole", a, at))
            return 1
        at = b
    if at != end:
        print("covered to %d of %d" % (at, end))
        return 1
    return 0


def cmd_claim(out, claim, how):
    if how == "early":
        text = b'{"a": @'
    else:
        text = b'{"pad": "' + b"x" * int(how.split(":")[1]) + b'", @'
    with open(out, "wb") as f:
        f.write(b"NINFER\0\3" + claim.to_bytes(8, "little") + bytes(range(16)) + text)
        f.truncate((32 + claim + 4095) // 4096 * 4096)
    return 0


def read_set(entry):
    data = open(entry, "rb").read()
    assert data[:8] == b"NINFER\0\3"
    n = int.from_bytes(data[8:16], "little")
    start = (32 + n + 4095) // 4096 * 4096
    return data[16:32], json.loads(data[32:32 + n]), data[start:]


def write_set(srcdir, d, aid, payload, outdir, name, renames):
    os.makedirs(outdir, exist_ok=True)
    text = json.dumps(d, separators=(",", ":")).encode()
    start = (32 + len(text) + 4095) // 4096 * 4096
    with open(os.path.join(outdir, name), "wb") as f:
        f.write(b"NINFER\0\3" + len(text).to_bytes(8, "little") + aid + text)
        f.write(b"\0" * (start - 32 - len(text)))
        f.write(payload)
    for rec in d["files"][1:]:
        old = renames.get(rec["path"], rec["path"])
        with open(os.path.join(srcdir, old), "rb") as src, \
                open(os.path.join(outdir, rec["path"]), "wb") as dst:
            dst.write(src.read())


def cmd_pad(entry, outdir, nbytes):
    aid, d, payload = read_set(entry)
    d.setdefault("metadata", {})["pad"] = "x" * nbytes
    write_set(os.path.dirname(entry), d, aid, payload, outdir, os.path.basename(entry), {})
    return 0


def cmd_rename_part(entry, outdir, index, newname):
    aid, d, payload = read_set(entry)
    old = d["files"][index]["path"]
    d["files"][index]["path"] = newname
    write_set(os.path.dirname(entry), d, aid, payload, outdir, os.path.basename(entry),
              {newname: old})
    return 0


def run_json(cmd):
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if b"runtime error:" in p.stderr or b"Sanitizer" in p.stderr:
        raise SystemExit("sanitizer report from %r:\n%s" % (cmd, p.stderr.decode(errors="replace")))
    try:
        doc = json.loads(p.stdout)
    except ValueError:
        raise SystemExit("%r: exit %d, no JSON report: %r" % (cmd, p.returncode, p.stderr))
    if doc["tool"]["exit_status"] != p.returncode:
        raise SystemExit("%r: exit %d, report says %d" % (cmd, p.returncode, doc["tool"]["exit_status"]))
    return doc


def cmd_corpus(corpus, check, www, url, log):
    import importlib.util
    spec = importlib.util.spec_from_file_location("corpus", corpus)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    names = [l.split()[0] for l in subprocess.run([sys.executable, corpus, "list"], check=True,
                                                   stdout=subprocess.PIPE, text=True).stdout.splitlines()]
    failed = 0
    for name in names:
        d = os.path.join(www, "corpus", name)
        os.makedirs(d)
        mod.make(name, d)
        allowed = {"/corpus/%s/%s" % (name, f) for f in ("h.ninfer", "h.ninfer.part-0001")}
        for deep in ([], ["--deep"]):
            settle(url, log)
            open(log, "w").close()
            loc = run_json([check, "--json"] + deep + [os.path.join(d, "h.ninfer")])
            rem = run_json([check, "--json"] + deep + ["%s/corpus/%s/h.ninfer" % (url, name)])
            settle(url, log)
            diffs = same(loc, rem)
            asked = {t for _, t, _, _, _ in parse_log(log)}
            if asked - allowed:
                diffs.append("requested %s" % sorted(asked - allowed))
            if diffs:
                failed += 1
                print("FAIL %s %s:\n  %s" % (name, " ".join(deep), "\n  ".join(diffs)))
    print("corpus: %d cases, %d runs differ" % (len(names), failed))
    return 1 if failed else 0


def main(argv):
    if len(argv) >= 3 and argv[0] == "same":
        diffs = same(json.load(open(argv[1])), json.load(open(argv[2])))
        for d in diffs:
            print(d)
        return 1 if diffs else 0
    if len(argv) >= 4 and argv[0] == "ranges":
        return cmd_ranges(argv[1], argv[2], argv[3], "--once" in argv[4:])
    if len(argv) == 2 and argv[0] == "sent":
        return cmd_sent(argv[1])
    if len(argv) in (3, 4) and argv[0] == "spans":
        return cmd_spans(argv[1], argv[2], int(argv[3]) if len(argv) == 4 else None)
    if len(argv) == 4 and argv[0] == "claim":
        return cmd_claim(argv[1], int(argv[2]), argv[3])
    if len(argv) == 4 and argv[0] == "pad":
        return cmd_pad(argv[1], argv[2], int(argv[3]))
    if len(argv) == 5 and argv[0] == "rename-part":
        return cmd_rename_part(argv[1], argv[2], int(argv[3]), argv[4])
    if len(argv) == 6 and argv[0] == "corpus":
        return cmd_corpus(*argv[1:])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
