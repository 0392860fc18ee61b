# test_bench_cli.sh — `roformer bench` on a small reference model: the last
# line is one JSON object with the documented fields and consistent values
# (the one-time costs, load, context and first batch, among them);
# bad options and bad length files give a one-line error and exit 1 or 2;
# --compute bf16 runs, or is refused clearly on a CPU without AVX512_BF16;
# --compute int8 likewise without AVX2.
# (Speed itself is measured by scripts/compare.sh, never asserted here.)
. tests/check.sh

if [ -z "$REF" ]; then
    check_skip "no reference directory (../shared/reference or \$ROFORMER_REFERENCE)"
    check_done; exit $?
fi
MODEL=$REF/models/tiny-word-cls

# the JSON line, checked with Debian's python3 (a test dependency only)
json_ok() { # file batch seq_len real_tokens threads
    tail -n 1 "$1" | /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
b, l, real, t = map(int, sys.argv[1:])
assert j["batch"] == b and j["seq_len"] == l and j["real_tokens"] == real and j["threads"] == t, j
assert j["ms_min"] <= j["ms_median"] <= j["ms_max"] and j["ms_min"] > 0, j
assert abs(j["tokens_per_second"] - real / (j["ms_median"] / 1000)) < 1e-6 * j["tokens_per_second"], j
assert isinstance(j["blas_core"], str) and j["blas_core"] and len(j["ms"]) == j["runs"], j
assert j["load_ms"] > 0 and j["context_ms"] >= 0 and j["first_batch_ms"] > 0, j
' "$2" "$3" "$4" "$5"
}

"$ROFORMER" bench -m "$MODEL" --batch 3 --seq-len 40 --threads 2 --runs 3 --warmup 1 >"$TMP/out" 2>"$TMP/err"
check "bench runs (exit 0)" test $? -eq 0
check "bench JSON: 3 x 40" json_ok "$TMP/out" 3 40 120 2
check "human lines name the BLAS core" grep -q '^blas: OpenBLAS core ' "$TMP/out"

# peak_share: the pass's multiply-adds at the probed per-core peaks times
# the threads, over its time; a pass cannot beat its instructions' peak, so
# it is in (0, 1]. f32 runs on FMA, which every x86-64 CPU with the flag
# has a probe for; elsewhere it may be null (no probe).
peak_ok() { # file
    tail -n 1 "$1" | /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
p = j["peak_share"]
assert (p is None and sys.argv[1] == "no") or (isinstance(p, float) and 0 < p <= 1), j
' "$(grep -qw fma /proc/cpuinfo 2>/dev/null && [ "$(uname -m)" = x86_64 ] && echo yes || echo no)"
}
check "bench JSON: peak_share in (0, 1]" peak_ok "$TMP/out"

# parallel_regions: wakes of the workers per forward pass, none on one
# thread; partition_efficiency: the planner's balance of the products.
# small-fp16 (2 layers) at 1 x 128 in f32: per layer at most the Q|K|V
# product, attention, the output product, a norm, the two FFN products and
# a norm, after the embeddings' norm (17 allows a ninth per layer, as when
# RoPE had a region of its own); its products are 6, 2,
# 8 and 2 units of 128 x 128, which two threads share evenly, four not
# (Q|K|V: 2 units on the busiest, 1.5 the mean)
regions_ok() { # file threads max_regions efficiency
    tail -n 1 "$1" | /usr/bin/python3 -c '
import json, sys
j = json.loads(sys.stdin.read())
t, most, eff = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
r = j["parallel_regions"]
assert r == int(r) and (r == 0 if t == 1 else 0 < r <= most), j
assert abs(j["partition_efficiency"] - eff) < 1e-9 if t < 4 else j["partition_efficiency"] < eff, j
' "$2" "$3" "$4"
}
for t in 1 2 4; do
    "$ROFORMER" bench -m "$REF/models/small-fp16" --batch 1 --seq-len 128 --threads $t --runs 2 --warmup 1 \
        >"$TMP/out" 2>"$TMP/err"
    check "bench --threads $t runs" test $? -eq 0
    check "bench JSON, $t threads: parallel_regions and partition_efficiency" \
        regions_ok "$TMP/out" $t 17 1
done

printf '7\n30\n\n12\n' >"$TMP/lengths"
"$ROFORMER" bench -m "$MODEL" --lengths-from "$TMP/lengths" --threads 1 --runs 2 --warmup 0 >"$TMP/out" 2>"$TMP/err"
check "bench --lengths-from runs" test $? -eq 0
check "bench JSON: mixed lengths 7, 30, 12" json_ok "$TMP/out" 3 30 49 1
"$ROFORMER" bench -m "$MODEL" --lengths-from "$TMP/lengths" --skip-padding --runs 2 --warmup 0 >"$TMP/out" 2>"$TMP/err"
check "bench --skip-padding runs" test $? -eq 0
check "bench JSON: skip_padding true" sh -c "tail -n 1 '$TMP/out' | grep -q '\"skip_padding\":true'"

# --compute bf16: runs where the CPU has AVX512_BF16, else one clear line and exit 1
"$ROFORMER" bench -m "$MODEL" --compute bf16 --batch 2 --seq-len 30 --runs 2 --warmup 0 >"$TMP/out" 2>"$TMP/err"
rc=$?
if grep -q avx512_bf16 /proc/cpuinfo 2>/dev/null; then
    check "bench --compute bf16 runs" test $rc -eq 0
    check "bench JSON: compute bf16" sh -c "tail -n 1 '$TMP/out' | grep -q '\"compute\":\"bf16\"'"
else
    check "bench --compute bf16 without AVX512_BF16: exit 1" test $rc -eq 1
    check "bench --compute bf16 without AVX512_BF16: says so" grep -q 'AVX512_BF16' "$TMP/err"
fi
# --compute int8: runs where the CPU has AVX2, else one clear line and exit 1
"$ROFORMER" bench -m "$MODEL" --compute int8 --batch 2 --seq-len 30 --runs 2 --warmup 0 >"$TMP/out" 2>"$TMP/err"
rc=$?
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    check "bench --compute int8 runs" test $rc -eq 0
    check "bench JSON: compute int8" sh -c "tail -n 1 '$TMP/out' | grep -q '\"compute\":\"int8\"'"
else
    check "bench --compute int8 without AVX2: exit 1" test $rc -eq 1
    check "bench --compute int8 without AVX2: says so" grep -q 'AVX2' "$TMP/err"
fi
"$ROFORMER" bench -m "$MODEL" --compute f16 >"$TMP/out" 2>"$TMP/err"
check "--compute f16 is a usage error" test $? -eq 2
"$ROFORMER" embed -m "$MODEL" --compute f64 x >"$TMP/out" 2>"$TMP/err"
check "embed --compute f64 is a usage error" test $? -eq 2

"$ROFORMER" bench -m "$MODEL" --runs 0 >"$TMP/out" 2>"$TMP/err"
check "--runs 0 is a usage error" test $? -eq 2
"$ROFORMER" bench --seq-len 8 >"$TMP/out" 2>"$TMP/err"
check "missing -m is a usage error" test $? -eq 2
"$ROFORMER" bench -m "$MODEL" --bogus 1 >"$TMP/out" 2>"$TMP/err"
check "unknown option is a usage error" test $? -eq 2
printf '5\nseven\n' >"$TMP/bad"
"$ROFORMER" bench -m "$MODEL" --lengths-from "$TMP/bad" >"$TMP/out" 2>"$TMP/err"
check "bad length file: exit 1" test $? -eq 1
check "bad length file: line named" grep -q "bad:2: 'seven'" "$TMP/err"
check "bad length file: nothing on stdout" test ! -s "$TMP/out"
"$ROFORMER" bench -m "$MODEL" --seq-len 5000 >"$TMP/out" 2>"$TMP/err"
check "sequence over max_position: exit 1" test $? -eq 1
"$ROFORMER" bench -m "$TMP/no-such-model.gguf" >"$TMP/out" 2>"$TMP/err"
check "missing model: exit 1" test $? -eq 1
check "missing model: one line on stderr" test "$(wc -l <"$TMP/err")" -eq 1
check_done
