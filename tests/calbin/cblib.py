"""tests/calbin/cblib.py — what the calbin tool tests share: generate a
package with cb-fixture, run calbin-check, parse its --json, find the line
of a text in a file of the package (the tests' own oracle for the
findings' sites)."""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

MODEL = "Qwen3-30B-A3B-bs1-ctx40960-2chip"
PREFILL = MODEL + "_prefill_0"
DECODE = MODEL + "_decode_1"


class Env:
    def __init__(self, fixture, check):
        self.fixture = fixture
        self.check = check
        self.tmp = tempfile.mkdtemp(prefix="calbin-test.")

    def close(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def package(self, variant="clean", *extra):
        out = os.path.join(self.tmp, variant + "-" + "-".join(e.strip("-") for e in extra))
        args = [self.fixture, out, "--variant", variant] + list(extra)
        res = subprocess.run(args, capture_output=True, text=True)
        if res.returncode != 0:
            raise AssertionError("cb-fixture %s: %s" % (variant, res.stderr))
        return res.stdout.strip()

    def run(self, pkg, *opts):
        """(exit status, stdout) of calbin-check."""
        res = subprocess.run([self.check, pkg] + list(opts), capture_output=True)
        return res.returncode, res.stdout

    def report(self, pkg, *opts):
        rc, out = self.run(pkg, "--json", *opts)
        doc = json.loads(out.decode("utf-8"))
        assert doc["tool"]["exit_status"] == rc, (doc["tool"]["exit_status"], rc)
        return rc, doc


def line_of(pkg, rel, pattern, nth=1):
    """1-based line of the nth line of pkg/rel matching the regex."""
    rx = re.compile(pattern)
    seen = 0
    with open(os.path.join(pkg, rel), "rb") as f:
        for no, raw in enumerate(f, 1):
            if rx.search(raw.decode("utf-8", "replace")):
                seen += 1
                if seen == nth:
                    return no
    raise AssertionError("%s: no line matches %r" % (rel, pattern))


def findings(doc, code=None, severity=None):
    return [f for f in doc["findings"]
            if (code is None or f["code"] == code) and (severity is None or f["severity"] == severity)]


def codes(doc, severities=("error", "warning")):
    """Sorted list of the codes of the given severities (with repeats)."""
    return sorted(f["code"] for f in doc["findings"] if f["severity"] in severities)


def main(body):
    """Run body(env) with argv [fixture, calbin-check]; exit 0/1.  The
    temporary packages are removed also when meson's timeout sends SIGTERM."""
    import signal
    env = Env(sys.argv[1], sys.argv[2])
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))
    try:
        body(env)
    except AssertionError as e:
        import traceback
        traceback.print_exc()
        print("FAIL:", e)
        sys.exit(1)
    finally:
        env.close()
    print("ok")
