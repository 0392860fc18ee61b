# test_windows_cli.sh — --window N --stride S in the job commands (embed,
# similarity, classify, scm): a text longer than the window is cut and
# pooled (the numbers are checked by test_windows.c against windows run
# one by one), --timings counts the windows, short texts are unchanged, and
# the jobs without pooling refuse the option.
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
printf '{"text_a": "%s", "text_b": "%s"}\n' "$long" "$long" >"$TMP/pair"
$ROFORMER similarity -m "$M/tiny-word-mlm" --window 48 --stride 8 <"$TMP/pair" >"$TMP/out"
check "similarity --window: exit 0, a long text with itself is 1" \
    sh -c "[ $? -eq 0 ] && grep -Eq '\"(similarity|cosine|score)\": *(1|0\\.99999[0-9]*|1\\.0000[0-9]*)[,}]' '$TMP/out'"

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
