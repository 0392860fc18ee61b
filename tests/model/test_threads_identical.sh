#!/bin/sh
# test_threads_identical.sh — the same answer on any number of threads:
# embed, classify and fill-mask on the reference models, for f32, bf16 and
# int8, with --threads 1, 2, 3, 5, 16 and 64, give byte-identical output.
# Each job runs on short texts one at a time (--batch-size 1: a pass of a
# few tokens, whose products are cut into few, narrow blocks) and on a
# batch of texts of mixed lengths. More threads than cores is fine: the threads wait their turn.
# small-fp16 (hidden 256) is the model whose products are large enough to
# be split; the tiny ones check the heads (the 50000-word MLM decoder).
# RF_TEST_COMPUTE, when set, names the compute types to check
# (tests/kernels/test_blas_cores.sh: f32, on each OpenBLAS core).
. tests/check.sh
require_reference "outputs across thread counts"
M=$REF/models

printf '%s\n' '你好' '今天天气很好' '这家餐厅的菜很好吃，服务也很周到，下次还会再来的。' \
    '北京是中国的首都，也是一座历史悠久的城市。上海则是中国最大的经济中心之一。' >"$TMP/batch.txt"

# run_all NAME INPUT COMMAND...: the command, stdin from INPUT, with every
# thread count; each output compared with the one of --threads 1.
run_all() {
    name=$1; input=$2; shift 2
    for t in 1 2 3 5 16 64; do
        if ! run_ok "$TMP/$name.$t" "$@" --threads "$t" <"$input"; then
            check "$name --threads $t: exit 0" false
            return
        fi
    done
    for t in 2 3 5 16 64; do
        check "$name: --threads $t gives the output of --threads 1" \
            same "$TMP/$name.1" "$TMP/$name.$t"
    done
}

# A compute type is skipped only where `roformer info` says this CPU has no
# kernel for it (its "bf16 kernel:" / "int8 kernel:" line: "none (why)");
# where it names one, a run that fails is a failure.
check "info: exit 0" run_ok "$TMP/info" $ROFORMER info -m "$M/tiny-word-cls"
for compute in ${RF_TEST_COMPUTE:-f32 bf16 int8}; do
    kernel=$(sed -n "s/^$compute kernel: *//p" "$TMP/info")
    case $compute:$kernel in
    f32:*) ;;
    *:none*) check_skip "--compute $compute: roformer info says '$compute kernel: $kernel'"; continue ;;
    *:) check "info has a '$compute kernel:' line" false; continue ;;
    esac
    for model in small-fp16 tiny-v2-mlm; do
        run_all "embed-$model-$compute-one-at-a-time" "$TMP/batch.txt" \
            $ROFORMER embed -m "$M/$model" --compute $compute --pooling mean --batch-size 1
        run_all "embed-$model-$compute-batch" "$TMP/batch.txt" \
            $ROFORMER embed -m "$M/$model" --compute $compute --pooling mean
    done
    for model in tiny-word-cls tiny-v2-cls; do
        run_all "classify-$model-$compute-text" /dev/null \
            $ROFORMER classify -m "$M/$model" --compute $compute '今天天气很好'
        run_all "classify-$model-$compute-batch" "$TMP/batch.txt" \
            $ROFORMER classify -m "$M/$model" --compute $compute
    done
    run_all "fill-mask-$compute" /dev/null \
        $ROFORMER fill-mask -m "$M/tiny-word-mlm" --compute $compute '今天[MASK]气很好'
done
check_done
