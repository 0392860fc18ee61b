#!/bin/sh
# sgemm_cores.sh — the fp32 FMA peak of one core (tests/bench/fma_peak.c:
# with 256-bit AVX2 FMAs, with 512-bit FMAs when the CPU has AVX-512F, and
# which of the two is the CPU's peak, the one to read sgemm rates against;
# also the int8 VPDPBUSD and bf16 VDPBF16PS peaks where the CPU has
# AVX512-VNNI and AVX512_BF16, and the AMX TDPBSSD and TDPBF16PS peaks where
# it has AMX, the limits of the int8 and bf16 products; the AVX2 int8
# build's instruction sequence and the 256-bit VPDPBUSD and VDPBF16PS; each
# one the CPU lacks is a line that names what is missing; on ARM64 the
# FMLA, SDOT, SMMLA and BFDOT peaks, tests/bench/dot_peak_arm64.c),
# and sgemm GFLOP/s on this machine for each OpenBLAS core type the
# CPU can run (the one OpenBLAS detects, Haswell, and SkylakeX when the CPU has
# AVX-512F), with 1 and 2 OpenBLAS threads and with 2 threads that each run a
# single-threaded sgemm on half of the rows or half of the columns
# (tests/bench/sgemm_bench.c).
#
#   sh scripts/sgemm_cores.sh [RUNS]        (from the repository root)
set -eu
RUNS=${1:-10}
mkdir -p build
cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror $(pkg-config --cflags openblas) \
    tests/bench/sgemm_bench.c -o build/sgemm_bench $(pkg-config --libs openblas) -lpthread
# fma_peak picks its kernels at run time: built without -m flags, it runs on every x86-64 CPU
case $(uname -m) in
x86_64)
    cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror tests/bench/fma_peak.c -o build/fma_peak
    ./build/fma_peak
    ;;
aarch64)
    cc -O2 -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror tests/bench/dot_peak_arm64.c -o build/dot_peak_arm64
    ./build/dot_peak_arm64
    ;;
esac
cores="detected Haswell"
grep -qw avx512f /proc/cpuinfo && cores="$cores SkylakeX"
for core in $cores; do
    for mode in "blas --threads 1" "blas --threads 2" "split --threads 2" "splitn --threads 2"; do
        if [ "$core" = detected ]; then
            env -u OPENBLAS_CORETYPE ./build/sgemm_bench --runs "$RUNS" --mode $mode
        else
            OPENBLAS_CORETYPE=$core ./build/sgemm_bench --runs "$RUNS" --mode $mode
        fi
    done
done
