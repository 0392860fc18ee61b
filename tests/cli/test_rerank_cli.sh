# test_rerank_cli.sh — `roformer rerank` and --truncation-direction end to
# end on the reference models: rerank's order and scores are the
# `classify` probabilities of "positive" (or `forward`'s logits, or
# `similarity`'s cosines) of the same pairs, sorted here; left truncation of
# `classify` equals `forward` on ids cut by hand from `tokenize`'s full
# encoding ([CLS], the last tokens, [SEP]).
. tests/check.sh
PY=/usr/bin/python3

require_reference "rerank CLI tests"
M=$REF/models
CLS=$M/tiny-word-cls
Q=这个东西怎么样
printf '还行吧\n很好的产品，非常满意\n{"text": "质量很差，不推荐"}\n价格便宜，性价比高\n' >"$TMP/docs"

# ==== Usage ====
check "rerank --help" sh -c "$ROFORMER rerank --help | grep -q 'usage: roformer rerank'"
check "roformer --help lists rerank" sh -c "$ROFORMER --help 2>&1 | grep -q '^  rerank '"
$ROFORMER rerank -m "$CLS" <"$TMP/docs" >/dev/null 2>&1
check "rerank without --query is a usage error" [ $? -eq 2 ]
$ROFORMER rerank -m "$CLS" --query q --top-n 0 <"$TMP/docs" >/dev/null 2>&1
check "rerank --top-n 0 is a usage error" [ $? -eq 2 ]
$ROFORMER classify -m "$CLS" --truncation-direction middle x >/dev/null 2>"$TMP/err"
check "--truncation-direction middle is a usage error naming it" \
    sh -c "[ $? -eq 2 ] && grep -q 'truncation-direction' '$TMP/err'"

# ==== Scores and order against classify / forward / similarity ====
check "rerank exits 0" run_ok "$TMP/ranked" $ROFORMER rerank -m "$CLS" --query "$Q" --no-progress <"$TMP/docs"
check "rerank --raw-scores exits 0" \
    run_ok "$TMP/raw" $ROFORMER rerank -m "$CLS" --query "$Q" --raw-scores --no-progress <"$TMP/docs"
check "rerank --top-n 2 exits 0" \
    run_ok "$TMP/top2" $ROFORMER rerank -m "$CLS" --query "$Q" --top-n 2 --no-progress <"$TMP/docs"
$PY - "$Q" "$TMP/docs" <<'EOF' >"$TMP/pairs"
import json, sys
for line in open(sys.argv[2], encoding="utf-8"):
    line = line.rstrip("\n")
    doc = json.loads(line)["text"] if line.startswith("{") else line
    print(json.dumps({"text": sys.argv[1], "text_pair": doc}, ensure_ascii=False))
EOF
check "classify of the pairs exits 0" run_ok "$TMP/classify" $ROFORMER classify -m "$CLS" --no-progress <"$TMP/pairs"
check "forward of the pairs exits 0" run_ok "$TMP/forward" $ROFORMER forward -m "$CLS" <"$TMP/pairs"
# 1e-5: the same pairs run in other batches differ only in float32 summation order
check "rerank: classify's probability of \"positive\", best first, index and text kept" $PY -c '
import json, sys
ranked, classify, pairs = ([json.loads(l) for l in open(f, encoding="utf-8")] for f in sys.argv[1:4])
want = [c["scores"]["positive"] for c in classify]
order = sorted(range(len(want)), key=lambda i: (-want[i], i))
assert len(ranked) == len(pairs) == 4 and [r["index"] for r in ranked] == order, (ranked, want)
assert all(abs(r["score"] - want[r["index"]]) <= 1e-5 for r in ranked)
assert all(r["text"] == pairs[r["index"]]["text_pair"] for r in ranked)' \
    "$TMP/ranked" "$TMP/classify" "$TMP/pairs"
check "rerank --raw-scores: forward's logit of label 2" $PY -c '
import json, sys
raw, fwd = ([json.loads(l) for l in open(f)] for f in sys.argv[1:3])
want = [f["logits"][2] for f in fwd]
assert len(raw) == 4 and [r["index"] for r in raw] == sorted(range(len(want)), key=lambda i: (-want[i], i))
assert all(abs(r["score"] - want[r["index"]]) <= 1e-5 for r in raw)' "$TMP/raw" "$TMP/forward"
head -n 2 "$TMP/ranked" >"$TMP/ranked2"
check "rerank --top-n 2: the first two lines of the full ranking" same "$TMP/ranked2" "$TMP/top2"

# a bad line: reported after the ranking of the others, exit 1
printf 'a\n{"nope": 1}\nb\n' >"$TMP/bad.in"
check "rerank with a bad line exits 1" run_rc 1 "$TMP/bad" $ROFORMER rerank -m "$CLS" --query q --no-progress <"$TMP/bad.in"
check "rerank with a bad line: the others ranked (index 0 and 2), then the error with its line" $PY -c '
import json, sys
out = [json.loads(l) for l in open(sys.argv[1])]
assert sorted(o["index"] for o in out[:2]) == [0, 2] and out[2]["line"] == 2 and "error" in out[2]' "$TMP/bad"

# a model without a classifier ranks by similarity's cosine
MLM=$M/tiny-word-mlm
check "rerank on an MLM model exits 0" run_ok "$TMP/cos" $ROFORMER rerank -m "$MLM" --query "$Q" --no-progress <"$TMP/docs"
$PY -c '
import json, sys
for l in open(sys.argv[1], encoding="utf-8"):
    p = json.loads(l)
    print(json.dumps({"text_a": p["text"], "text_b": p["text_pair"]}, ensure_ascii=False))' \
    "$TMP/pairs" >"$TMP/sim.in"
check "similarity of the pairs exits 0" run_ok "$TMP/sim" $ROFORMER similarity -m "$MLM" --no-progress <"$TMP/sim.in"
check "rerank on an MLM model: similarity's cosine, best first" $PY -c '
import json, sys
ranked, sim = ([json.loads(l) for l in open(f)] for f in sys.argv[1:3])
want = [s["cosine"] for s in sim]
assert len(ranked) == 4 and [r["index"] for r in ranked] == sorted(range(len(want)), key=lambda i: (-want[i], i))
assert all(abs(r["score"] - want[r["index"]]) <= 1e-5 for r in ranked)' "$TMP/cos" "$TMP/sim"

# ==== --truncation-direction left: the last tokens, as forward on ids cut by hand ====
LONG=今天天气很好，我们明天去北京玩，价格便宜，性价比高，质量很差
echo "$LONG" >"$TMP/long"
check "tokenize exits 0" run_ok "$TMP/full" $ROFORMER tokenize -m "$CLS" <"$TMP/long"
$PY - "$TMP/full" 10 <<'EOF' >"$TMP/left-ids"
import json, sys
full = json.load(open(sys.argv[1]))["input_ids"]
keep = int(sys.argv[2]) - 2
assert len(full) - 2 > keep, "the text must be longer than the cut"
ids = [full[0]] + full[1:-1][-keep:] + [full[-1]]
print(json.dumps({"input_ids": ids, "token_type_ids": [0] * len(ids), "attention_mask": [1] * len(ids)}))
EOF
check "forward on the ids cut by hand exits 0" run_ok "$TMP/left-fwd" $ROFORMER forward -m "$CLS" <"$TMP/left-ids"
for side in left right; do
    check "classify --truncation-direction $side exits 0" run_ok "$TMP/$side" \
        $ROFORMER classify -m "$CLS" --max-length 10 --truncation-direction $side --no-progress <"$TMP/long"
done
# 1e-5 on probabilities: a softmax moves by at most half the largest logit change,
# and the logits of one sequence alone differ by float32 rounding only
check "classify --truncation-direction left = forward on [CLS] + the last 8 tokens + [SEP]" $PY -c '
import json, math, sys
got = json.load(open(sys.argv[1]))["scores"]
logits = json.load(open(sys.argv[2]))["logits"]
logits = logits[0] if isinstance(logits[0], list) else logits
m = max(logits); e = [math.exp(x - m) for x in logits]; p = [x / sum(e) for x in e]
labels = ["negative", "neutral", "positive"]
assert all(abs(got[labels[k]] - p[k]) <= 1e-5 for k in range(3)), (got, p)' \
    "$TMP/left" "$TMP/left-fwd"
check "left and right truncation differ" sh -c "[ -s '$TMP/left' ] && [ -s '$TMP/right' ] && ! cmp -s '$TMP/left' '$TMP/right'"
check_done
