#!/bin/sh
# bench_long_inputs.sh MODEL [ROUNDS] — tokens/s and peak RSS of one
# sequence of 512, 1024, 2048, 4096 and 8192 tokens (batch 1, 2 threads,
# --extend-positions past the model's max_position) for each compute type
# this CPU has (f32; int8 with AVX2; bf16 with AVX512_BF16). The lengths
# run interleaved, ROUNDS times (default 3; 3 timed runs after a warm-up
# below 4096 tokens, one timed run from 4096 on), so that
# a noisy machine slows them alike; prints one line per (compute, length):
# the median tokens/s of the rounds, its ratio to 512 tokens', and the
# largest peak RSS. The base-size model: scripts/make_base_checkpoint.py,
# then roformer convert.
#
# ROFORMER names the binary (default build/roformer). With BASELINE set to
# a second binary, each run of ROFORMER is followed by the same run of
# BASELINE, and a second block of lines gives BASELINE's numbers: a before
# and after measured under the same load.
model=${1:?usage: bench_long_inputs.sh MODEL [ROUNDS]}
rounds=${2:-3}
roformer=${ROFORMER:-build/roformer}
binaries="$roformer"
[ -n "$BASELINE" ] && binaries="$roformer $BASELINE"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
computes="f32 int8"
grep -q avx512_bf16 /proc/cpuinfo && computes="f32 bf16 int8"
for r in $(seq "$rounds"); do
    for c in $computes; do
        for L in 512 1024 2048 4096 8192; do
            runs=3 warmup=1
            [ "$L" -ge 4096 ] && runs=1 warmup=0
            i=0
            for bin in $binaries; do
                i=$((i + 1))
                "$bin" bench -m "$model" --seq-len "$L" --batch 1 --threads 2 --runs "$runs" \
                    --warmup "$warmup" --compute "$c" --extend-positions | tail -n 1 \
                    >>"$out/$i-$c-$L.jsonl" || exit 1
            done
        done
    done
done
/usr/bin/python3 - "$out" "$binaries" $computes <<'PY'
import json, statistics, sys
out, binaries, computes = sys.argv[1], sys.argv[2].split(), sys.argv[3:]
for i, binary in enumerate(binaries, 1):
    print(binary)
    print("compute  tokens  tokens/s (median of rounds)  x 512's  peak RSS MB")
    for c in computes:
        base = None
        for L in (512, 1024, 2048, 4096, 8192):
            runs = [json.loads(l) for l in open("%s/%d-%s-%d.jsonl" % (out, i, c, L))]
            tps = statistics.median(r["tokens_per_second"] for r in runs)
            base = base or tps
            print("%-7s  %6d  %10.1f                   %5.2f    %d"
                  % (c, L, tps, tps / base, max(r["peak_rss_mb"] for r in runs)))
PY
