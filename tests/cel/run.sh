#!/usr/bin/env bash
# run.sh -- the webhooks' matchConditions prefilter, evaluated with a real CEL evaluator
# (@bufbuild/cel) on every fixture object and every corpus manifest, against what trainguard's
# pipeline does with each object (make prefilter; part of make check).
#
#   TG_JUDGE=build/cel_judge TG_GEN=build/catalogue_gen bash tests/cel/run.sh
#
# Node and npm come from Debian's packages (make deps); the evaluator from the npm registry
# (npm ci with the committed package-lock.json). Without node the test cannot run: it says so
# loudly and exits 0, so that a machine without it still runs the C tests.
set -u
export LC_ALL=C
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
judge="${TG_JUDGE:-$root/build/cel_judge}"
gen="${TG_GEN:-$root/build/catalogue_gen}"

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    echo "##########################################################################"
    echo "prefilter: SKIPPED: node and npm are not installed (make deps installs the"
    echo "Debian packages nodejs and npm); the matchConditions were NOT evaluated."
    echo "##########################################################################"
    exit 0
fi
# npm ci when node_modules is missing or older than the lock file.
if [ ! -d "$here/node_modules/@bufbuild/cel" ] ||
    [ "$here/package-lock.json" -nt "$here/node_modules/.package-lock.json" ]; then
    if ! (cd "$here" && npm ci --no-audit --no-fund --loglevel=error >/dev/null); then
        echo "prefilter: npm ci failed in tests/cel (is the npm registry reachable?)" >&2
        exit 1
    fi
fi

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
"$gen" match-conditions validate json >"$tmp/validate.json" || exit 1
"$gen" match-conditions mutate json >"$tmp/mutate.json" || exit 1

# Inputs: every YAML file under tests/fixtures (case files and manifests; policy files hold no
# object and are skipped by the judge), the test's own cases, and the published manifests copied
# into tests/corpus/<owner>__<repo>/ (none there is a failure: the test reads only the repository).
cd "$root/tests" || exit 1
inputs=()
while IFS= read -r -d '' f; do inputs+=("$f"); done < <(
    find fixtures cel -path fixtures/policy -prune -o -path cel/node_modules -prune -o \
        \( -name '*.yaml' -o -name '*.yml' \) -type f -print0 | sort -z)
ncorpus=0
while IFS= read -r -d '' f; do inputs+=("$f"); ncorpus=$((ncorpus + 1)); done < <(
    find corpus -mindepth 2 -path corpus/LICENSES -prune -o \
        \( -name '*.yaml' -o -name '*.yml' -o -name '*.json' \) -type f -print0 | sort -z)
if [ "$ncorpus" -eq 0 ]; then
    echo "prefilter: no manifests under tests/corpus/<owner>__<repo>/" >&2
    exit 1
fi

if ! "$judge" "${inputs[@]}" >"$tmp/judged.jsonl" 2>"$tmp/judge.err"; then
    echo "prefilter: the judge failed:" >&2
    sed 's/^/    /' "$tmp/judge.err" >&2
    exit 1
fi
node "$here/prefilter.mjs" "$tmp/validate.json" "$tmp/mutate.json" "$tmp/judged.jsonl"
