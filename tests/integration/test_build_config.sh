#!/usr/bin/env bash
# test_build_config.sh -- the compiler and linker flags come from pkg-config after the packages are
# in place (Makefile: build/config.mk, scripts/config.sh), in a BUILD directory of its own:
#   1. a first make in an empty BUILD generates config.mk and links, in the same run, a target
#      that needs its flags (trainguard-x509.so is linked with -z defs: without -lcrypto it fails);
#   2. config.mk is generated again when the pkg-config setup changes (PKG_CONFIG_PATH) and when
#      the Makefile is newer, and not otherwise;
#   3. a pkg-config module that is missing (a fake PKG_CONFIG that knows everything but jansson)
#      stops make before anything is compiled, naming the module and its Debian package, with no
#      config.mk left behind and no link error;
#   4. goals that compile nothing (clean) read no config.
# No package is installed or removed. Prints "N passed, M failed".
set -u
root="$(cd "$(dirname "$0")/../.." && pwd)"
. "$root/tests/integration/tap.sh" build-config
tmp=$WORK
# A make of its own: nothing from a calling make (make check) leaks in.
mk() { env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make --no-print-directory -C "$root" "$@"; }

# 1. First run in an empty BUILD: config.mk, then the link with its flags.
b="$tmp/b1"
out=$(mk BUILD="$b" "$b/trainguard-x509.so" 2>&1)
rc=$?
if [ $rc -eq 0 ] && [ -s "$b/config.mk" ] && [ -x "$b/trainguard-x509.so" ]; then
    ok "a first make in an empty BUILD generates config.mk and links with its flags"
else
    not_ok "first make in an empty BUILD (exit $rc)" "$out"
fi
want_crypto=$(pkg-config --libs libcrypto)
if grep -qxF "X509_LIBS := $want_crypto" "$b/config.mk" 2>/dev/null &&
    grep -q '^BIN_LIBS := .*-ljansson' "$b/config.mk" && ! grep -q '^BIN_LIBS := .*-lssl' "$b/config.mk"; then
    ok "config.mk holds pkg-config's flags (X509_LIBS $want_crypto; BIN_LIBS without OpenSSL)"
else
    not_ok "config.mk content" "$(cat "$b/config.mk" 2>&1)"
fi

# 2. Regenerated when the pkg-config setup changes or the Makefile is newer; kept otherwise.
stamp() { sha1sum "$b/config.mk" | cut -d' ' -f1; }
before=$(stamp)
sleep 1
mk BUILD="$b" "$b/config.mk" > /dev/null 2>&1
t0=$(stat -c %Y "$b/config.mk")
mk BUILD="$b" "$b/config.mk" > /dev/null 2>&1
if [ "$(stat -c %Y "$b/config.mk")" = "$t0" ] && [ "$(stamp)" = "$before" ]; then
    ok "config.mk is kept when nothing changed"
else
    not_ok "config.mk was rewritten although nothing changed"
fi
mkdir -p "$tmp/pcdir"
out=$(PKG_CONFIG_PATH="$tmp/pcdir" mk BUILD="$b" "$b/config.mk" 2>&1)
if grep -q "^CONFIG_KEY := .*|$tmp/pcdir|" "$b/config.mk"; then
    ok "config.mk is generated again when PKG_CONFIG_PATH changes"
else
    not_ok "config.mk not regenerated for a new PKG_CONFIG_PATH" "$out$(cat "$b/config.mk")"
fi
mk BUILD="$b" "$b/config.mk" > /dev/null 2>&1 # back to the plain setup
touch -d '2000-01-01 00:00:00' "$b/config.mk" # older than the Makefile, which stays untouched
mk BUILD="$b" "$b/config.mk" > /dev/null 2>&1
if [ "$(stat -c %Y "$b/config.mk")" -gt "$(date -d '2000-01-02' +%s)" ]; then
    ok "config.mk is generated again when the Makefile is newer"
else
    not_ok "config.mk not regenerated after the Makefile changed"
fi

# 3. A missing module: a clear message naming the Debian package, before any compilation.
fake="$tmp/fake-pkg-config"
real=$(command -v pkg-config)
cat > "$fake" <<EOF
#!/bin/sh
# pkg-config that does not know jansson
for a in "\$@"; do
    [ "\$a" = jansson ] && { echo "Package jansson was not found in the pkg-config search path." >&2; exit 1; }
done
exec "$real" "\$@"
EOF
chmod +x "$fake"
b="$tmp/b2"
out=$(mk BUILD="$b" PKG_CONFIG="$fake" all 2>&1)
rc=$?
if [ $rc -ne 0 ] && grep -q "pkg-config module 'jansson' not found: install the Debian package libjansson-dev" <<<"$out"; then
    ok "a missing pkg-config module stops make and names its Debian package (libjansson-dev)"
else
    not_ok "missing module (exit $rc)" "$out"
fi
if ! grep -qiE 'undefined reference|cc .* -c |ld returned' <<<"$out" && [ ! -e "$b/config.mk" ] &&
    [ -z "$(find "$b" -name '*.o' 2>/dev/null)" ]; then
    ok "nothing was compiled or linked, and no config.mk is left"
else
    not_ok "the build went on without its flags" "$out"
fi
out=$(mk BUILD="$b" PKG_CONFIG="$tmp/no-such-pkg-config" all 2>&1)
if [ $? -ne 0 ] && grep -q "no-such-pkg-config not found: install the Debian package pkg-config" <<<"$out"; then
    ok "no pkg-config at all names the package pkg-config"
else
    not_ok "no pkg-config" "$out"
fi
# The unit tests' module (check) is asked for only by the test goals.
b="$tmp/b3"
out=$(mk BUILD="$b" PKG_CONFIG="$fake" "$b/config-check.mk" 2>&1)
if [ $? -eq 0 ] && grep -q '^CHECK_LIBS := .*-lcheck' "$b/config-check.mk" && [ ! -e "$b/config.mk" ]; then
    ok "config-check.mk holds Check's flags and does not need the build's modules"
else
    not_ok "config-check.mk" "$out"
fi

# 4. Goals that compile nothing read no config (and so install nothing).
b="$tmp/b4"
out=$(mk -n BUILD="$b" PKG_CONFIG="$fake" clean 2>&1)
if [ $? -eq 0 ] && [ ! -e "$b" ]; then
    ok "make clean reads no config"
else
    not_ok "make clean made $b" "$out"
fi

echo "$PASS passed, $FAIL failed"
[ "$FAIL" -eq 0 ]
