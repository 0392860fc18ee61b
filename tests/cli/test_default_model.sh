# test_default_model.sh — the model in the box (models/sentiment-zh-small.gguf,
# models/README.md): its size, `roformer classify` finding it without -m
# ($ROFORMER_MODEL first), the other jobs still asking for -m, the README's
# two quick-start examples, and on ChnSentiCorp's dev set (when
# ../shared/data is there) the engine against the PyTorch predictions the
# training script wrote (models/sentiment-zh-small.dev-expected.jsonl).
. tests/check.sh
MODEL=models/sentiment-zh-small.gguf
EXPECTED=models/sentiment-zh-small.dev-expected.jsonl
DEV=${ROFORMER_DATA:-../shared/data}/chnsenticorp/dev.tsv

check "the default model is in the tree" test -f "$MODEL"
size=$(wc -c <"$MODEL")
check "the default model is at most 16 MB ($size bytes)" test "$size" -le 16000000

# The README's quick start: a clearly positive and a clearly negative review.
"$ROFORMER" classify '这家酒店的服务很好，下次还来' >"$TMP/pos" 2>"$TMP/err"
check "classify without -m runs" test $? -eq 0
check "a positive review is positive" grep -q '^{"label":"positive",' "$TMP/pos"
check "classify without -m runs on a negative review" run_ok "$TMP/neg" "$ROFORMER" classify '房间又小又脏，再也不来了'
check "a negative review is negative" grep -q '^{"label":"negative",' "$TMP/neg"
check "classify -m $MODEL runs" run_ok "$TMP/pos-m" "$ROFORMER" classify -m "$MODEL" '这家酒店的服务很好，下次还来'
check "without -m = with -m $MODEL" same "$TMP/pos" "$TMP/pos-m"

# $ROFORMER_MODEL comes first: a missing file is named in the error.
ROFORMER_MODEL=$TMP/missing.gguf "$ROFORMER" classify 好 >/dev/null 2>"$TMP/err"
check "ROFORMER_MODEL is used (its missing file is an error)" test $? -ne 0
check "the error names \$ROFORMER_MODEL's file" grep -q "missing.gguf" "$TMP/err"
if [ -n "$REF" ]; then
    ROFORMER_MODEL=$REF/models/tiny-word-cls "$ROFORMER" classify 好 >"$TMP/out"
    check "ROFORMER_MODEL=tiny-word-cls: exit 0, its three labels" sh -c "[ $? -eq 0 ] && grep -q '\"neutral\"' '$TMP/out'"
else
    check_skip "reference fixtures absent: ROFORMER_MODEL with another model"
fi

# A binary with no models/ beside it and no installed copy has no default.
mkdir -p "$TMP/alone/bin"
cp "$ROFORMER" "$TMP/alone/bin/roformer"
"$TMP/alone/bin/roformer" classify 好 >/dev/null 2>"$TMP/err"
check "no default model anywhere: usage error (exit 2)" test $? -eq 2
check "the error says where it looked" grep -q "no default model: neither .*alone/bin/../share/roformer/sentiment-zh-small.gguf" "$TMP/err"
ROFORMER_MODEL=$MODEL "$TMP/alone/bin/roformer" classify '房间又小又脏，再也不来了' >"$TMP/out"
check "... and ROFORMER_MODEL still works there" sh -c "[ $? -eq 0 ] && grep -q '^{\"label\":\"negative\",' '$TMP/out'"

# Only classify has a default; the others say -m is required.
for cmd in embed similarity scm fill-mask ner qa; do
    "$ROFORMER" $cmd 好 >/dev/null 2>"$TMP/err"
    rc=$?
    check "$cmd without -m: usage error" test $rc -eq 2
    check "$cmd without -m: says only classify has a default" \
        grep -q "a model is required: -m MODEL (only classify has a default model)" "$TMP/err"
done
"$ROFORMER" embed --help >"$TMP/help"
check "embed --help: exit 0, -m is required" \
    sh -c "[ $? -eq 0 ] && grep -q 'required (only classify has a default model)' '$TMP/help'"
"$ROFORMER" classify --help >"$TMP/help"
check "classify --help: exit 0, -m is optional, the default is named" \
    sh -c "[ $? -eq 0 ] && grep -q 'classify \[-m MODEL\]' '$TMP/help' && grep -q 'ROFORMER_MODEL' '$TMP/help' && grep -q 'sentiment-zh-small.gguf' '$TMP/help'"

# ChnSentiCorp dev: the engine's labels and probabilities against PyTorch's
# (same weights, rounded to f16 as stored), and the accuracy.
if [ -f "$DEV" ]; then
    tail -n +2 "$DEV" | /usr/bin/python3 -c '
import json, sys
for line in sys.stdin:
    print(json.dumps({"text": line.rstrip("\n").partition("\t")[2]}, ensure_ascii=False))' >"$TMP/dev.jsonl"
    "$ROFORMER" classify --max-length 256 <"$TMP/dev.jsonl" >"$TMP/dev.out" 2>"$TMP/err"
    check "classify over dev.tsv: every line classified" test $? -eq 0
    /usr/bin/python3 - "$DEV" "$EXPECTED" "$TMP/dev.out" >"$TMP/report" 2>&1 <<'EOF'
import json, sys
dev, expected, engine = sys.argv[1:]
gold = [line.split("\t", 1)[0] for line in open(dev, encoding="utf-8").read().splitlines()[1:]]
want = [json.loads(line) for line in open(expected, encoding="utf-8")]
got = [json.loads(line) for line in open(engine, encoding="utf-8")]
assert len(gold) == len(want) == len(got), (len(gold), len(want), len(got))
same = sum(g["label"] == w["label"] for g, w in zip(got, want))
diff = max(abs(g["scores"][k] - w["scores"][k]) for g, w in zip(got, want) for k in w["scores"])
right = sum(g["label"] == ("positive" if y == "1" else "negative") for g, y in zip(got, gold))
print(f"dev: {len(got)} lines; engine label = PyTorch label on {same}; max |p diff| {diff:.3g}; "
      f"engine accuracy {right / len(got):.4f}")
ok = same == len(got) and diff <= 1e-4 and right / len(got) >= 0.85
sys.exit(0 if ok else 1)
EOF
    rc=$?
    cat "$TMP/report"
    check "dev: engine = PyTorch on every label, |p diff| <= 1e-4, accuracy >= 0.85" test $rc -eq 0
else
    check_skip "$DEV absent: the dev-set agreement and accuracy"
fi
check_done
