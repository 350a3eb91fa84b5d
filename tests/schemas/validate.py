#!/usr/bin/env python3
"""validate.py -- checks `trainguard check` output against the published schemas.

    validate.py [--invalid] checkreport|sarif|policyreport|junit FILE...   ("-" reads stdin)

Exit 0 when every file is valid, 1 with the reasons on stderr when one is not, 3 when a validator
is missing (python3-jsonschema, python3-yaml, xmllint: `make deps`). With --invalid (to test the
validator itself) the other way round: 0 when every file is invalid, quietly. See README.md here.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

try:
    import jsonschema
    import yaml
except ImportError as e:  # pragma: no cover - depends on the machine
    print(f"validate.py: {e}: install python3-jsonschema and python3-yaml (make deps)", file=sys.stderr)
    sys.exit(3)


def closed(schema):
    """A copy of schema in which every object schema with properties forbids other members."""
    schema = copy.deepcopy(schema)

    def walk(node):
        if isinstance(node, dict):
            if "properties" in node and "additionalProperties" not in node:
                node["additionalProperties"] = False
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(schema)
    return schema


def errors_of(validator, doc):
    return [f"{'/'.join(str(p) for p in e.absolute_path) or '(root)'}: {e.message}"
            for e in sorted(validator.iter_errors(doc), key=lambda e: list(map(str, e.absolute_path)))]


def checkreport(doc):
    with open(os.path.join(ROOT, "docs", "schemas", "checkreport-v1.schema.json")) as f:
        schema = json.load(f)
    jsonschema.Draft202012Validator.check_schema(schema)
    return errors_of(jsonschema.Draft202012Validator(closed(schema)), doc)


def sarif(doc):
    with open(os.path.join(HERE, "sarif-schema-2.1.0.json")) as f:
        schema = json.load(f)
    return errors_of(jsonschema.Draft4Validator(schema), doc)


def crd_schema(filename, version="v1alpha2"):
    with open(os.path.join(HERE, filename)) as f:
        crd = yaml.safe_load(f)
    for v in crd["spec"]["versions"]:
        if v["name"] == version:
            return crd["spec"]["names"]["kind"], closed(v["schema"]["openAPIV3Schema"])
    raise SystemExit(f"validate.py: {filename} has no version {version}")


def policyreport(doc):
    schemas = dict(crd_schema(f) for f in ("wgpolicyk8s.io_policyreports.yaml",
                                           "wgpolicyk8s.io_clusterpolicyreports.yaml"))
    errs = []
    if doc.get("apiVersion") != "v1" or doc.get("kind") != "List" or not isinstance(doc.get("items"), list):
        return ["(root): not a v1 List with items"]
    for i, item in enumerate(doc["items"]):
        kind = item.get("kind")
        if item.get("apiVersion") != "wgpolicyk8s.io/v1alpha2" or kind not in schemas:
            errs.append(f"items/{i}: not a wgpolicyk8s.io/v1alpha2 PolicyReport or ClusterPolicyReport")
            continue
        if kind == "PolicyReport" and "namespace" in item.get("metadata", {}) and not item["metadata"]["namespace"]:
            errs.append(f"items/{i}: empty metadata.namespace")
        errs += [f"items/{i}/{e}" for e in errors_of(jsonschema.Draft7Validator(schemas[kind]), item)]
    return errs


def junit(path):
    xsd = os.path.join(HERE, "junit-10.xsd")
    try:
        p = subprocess.run(["xmllint", "--noout", "--schema", xsd, path], capture_output=True, text=True)
    except FileNotFoundError:
        print("validate.py: xmllint not found: install libxml2-utils (make deps)", file=sys.stderr)
        sys.exit(3)
    return [] if p.returncode == 0 else [p.stderr.strip() or f"xmllint exit {p.returncode}"]


def main(argv):
    invalid = len(argv) > 1 and argv[1] == "--invalid"
    if invalid:
        argv = argv[:1] + argv[2:]
    if len(argv) < 3 or argv[1] not in ("checkreport", "sarif", "policyreport", "junit"):
        print(__doc__.strip().splitlines()[2], file=sys.stderr)
        return 2
    fmt, bad = argv[1], 0
    for name in argv[2:]:
        text = sys.stdin.read() if name == "-" else open(name, encoding="utf-8").read()
        if fmt == "junit":
            with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False, encoding="utf-8") as t:
                t.write(text)
            try:
                errs = junit(t.name)
            finally:
                os.unlink(t.name)
        else:
            try:
                doc = json.loads(text)
            except ValueError as e:
                errs = [f"not JSON: {e}"]
            else:
                errs = {"checkreport": checkreport, "sarif": sarif, "policyreport": policyreport}[fmt](doc)
        if invalid:
            if not errs:
                print(f"validate.py: {name}: {fmt}: valid, but should not be", file=sys.stderr)
            bad += not errs
            continue
        for e in errs[:20]:
            print(f"validate.py: {name}: {fmt}: {e}", file=sys.stderr)
        bad += bool(errs)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
