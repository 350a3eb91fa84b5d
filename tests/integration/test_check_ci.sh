#!/usr/bin/env bash
# test_check_ci.sh -- `trainguard check` as a CI job runs it (SPEC 12, docs/check.md): a repository
# tree walked recursively, exit codes through the process, stdout holding only the report, each
# format valid against its published schema, and the cluster audit recipe on a kubectl List.
# Needs $TG_BIN, python3 with jsonschema and yaml, xmllint; prints "N passed, M failed".
set -u

BIN=${TG_BIN:-build/trainguard}
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
fix="$root/tests/fixtures"
validate="$root/tests/schemas/validate.py"
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
check() { # check NAME COMMAND...: passes when the command succeeds
    local name=$1
    shift
    if "$@" >/dev/null 2>&1; then ok "$name"; else bad "$name"; fi
}
valid() { # valid NAME FORMAT FILE: the file validates against the format's schema
    if python3 "$validate" "$2" "$3" 2>"$tmp/valid.err"; then
        ok "$1"
    else
        bad "$1"
        sed 's/^/    /' "$tmp/valid.err"
    fi
}
json_get() { # json_get FILE EXPR: prints a Python expression over the parsed file (d)
    python3 -c 'import json, sys; d = json.load(open(sys.argv[1])); print(eval(sys.argv[2]))' "$1" "$2"
}

if [ ! -x "$BIN" ]; then
    echo "FAIL: TG_BIN=$BIN is not executable"
    echo "0 passed, 1 failed"
    exit 1
fi
if ! python3 -c 'import jsonschema, yaml' 2>/dev/null || ! command -v xmllint >/dev/null; then
    echo "FAIL: python3-jsonschema, python3-yaml or xmllint missing: make deps"
    echo "0 passed, 1 failed"
    exit 1
fi

tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-check-ci.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# ---- a repository as CI checks it out ----------------------------------------------------------
repo=$tmp/repo
mkdir -p "$repo/deploy/team-a" "$repo/deploy/team-b" "$repo/.github/workflows" "$repo/docs"
cp "$fix/yaml/clean-pod.yaml" "$repo/deploy/base.yaml"
cp "$fix/check/tree/apps/train.yml" "$repo/deploy/team-a/train.yml"
cp "$fix/check/warn-pod.yaml" "$repo/deploy/team-b/probe.yaml"
cp "$fix/check/cluster-list.json" "$repo/deploy/team-b/exported.json"
printf 'name: ci\non: [push]\njobs: {}\n' > "$repo/.github/workflows/ci.yml"
printf '# not a manifest\n' > "$repo/docs/README.md"
ln -s .. "$repo/deploy/team-a/loop"                  # a cycle: never followed
ln -s "$fix/yaml/efa-pod-deny.yaml" "$repo/deploy/linked.yaml" # a link to a file: read
(cd "$repo" && "$BIN" check -o json . >"$tmp/repo.json" 2>"$tmp/repo.err")
rc=$?
check "a repository tree: exit 1 (a deny below deploy/)" test "$rc" -eq 1
valid "... the CheckReport validates" checkreport "$tmp/repo.json"
check "... files in byte order of their paths, depth first" test "$(json_get "$tmp/repo.json" \
    '",".join(dict.fromkeys(r["file"] for r in d["results"]))')" = \
    "./deploy/base.yaml,./deploy/linked.yaml,./deploy/team-a/train.yml,./deploy/team-b/exported.json,./deploy/team-b/probe.yaml"
check "... .github is not read" bash -c "! grep -q github '$tmp/repo.json' '$tmp/repo.err'"
check "... the symlink cycle is not followed" bash -c "! grep -q loop '$tmp/repo.json'"
check "... the summary goes to stderr" grep -q "^trainguard check: 5 files, " "$tmp/repo.err"
(cd "$repo" && "$BIN" check -R deploy >/dev/null 2>&1)
check "-R is accepted: same exit" test $? -eq 1

# ---- GitHub Actions: SARIF for code scanning -----------------------------------------------------
(cd "$repo" && "$BIN" check --output sarif deploy/ >"$tmp/out.sarif" 2>/dev/null)
check "sarif: exit 1" test $? -eq 1
valid "sarif: valid SARIF 2.1.0" sarif "$tmp/out.sarif"
check "sarif: repository-relative URIs with a start line" test "$(json_get "$tmp/out.sarif" \
    'sorted({(l["physicalLocation"]["artifactLocation"]["uri"], l["physicalLocation"]["region"]["startLine"]) for r in d["runs"][0]["results"] for l in r["locations"]})[0]')" = \
    "('deploy/linked.yaml', 2)"

# ---- GitLab CI: JUnit test report ----------------------------------------------------------------
(cd "$repo" && "$BIN" check --output junit --fail-on warn deploy/ >"$tmp/report.xml" 2>/dev/null)
check "junit --fail-on warn: exit 1" test $? -eq 1
valid "junit: valid against junit-10.xsd" junit "$tmp/report.xml"
check "junit: the warn finding is a failure under --fail-on warn" \
    grep -q '<failure type="efa.no-hugepages"' "$tmp/report.xml"
check "junit: one testcase per object (10)" test "$(grep -c '<testcase ' "$tmp/report.xml")" -eq 10

# ---- exit codes through the process -------------------------------------------------------------
"$BIN" check -o json no/such.yaml "$fix/yaml/efa-pod-deny.yaml" >"$tmp/missing.json" 2>"$tmp/missing.err"
check "a missing file beside a deny: exit 2" test $? -eq 2
check "... the error is in the report" test "$(json_get "$tmp/missing.json" \
    'd["summary"]["errors"], d["errors"][0]["file"], d["summary"]["denied"]')" = "(1, 'no/such.yaml', 1)"
valid "... and stdout is the report alone" checkreport "$tmp/missing.json"
"$BIN" check "$fix/check/no-manifests" >/dev/null 2>"$tmp/empty.err"
check "a directory without manifests: exit 2" test $? -eq 2
check "... saying so" grep -q "no \*.yaml, \*.yml or \*.json file in this directory" "$tmp/empty.err"
"$BIN" check - <"$fix/check/empty-list.json" >/dev/null 2>&1
check "an empty kind: List on stdin: exit 0" test $? -eq 0
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: [\n' | "$BIN" check - >/dev/null 2>&1
check "a document that does not parse: exit 2" test $? -eq 2
"$BIN" check --fail-on warn "$fix/check/warn-pod.yaml" >/dev/null 2>&1
check "--fail-on warn with a warn finding: exit 1" test $? -eq 1
"$BIN" check "$fix/check/warn-pod.yaml" >/dev/null 2>&1
check "the same without --fail-on: exit 0" test $? -eq 0

# ---- auditing a running cluster: kubectl get ... -A -o json | trainguard check - ------------------
"$BIN" check -o policyreport - <"$fix/check/cluster-list.json" >"$tmp/reports.json" 2>/dev/null
check "audit: exit 1 (denies in the cluster)" test $? -eq 1
valid "audit: PolicyReports valid against the wgpolicyk8s.io CRDs" policyreport "$tmp/reports.json"
check "audit: one PolicyReport per namespace with evaluated objects" test "$(json_get \
    "$tmp/reports.json" '[(i["kind"], i["metadata"]["namespace"], i["summary"]["fail"], i["summary"]["warn"], i["summary"]["pass"]) for i in d["items"]]')" = \
    "[('PolicyReport', 'team-a', 1, 0, 1), ('PolicyReport', 'team-b', 1, 1, 0)]"
"$BIN" check - <"$fix/check/cluster-list.json" >"$tmp/audit.txt" 2>&1
check "audit: text names namespace and List item" \
    grep -qF "<stdin>:1.items[2] Pod team-b/efa-debug: DENY [efa.env-without-device]" "$tmp/audit.txt"

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
