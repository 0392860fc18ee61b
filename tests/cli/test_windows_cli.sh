# test_windows_cli.sh — --window N --stride S in the job commands (embed,
# similarity, classify, scm): a text longer than the window is cut and
# pooled (the numbers are checked by test_windows.c against windows run
# one by one, and here against the windows cut from `tokenize`'s ids, run
# through `forward` and pooled by the documented formula in NumPy; the
# similarity of two windowed texts against embed's vectors), --timings
# counts the windows, short texts are unchanged, and the jobs without
# pooling refuse the option.
. tests/check.sh

require_reference "window CLI tests"
M=$REF/models
long=$(awk 'BEGIN { for (i = 0; i < 80; i++) printf "今天天气很好，我们去公园散步。" }')
printf '%s\n' "$long" "短句子" >"$TMP/texts"

# embed: 1 of 2 texts cut, the count on stderr with --timings
$ROFORMER embed -m "$M/tiny-word-mlm" <"$TMP/texts" >"$TMP/plain" 2>/dev/null
check "embed without --window: the long text fits the 1536 positions" [ $? -eq 0 ]
$ROFORMER embed -m "$M/tiny-word-mlm" --window 64 --stride 16 --timings <"$TMP/texts" >"$TMP/win" 2>"$TMP/err"
check "embed --window 64: runs" [ $? -eq 0 ]
check "embed --window 64: --timings counts the windows" grep -q 'timings: 1 inputs cut into [0-9]* windows' "$TMP/err"
check "embed --window: the long text's vector differs from the whole text's" \
    sh -c "[ -s '$TMP/plain' ] && [ -s '$TMP/win' ] && [ \"\$(head -n 1 '$TMP/plain')\" != \"\$(head -n 1 '$TMP/win')\" ]"
check "embed of a short text exits 0" run_ok "$TMP/short" $ROFORMER embed -m "$M/tiny-word-mlm" 短句子
check "embed --window 64 of a short text exits 0" \
    run_ok "$TMP/short-win" $ROFORMER embed -m "$M/tiny-word-mlm" --window 64 短句子
check "embed --window: a text shorter than the window gives the same line" same "$TMP/short" "$TMP/short-win"

# a v2 model (512 positions): without --window the long text is an error, with it a result
long2=$(awk 'BEGIN { for (i = 0; i < 60; i++) printf "今天天气很好，我们去公园散步。" }')
$ROFORMER embed -m "$M/tiny-v2-mlm" "$long2" >"$TMP/out" 2>/dev/null
check "v2 without --window: exit 1" [ $? -eq 1 ]
check "v2 without --window: too long, an error line naming the options" \
    grep -q 'over the model.s maximum of 512, and truncation is off (extend_positions or a window allow more)' "$TMP/out"
$ROFORMER embed -m "$M/tiny-v2-mlm" --window 512 "$long2" >"$TMP/out"
check "v2 --window 512 (stride 128 by default): exit 0, an embedding" \
    sh -c "[ $? -eq 0 ] && grep -q '\"embedding\"' '$TMP/out'"

# classify and similarity
$ROFORMER classify -m "$M/tiny-word-cls" --window 32 --stride 8 --timings "$long" >"$TMP/out" 2>"$TMP/err"
check "classify --window: exit 0, labels" sh -c "[ $? -eq 0 ] && grep -q '\"label\"' '$TMP/out' && grep -q 'cut into' '$TMP/err'"

# ==== the pooling, recomputed from the windows ====
# long-inputs.md: windows of at most N tokens, [CLS] part [SEP], the next
# starting S text tokens before the previous one ends; the embedding is the
# mean of the window vectors. The windows are cut here from `tokenize`'s
# ids, each run through `forward`, pooled (cls: the first hidden state;
# mean: of every token) and averaged in float64; `embed --window` must give
# that within float32 noise (1e-5: the tolerance of vectors.py's equal
# checks; tiny-word-mlm's hidden states are of order 1).
require_python "numpy" "the windows' pooling recomputed"
PY=/usr/bin/python3
N=24; S=6
mixed=$(awk 'BEGIN { for (i = 0; i < 9; i++) printf "今天天气很好，我们去公园散步。这家餐厅的菜%d很好吃。", i }')
printf '%s\n' "$mixed" >"$TMP/mixed"
check "tokenize the long text: exit 0" run_ok "$TMP/mixed.tok" $ROFORMER tokenize -m "$M/tiny-word-mlm" <"$TMP/mixed"
$PY - "$TMP/mixed.tok" $N $S >"$TMP/windows.jsonl" <<'PYEOF'
import json, sys
ids = json.load(open(sys.argv[1]))["input_ids"]
n, s = int(sys.argv[2]), int(sys.argv[3])
cls, body, sep = ids[0], ids[1:-1], ids[-1]
room, first = n - 2, 0
while True:
    part = body[first:first + room]
    print(json.dumps({"input_ids": [cls] + part + [sep]}))
    if first + len(part) >= len(body):
        break
    first += room - s
PYEOF
check "the long text makes more than 3 windows of $N (stride $S)" [ "$(wc -l <"$TMP/windows.jsonl")" -gt 3 ]
check "forward on each window: exit 0" \
    run_ok "$TMP/windows.out" $ROFORMER forward -m "$M/tiny-word-mlm" --head none <"$TMP/windows.jsonl"
for pooling in cls mean; do
    check "embed --window $N --stride $S --pooling $pooling --timings: exit 0" \
        run_ok "$TMP/win-$pooling" $ROFORMER embed -m "$M/tiny-word-mlm" --window $N --stride $S \
        --pooling $pooling --no-normalize --timings <"$TMP/mixed"
    check "embed --window: --timings counts the windows cut here" \
        grep -q "timings: 1 inputs cut into $(wc -l <"$TMP/windows.jsonl") windows" "$TMP/win-$pooling.err"
    check "embed --window --pooling $pooling: the mean of the windows' $pooling vectors (1e-5)" \
        $PY - "$TMP/windows.out" "$TMP/win-$pooling" $pooling <<'PYEOF'
import json, sys
import numpy as np
wins = [np.array(json.loads(l)["last_hidden_state"], dtype=np.float64) for l in open(sys.argv[1])]
pooled = [w[0] if sys.argv[3] == "cls" else w.mean(axis=0) for w in wins]
want = np.mean(pooled, axis=0)
got = np.array(json.loads(open(sys.argv[2]).readline())["embedding"], dtype=np.float64)
assert got.shape == want.shape, (got.shape, want.shape)
diff = float(np.max(np.abs(got - want)))
assert diff <= 1e-5, diff
# the check can fail: leaving out the last window moves the mean past it
assert float(np.max(np.abs(np.mean(pooled[:-1], axis=0) - want))) > 1e-3
PYEOF
done

# the stride's default is the window / 4: --window 24 alone is --stride 6
check "embed --window $N --pooling mean (stride by default): exit 0" \
    run_ok "$TMP/win-default" $ROFORMER embed -m "$M/tiny-word-mlm" --window $N --pooling mean \
    --no-normalize <"$TMP/mixed"
check "the default stride of --window $N is $N / 4 = $S: the same bytes" same "$TMP/win-default" "$TMP/win-mean"
check "embed --window $N --stride $((S + 1)): exit 0" \
    run_ok "$TMP/win-other" $ROFORMER embed -m "$M/tiny-word-mlm" --window $N --stride $((S + 1)) \
    --pooling mean --no-normalize <"$TMP/mixed"
check "another stride gives other bytes (so the check above can fail)" \
    sh -c "! cmp -s '$TMP/win-other' '$TMP/win-mean'"

# similarity with windows: the cosine of the two windowed embeddings
# (embed's default pooling), on two texts whose cosine is not 1.
printf '{"text_a": "%s", "text_b": "%s"}\n' "$long" "$mixed" >"$TMP/pair"
check "similarity --window 48 --stride 8: exit 0" \
    run_ok "$TMP/sim" $ROFORMER similarity -m "$M/tiny-word-mlm" --window 48 --stride 8 <"$TMP/pair"
printf '%s\n%s\n' "$long" "$mixed" >"$TMP/two"
check "embed --window 48 --stride 8 of the two texts: exit 0" \
    run_ok "$TMP/two.emb" $ROFORMER embed -m "$M/tiny-word-mlm" --window 48 --stride 8 <"$TMP/two"
check "similarity --window: the cosine of embed --window's two vectors (1e-5), not 1" \
    $PY -c '
import json, sys
import numpy as np
a, b = (np.array(json.loads(l)["embedding"], dtype=np.float64) for l in open(sys.argv[1]))
want = a @ b / np.linalg.norm(a) / np.linalg.norm(b)
got = json.load(open(sys.argv[2]))["cosine"]
assert abs(got - want) <= 1e-5 and want < 0.9999, (got, want)' "$TMP/two.emb" "$TMP/sim"

# the smallest window, 3: [CLS], one text token, [SEP]; a window per token
printf '%s\n' '今天天气很好，我们去公园' >"$TMP/ten"
check "tokenize the text: exit 0" run_ok "$TMP/ten.tok" $ROFORMER tokenize -m "$M/tiny-word-mlm" <"$TMP/ten"
body=$($PY -c 'import json, sys; print(len(json.load(open(sys.argv[1]))["input_ids"]) - 2)' "$TMP/ten.tok")
check "embed --window 3 (stride 0 by default): exit 0" \
    run_ok "$TMP/w3" $ROFORMER embed -m "$M/tiny-word-mlm" --window 3 --timings <"$TMP/ten"
check "embed --window 3: one window per text token ($body)" \
    grep -q "timings: 1 inputs cut into $body windows" "$TMP/w3.err"

# only single texts are cut: a pair runs whole, or fails when too long
printf '{"text": "今天天气很好，我们去公园散步。", "text_pair": "这家餐厅的菜很好吃，服务也很周到。"}\n' >"$TMP/short-pair"
check "classify of a pair longer than --window 8: exit 0" \
    run_ok "$TMP/pair-win" $ROFORMER classify -m "$M/tiny-v2-cls" --window 8 <"$TMP/short-pair"
check "classify of the same pair without --window: exit 0" \
    run_ok "$TMP/pair-plain" $ROFORMER classify -m "$M/tiny-v2-cls" <"$TMP/short-pair"
check "a pair is not cut into windows: the same line as without --window" same "$TMP/pair-win" "$TMP/pair-plain"
printf '{"text": "%s", "text_pair": "短句子"}\n' "$long2" >"$TMP/long-pair"
$ROFORMER classify -m "$M/tiny-v2-cls" --window 64 <"$TMP/long-pair" >"$TMP/out" 2>/dev/null
check "a pair past the model's 512 positions with --window: exit 1, an error line" \
    sh -c "[ $? -eq 1 ] && grep -q '\"error\"' '$TMP/out'"

# scm: the documents are cut, the triplet still answered
printf '{"A": "%s", "B": "%s", "C": "短句子", "label": "B"}\n' "$long" "$long" >"$TMP/scm"
$ROFORMER scm -m "$M/tiny-word-mlm" --window 64 --stride 16 --timings "$TMP/scm" >"$TMP/out" 2>"$TMP/err"
check "scm --window: exit 0, a prediction, the windows counted" \
    sh -c "[ $? -eq 0 ] && grep -q '\"prediction\": *\"B\"' '$TMP/out' && grep -q 'cut into' '$TMP/err'"

# jobs that do not pool refuse the option
for job in "ner -m $M/tiny-char-proj" "fill-mask -m $M/tiny-word-mlm" "qa -m $M/tiny-qa"; do
    $ROFORMER $job --window 64 x >/dev/null 2>&1
    check "${job%% *} --window: usage error" [ $? -eq 2 ]
done
check_done
