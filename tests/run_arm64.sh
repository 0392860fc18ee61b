#!/bin/sh
# run_arm64.sh [-j N] BUILD_DIR TEST_BINARY... — the ARM64 build's tests
# (make ARCH=aarch64) run under qemu-aarch64-static, N at a time, and summed
# by tests/run.sh into its one line "N passed, N failed, N skipped" (make
# test-arm64; docs/arm64.md says which tests run where).
#
# Every given test binary and the shell tests of SCRIPTS run on qemu's
# `-cpu max`, which has every feature the kernels use (the dot product,
# I8MM, BF16); $ROFORMER is the CLI under it. test_kernels also runs on
# `-cpu neoverse-n1` (the dot product, no I8MM nor BF16) and
# `-cpu cortex-a72` (neither), told what each has, to show that the
# fallback builds are the ones chosen, and correct (only its product tests:
# the rest does not depend on those features).
# tests/arm64_cpu_models.sh runs the CLI on those models too.
# OpenBLAS would read the host's /proc/cpuinfo to pick its kernels: every
# wrapper sets OPENBLAS_CORETYPE=ARMV8 (the generic ARMv8 ones).
jobs=1
case $1 in
-j) jobs=$2; shift 2 ;;
-j*) jobs=${1#-j}; shift ;;
esac
build=${1:-build-arm64}
shift
qemu=${QEMU_AARCH64:-qemu-aarch64-static}
SCRIPTS="tests/cli/test_cli_tokenize.sh tests/cli/test_cli_convert.sh tests/arm64_cpu_models.sh"
if ! command -v "$qemu" >/dev/null 2>&1; then
    echo "run_arm64.sh: no $qemu: install qemu-user-static (sh scripts/setup.sh --arm64)" >&2
    exit 1
fi

# $wrap/NAME: runs one binary under one CPU model, with the variables given;
# the directory keeps the tests' times (tests/run.sh: longest first) from
# one run to the next
wrap=$(cd "$build" && pwd)/qemu
mkdir -p "$wrap"
find "$wrap" -mindepth 1 -maxdepth 1 ! -name test-times -exec rm -rf {} +
wrapper() { # NAME CPU BINARY [VAR=VALUE...]; sh has no local variables: w_*
    w_name=$1 w_cpu=$2 w_bin=$3
    shift 3
    case "$w_bin" in /*) ;; *) w_bin=$(pwd)/$w_bin ;; esac
    printf '#!/bin/sh\nexec env OPENBLAS_CORETYPE=ARMV8 %s "%s" -cpu %s "%s" "$@"\n' "$*" "$qemu" \
        "$w_cpu" "$w_bin" >"$wrap/$w_name"
    chmod +x "$wrap/$w_name"
}
for cpu in max neoverse-n1 cortex-a72; do
    wrapper "roformer@$cpu" "$cpu" "$build/roformer"
done
cp "$wrap/roformer@max" "$wrap/roformer"
# test_int8 and test_bf16 take minutes per model under emulation: they run
# on two RoFormer models (tiny-qa; tiny-word-cls, which test_bf16 also
# converts to a bf16 file) and one RoFormer-v2 model, a directory of links
# to them (test_parity runs on every model)
ref=${ROFORMER_REFERENCE:-../shared/reference}
small_ref=""
one_ref=""
# ref_subset DIR MODEL...: DIR holds links to every fixture of $ref but
# its models, and to the models named
ref_subset() {
    rs_dir=$1; shift
    mkdir -p "$rs_dir/models"
    for f in "$ref"/*; do
        [ "$(basename "$f")" = models ] || ln -s "$f" "$rs_dir/"
    done
    for m in "$@"; do
        ln -s "$ref/models/$m" "$rs_dir/models/$m"
    done
}
if [ -d "$ref/models" ]; then
    ref=$(cd "$ref" && pwd)
    small_ref=$wrap/reference
    ref_subset "$small_ref" tiny-qa tiny-v2-cls tiny-word-cls
    # test_batch_invariance (minutes per model and compute type under
    # emulation) on tiny-char-proj: an embedding projection and a token
    # head, f32, bf16 and int8 on OpenBLAS's ARMV8 core
    one_ref=$wrap/reference-one
    ref_subset "$one_ref" tiny-char-proj
fi
tests=""
for t in "$@"; do
    name=$(basename "$t")
    case "$name" in
    test_int8 | test_bf16)
        wrapper "$name" max "$t" ${small_ref:+ROFORMER_REFERENCE=$small_ref}
        tests="$tests $wrap/$name" ;;
    test_batch_invariance)
        wrapper "$name" max "$t" ${one_ref:+ROFORMER_REFERENCE=$one_ref}
        tests="$tests $wrap/$name" ;;
    test_attention)
        # the lengths around one block's edges (the long ones take minutes)
        wrapper "$name" max "$t" RF_TEST_SHORT=1
        tests="$tests $wrap/$name" ;;
    test_kernels)
        wrapper "$name" max "$t" RF_EXPECT_INT8=I8MM RF_EXPECT_BF16=yes
        wrapper "$name@neoverse-n1" neoverse-n1 "$t" RF_EXPECT_INT8=SDOT RF_EXPECT_BF16=no \
            RF_TEST_PRODUCTS_ONLY=1
        wrapper "$name@cortex-a72" cortex-a72 "$t" RF_EXPECT_INT8=NEON RF_EXPECT_BF16=no \
            RF_TEST_PRODUCTS_ONLY=1
        tests="$tests $wrap/$name $wrap/$name@neoverse-n1 $wrap/$name@cortex-a72" ;;
    *)
        wrapper "$name" max "$t"
        tests="$tests $wrap/$name" ;;
    esac
done
RF_TEST_SCRIPTS=$SCRIPTS exec sh tests/run.sh -j "$jobs" "$wrap" $tests
