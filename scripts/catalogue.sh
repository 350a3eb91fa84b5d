#!/usr/bin/env bash
# catalogue.sh update|check GEN -- the files generated from the rule and kind catalogue.
#
# Each checked-in copy sits between two marker lines, in whatever comment syntax the file uses:
#   ... BEGIN GENERATED: <name> (make catalogue) ...
#   ... END GENERATED: <name> ...
# `update` rewrites what is between them with the generator's output; `check` fails (exit 1) and
# names every copy that differs, so a rule added to src/catalogue/rules.def without `make
# catalogue` fails `make check`.
set -euo pipefail
mode=${1:?usage: catalogue.sh update|check GEN}
gen=${2:?usage: catalogue.sh update|check GEN}
cd "$(dirname "$0")/.."

# file | marker name | generator arguments
targets=(
    "src/policy/default_policy.embed.yaml|rules|policy-rules"
    "README.md|rule table|rule-table"
    "README.md|kind table|kind-table"
    "docs/rules-efa-zone.md|rule table|rule-table efa zone"
    "docs/rules-mpi.md|rule table|rule-table mpi"
    "docs/rules-torch.md|rule table|rule-table torch"
    "docs/plan.md|rule table|rule-table plan"
    "docs/rules-gang-nodeset.md|rule table|rule-table gang nodeset"
    "docs/rules-karpenter-slurm.md|rule table|rule-table karpenter slurm"
    "docs/policy.md|rule table|rule-table exempt"
    "deploy/base/webhooks.yaml|validate rules|webhook-rules validate"
    "deploy/base/webhooks.yaml|validate matchConditions|match-conditions validate"
    "deploy/base/webhooks.yaml|mutate rules|webhook-rules mutate"
    "deploy/base/webhooks.yaml|mutate matchConditions|match-conditions mutate"
    "charts/trainguard/templates/webhooks.yaml|validate rules|webhook-rules validate chart"
    "charts/trainguard/templates/webhooks.yaml|validate matchConditions|match-conditions validate"
    "charts/trainguard/templates/webhooks.yaml|mutate rules|webhook-rules mutate chart"
    "charts/trainguard/templates/webhooks.yaml|mutate matchConditions|match-conditions mutate"
)

splice() { # file name content-file -> stdout
    awk -v name="$2" -v content="$3" '
        index($0, "BEGIN GENERATED: " name " ") || index($0, "BEGIN GENERATED: " name "\r") ||
        $0 ~ ("BEGIN GENERATED: " name "$") {
            print; while ((getline line < content) > 0) print line; skip = 1; found = 1; next
        }
        skip && index($0, "END GENERATED: " name) { skip = 0 }
        !skip { print }
        END { if (!found || skip) exit 3 }
    ' "$1"
}

bad=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for t in "${targets[@]}"; do
    IFS='|' read -r file name args <<<"$t"
    # shellcheck disable=SC2086
    "$gen" $args > "$tmp/content"
    if ! splice "$file" "$name" "$tmp/content" > "$tmp/out"; then
        echo "catalogue: $file has no complete 'BEGIN/END GENERATED: $name' markers" >&2
        bad=1
        continue
    fi
    if ! cmp -s "$file" "$tmp/out"; then
        if [ "$mode" = update ]; then
            cp "$tmp/out" "$file"
            echo "catalogue: updated $file ($name)"
        else
            echo "catalogue: $file ($name) differs from the catalogue; run make catalogue" >&2
            diff -u "$file" "$tmp/out" | head -20 >&2 || true
            bad=1
        fi
    fi
done
exit $bad
