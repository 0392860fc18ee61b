# test_qa_windows.sh — `roformer qa --doc-stride`: a long context read in
# windows as HF's question-answering pipeline does, checked against the
# windows cut and scored independently by tests/cli/qa_windows.py, and HF's own
# truncation of the reference case q00 as the first window.
. tests/check.sh
PY=/usr/bin/python3

require_reference "QA window tests"
require_python "numpy" "QA window tests"
M=$REF/models/tiny-qa

# The reference cases' questions and contexts (legal documents up to 934
# characters), each context also doubled, so that a window rarely holds it all.
$PY - "$M/cases.jsonl" >"$TMP/in.jsonl" <<'PYEOF'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    case = json.loads(line)
    qs = case.get("texts") or [case["text"]]
    cs = case.get("text_pairs") or [case["text_pair"]]
    for q, c in zip(qs, cs):
        for context in (c, c + c):
            print(json.dumps({"question": q, "context": context}, ensure_ascii=False))
PYEOF

for shape in "64 16" "128 40" "300 128"; do
    set -- $shape
    $ROFORMER qa -m "$M" --max-length "$1" --doc-stride "$2" <"$TMP/in.jsonl" >"$TMP/out-$1.jsonl"
    check "qa --max-length $1 --doc-stride $2: runs" [ $? -eq 0 ]
    check "qa --max-length $1 --doc-stride $2: the best span of the windows" \
        $PY tests/cli/qa_windows.py "$ROFORMER" "$M" "$TMP/in.jsonl" "$1" "$2" "$TMP/out-$1.jsonl"
done
# without --max-length the windows are the model's maximum (1536) long
awk '{ print }' "$TMP/in.jsonl" | $PY -c '
import json, sys
for l in sys.stdin:
    x = json.loads(l); x["context"] = x["context"] * 4; print(json.dumps(x, ensure_ascii=False))
' >"$TMP/long.jsonl"
$ROFORMER qa -m "$M" --doc-stride 128 <"$TMP/long.jsonl" >"$TMP/out-long.jsonl"
check "qa --doc-stride without --max-length: runs over the model's maximum" [ $? -eq 0 ]
check "qa --doc-stride without --max-length: windows of 1536 tokens" \
    $PY tests/cli/qa_windows.py "$ROFORMER" "$M" "$TMP/long.jsonl" 1536 128 "$TMP/out-long.jsonl"
$ROFORMER qa -m "$M" <"$TMP/long.jsonl" >"$TMP/no-windows.jsonl" 2>/dev/null
check "qa without --doc-stride or --max-length: too long is an error line, exit 1" \
    sh -c "[ $? -eq 1 ] && [ \$(grep -c '\"error\":\"input is [0-9]* tokens long' '$TMP/no-windows.jsonl') -ge 1 ]"

# The first window is what HF's tokenizer gives with truncation="only_second"
# (here longest_first, which cuts only the longer context): case q00.
check "the first window of q00 at 300 tokens is HF's truncated encoding" $PY - "$M" "$ROFORMER" <<'PYEOF'
import json, subprocess, sys
model, roformer = sys.argv[1:3]
case = next(json.loads(l) for l in open(model + "/cases.jsonl", encoding="utf-8")
            if json.loads(l)["id"] == "q00")
line = json.dumps({"text": case["text"], "text_pair": case["text_pair"]}, ensure_ascii=False)
enc = json.loads(subprocess.run([roformer, "tokenize", "-m", model], input=line + "\n",
                                capture_output=True, text=True, check=True).stdout)
header = enc["token_type_ids"].index(1)
room = case["max_length"] - header - 1
window = enc["input_ids"][:header + room] + enc["input_ids"][-1:]
assert len(enc["input_ids"]) > case["max_length"], "q00 fits whole: nothing to window"
assert window == case["input_ids"][0], "first window differs from HF's truncation"
PYEOF

# A context that fits gives what it gives without windows.
head -n 1 "$TMP/in.jsonl" >"$TMP/one.jsonl"
check "a context that fits: --doc-stride changes nothing" sh -c "
    $ROFORMER qa -m '$M' --doc-stride 128 <'$TMP/one.jsonl' >'$TMP/a' &&
    $ROFORMER qa -m '$M' <'$TMP/one.jsonl' >'$TMP/b' && cmp -s '$TMP/a' '$TMP/b'"

# Bad settings fail their input only, with a message.
printf '%s\n' '{"question": "问题", "context": "'"$(printf '法院认为%.0s' $(seq 40))"'"}' \
    '{"question": "'"$(printf '原告要求被告支付多少钱%.0s' $(seq 20))"'", "context": "原告请求判令被告偿还借款。"}' \
    >"$TMP/bad.jsonl"
$ROFORMER qa -m "$M" --max-length 32 --doc-stride 30 <"$TMP/bad.jsonl" >"$TMP/bad.out" 2>/dev/null
check "qa: a bad window setting is exit 1" [ $? -eq 1 ]
check "qa: doc_stride not below the window's context room is an error line" \
    grep -q '"error":"doc_stride 30 is not below the [0-9]* context tokens a window holds","line":1' "$TMP/bad.out"
check "qa: a question filling the window is an error line" \
    grep -q '"error":"the question takes [0-9]* of the 32 tokens of a window.*","line":2' "$TMP/bad.out"
$ROFORMER qa -m "$M" --doc-stride -1 x 2>/dev/null
check "qa: a negative --doc-stride is a usage error" [ $? -eq 2 ]

check_done
