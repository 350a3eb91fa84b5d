#!/usr/bin/env bash
# run.sh -- every file of the shared manifest corpus, and of the published manifests copied into
# this directory (tests/corpus/<owner>__<repo>/, sources in SOURCES-new.md), through `trainguard
# check`: no crash, and a summary (documents, kinds, findings per rule, parse errors) that must
# match golden.txt. The copies here are listed as "tests/corpus/<owner>__<repo>/<file>".
#
#   TG_BIN=build/trainguard bash tests/corpus/run.sh        compare with the golden file
#   TG_UPDATE_GOLDEN=1 TG_BIN=... bash tests/corpus/run.sh  rewrite it (review the diff!)
#
# The corpus lives next to the repository (../shared/corpus from the repo root); without it the
# test is skipped. The summary is built from `check --output json`, whose layout (JSON_INDENT(2),
# fixed key order) is produced by our own binary, so plain sed is enough to read it.
set -u
export LC_ALL=C   # file order and sorted counts must not depend on the locale
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
corpus="$root/../shared/corpus"
golden="$here/golden.txt"
bin="${TG_BIN:-$root/build/trainguard}"

if [ ! -d "$corpus" ]; then
    echo "corpus: $corpus not found; skipped"
    exit 0
fi
if [ ! -x "$bin" ]; then
    echo "corpus: $bin is not an executable (set TG_BIN)" >&2
    exit 1
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
failed=0
summary="$tmp/summary.txt"
: > "$summary"

# One key:count list from lines on stdin, sorted, or "-".
count_list() {
    sort | uniq -c | awk '{ printf "%s%s:%s", (NR > 1 ? "," : ""), $2, $1 } END { if (NR == 0) printf "-" }'
}

while IFS= read -r -d '' f; do
    case $f in
        "$here"/*) rel="tests/corpus/${f#"$here"/}" ;;
        *) rel="${f#"$corpus"/}" ;;
    esac
    # 1. JSON report (the summary comes from it).
    timeout 60 "$bin" check --output json "$f" > "$tmp/out.json" 2> "$tmp/err.txt"
    rc=$?
    if [ "$rc" -gt 2 ]; then
        echo "corpus: CRASH or hang: exit $rc on $rel (check --output json)" >&2
        sed 's/^/    /' "$tmp/err.txt" >&2
        failed=1
    fi
    # 2. Text report: same verdict.
    timeout 60 "$bin" check "$f" > /dev/null 2> "$tmp/err2.txt"
    rc2=$?
    if [ "$rc2" -ne "$rc" ]; then
        echo "corpus: text and json disagree on $rel: exit $rc2 vs $rc" >&2
        failed=1
    fi
    # 3. --mutate: no crash, and its YAML reads back (audit mode never denies: exit 0).
    timeout 60 "$bin" check --mutate "$f" > "$tmp/mutated.yaml" 2> /dev/null
    rc3=$?
    if [ "$rc3" -gt 2 ]; then
        echo "corpus: CRASH or hang: exit $rc3 on $rel (check --mutate)" >&2
        failed=1
    else
        timeout 60 "$bin" check --mode audit - < "$tmp/mutated.yaml" > /dev/null 2> "$tmp/err3.txt"
        rc4=$?
        if [ "$rc4" -ne 0 ]; then
            echo "corpus: the --mutate output of $rel does not check cleanly (exit $rc4):" >&2
            sed 's/^/    /' "$tmp/err3.txt" >&2
            failed=1
        fi
        # Mutation is idempotent (SPEC section 5): mutating the output changes nothing.
        timeout 60 "$bin" check --mutate - < "$tmp/mutated.yaml" > "$tmp/mutated2.yaml" 2> /dev/null
        if ! cmp -s "$tmp/mutated.yaml" "$tmp/mutated2.yaml"; then
            echo "corpus: --mutate is not idempotent on $rel:" >&2
            diff -u "$tmp/mutated.yaml" "$tmp/mutated2.yaml" | head -20 | sed 's/^/    /' >&2
            failed=1
        fi
    fi

    docs=$(sed -n 's/^    "doc": \([0-9]*\),$/\1/p' "$tmp/out.json" | sort -u | wc -l | tr -d ' ')
    kinds=$(sed -n 's/^    "kind": "\(.*\)",$/\1/p' "$tmp/out.json" | sed 's/^$/?/' | count_list)
    rules=$(sed -n 's/^        "rule": "\(.*\)",$/\1/p' "$tmp/out.json" | count_list)
    {
        echo "== $rel"
        echo "exit $rc; documents $docs; kinds $kinds; findings $rules"
        # Parse errors and skipped documents, with their message: templated files must say why.
        awk '
            /^    "doc": /   { doc = $0; sub(/^    "doc": /, "", doc); sub(/,$/, "", doc); item = "" }
            /^    "item": /  { item = $0; sub(/^    "item": "/, ".", item); sub(/",$/, "", item) }
            /^    "error": / { msg = $0; sub(/^    "error": "/, "", msg); sub(/",$/, "", msg) }
            /^    "skipped": / {
                kind = ($0 ~ /true/) ? "skipped" : "error"
                print kind " " doc item ": " msg
            }
        ' "$tmp/out.json"
    } >> "$summary"
done < <({ find "$corpus" -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -print0
          find "$here" -mindepth 2 -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -print0; } |
         sort -z)

if [ "${TG_UPDATE_GOLDEN:-0}" = 1 ]; then
    cp "$summary" "$golden"
    echo "corpus: wrote $golden ($(grep -c '^== ' "$golden") files)"
elif [ ! -f "$golden" ]; then
    echo "corpus: $golden is missing; create it with TG_UPDATE_GOLDEN=1 make corpus" >&2
    failed=1
elif ! diff -u "$golden" "$summary" > "$tmp/diff.txt"; then
    echo "corpus: behaviour on real manifests changed (- golden, + now). If intended, run" >&2
    echo "        TG_UPDATE_GOLDEN=1 make corpus and commit tests/corpus/golden.txt" >&2
    cat "$tmp/diff.txt" >&2
    failed=1
fi
if [ "$failed" -ne 0 ]; then
    echo "corpus: FAILED" >&2
    exit 1
fi
echo "corpus: $(grep -c '^== ' "$summary") files checked, summary matches $(basename "$golden")"
