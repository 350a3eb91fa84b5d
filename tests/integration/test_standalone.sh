#!/usr/bin/env bash
# test_standalone.sh -- the tests read only the repository, and a missing corpus or fixture file
# fails them (never a skip). Works on copies in a temporary tests/ tree (symbolic links to the real
# fixtures, a copy of what is changed) with the real test programs:
#   - tests/corpus/run.sh without manifests, with a manifest that SOURCES.md does not list, with a
#     changed byte, a row whose license is not allowed, a directory without NOTICE;
#   - the unit tests (TG_UNIT, build/unit_tests) with an objectFile that is missing, an objectFile
#     that leaves tests/ (a path beside the repository), an empty corpus (yaml_json round trip)
#     and no golden reviews;
#   - every objectFile of tests/fixtures names a file under tests/corpus/.
# Prints "N passed, M failed".
set -u
export LC_ALL=C
root="$(cd "$(dirname "$0")/../.." && pwd)"
unit=${TG_UNIT:-$root/build/unit_tests}
. "$root/tests/integration/tap.sh" standalone
tmp=$WORK

# ---- tests/corpus/run.sh and SOURCES.md ---------------------------------------------------------
corpus_copy() { # a fresh copy of tests/corpus in $tmp/c
    rm -rf "$tmp/c"
    cp -a "$root/tests/corpus" "$tmp/c"
}
expect_corpus_failure() { # description, message the run must print
    local out rc
    out=$(TG_BIN=/bin/false bash "$tmp/c/run.sh" 2>&1)
    rc=$?
    if [ $rc -ne 0 ] && grep -qF -- "$2" <<<"$out"; then
        ok "corpus: $1 fails the run"
    else
        not_ok "corpus: $1 (exit $rc, expected a failure saying: $2)" "$out"
    fi
}
corpus_copy
find "$tmp/c" -mindepth 2 -name '*.yaml' -not -path "$tmp/c/LICENSES/*" -delete
expect_corpus_failure "no manifests at all" "corpus: no manifests under"
corpus_copy
printf 'apiVersion: v1\nkind: Pod\nmetadata: {name: x}\nspec: {containers: []}\n' \
    > "$tmp/c/kubeflow__mpi-operator/unlisted.yaml"
expect_corpus_failure "a manifest without a SOURCES.md row" \
    "kubeflow__mpi-operator/unlisted.yaml: no row in SOURCES.md"
corpus_copy
printf '\n' >> "$tmp/c/kubeflow__mpi-operator/examples__v2beta1__pi__pi.yaml"
expect_corpus_failure "a manifest that is not the published blob" \
    "kubeflow__mpi-operator/examples__v2beta1__pi__pi.yaml: git blob"
corpus_copy
sed -i '/`kubernetes__api\/testdata__HEAD__core.v1.Pod.yaml`/s/| Apache-2.0 |/| GPL-2.0 |/' "$tmp/c/SOURCES.md"
expect_corpus_failure "a row with a license other than Apache-2.0, MIT, MIT-0" "license 'GPL-2.0'"
corpus_copy
rm "$tmp/c/volcano-sh__apis/NOTICE"
expect_corpus_failure "a directory without NOTICE" "volcano-sh__apis/: no NOTICE"
corpus_copy
rm "$tmp/c/volcano-sh__apis/artifacts__podgroup.yaml"
expect_corpus_failure "a listed manifest that is missing" \
    "volcano-sh__apis/artifacts__podgroup.yaml is listed but not in the corpus"

# ---- every objectFile is a file under tests/corpus ----------------------------------------------
bad=$(cd "$root/tests" && grep -rhoE '^\s*objectFile:\s*\S+' fixtures | sed -E 's/^\s*objectFile:\s*//' |
    sort -u | while read -r f; do
        case $f in corpus/*) [ -f "$f" ] || echo "missing: $f" ;; *) echo "outside tests/corpus: $f" ;; esac
    done)
n=$(cd "$root/tests" && grep -rhoE '^\s*objectFile:' fixtures | wc -l)
if [ -z "$bad" ] && [ "$n" -gt 0 ]; then
    ok "all $n objectFile cases name a file under tests/corpus/"
else
    not_ok "objectFile paths" "$bad"
fi

# ---- the unit tests on a tests/ tree with something missing --------------------------------------
if [ ! -x "$unit" ]; then
    not_ok "TG_UNIT=$unit is not an executable (make unit builds it)"
    echo "$PASS passed, $FAIL failed"
    exit 1
fi
tree() { # a tests/ tree in $tmp/t: links to every entry of tests/ except those named
    rm -rf "$tmp/t"
    mkdir -p "$tmp/t"
    local e
    for e in "$root"/tests/*; do
        case " $* " in *" $(basename "$e") "*) continue ;; esac
        ln -s "$e" "$tmp/t/$(basename "$e")"
    done
}
fixtures_except() { # fixtures/ as links, except the family named, copied
    mkdir -p "$tmp/t/fixtures"
    local e
    for e in "$root"/tests/fixtures/*; do
        if [ "$(basename "$e")" = "$1" ]; then cp -a "$e" "$tmp/t/fixtures/"; else ln -s "$e" "$tmp/t/fixtures/"; fi
    done
}
run_suite() { # suite -> output; exit status of the unit tests
    (cd "$tmp/t" && CK_RUN_SUITE=$1 CK_FORK=yes CK_DEFAULT_TIMEOUT=60 "$unit" 2>&1)
}
expect_unit_failure() { # description, suite, message
    local out rc
    out=$(run_suite "$2")
    rc=$?
    if [ $rc -ne 0 ] && grep -qF -- "$3" <<<"$out"; then
        ok "unit ($2): $1 fails"
    else
        not_ok "unit ($2): $1 (exit $rc, expected a failure saying: $3)" "$(grep -v '^ok\|Checks' <<<"$out")"
    fi
}

# A missing objectFile: the corpus copy lacks the manifest that gang cases name.
tree corpus
corpus_copy
mv "$tmp/c" "$tmp/t/corpus"
rm "$tmp/t/corpus/kubeflow__mpi-operator/examples__v2beta1__pi__pi.yaml"
expect_unit_failure "an objectFile that is missing" rules_gang \
    "objectFile tests/corpus/kubeflow__mpi-operator/examples__v2beta1__pi__pi.yaml"

# An objectFile outside tests/ (a path beside the repository, as the cases once used).
tree fixtures
fixtures_except gang
sed -i 's#objectFile: corpus/#objectFile: ../../elsewhere/corpus/#' "$tmp/t/fixtures/gang/cases.yaml"
expect_unit_failure "an objectFile outside the repository" rules_gang \
    "objectFile ../../elsewhere/corpus/kubeflow__mpi-operator/examples__v2beta1__pi__pi.yaml must be a path under tests/"

# No corpus at all: the YAML round trip over it fails instead of running nothing.
tree corpus
mkdir -p "$tmp/t/corpus"
expect_unit_failure "an empty corpus" yaml_json "no manifest under tests/corpus"

# No golden reviews: the golden suite fails instead of being a suite of zero tests.
tree fixtures
fixtures_except reviews
rm -f "$tmp/t/fixtures/reviews/"*.request.json
expect_unit_failure "no golden AdmissionReview pairs" golden "no *.request.json in tests/fixtures/reviews"

# And the same suites pass on the real tree (the failures above come from what was removed).
tree
out=$(run_suite rules_gang)
if [ $? -eq 0 ] && grep -q '100%' <<<"$out"; then
    ok "unit (rules_gang) passes on the complete tree"
else
    not_ok "unit (rules_gang) on the complete tree" "$out"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
