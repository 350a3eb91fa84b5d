#!/usr/bin/env bash
# test_distribution.sh -- what a release ships besides the binary: LICENSE (the Apache-2.0 text),
# CHANGELOG.md (X.Y.Z releases matching the sources), .dockerignore (no key, build tree or .git in
# the build context) and deploy/Dockerfile (base images pinned to a point release or a digest, no
# test framework or compiler in the runtime stage). Static: Docker is not needed.
# Prints "N passed, M failed" last; exits 1 on any failure.
set -u
cd "$(dirname "$0")/../.." || exit 1
pass=0
fail=0
ok() { pass=$((pass + 1)); echo "ok   $1"; }
bad() { fail=$((fail + 1)); echo "FAIL $1"; }
expect() { if [ "$2" = "$3" ]; then ok "$1"; else bad "$1: got '$2', want '$3'"; fi; }

# ---- LICENSE ---------------------------------------------------------------------------------
if [ -s LICENSE ]; then
    ok "LICENSE exists"
    grep -q '^ *Apache License$' LICENSE && grep -q 'Version 2.0, January 2004' LICENSE &&
        grep -q 'END OF TERMS AND CONDITIONS' LICENSE && grep -q 'APPENDIX: How to apply the Apache License' LICENSE &&
        ok "LICENSE is the Apache License 2.0, terms and appendix" || bad "LICENSE is not the Apache-2.0 text"
    expect "LICENSE has the 9 sections of the terms" \
        "$(grep -cE '^ *[1-9]\. (Definitions|Grant of Copyright License|Grant of Patent License|Redistribution|Submission of Contributions|Trademarks|Disclaimer of Warranty|Limitation of Liability|Accepting Warranty or Additional Liability)\.' LICENSE)" 9
    if [ -r /usr/share/common-licenses/Apache-2.0 ]; then
        # Debian ships the text as published by the ASF.
        cmp -s LICENSE /usr/share/common-licenses/Apache-2.0 &&
            ok "LICENSE is byte for byte the text Debian ships in common-licenses" ||
            bad "LICENSE differs from /usr/share/common-licenses/Apache-2.0"
    fi
else
    bad "LICENSE exists"
fi
grep -q 'Apache-2.0\|Apache License' README.md && ok "README names the license" || bad "README names the license"

# ---- CHANGELOG -------------------------------------------------------------------------------
ver=$(sed -n 's/^#define TG_VERSION "\(.*\)"/\1/p' include/tg/version.h)
chart_ver=$(sed -n 's/^version: *//p' charts/trainguard/Chart.yaml)
if [ -s CHANGELOG.md ]; then
    heads=$(sed -n 's/^## \([0-9][0-9.]*\)$/\1/p' CHANGELOG.md)
    bad_heads=$(sed -n 's/^## //p' CHANGELOG.md | grep -vxE '[0-9]+\.[0-9]+\.[0-9]+|Unreleased')
    expect "CHANGELOG release headings are X.Y.Z or Unreleased" "$bad_heads" ""
    grep -qx "$ver" <<<"$heads" && ok "CHANGELOG has the source's version $ver" || bad "CHANGELOG lacks $ver"
    grep -qx "$chart_ver" <<<"$heads" && ok "CHANGELOG has the chart's version $chart_ver" || bad "CHANGELOG lacks $chart_ver"
    grep -qx "0.1.0" <<<"$heads" && ok "CHANGELOG has the first release 0.1.0" || bad "CHANGELOG lacks 0.1.0"
    expect "CHANGELOG lists releases newest first" "$heads" "$(sort -t. -k1,1nr -k2,2nr -k3,3nr <<<"$heads")"
    # every rule the catalogue introduced in 0.2 is named in the 0.2.0 section
    sect=$(awk '/^## 0\.2\.0$/{f=1;next} /^## /{f=0} f' CHANGELOG.md)
    missing=""
    for r in $(grep -o 'TG_RULE([A-Z_0-9]*, "[a-z.-]*", [A-Z_]*, "0.2"' src/catalogue/rules.def | cut -d'"' -f2); do
        grep -qF "\`$r\`" <<<"$sect" || missing="$missing $r"
    done
    expect "CHANGELOG 0.2.0 names every rule the catalogue dates 0.2" "$missing" ""
else
    bad "CHANGELOG.md exists"
fi

# ---- .dockerignore ---------------------------------------------------------------------------
# Docker's rules, for the patterns used here: each line is a path pattern from the context root
# (filepath.Match, plus ** for any directories); a path is excluded when the last pattern matching
# it or one of its parent directories is not a !-exception.
tmp=$(mktemp -d "${TMPDIR:-/tmp}/tg-dist-it.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
if [ -s .dockerignore ]; then
    python3 - deploy/Dockerfile >"$tmp/py.out" 2>&1 <<'PY'
import re, sys
pats = []
for line in open(".dockerignore"):
    line = line.strip()
    if not line or line.startswith("#"):
        continue
    neg = line.startswith("!")
    pats.append((neg, line.lstrip("!").strip("/")))
def match(pat, path):
    rx = ""
    i = 0
    while i < len(pat):
        if pat.startswith("**/", i):
            rx += "(?:.*/)?"; i += 3
        elif pat.startswith("**", i):
            rx += ".*"; i += 2
        elif pat[i] == "*":
            rx += "[^/]*"; i += 1
        elif pat[i] == "?":
            rx += "[^/]"; i += 1
        else:
            rx += re.escape(pat[i]); i += 1
    return re.fullmatch(rx, path) is not None
def excluded(path):
    parts = path.split("/")
    result = False
    for neg, pat in pats:
        for n in range(1, len(parts) + 1):
            if match(pat, "/".join(parts[:n])):
                result = not neg
                break
    return result
def say(c, name):
    print(("ok   " if c else "FAIL ") + ".dockerignore: " + name)
for p in ["certs/dev/tls.key", "certs/dev/ca.key", "certs/dev/tls.crt", "build/trainguard",
          "build/obj/main.o", "build-asan/unit_tests", "build-fuzz/x", ".git/HEAD", ".git",
          "tests/cel/node_modules/@bufbuild/cel/package.json", "tests/fuzz/corpus-review/a",
          "some/where/server.key", "some/where/chain.pem"]:
    say(excluded(p), "excludes " + p)
# what the Dockerfile copies must stay in
copies = []
for line in open(sys.argv[1]):
    m = re.match(r"COPY\s+(?!--from)(.+)\s+\S+\s*$", line)
    if m:
        copies += m.group(1).split()
say(len(copies) >= 4, "the Dockerfile copies %d sources from the context" % len(copies))
for c in copies:
    say(not excluded(c.rstrip("/")), "keeps %s, which the Dockerfile copies" % c)
for p in ["src/main.c", "include/tg/version.h", "scripts/embed.sh", "Makefile"]:
    say(not excluded(p), "keeps " + p)
PY
    cat "$tmp/py.out"
    pass=$((pass + $(grep -c '^ok ' "$tmp/py.out")))
    fail=$((fail + $(grep -c '^FAIL ' "$tmp/py.out")))
    grep -q '^Traceback' "$tmp/py.out" && bad ".dockerignore checks crashed"
else
    bad ".dockerignore exists"
fi

# ---- deploy/Dockerfile -----------------------------------------------------------------------
df=deploy/Dockerfile
froms=$(grep -E '^FROM ' "$df" | awk '{print $2}')
expect "Dockerfile has two stages" "$(wc -l <<<"$froms")" 2
for f in $froms; do
    if grep -qE '^[a-z0-9./-]+:[0-9]+\.[0-9]+(\.[0-9]+)?(-[a-z]+)?(@sha256:[0-9a-f]{64})?$' <<<"$f"; then
        ok "FROM $f is pinned to a point release (or a digest)"
    else
        bad "FROM $f is not pinned (want name:X.Y[-variant][@sha256:...], not a major or latest)"
    fi
done
grep -qE '^ARG ' "$df" && bad "no ARG that could replace a pinned FROM" || ok "no ARG that could replace a pinned FROM"
runtime=$(awk '/^FROM /{n++} n==2' "$df")
pkgs=$(sed -n '/apt-get install/,/rm -rf/p' <<<"$runtime" | tr ' \\' '\n\n' | grep -E '^[a-z0-9][a-z0-9.+-]+$' |
    grep -vE '^(apt-get|install|rm|update|DEBIAN_FRONTEND|-y|--no-install-recommends)$')
expect "the runtime stage installs the five runtime libraries only" "$(sort <<<"$pkgs" | tr '\n' ' ')" \
    "libgnutls30 libjansson4 libmicrohttpd12 libssl3 libyaml-0-2 "
test_pkgs="check valgrind clang gcc build-essential make gdb strace wrk python3 curl jq prometheus nodejs npm"
found=""
for p in $test_pkgs; do grep -qw -- "$p" <<<"$pkgs" && found="$found $p"; done
expect "the runtime stage installs no test framework or tool ($test_pkgs)" "$found" ""
grep -E -- '-dev( |$)' <<<"$pkgs" >/dev/null && bad "runtime stage installs a -dev package" || ok "runtime stage installs no -dev package"
expect "the runtime stage copies only the binary and its shared object from the build" \
    "$(grep -c '^COPY --from=build' <<<"$runtime")" 2
grep -q 'debian:12.11-slim@sha256' docs/operations.md && grep -q 'imagetools inspect' docs/operations.md &&
    ok "docs/operations.md says how to pin digests at release" || bad "docs/operations.md says how to pin digests at release"

# ---- docs: no --reuse-values advice ----------------------------------------------------------
# (docs/references.md states what the flag does, with its sources; every other mention must warn)
recs=$(grep -rn -- '--reuse-values' README.md docs charts 2>/dev/null | grep -v '^docs/references.md:' |
    grep -viE "not |don't" || true)
expect "docs and chart do not recommend helm --reuse-values" "$recs" ""

echo "$pass passed, $fail failed"
[ "$fail" -eq 0 ]
