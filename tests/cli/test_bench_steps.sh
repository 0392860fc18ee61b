# test_bench_steps.sh — `roformer bench` reports where a pass spends its
# time: the JSON line's steps_ms has every kind of step (products,
# attention, norms, quantize, elementwise, waits) and the pass's wall time
# (forward) of the median run, all >= 0; the kinds add up to no more than the
# pass and to at least 80% of it (what rf_forward does outside its steps
# is checking the batch and the heads, which bench does not ask for:
# microseconds, test_step_times.c says why); outside_products_share is
# 1 - products / forward, in [0, 1]; the human lines say the same.
. tests/check.sh

require_reference "bench step timings"
MODEL=$REF/models/tiny-word-cls

steps_ok() { # file
    tail -n 1 "$1" | /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
s = j["steps_ms"]
kinds = ["products", "attention", "norms", "quantize", "elementwise", "waits"]
assert all(isinstance(s[k], (int, float)) and s[k] >= 0 for k in kinds + ["forward"]), s
assert s["products"] > 0 and s["forward"] > 0, s
total = sum(s[k] for k in kinds)
assert total <= s["forward"] * (1 + 1e-9), (total, s)
assert total >= 0.8 * s["forward"], (total, s)
share = j["outside_products_share"]
assert 0 <= share <= 1, share
assert abs(share - (1 - s["products"] / s["forward"])) < 1e-9, (share, s)
'
}

"$ROFORMER" bench -m "$MODEL" --batch 2 --seq-len 64 --threads 2 --runs 3 --warmup 1 >"$TMP/out" 2>"$TMP/err"
check "bench f32 runs" test $? -eq 0
check "bench f32: steps_ms and outside_products_share" steps_ok "$TMP/out"
check "bench f32: the human line by step" grep -q '^median run by step, ms: products ' "$TMP/out"
check "bench f32: nothing quantized" sh -c "tail -n 1 '$TMP/out' | grep -q '\"quantize\":0[,}]'"

"$ROFORMER" bench -m "$MODEL" --batch 2 --seq-len 64 --threads 1 --runs 2 --warmup 0 --skip-padding >"$TMP/out" 2>"$TMP/err"
check "bench one thread runs" test $? -eq 0
check "bench one thread: steps_ms and outside_products_share" steps_ok "$TMP/out"

if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    "$ROFORMER" bench -m "$MODEL" --compute int8 --batch 2 --seq-len 64 --threads 2 --runs 3 --warmup 1 >"$TMP/out" 2>"$TMP/err"
    check "bench int8 runs" test $? -eq 0
    check "bench int8: steps_ms and outside_products_share" steps_ok "$TMP/out"
    check "bench int8: quantizing counted" sh -c "tail -n 1 '$TMP/out' | grep -qv '\"quantize\":0[,}]'"
else
    check_skip "int8 needs AVX2"
fi
check_done
