#!/bin/sh
# run_x86.sh [-j N] CPU BUILD_DIR TEST_BINARY... — the native build's tests
# run under qemu-x86_64-static -cpu CPU, N at a time, and summed by
# tests/run.sh into its one line "N passed, N failed, N skipped" (make
# test-x86 CPU=NAME; which tests and why: docs/reliability.md, "CPU
# classes").
#
# The library picks its kernels from CPUID, and OpenBLAS its core too, and
# qemu answers CPUID as the model it emulates: under -cpu Haswell-v4 (AVX2
# and FMA, Intel) the int8 product runs its AVX2 build and bf16 compute is
# refused; under -cpu Nehalem (SSE4.2, no AVX) f32 runs on OpenBLAS's
# Nehalem kernels and int8 and bf16 compute are refused. /proc/cpuinfo
# still shows the host's CPU under qemu-user, so only tests that ask the
# library (or the CLI) what the CPU has run here, and tests/x86_cpu_models.sh
# is told the model's name (RF_X86_CPU) to hold the CLI to what it has.
#
# Every given test binary runs under the model, and the shell tests of
# SCRIPTS with $ROFORMER the CLI under it. A program started by a test
# (its exec) would run on the host's CPU, outside qemu: the tests here
# start only $ROFORMER, their checkers and clean-up commands.
jobs=1
case $1 in
-j) jobs=$2; shift 2 ;;
-j*) jobs=${1#-j}; shift ;;
esac
cpu=${1:-}
build=${2:-build}
[ $# -ge 2 ] && shift 2
qemu=${QEMU_X86_64:-qemu-x86_64-static}
# the shell tests: the CLI's kernels on the model, every int8 build it runs
# byte-identical, and convert/info (int8 on a q8 file); the others spend
# their time starting the CLI (each start an emulated model load) on code
# that does not depend on the CPU
SCRIPTS="tests/x86_cpu_models.sh tests/kernels/test_kernel_choice.sh tests/cli/test_cli_convert.sh"
if [ -z "$cpu" ]; then
    echo "run_x86.sh: name a qemu CPU model (make test-x86 CPU=Haswell-v4; qemu-x86_64-static -cpu help lists them)" >&2
    exit 2
fi
if ! command -v "$qemu" >/dev/null 2>&1; then
    echo "run_x86.sh: no $qemu: install qemu-user-static (sh scripts/setup.sh --x86)" >&2
    exit 1
fi
# qemu warns, on every start, of each feature of the model that it cannot
# emulate (Haswell's PCID, x2APIC, ...), and runs without it: those are
# turned off by name, so that the warnings do not reach the tests' stderr.
# An unknown model is named here, once.
if ! probe=$("$qemu" -cpu "$cpu" /bin/true 2>&1); then
    echo "run_x86.sh: qemu cannot run -cpu $cpu: $probe" >&2
    exit 1
fi
model=$cpu$(echo "$probe" |
    sed -n "s/.*TCG doesn't support requested feature: CPUID\.[^.]*\.\([a-z0-9_-]*\) \[bit.*/,-\1/p" |
    sort -u | tr -d '\n')

# $wrap/NAME: one binary under the model; the directory keeps the tests'
# times (tests/run.sh: longest first) from one run to the next
wrap=$(cd "$build" && pwd)/qemu-$cpu
mkdir -p "$wrap"
wrapper() { # NAME BINARY [VAR=VALUE...]; sh has no local variables: w_*
    w_name=$1 w_bin=$2
    shift 2
    case "$w_bin" in /*) ;; *) w_bin=$(pwd)/$w_bin ;; esac
    printf '#!/bin/sh\nexec env %s "%s" -cpu %s "%s" "$@"\n' "$*" "$qemu" "$model" "$w_bin" \
        >"$wrap/$w_name"
    chmod +x "$wrap/$w_name"
}
wrapper roformer "$build/roformer"
# test_int8, test_bf16 and test_parity take minutes per model under
# emulation (qemu computes FMA and the SSE arithmetic in software): they run
# on two RoFormer models (tiny-qa; tiny-word-cls, which test_bf16 also
# converts to a bf16 file) and one RoFormer-v2 model, a directory of links
# to them, as test_int8 and test_bf16 do under tests/run_arm64.sh
ref=${ROFORMER_REFERENCE:-../shared/reference}
small_ref=""
if [ -d "$ref/models" ]; then
    small_ref=$wrap/reference
    rm -rf "$small_ref"
    mkdir -p "$small_ref/models"
    ref=$(cd "$ref" && pwd)
    for f in "$ref"/*; do
        [ "$(basename "$f")" = models ] || ln -s "$f" "$small_ref/"
    done
    for m in tiny-qa tiny-v2-cls tiny-word-cls; do
        ln -s "$ref/models/$m" "$small_ref/models/$m"
    done
fi
tests=""
for t in "$@"; do
    name=$(basename "$t")
    case "$name" in
    test_int8 | test_bf16 | test_parity)
        wrapper "$name" "$t" ${small_ref:+ROFORMER_REFERENCE=$small_ref} ;;
    # the tile emulator's backends: portable C, tested natively
    test_kernels) wrapper "$name" "$t" RF_TEST_SKIP_EMULATED=1 ;;
    *) wrapper "$name" "$t" ;;
    esac
    tests="$tests $wrap/$name"
done
# tests/run.sh sets $ROFORMER to $wrap/roformer. Each test gets twice its
# native limit (TEST_TIMEOUT): test_partition and test_parity take minutes
# of emulated CPU here.
TEST_TIMEOUT=${TEST_TIMEOUT:-1800} RF_X86_CPU=$cpu RF_TEST_SCRIPTS=$SCRIPTS \
    exec sh tests/run.sh -j "$jobs" "$wrap" $tests
