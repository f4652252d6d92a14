#!/usr/bin/env python3
"""Summarise a meson testlog.json: every check test case and every script
test counts once.  Prints the per-test table, a line for this build, and
appends "passed failed skipped" to the tally file given as third argument."""
import json, re, sys

path, label = sys.argv[1], (sys.argv[2] if len(sys.argv) > 2 else "tests")
checks = re.compile(r"(\d+)%: Checks: (\d+), Failures: (\d+), Errors: (\d+)")
plain = re.compile(r"^(?:[\w-]+: )?(\d+) passed, (\d+) failed", re.M)
passed = failed = skipped = 0
rows = []
with open(path) as f:
    for line in f:
        t = json.loads(line)
        res = t.get("result")
        out = t.get("stdout", "") or ""
        m = None
        for m in checks.finditer(out):
            pass
        if not m:
            for m in plain.finditer(out):
                pass
            if m:  # a script that counts its own cases
                n, bad = int(m.group(1)) + int(m.group(2)), int(m.group(2))
        else:
            n, bad = int(m.group(2)), int(m.group(3)) + int(m.group(4))
        if m:
            if res not in ("OK", "EXPECTEDFAIL") and bad == 0:
                bad = 1  # crashed or timed out after printing
            passed += n - bad if n >= bad else 0
            failed += bad
            rows.append((t["name"], res, f"{n - bad}/{n} cases"))
        elif res == "SKIP":
            skipped += 1
            rows.append((t["name"], res, "skipped"))
        else:
            ok = res in ("OK", "EXPECTEDFAIL")
            passed += ok
            failed += not ok
            rows.append((t["name"], res, "script"))
for name, res, what in rows:
    print(f"  {res:8} {name:40} {what}")
print(f"  ({label}) {passed} cases passed, {failed} failed, {skipped} skipped")
if len(sys.argv) > 3:
    with open(sys.argv[3], "a") as f:
        f.write(f"{passed} {failed} {skipped}\n")
