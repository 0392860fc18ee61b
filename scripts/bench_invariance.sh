#!/bin/sh
# bench_invariance.sh OLD_ROFORMER NEW_ROFORMER — the engine before and after
# a change, interleaved: for each round, each shape and compute type, `bench`
# of the old binary then the new one on the base-size files (f32:
# build/base.gguf; int8: build/base-q8.gguf; scripts/make_base_checkpoint.py
# and `roformer convert [--dtype q8]` make them), 2 threads. Prints one line
# per run, then the medians and new/old per shape. ROUNDS (default 3), RUNS
# (timed runs per bench, default 3).
old=$1 new=$2
rounds=${ROUNDS:-3} runs=${RUNS:-3}
out=$(mktemp)
lengths=build/mixed-chnsenticorp.txt
[ -f "$lengths" ] || /usr/bin/python3 scripts/corpus_lengths.py --corpus chnsenticorp \
    --roformer "$new" -m build/base.gguf >"$lengths"
for r in $(seq "$rounds"); do
    for c in f32 int8; do
        model=build/base.gguf
        [ "$c" = int8 ] && model=build/base-q8.gguf
        for shape in 8x128 8x512 1x128 1x16 mixed; do
            case $shape in
            mixed) args="--lengths-from $lengths --skip-padding" ;;
            *) args="--batch ${shape%x*} --seq-len ${shape#*x}" ;;
            esac
            for which in old new; do
                bin=$old
                [ "$which" = new ] && bin=$new
                tps=$("$bin" bench -m "$model" --compute "$c" $args --threads 2 --runs "$runs" \
                    --warmup 1 2>/dev/null | tail -n 1 |
                    /usr/bin/python3 -c 'import json,sys; print(json.load(sys.stdin)["tokens_per_second"])')
                echo "$r $c $shape $which $tps" | tee -a "$out"
            done
        done
    done
done
/usr/bin/python3 - "$out" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
keys = sorted({(c, s) for _, c, s, _, _ in rows}, key=lambda k: (k[0], k[1]))
print("compute shape old_tokens/s new_tokens/s new/old")
for c, s in keys:
    med = {w: statistics.median(float(t) for _, cc, ss, ww, t in rows if (cc, ss, ww) == (c, s, w))
           for w in ("old", "new")}
    print(f"{c} {s} {med['old']:.1f} {med['new']:.1f} {med['new'] / med['old']:.3f}")
PY
rm -f "$out"
