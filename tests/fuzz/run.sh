#!/usr/bin/env bash
# make fuzz: builds every tests/fuzz/fuzz_*.c with clang's libFuzzer, ASan and UBSan, and runs each
# for FUZZ_SECONDS (default 60), seeded from the test fixtures and tests/corpus. A crash stops the
# run with the reproducer path; keep it as a regression case (tests/fuzz/regressions/<target>/).
set -euo pipefail
cd "$(dirname "$0")/../.."
SECONDS_EACH=${FUZZ_SECONDS:-60}
ONLY=${FUZZ_TARGETS:-}
BUILD=build-fuzz
CC=${FUZZ_CC:-clang}
command -v "$CC" >/dev/null || { echo "fuzz: $CC not found (make deps installs clang)"; exit 2; }
SAN="-fsanitize=address,undefined -fno-sanitize-recover=all"
make --no-print-directory BUILD=$BUILD CC="$CC" OPT="-O1 -g -fno-omit-frame-pointer" \
    EXTRA_CFLAGS="$SAN -fsanitize=fuzzer-no-link" $BUILD/libtg.a >/dev/null
CFLAGS="-std=c11 -D_GNU_SOURCE -Iinclude -Isrc -O1 -g $SAN $(pkg-config --cflags jansson)"
LIBS="$(pkg-config --libs libmicrohttpd jansson yaml-0.1 openssl gnutls) -lm -pthread"
seed_dir() { # target -> directory of seeds
    local t=$1 d=$BUILD/seeds/$1
    rm -rf "$d"; mkdir -p "$d"
    case $t in
        review|reader) cp tests/fixtures/reviews/*.request.json "$d"/ 2>/dev/null || true ;;
        yaml) cp tests/fixtures/*/*.yaml "$d"/ 2>/dev/null || true
              find tests/corpus -mindepth 2 -path tests/corpus/LICENSES -prune -o -name '*.yaml' \
                  -exec sh -c 'for f; do cp "$f" "$0/$(echo "${f#tests/corpus/}" | tr / _)"; done' "$d" {} + ;;
        policy) cp src/policy/*.embed.yaml tests/fixtures/policy/*.yaml "$d"/ 2>/dev/null || true ;;
        launcher) printf 'mpirun -np 16 -N 8 -x FI_PROVIDER=efa all_reduce_perf' > "$d/a"
                  printf 'NP=$((2*8)); mpirun --oversubscribe -np $NP --map-by ppr:8:node ./t' > "$d/b" ;;
        quantity) for q in 8 8k 5120Mi 1e3 500m 0.5Gi -1 1Ei; do printf '%s' "$q" > "$d/$q"; done ;;
        ptr) printf 'vpc.amazonaws.com/efa' > "$d/a"; printf 'a~b/c' > "$d/b" ;;
    esac
    [ -d tests/fuzz/regressions/$t ] && cp tests/fuzz/regressions/$t/* "$d"/ 2>/dev/null || true
    echo "$d"
}
status=0
for src in tests/fuzz/fuzz_*.c; do
    t=$(basename "$src" .c); t=${t#fuzz_}
    [ -n "$ONLY" ] && [[ " $ONLY " != *" $t "* ]] && continue
    bin=$BUILD/fuzz_$t
    $CC $CFLAGS -fsanitize=fuzzer "$src" $BUILD/libtg.a $LIBS -o "$bin"
    seeds=$(seed_dir "$t")
    mkdir -p $BUILD/corpus-$t
    echo "fuzz: $t for ${SECONDS_EACH}s"
    if ! "$bin" -max_total_time="$SECONDS_EACH" -max_len=65536 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix=$BUILD/crash-$t- $BUILD/corpus-$t "$seeds" >$BUILD/fuzz-$t.log 2>&1; then
        echo "fuzz: $t FAILED (see $BUILD/fuzz-$t.log)"; tail -30 $BUILD/fuzz-$t.log; status=1
    else
        grep -E "^#[0-9]+.*(DONE|pulse)" $BUILD/fuzz-$t.log | tail -1 || true
    fi
done
exit $status
