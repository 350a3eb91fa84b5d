#!/usr/bin/env python3
"""summarize.py EXIT < report.json -- the golden.txt lines of one corpus file from its CheckReport.

Exit status, documents, objects per kind, findings per rule; then each ignored document and each
error with its reason (templated files must say why).
"""
import json
import sys
from collections import Counter


def counts(c):
    return ",".join(f"{k}:{c[k]}" for k in sorted(c)) or "-"


def where(e):
    w = str(e.get("doc", "-"))
    if "itemPath" in e:
        w += "." + e["itemPath"]
    elif "item" in e:
        w += ".items[%d]" % e["item"]
    if "line" in e:
        w += " line %d" % e["line"]
        if "column" in e:
            w += ", column %d" % e["column"]
    return w


def main():
    rc, report = sys.argv[1], json.load(sys.stdin)
    kinds = Counter(r["kind"] or "?" for r in report["results"])
    rules = Counter(f["rule"] for r in report["results"] for f in r["findings"])
    print("exit %s; documents %d; kinds %s; findings %s"
          % (rc, report["summary"]["documents"], counts(kinds), counts(rules)))
    for e in report.get("ignored", []):
        print("ignored %s: %s" % (where(e), e["message"]))
    for e in report["errors"]:
        print("error %s: %s" % (where(e), e["message"]))


if __name__ == "__main__":
    main()
