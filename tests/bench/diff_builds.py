#!/usr/bin/env python3
"""diff_builds.py OLD_BIN NEW_BIN -- a change that should not change behaviour (performance work)
checked end to end: every object the tests know (the rule cases of tests/fixtures, the published
manifests of tests/corpus, the golden requests, the bench bodies) goes as an AdmissionReview to
/validate and /mutate of two trainguard builds, whose answers must be the same bytes; then
`check --output json --explain` and `check --mutate` of both over the fixture and corpus trees
must print the same. Prints every difference; exit 1 on any. Each binary needs its
trainguard-x509.so beside it (make builds it). Build the old one from a commit with, e.g.:
  git archive bb5a838 | tar -x -C /tmp/old && make -C /tmp/old -j2 all"""
import glob
import http.client
import json
import os
import random
import shutil
import ssl
import subprocess
import sys
import tempfile
import time

import yaml

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
if len(sys.argv) != 3:
    sys.exit("usage: diff_builds.py OLD_BIN NEW_BIN")
old_bin, new_bin = sys.argv[1], sys.argv[2]
tmp = tempfile.mkdtemp()
subprocess.run([old_bin, "certs", "--out-dir", tmp, "--service", "t", "--namespace", "t", "--dns",
                "localhost", "--ip", "127.0.0.1"], check=True, capture_output=True)

def serve(binary, port):
    p = subprocess.Popen([binary, "serve", "--listen", "127.0.0.1:%d" % port, "--probe-listen",
                          "127.0.0.1:%d" % (port + 1), "--tls-cert-file", tmp + "/tls.crt",
                          "--tls-private-key-file", tmp + "/tls.key", "--threads", "1",
                          "--log-decisions=none"], stderr=subprocess.DEVNULL)
    return p

def review(obj, op="CREATE", old=None, ns=None, kind=None):
    av = obj.get("apiVersion", "") if isinstance(obj, dict) else ""
    group, _, version = av.rpartition("/")
    md = obj.get("metadata") if isinstance(obj, dict) else None
    req = {"uid": "u-1", "kind": kind or {"group": group, "version": version or av,
                                         "kind": obj.get("kind", "") if isinstance(obj, dict) else ""},
           "operation": op, "namespace": ns or ((md or {}).get("namespace") if isinstance(md, dict) else None) or "default",
           "userInfo": {"username": "diff"}, "dryRun": False, "object": obj}
    if old is not None:
        req["oldObject"] = old
    return json.dumps({"apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
                       "request": req}).encode()

bodies = []
for f in sorted(glob.glob(ROOT + "/fixtures/*/cases.yaml") + glob.glob(ROOT + "/fixtures/upstream/*.yaml")):
    try:
        doc = yaml.safe_load(open(f))
    except Exception as e:
        print("skip", f, e)
        continue
    cases = doc.get("cases") if isinstance(doc, dict) else doc
    for c in cases or []:
        if isinstance(c, dict) and isinstance(c.get("object"), dict):
            bodies.append((f + ":" + str(c.get("name"))[:60],
                           review(c["object"], c.get("operation", "CREATE"), c.get("oldObject"), c.get("namespace"), c.get("kind"))))
for f in sorted(glob.glob(ROOT + "/corpus/**/*.yaml", recursive=True) + glob.glob(ROOT + "/corpus/**/*.yml", recursive=True)):
    try:
        docs = list(yaml.safe_load_all(open(f)))
    except Exception:
        continue
    for i, d in enumerate(docs):
        if isinstance(d, dict) and "kind" in d:
            bodies.append(("%s#%d" % (f, i), review(d)))
for f in sorted(glob.glob(ROOT + "/fixtures/reviews/*.request.json") + glob.glob(ROOT + "/bench/bodies/*.json")):
    bodies.append((f, open(f, "rb").read()))
print(len(bodies), "bodies")

ctx = ssl.create_default_context(cafile=tmp + "/ca.crt")
def post(port, path, body):
    c = http.client.HTTPSConnection("localhost", port, context=ctx, timeout=30)
    c.request("POST", path, body=body, headers={"Content-Type": "application/json"})
    r = c.getresponse()
    out = (r.status, r.read())
    c.close()
    return out

po = random.randrange(20000, 60000, 20); pn = po + 10
so, sn = serve(old_bin, po), serve(new_bin, pn)
try:
    time.sleep(1.0)
    diffs = 0
    for name, body in bodies:
        for ep in ("/validate", "/mutate"):
            a, b = post(po, ep, body), post(pn, ep, body)
            if a != b:
                diffs += 1
                if diffs <= 20:
                    print("DIFF", ep, name, "\n  old:", a[1][:600], "\n  new:", b[1][:600])
    print("server responses compared:", 2 * len(bodies), "differences:", diffs)
finally:
    so.terminate()
    sn.terminate()
    so.wait()
    sn.wait()
    shutil.rmtree(tmp, ignore_errors=True)

cdiff = 0
for tree in (ROOT + "/fixtures", ROOT + "/corpus"):
    for args in (["--output", "json", "--explain"], ["--mutate"]):
        a = subprocess.run([old_bin, "check", *args, tree], capture_output=True)
        b = subprocess.run([new_bin, "check", *args, tree], capture_output=True)
        if (a.returncode, a.stdout, a.stderr) != (b.returncode, b.stdout, b.stderr):
            cdiff += 1
            print("CHECK DIFF", tree, args, len(a.stdout), len(b.stdout))
print("check runs compared: 4, differences:", cdiff)
sys.exit(1 if diffs or cdiff else 0)
