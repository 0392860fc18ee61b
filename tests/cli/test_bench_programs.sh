# test_bench_programs.sh — the measuring programs of tests/bench/, which
# docs/performance.md's commands build by hand and no rule builds, still
# compile against today's headers (each on the architecture of its
# intrinsics); and raw_products, linked to the library
# under test, measures every base-layer shape with the products this CPU
# runs (a rate above zero, the build named).
. tests/check.sh
PKG_CONFIG=${PKG_CONFIG:-pkg-config}
flags="-std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -Wno-psabi -Iinclude -Isrc"
flags="$flags $($PKG_CONFIG --cflags openblas libcjson libutf8proc 2>/dev/null)"
for f in tests/bench/*.c; do
    # the x86-64 instruction benches compile only there
    if grep -q '<immintrin.h>' "$f" && [ "$(uname -m)" != x86_64 ]; then
        check_skip "$f: x86-64 intrinsics, not on $(uname -m)"
        continue
    fi
    # the ARM64 ones only there
    if grep -q '<arm_neon.h>' "$f" && [ "$(uname -m)" != aarch64 ]; then
        check_skip "$f: ARM64 intrinsics, not on $(uname -m)"
        continue
    fi
    check "$f compiles" ${CC:-cc} $flags -fsyntax-only "$f"
done

lib=$(dirname "$ROFORMER")/libroformer.a
if nm "$lib" 2>/dev/null | grep -q __asan_init; then
    check_skip "raw_products not run: $lib is a sanitizer build"
    check_done; exit
fi
libs="$($PKG_CONFIG --libs openblas libcjson libutf8proc libcurl libcrypto) -lpthread -lm"
check "raw_products links to $lib" ${CC:-cc} $flags -O2 tests/bench/raw_products.c "$lib" $libs \
    -o "$TMP/raw_products"
check "raw_products runs" run_ok "$TMP/out" "$TMP/raw_products" 1
# one line per shape, each int8 rate (and bf16's where the CPU has a build) above zero
check "raw_products: 5 shapes, every rate above zero and its build named" \
    awk '/^M / { n++; for (i = 1; i <= NF; i++) if ($i ~ /^\(/ && !($(i + 1) > 0)) bad++ }
         /int8 \(/ { named++ }
         END { exit !(n == 5 && named == 5 && bad == 0) }' "$TMP/out"
check "raw_products refuses a build it does not know, exit 2" \
    run_rc 2 "$TMP/bad" sh -c "'$TMP/raw_products' 1 no-such-build 2>&1"
check_done
