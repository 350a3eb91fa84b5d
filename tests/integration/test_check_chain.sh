#!/usr/bin/env bash
# test_check_chain.sh -- `trainguard check --mutate FILE | trainguard check -` reports no finding
# that `trainguard check FILE` did not (SPEC 10: /mutate and /validate agree), on every manifest
# of the corpus and every object file of the fixtures. Needs $TG_BIN and python3; prints
# "N passed, M failed".
set -u

BIN=${TG_BIN:-build/trainguard}
root="$(cd "$(dirname "$0")/../.." && pwd)"
pass=0
fail=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ ! -x "$BIN" ]; then
    echo "FAIL: TG_BIN=$BIN is not executable"
    echo "0 passed, 1 failed"
    exit 1
fi

# "rule<TAB>kind/ns/name<TAB>field" of every finding of a CheckReport, sorted.
findings() {
    python3 -c '
import json, sys
d = json.load(sys.stdin)
for r in d.get("results", []):
    who = "%s/%s/%s" % (r.get("kind"), r.get("namespace", ""), r.get("name"))
    for f in r.get("findings", []):
        print("%s\t%s\t%s" % (f["rule"], who, f["field"]))
' | sort -u
}

files=$(find "$root/tests/corpus" "$root/tests/fixtures/check" -name '*.yaml' -o -name '*.yml' | sort)
n=0
for f in $files; do
    # only files the checker reads cleanly (templates with placeholders exit 2 on purpose)
    "$BIN" check --output json "$f" > "$tmp/before.json" 2>/dev/null
    [ $? -le 1 ] || continue
    "$BIN" check --mutate "$f" 2>/dev/null > "$tmp/mutated.yaml" || true
    [ -s "$tmp/mutated.yaml" ] || continue
    "$BIN" check --output json - < "$tmp/mutated.yaml" > "$tmp/after.json" 2>/dev/null
    findings < "$tmp/before.json" > "$tmp/b"
    findings < "$tmp/after.json" > "$tmp/a"
    n=$((n + 1))
    new=$(comm -13 "$tmp/b" "$tmp/a")
    if [ -z "$new" ]; then
        pass=$((pass + 1))
    else
        fail=$((fail + 1))
        echo "FAIL ${f#$root/}: check of the mutated manifests reports new findings:"
        echo "$new" | sed 's/^/    /'
    fi
done
if [ "$n" -lt 20 ]; then
    fail=$((fail + 1))
    echo "FAIL only $n manifest files were chained: the corpus is missing"
fi
echo "ok   check --mutate | check adds no finding on $pass of $n manifest files"
echo "$pass passed, $fail failed"
[ "$fail" = 0 ]
