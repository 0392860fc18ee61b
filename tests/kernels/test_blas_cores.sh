#!/bin/sh
# test_blas_cores.sh — the f32 products give the same answer on any number
# of threads and in any batch on each of OpenBLAS's x86-64 cores, not only
# on the one OpenBLAS picks for this CPU (a user's OPENBLAS_CORETYPE, or
# another machine, picks another): with OPENBLAS_CORETYPE set to SkylakeX
# (AVX-512), Haswell (AVX2 and FMA), Sandybridge (AVX) and Nehalem (SSE4.2),
# each where this CPU has the instructions (/proc/cpuinfo: avx512f, avx2,
# avx, sse4_2; else one skip naming the flag), run
#   test_partition --threads-only
#                                rf_linear bit-identical on 1 to 64 threads
#                                (the planner's checks compute nothing on
#                                OpenBLAS: the plain run has them)
#   test_batch_invariance        every job's output alone and in shuffled
#                                batches on 1 to 16 threads, memcmp
#   test_parity                  the f32 forward against HF's numbers, each
#                                sequence of a padded batch alone, 1 and 2
#                                threads
#   test_threads_identical.sh    the f32 part: the CLI's outputs
#                                byte-identical on 1 to 64 threads
# each a check of its own, labelled with the core. The test binaries are
# those of the build whose CLI is $ROFORMER.
. tests/check.sh
tests=$(dirname "$ROFORMER")/tests
for core in SkylakeX Haswell Sandybridge Nehalem; do
    case $core in
    SkylakeX) flag=avx512f ;;
    Haswell) flag=avx2 ;;
    Sandybridge) flag=avx ;;
    Nehalem) flag=sse4_2 ;;
    esac
    if ! grep -qw "$flag" /proc/cpuinfo 2>/dev/null; then
        check_skip "OPENBLAS_CORETYPE=$core: this CPU has no $flag"
        continue
    fi
    OPENBLAS_CORETYPE=$core "$ROFORMER" version >"$TMP/version" 2>&1
    check "OPENBLAS_CORETYPE=$core: OpenBLAS runs its $core core" \
        grep -q "^blas: core $core," "$TMP/version"
    for t in test_partition test_batch_invariance test_parity; do
        args=
        [ "$t" = test_partition ] && args=--threads-only
        OPENBLAS_CORETYPE=$core "$tests/$t" $args >"$TMP/$core.$t" 2>&1
        rc=$?
        grep -E '^FAIL ' "$TMP/$core.$t" | head -n 5 >&2
        check "OPENBLAS_CORETYPE=$core: $t exits 0 ($(tail -n 1 "$TMP/$core.$t"))" [ "$rc" -eq 0 ]
    done
    # the CLI with the core set, through a wrapper: check.sh unsets
    # OPENBLAS_CORETYPE in the test it runs
    printf '#!/bin/sh\nOPENBLAS_CORETYPE=%s exec "%s" "$@"\n' "$core" "$ROFORMER" >"$TMP/roformer"
    chmod +x "$TMP/roformer"
    RF_TEST_COMPUTE=f32 ROFORMER=$TMP/roformer sh tests/model/test_threads_identical.sh \
        >"$TMP/$core.threads" 2>&1
    rc=$?
    grep -E '^FAIL ' "$TMP/$core.threads" | head -n 5 >&2
    check "OPENBLAS_CORETYPE=$core: test_threads_identical.sh, f32, exits 0 ($(tail -n 1 \
        "$TMP/$core.threads"))" [ "$rc" -eq 0 ]
done
check_done
