#!/usr/bin/env bash
# layers.sh -- fails on an #include that goes against the folder order of docs/architecture.md.
#
# The order is the fenced ```layers block of docs/architecture.md: one folder of src/ per line,
# ground floor first, main.c last. A file may include headers of its own folder and of folders
# listed before it. A header include/tg/X.h belongs to the folder of the one src/<folder>/X.c
# that implements it; src/<folder>/X.def files belong to <folder>. With one total order and no
# upward include there can be no cycle between folders. Also fails on a header with no source
# of its own name, a folder missing from the order, and an include of a header that does not
# exist.
set -euo pipefail
cd "$(dirname "$0")/.."
doc=docs/architecture.md
order=$(awk '/^```layers/{on=1; next} on && /^```/{exit} on && NF {print $1}' "$doc")
[ -n "$order" ] || { echo "lint: no \`\`\`layers block in $doc"; exit 1; }

declare -A rank
i=0
for f in $order; do rank[$f]=$i; i=$((i + 1)); done

folder_of_src() { # src/<folder>/x.c or src/main.c
    local p=${1#src/}
    case $p in
        */*) echo "${p%%/*}" ;;
        *) echo "$p" ;;
    esac
}

declare -A hdr_folder
bad=0
for h in include/tg/*.h; do
    n=$(basename "$h" .h)
    impl=$(find src -name "$n.c" | sort)
    count=$(printf '%s\n' "$impl" | grep -c . || true)
    if [ "$count" != 1 ]; then
        echo "lint: $h: expected exactly one src/<folder>/$n.c implementing it, found $count"
        bad=1
        continue
    fi
    hdr_folder[$n]=$(folder_of_src "$impl")
done

for d in src/*/; do
    d=$(basename "$d")
    [ -n "${rank[$d]+x}" ] || { echo "lint: src/$d/ is not in the layers order of $doc"; bad=1; }
done

check_file() { # file folder
    local file=$1 from=$2 line inc target
    while IFS= read -r line; do
        inc=${line#*\"}
        inc=${inc%%\"*}
        case $inc in
            tg/*.h)
                n=$(basename "$inc" .h)
                [ -e "include/$inc" ] || { echo "lint: $file includes $inc, which does not exist"; bad=1; continue; }
                target=${hdr_folder[$n]:-}
                [ -n "$target" ] || continue ;;
            */*.def) target=${inc%%/*} ;;
            *) continue ;;
        esac
        if [ "${rank[$target]}" -gt "${rank[$from]}" ]; then
            echo "lint: $file ($from) includes $inc ($target): $target comes after $from in $doc"
            bad=1
        fi
    done < <(grep -E '^[[:space:]]*#[[:space:]]*include[[:space:]]+"' "$file" || true)
}

for f in $(find src -name '*.c' -o -name '*.def' | sort); do
    check_file "$f" "$(folder_of_src "$f")"
done
for h in include/tg/*.h; do
    n=$(basename "$h" .h)
    [ -n "${hdr_folder[$n]:-}" ] && check_file "$h" "${hdr_folder[$n]}"
done
[ "$bad" = 0 ] && echo "lint: layers ok ($(echo $order | tr ' ' '>'))"
exit $bad
