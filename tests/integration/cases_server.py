#!/usr/bin/env python3
"""cases_server.py -- runs rule case files (tests/fixtures/..., format of tests/support/cases.c)
through a running trainguard server: each case's object (and oldObject, operation, namespace) goes
to POST /validate as an AdmissionReview, and the answer must carry the case's verdict: `allowed`,
every expected finding as a deny line of status.message or a warning (rule, field, action, part of
the message), and no other finding of the compared rules.

  cases_server.py HOST PORT CA_FILE CASE_FILE...

Cases that need their own policy, mode or rule actions, or that mutate, are counted as skipped
(the server runs the default policy). Prints one line per failure and a summary; exit 1 on any
failure."""
import http.client
import json
import os
import re
import ssl
import sys

import yaml

TESTS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
LINE = re.compile(r"^\[([a-z0-9.-]+)\] ([^:]*): (.*)$", re.S)


def review(case, obj, uid):
    av = obj.get("apiVersion", "")
    group, _, version = av.rpartition("/")
    ns = case["namespace"] if "namespace" in case else (
        (obj.get("metadata") or {}).get("namespace") or "default")
    req = {
        "uid": uid,
        "kind": case.get("kind") or {"group": group, "version": version or av,
                                     "kind": obj.get("kind", "")},
        "operation": case.get("operation", "CREATE"),
        "namespace": ns,
        "userInfo": {"username": "cases-server"},
        "dryRun": False,
        "object": obj,
    }
    if "oldObject" in case:
        req["oldObject"] = case["oldObject"]
    return {"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview", "request": req}


def findings(resp):
    """(rule, field, action, message) of every deny line and every warning."""
    out = []
    msg = ((resp.get("status") or {}).get("message") or "") if not resp.get("allowed") else ""
    for line in msg.split("\n"):
        m = LINE.match(line)
        if m:
            out.append((m.group(1), m.group(2), "deny", m.group(3)))
    for w in resp.get("warnings") or []:
        m = LINE.match(w)
        if m:
            text = m.group(3)
            action = "deny" if text.startswith("would deny") else "warn"
            out.append((m.group(1), m.group(2), action, text))
    return out


def compared(prefixes, rule):
    return not prefixes or any(rule.startswith(p) for p in prefixes)


def check(case, prefixes, resp):
    errs = []
    exp = case.get("expect") or {}
    if "allowed" in exp and bool(resp.get("allowed")) != bool(exp["allowed"]):
        errs.append("allowed is %s, want %s" % (resp.get("allowed"), exp["allowed"]))
    want = exp.get("findings")
    if want is None:
        return errs
    got = findings(resp)
    used = [False] * len(got)
    for w in want:
        hit = False
        for i, (rule, field, action, text) in enumerate(got):
            if used[i] or rule != w["rule"]:
                continue
            if "field" in w and field != w["field"]:
                continue
            if "action" in w and action != w["action"]:
                continue
            # Warnings are cut at 256 characters: a message part is checked when it fits.
            if "message" in w and w["message"] not in text and len(text) < 200:
                continue
            used[i] = hit = True
            break
        if not hit:
            errs.append("missing [%s] %s" % (w["rule"], w.get("field", "*")))
    for i, (rule, field, action, text) in enumerate(got):
        if not used[i] and compared(prefixes, rule):
            errs.append("unexpected [%s] %s (%s): %s" % (rule, field, action, text[:160]))
    return errs


def main():
    host, port, ca = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    ctx = ssl.create_default_context(cafile=ca)
    conn = http.client.HTTPSConnection(host, port, context=ctx, timeout=10)
    ran = skipped = failed = 0
    for path in sys.argv[4:]:
        with open(path) as f:
            root = yaml.safe_load(f)
        prefixes = root.get("rules") or []
        for n, case in enumerate(root.get("cases") or []):
            name = case.get("name", "case %d" % n)
            if any(k in case for k in ("policy", "mode", "ruleActions", "mutate", "knownBug",
                                       "offline")):
                skipped += 1
                continue
            obj = case.get("object")
            if "objectFile" in case:  # relative to tests/, like the unit runner
                with open(os.path.join(TESTS, case["objectFile"])) as f:
                    docs = [d for d in yaml.safe_load_all(f) if d is not None]
                obj = docs[case.get("objectDoc", 0)]
            body = json.dumps(review(case, obj, "case-%d" % n))
            conn.request("POST", "/validate", body, {"Content-Type": "application/json"})
            r = conn.getresponse()
            data = r.read()
            ran += 1
            if r.status != 200:
                failed += 1
                print("not ok - %s: %s: HTTP %d %s" % (path, name, r.status, data[:200]))
                continue
            resp = json.loads(data)["response"]
            errs = check(case, prefixes, resp)
            if errs:
                failed += 1
                print("not ok - %s: %s: %s" % (path, name, "; ".join(errs)))
    print("cases through the server: %d run, %d skipped, %d failed" % (ran, skipped, failed))
    return 1 if failed or ran == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
