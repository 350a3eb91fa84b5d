#!/usr/bin/env bash
# run.sh -- every published manifest copied into this directory (tests/corpus/<owner>__<repo>/,
# sources and licenses in SOURCES.md) through `trainguard check`: no crash, and a summary
# (documents, kinds, findings per rule, parse errors) that must match golden.txt, where each file is
# listed as "tests/corpus/<owner>__<repo>/<file>". First, every file must have its row in
# SOURCES.md (same git blob, an allowed license) and every directory its NOTICE.
#
#   TG_BIN=build/trainguard bash tests/corpus/run.sh        compare with the golden file
#   TG_UPDATE_GOLDEN=1 TG_BIN=... bash tests/corpus/run.sh  rewrite it (review the diff!)
#
# The test reads nothing outside the repository, and a missing or empty corpus is a failure. The
# summary is read from `check --output json` (the trainguard.dev/v1
# CheckReport, docs/check.md), and every report, in every output format, is validated against its
# schema at the end (tests/schemas/validate.py).
set -u
export LC_ALL=C   # file order and sorted counts must not depend on the locale
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
golden="$here/golden.txt"
bin="${TG_BIN:-$root/build/trainguard}"

# The manifests: <owner>__<repo>/<file>, one level below this directory.
files=()
while IFS= read -r -d '' f; do files+=("$f"); done < <(
    find "$here" -mindepth 2 -type f \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) \
        -not -path "$here/LICENSES/*" -print0 | sort -z)
if [ "${#files[@]}" -eq 0 ]; then
    echo "corpus: no manifests under $here/<owner>__<repo>/ (is the checkout complete?)" >&2
    exit 1
fi
if ! python3 "$here/sources.py" "$here"; then
    echo "corpus: FAILED (SOURCES.md, NOTICE or LICENSES out of step with the files)" >&2
    exit 1
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

n=0
mkdir -p "$tmp/reports/checkreport" "$tmp/reports/sarif" "$tmp/reports/junit" "$tmp/reports/policyreport"
for f in "${files[@]}"; do
    rel="tests/corpus/${f#"$here"/}"
    n=$((n + 1))
    # 1. JSON report (the summary comes from it).
    timeout 60 "$bin" check --output json "$f" > "$tmp/reports/checkreport/$n.json" 2> "$tmp/err.txt"
    rc=$?
    if [ "$rc" -gt 2 ]; then
        echo "corpus: CRASH or hang: exit $rc on $rel (check --output json)" >&2
        sed 's/^/    /' "$tmp/err.txt" >&2
        failed=1
    fi
    # 2. Text and the other report formats: same verdict (validated together at the end).
    timeout 60 "$bin" check "$f" > /dev/null 2> "$tmp/err2.txt"
    rc2=$?
    if [ "$rc2" -ne "$rc" ]; then
        echo "corpus: text and json disagree on $rel: exit $rc2 vs $rc" >&2
        failed=1
    fi
    for fmt in sarif junit policyreport; do
        timeout 60 "$bin" check --output "$fmt" "$f" > "$tmp/reports/$fmt/$n.out" 2> /dev/null
        rcf=$?
        if [ "$rcf" -ne "$rc" ]; then
            echo "corpus: --output $fmt and json disagree on $rel: exit $rcf vs $rc" >&2
            failed=1
        fi
    done
    # 3. --mutate: no crash, and its YAML reads back and checks without errors (exit 0 or 1:
    # findings the mutator does not address stay).
    timeout 60 "$bin" check --mutate "$f" > "$tmp/mutated.yaml" 2> /dev/null
    rc3=$?
    if [ "$rc3" -gt 2 ]; then
        echo "corpus: CRASH or hang: exit $rc3 on $rel (check --mutate)" >&2
        failed=1
    else
        timeout 60 "$bin" check --mode audit - < "$tmp/mutated.yaml" > /dev/null 2> "$tmp/err3.txt"
        rc4=$?
        if [ "$rc4" -gt 1 ]; then
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

    {
        echo "== $rel"
        python3 "$here/summarize.py" "$rc" < "$tmp/reports/checkreport/$n.json" || echo "(no report)"
    } >> "$summary"
done

# Every report of every format against its published schema (one validator run per format).
for fmt in checkreport sarif junit policyreport; do
    if ! python3 "$root/tests/schemas/validate.py" "$fmt" "$tmp/reports/$fmt"/* 2> "$tmp/valid.txt"; then
        echo "corpus: --output $fmt does not validate against its schema:" >&2
        head -40 "$tmp/valid.txt" | sed 's/^/    /' >&2
        failed=1
    fi
done

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
