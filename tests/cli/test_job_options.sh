#!/bin/sh
# test_job_options.sh — the job options docs/jobs.md states, each held at
# the number the document gives: rerank's --positive-label (the label whose
# probability or logit is the score, against softmax of `forward`'s pair
# logits), rerank ranking every document without --top-n and keeping input
# order on equal scores, --threads past the cores (one note on stderr),
# --batch-size's range 1 to 4096 and its default of 8 (the batch count of
# --timings), --compute on a CPU without its instructions (one line, exit
# 1; compute.md), --max-line-bytes on every command that reads lines,
# scm's default cut at the model's maximum, fill-mask's default --top-k 5
# and qa's default --max-answer-tokens 15.
. tests/check.sh
PY=/usr/bin/python3

require_reference "the job options"
M=$REF/models

# ==== rerank --positive-label ====
# A classifier scores [CLS] query [SEP] document [SEP] by one label's softmax
# probability: the label named positive by default, label N with
# --positive-label N, its logit with --raw-scores. The expected values are
# `forward`'s logits of the same pairs, softmaxed here.
require_python "numpy" "rerank scores against forward's logits"
CLS=$M/tiny-word-cls   # labels: negative, neutral, positive
query=这个东西怎么样
printf '还行吧\n很好的产品，非常满意\n质量很差，不推荐\n' >"$TMP/docs"
while IFS= read -r d; do
    printf '{"text": "%s", "text_pair": "%s"}\n' "$query" "$d"
done <"$TMP/docs" >"$TMP/pairs"
check "forward on the query-document pairs: exit 0" \
    run_ok "$TMP/logits" $ROFORMER forward -m "$CLS" <"$TMP/pairs"
# rerank_matches OUT LABEL raw|prob: each document's score (by "index") is
# that label's probability or logit from forward, within float32 noise.
rerank_matches() {
    $PY - "$1" "$TMP/logits" "$2" "$3" <<'EOF'
import json, sys
import numpy as np
out, logits, label, kind = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
rows = [np.array(json.loads(l)["logits"], dtype=np.float64) for l in open(logits)]
want = [r[label] if kind == "raw" else np.exp(r[label] - r.max()) / np.exp(r - r.max()).sum()
        for r in rows]
got = [json.loads(l) for l in open(out)]
assert sorted(g["index"] for g in got) == list(range(len(rows))), got
for g in got:
    assert abs(g["score"] - want[g["index"]]) <= 1e-5, (g, want)
scores = [g["score"] for g in got]
assert scores == sorted(scores, reverse=True), scores
EOF
}
check "rerank on a classifier: exit 0" \
    run_ok "$TMP/r-default" $ROFORMER rerank -m "$CLS" --query "$query" <"$TMP/docs"
check "rerank's default score is the probability of the label named positive (2)" \
    rerank_matches "$TMP/r-default" 2 prob
for n in 0 1; do
    check "rerank --positive-label $n: exit 0" \
        run_ok "$TMP/r-$n" $ROFORMER rerank -m "$CLS" --query "$query" --positive-label $n <"$TMP/docs"
    check "rerank --positive-label $n scores label $n's probability" rerank_matches "$TMP/r-$n" $n prob
done
check "rerank --positive-label 0 --raw-scores: exit 0" \
    run_ok "$TMP/r-raw" $ROFORMER rerank -m "$CLS" --query "$query" --positive-label 0 --raw-scores <"$TMP/docs"
check "rerank --positive-label 0 --raw-scores scores label 0's logit" rerank_matches "$TMP/r-raw" 0 raw
$ROFORMER rerank -m "$CLS" --query "$query" --positive-label 3 <"$TMP/docs" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "rerank --positive-label 3 of 3 labels: exit 1, one line naming the label count" \
    sh -c "[ $rc -eq 1 ] && [ ! -s '$TMP/out' ] && grep -qx 'roformer: error: positive_label 3: the model has 3 labels' '$TMP/err'"

# Without --top-n every document is ranked (7 documents: more than any
# small default would keep).
printf '%s\n' 一 二 三 四 五 六 七 >"$TMP/seven"
check "rerank of 7 documents without --top-n: exit 0" \
    run_ok "$TMP/r7" $ROFORMER rerank -m "$CLS" --query "$query" <"$TMP/seven"
check "rerank without --top-n prints all 7, each index once" \
    sh -c "[ \$(wc -l <'$TMP/r7') -eq 7 ] && [ \$(grep -o '\"index\":[0-9]*' '$TMP/r7' | sort -u | wc -l) -eq 7 ]"

# Equal scores keep input order: repeated documents, each in a batch of
# its own (--batch-size 1) so that their scores are the same bits.
printf '%s\n' 还行吧 很好 还行吧 很好 还行吧 >"$TMP/repeated"
check "rerank --batch-size 1 of repeated documents: exit 0" \
    run_ok "$TMP/r-ties" $ROFORMER rerank -m "$CLS" --query "$query" --batch-size 1 <"$TMP/repeated"
check "rerank: equal scores (there are ties) keep input order" $PY -c '
import json, sys
got = [json.loads(l) for l in open(sys.argv[1])]
ties = [(a, b) for a, b in zip(got, got[1:]) if a["score"] == b["score"]]
assert len(got) == 5 and len(ties) == 3, got
assert all(a["index"] < b["index"] for a, b in ties), got' "$TMP/r-ties"

# ==== --threads past the cores: allowed, said once ====
cores=$(getconf _NPROCESSORS_ONLN)
more=$((cores + 1))
if [ "$more" -le 256 ]; then
    check "embed --threads $more (cores + 1) on 3 inputs: exit 0" \
        run_ok "$TMP/out" $ROFORMER embed -m "$CLS" --threads $more 一 二 三
    check "--threads past the cores: stderr is the one note naming both numbers" \
        sh -c "[ \$(wc -l <'$TMP/out.err') -eq 1 ] &&
               grep -qx 'roformer: note: --threads $more is more than the $cores cores online' '$TMP/out.err'"
    check "embed --threads $cores: exit 0" run_ok "$TMP/out" $ROFORMER embed -m "$CLS" --threads $cores 一
    check "--threads at the core count: nothing on stderr" [ ! -s "$TMP/out.err" ]
else
    check_skip "$cores cores online: --threads cannot pass them within its 256"
fi

# ==== --batch-size: 1 to 4096, default 8 ====
for n in 0 4097; do
    $ROFORMER embed -m "$CLS" --batch-size $n x >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "embed --batch-size $n: exit 2, naming the range" \
        sh -c "[ $rc -eq 2 ] && grep -qF \"roformer embed: --batch-size wants an integer from 1 to 4096, not '$n'\" '$TMP/err'"
done
# 17 different inputs (equal ones run once): batches of 8 make 3 (8 + 8 +
# 1); of 1, 17; of 4096, 1.
awk 'BEGIN { for (i = 0; i < 17; i++) print "今天天气很好" i }' >"$TMP/17"
batches() { sed -n 's/^roformer: timings: .* \([0-9][0-9]*\) batches;.*/\1/p' "$1"; }
for n in "" 1 8 4096; do
    check "embed ${n:+--batch-size $n }--timings over 17 inputs: exit 0" \
        run_ok "$TMP/b$n" $ROFORMER embed -m "$CLS" ${n:+--batch-size $n} --timings <"$TMP/17"
done
check "--batch-size 1: 17 batches" [ "$(batches "$TMP/b1.err")" = 17 ]
check "--batch-size 4096: 1 batch" [ "$(batches "$TMP/b4096.err")" = 1 ]
check "--batch-size 8: 3 batches" [ "$(batches "$TMP/b8.err")" = 3 ]
check "the default batch size is 8: 3 batches of 17 inputs" [ "$(batches "$TMP/b.err")" = 3 ]

# ==== --compute on a CPU without its instructions: one line, exit 1 ====
# compute.md: a CPU without what a compute type needs refuses it with one
# line and exit status 1; where `roformer info` names a kernel it runs.
check "info: exit 0" run_ok "$TMP/info" $ROFORMER info -m "$CLS"
for compute in bf16 int8; do
    kernel=$(sed -n "s/^$compute kernel: *//p" "$TMP/info")
    $ROFORMER embed -m "$CLS" --compute $compute 今天 >"$TMP/out" 2>"$TMP/err"; rc=$?
    case $kernel in
    none*) check "--compute $compute without its kernel ($kernel): exit 1, one line naming what it needs" \
        sh -c "[ $rc -eq 1 ] && [ ! -s '$TMP/out' ] && [ \$(wc -l <'$TMP/err') -eq 1 ] &&
               grep -q '^roformer: error: .*$compute compute needs a CPU with .*, which this one lacks\$' '$TMP/err'" ;;
    '') check "info has a '$compute kernel:' line" false ;;
    *) check "--compute $compute with its kernel ($kernel): exit 0, an embedding" \
        sh -c "[ $rc -eq 0 ] && grep -q '\"embedding\"' '$TMP/out'" ;;
    esac
done

# ==== --max-line-bytes on every command that reads lines ====
# reliability.md: every such command caps a line's length; the long line
# gets the error object with its line number in its place, exit status 1.
long=$(head -c 300 /dev/zero | tr '\0' 'a')
printf '%s\n%s\n%s\n' '好' "$long" '今天' >"$TMP/capped"
for job in "classify -m $CLS" "similarity -m $M/tiny-word-mlm" "rerank -m $CLS --query q" \
           "scm -m $M/tiny-word-mlm -" "fill-mask -m $M/tiny-word-mlm" "ner -m $M/tiny-char-proj" \
           "qa -m $M/tiny-qa"; do
    $ROFORMER $job --max-line-bytes 100 <"$TMP/capped" >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "${job%% *} --max-line-bytes 100: exit 1, line 2's error names the cap" \
        sh -c "[ $rc -eq 1 ] && grep -qxF '{\"error\":\"line is longer than 100 bytes (--max-line-bytes)\",\"line\":2}' '$TMP/out'"
done

# ==== scm truncates at the model's maximum by default ====
# jobs.md's Defaults: where the other jobs refuse an input past the model's
# maximum, scm cuts its documents there (tiny-v2-mlm: 512 positions): the
# result of --max-length 512, not of 500.
long=$(awk 'BEGIN { for (i = 0; i < 60; i++) printf "今天天气很好，我们去公园散步。" }')
printf '{"A": "%s", "B": "今天天气很好", "C": "短句子"}\n' "$long" >"$TMP/scm-long"
$ROFORMER embed -m "$M/tiny-v2-mlm" "$long" >"$TMP/out" 2>/dev/null
check "premise: embed refuses the ~900-token document (exit 1, an error line)" \
    sh -c "[ $? -eq 1 ] && grep -q 'over the model.s maximum of 512' '$TMP/out'"
for n in "" 512 500; do
    check "scm${n:+ --max-length $n} of a triplet with that document: exit 0" \
        run_ok "$TMP/scm$n" $ROFORMER scm -m "$M/tiny-v2-mlm" ${n:+--max-length $n} "$TMP/scm-long"
done
check "scm's default cut is the model's maximum: the bytes of --max-length 512" same "$TMP/scm" "$TMP/scm512"
check "another cut gives other bytes (so the check above can fail)" sh -c "! cmp -s '$TMP/scm' '$TMP/scm500'"

# ==== fill-mask: --top-k defaults to 5 ====
check "fill-mask without --top-k: exit 0" \
    run_ok "$TMP/fm" $ROFORMER fill-mask -m "$M/tiny-word-mlm" '北京是[MASK]国的[MASK]都'
check "fill-mask's default --top-k is 5: 5 candidates for each of 2 masks" \
    $PY -c 'import json, sys; m = json.loads(open(sys.argv[1]).read())["masks"]; sys.exit(not (len(m) == 2 and all(len(x) == 5 for x in m)))' "$TMP/fm"

# ==== qa: --max-answer-tokens defaults to 15 ====
# Two inputs on which the cap binds (premises, checked below): on A the best
# span of at most 16 tokens is 16 long, so a default of 16 or more would not
# give the 15-token cap's answer; on B the best span of at most 15 is 15
# long, so a default of 14 or less would not. The answer with the default
# then pins it to 15.
QA=$M/tiny-qa
{
    printf '%s\t%s\n' '餐厅怎么样？' '我们去公园散步，张三在北京的一家银行工作，这家餐厅的菜很好吃，今天天气很好，服务员态度很好，价格也不贵，李四住在上海，价格也不贵。'
    printf '%s\t%s\n' '餐厅怎么样？' '李四住在上海，他每天早上八点上班，这家餐厅的菜很好吃，张三在北京的一家银行工作，我们去公园散步，我们去公园散步，服务员态度很好，张三在北京的一家银行工作。'
} >"$TMP/qa.in"
for n in "" 14 15 16; do
    check "qa${n:+ --max-answer-tokens $n}: exit 0" \
        run_ok "$TMP/qa$n" $ROFORMER qa -m "$QA" ${n:+--max-answer-tokens $n} <"$TMP/qa.in"
done
line() { sed -n "$1p" "$2"; }
check "premise, input A: the 16-token cap gives another answer than 15" \
    [ "$(line 1 "$TMP/qa15")" != "$(line 1 "$TMP/qa16")" ]
check "premise, input B: the 15-token cap gives another answer than 14" \
    [ "$(line 2 "$TMP/qa15")" != "$(line 2 "$TMP/qa14")" ]
check "qa's default --max-answer-tokens is 15: the 15-token cap's answers on both" same "$TMP/qa" "$TMP/qa15"
# The default's answers are at most 15 tokens: counted by the model's tokenizer.
for i in 1 2; do
    line $i "$TMP/qa" | $PY -c 'import json, sys; print(json.dumps({"text": json.load(sys.stdin)["answer"]}))' >"$TMP/ans"
    check "the default's answer $i tokenizes: exit 0" run_ok "$TMP/ans.tok" $ROFORMER tokenize -m "$QA" <"$TMP/ans"
    check "the default's answer $i is at most 15 tokens" \
        $PY -c 'import json, sys; n = len(json.load(open(sys.argv[1]))["input_ids"]) - 2; sys.exit(not 1 <= n <= 15)' "$TMP/ans.tok"
done
check_done
