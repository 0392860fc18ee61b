#!/bin/sh
# scaling.sh — how `roformer bench` scales with threads: 1, 2, 4, ... up to
# the cores online, and the core count itself, for f32, bf16 and int8 at
# 1 x 128 and 8 x 128 tokens; prints tokens/s, the efficiency against one
# thread (tokens/s at T / (T x tokens/s at 1)), the planner's balance
# (partition_efficiency) and the parallel regions per forward pass.
# Run from the repository root (docs/scaling.md reads the result):
#
#   sh scripts/scaling.sh MODEL.gguf [RUNS]
#
# ROFORMER names the CLI (default build/roformer). A compute type the CPU
# lacks is named and left out.
set -e
model=${1:?usage: sh scripts/scaling.sh MODEL.gguf [RUNS]}
runs=${2:-5}
roformer=${ROFORMER:-build/roformer}
[ -x "$roformer" ] || { echo "scaling.sh: $roformer is not built (make)" >&2; exit 1; }
[ -r "$model" ] || { echo "scaling.sh: cannot read $model" >&2; exit 1; }
cores=$(getconf _NPROCESSORS_ONLN)
threads=""
t=1
while [ "$t" -lt "$cores" ]; do threads="$threads $t"; t=$((t * 2)); done
threads="$threads $cores"

echo "cpu: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -n 1), $cores cores online"
printf '%-5s %-6s %7s %12s %10s %9s %8s\n' compute shape threads tokens/s efficiency balance regions
for compute in f32 bf16 int8; do
    if ! "$roformer" bench -m "$model" --compute $compute --batch 1 --seq-len 16 --threads 1 \
        --runs 1 --warmup 0 >/dev/null 2>&1; then
        echo "$compute: not supported by this CPU, left out"
        continue
    fi
    for shape in "1 128" "8 128"; do
        set -- $shape
        one=""
        for t in $threads; do
            line=$("$roformer" bench -m "$model" --compute $compute --batch "$1" --seq-len "$2" \
                --threads "$t" --runs "$runs" --warmup 1 2>/dev/null | tail -n 1)
            echo "$line" | python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
t, one, compute, shape = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
tps = j["tokens_per_second"]
eff = tps / (t * float(one)) if one else 1.0
print("%-5s %-6s %7d %12.1f %10.2f %9.3f %8d" % (compute, shape, t, tps, eff,
      j["partition_efficiency"], j["parallel_regions"]))
' "$t" "$one" $compute "$1x$2"
            [ -n "$one" ] || one=$(echo "$line" | python3 -c 'import json,sys; print(json.loads(sys.stdin.read())["tokens_per_second"])')
        done
    done
done
