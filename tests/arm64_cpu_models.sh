# arm64_cpu_models.sh — run by tests/run_arm64.sh only (make test-arm64):
# the ARM64 CLI on qemu CPU models with and without the features of the
# int8 and bf16 builds. $ROFORMER@CPU is the CLI under `qemu -cpu CPU`.
#   --compute bf16 on neoverse-n1 and cortex-a72 (no BF16): refused with
#     one line, exit 1, nothing on stdout;
#   --compute int8 on each model (builds I8MM, SDOT, NEON): byte-identical
#     output where the rest of the computation is the same code, since
#     every build gives the same exact integer sums: SDOT and NEON, both
#     without BF16, so with attention in f32. On max (BF16) attention's
#     products run in bf16: each embedding within cosine 0.999 of the f32
#     attention's, the rule test_bf16 holds for a model run wholly in bf16
#     (2^-8 of each operand).
. tests/check.sh
MODEL=models/sentiment-zh-small.gguf
for cpu in neoverse-n1 cortex-a72; do
    "$ROFORMER@$cpu" embed -m "$MODEL" --compute bf16 你好 >"$TMP/out" 2>"$TMP/err"
    rc=$?
    check "$cpu: --compute bf16 exits 1" [ "$rc" -eq 1 ]
    check "$cpu: --compute bf16 says the CPU lacks BF16" \
        grep -qF "bf16 compute needs a CPU with BF16 (BFDOT, BFMMLA), which this one lacks" "$TMP/err"
    check "$cpu: --compute bf16 error is one line, nothing on stdout" \
        sh -c "[ \$(wc -l <'$TMP/err') -eq 1 ] && [ ! -s '$TMP/out' ]"
done
printf '今天天气很好\n这部电影太难看了，浪费时间\n' >"$TMP/texts"
for cpu in max neoverse-n1 cortex-a72; do
    check "$cpu: embed --compute int8" \
        sh -c "'$ROFORMER@$cpu' embed -m '$MODEL' --compute int8 <'$TMP/texts' >'$TMP/int8-$cpu'"
done
check "int8 embeddings on cortex-a72 (NEON) = on neoverse-n1 (SDOT)" \
    cmp -s "$TMP/int8-neoverse-n1" "$TMP/int8-cortex-a72"
check "int8 embeddings on max (SMMLA, bf16 attention) within cosine 0.999 of neoverse-n1's" \
    /usr/bin/python3 tests/vectors.py close 0.999 "$TMP/int8-max" "$TMP/int8-neoverse-n1"
check "int8 embeddings: one per text" [ "$(grep -c embedding "$TMP/int8-max")" -eq 2 ]
check_done
