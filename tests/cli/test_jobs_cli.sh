# test_jobs_cli.sh — the job commands end to end on the reference models:
# embed / classify / ner / qa / fill-mask against values derived from
# expected.safetensors (tests/cli/jobs_reference.py), scm over the shared
# CAIL2019-SCM triplets, bad lines in place, .npy output, shared options.
. tests/check.sh
PY=/usr/bin/python3
DATA=${ROFORMER_DATA:-../shared/data}
SCM=$DATA/cail2019_scm/stage1_train.jsonl

require_reference "all job tests"
require_python "numpy" "all job tests"
M=$REF/models

# ==== Options every command shares ====
for cmd in classify embed similarity scm fill-mask ner qa; do
    check "$cmd --help" sh -c "$ROFORMER $cmd --help | grep -q 'usage: roformer $cmd'"
    $ROFORMER $cmd --bogus >/dev/null 2>&1
    check "$cmd: unknown option is a usage error" [ $? -eq 2 ]
    [ $cmd = classify ] && continue # it has a default model: test_default_model.sh
    $ROFORMER $cmd </dev/null >/dev/null 2>&1
    check "$cmd: missing -m is a usage error" [ $? -eq 2 ]
done
check "--version" sh -c "$ROFORMER embed --version | grep -q '^roformer '"
$ROFORMER embed -m "$TMP/no-such-model" x >/dev/null 2>"$TMP/err"
check "missing model: exit 1 with a message" sh -c "[ $? -eq 1 ] && grep -q 'roformer: error' '$TMP/err'"
$ROFORMER embed -m "$M/tiny-char-proj" --max-length 5000 x >/dev/null 2>&1
check "--max-length over the model's maximum is a usage error" [ $? -eq 2 ]

# ==== Against the reference outputs ====
# run_job NAME MODEL JOB CLI-ARGS...: every max_length group of the job's cases.
run_job() {
    name=$1; model=$2; job=$3; shift 3
    mls=$($PY tests/cli/jobs_reference.py maxlens "$M/$model" "$job")
    check "$name: the reference lists its max_length groups" [ $? -eq 0 -a -n "$mls" ]
    for ml in $mls; do
        opt=""; [ "$ml" = none ] || opt="--max-length $ml"
        check "$name max_length=$ml: the reference gives its inputs" \
            run_ok "$TMP/in.jsonl" $PY tests/cli/jobs_reference.py inputs "$M/$model" "$job" "$ml"
        $ROFORMER "$@" -m "$M/$model" $opt --batch-size 3 <"$TMP/in.jsonl" >"$TMP/out.jsonl"
        check "$name max_length=$ml: exit 0" [ $? -eq 0 ]
        check "$name max_length=$ml matches the reference" \
            $PY tests/cli/jobs_reference.py check "$M/$model" "$job" "$ml" "$TMP/out.jsonl"
    done
}
run_job "embed cls" tiny-word-mlm embed-cls embed --pooling cls
run_job "embed mean" tiny-word-mlm embed-mean embed --pooling mean
run_job "embed pooler" tiny-word-mlm embed-pooler embed --pooling pooler
run_job "embed mean (char model)" tiny-char-proj embed-mean embed --pooling mean
run_job "classify" tiny-word-cls classify classify
run_job "ner" tiny-char-proj ner ner
run_job "qa" tiny-qa qa qa
run_job "fill-mask" tiny-word-mlm fill-mask fill-mask --top-k 5
# RoFormer-v2 (RMS norm, no biases, the tied decoder as MLM head)
run_job "embed cls (v2)" tiny-v2-mlm embed-cls embed --pooling cls
run_job "embed mean (v2)" tiny-v2-mlm embed-mean embed --pooling mean
run_job "classify (v2)" tiny-v2-cls classify classify
run_job "fill-mask (v2)" tiny-v2-mlm fill-mask fill-mask --top-k 5
printf '今天天气很好\t今天天气不错\n' | $ROFORMER similarity -m "$M/tiny-v2-mlm" >"$TMP/sim.json"
check "similarity (v2): exit 0" [ $? -eq 0 ]
check "embed (v2): exit 0" run_ok "$TMP/emb.json" $ROFORMER embed -m "$M/tiny-v2-mlm" --pooling cls 今天天气很好 今天天气不错
check "similarity (v2) is the cosine of the two [CLS] embeddings" $PY -c '
import json, sys
from vectors import cosine, embeddings
want = cosine(*embeddings(sys.argv[2]))
got = json.load(open(sys.argv[1]))["cosine"]
assert abs(got - want) < 1e-6, (got, want)
' "$TMP/sim.json" "$TMP/emb.json"

# ==== Bad lines stay in place; the lines around them are right ====
long=$($PY -c 'print("长" * 1100)')
{
    echo '今天天气很好'
    printf 'bad \377 byte\n'
    echo '{"text": "unterminated'
    echo '{"text_pair": "no text"}'
    echo "$long"
    echo '{"text": "北京是中国的首都"}'
} >"$TMP/mixed.txt"
$ROFORMER embed -m "$M/tiny-char-proj" <"$TMP/mixed.txt" >"$TMP/mixed.out" 2>"$TMP/mixed.err"
check "bad lines: exit 1" [ $? -eq 1 ]
check "bad lines: one output line per input line" [ "$(wc -l <"$TMP/mixed.out")" -eq 6 ]
check "the good lines alone: exit 0" \
    run_ok "$TMP/alone.out" $ROFORMER embed -m "$M/tiny-char-proj" '今天天气很好' '北京是中国的首都'
check "bad lines: errors in place with their line numbers, good lines as alone" $PY - "$TMP/mixed.out" "$TMP/alone.out" <<'PYEOF'
import json, sys
import numpy as np
out = [json.loads(l) for l in open(sys.argv[1], encoding="utf-8")]
alone = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert [o.get("line") for o in out] == [None, 2, 3, 4, 5, None], out
assert "UTF-8" in out[1]["error"] and "JSON" in out[2]["error"], out
assert '"text"' in out[3]["error"] and "1024" in out[4]["error"], out
for got, want in ((out[0], alone[0]), (out[5], alone[1])):
    assert np.max(np.abs(np.array(got["embedding"]) - want["embedding"])) < 1e-5
PYEOF
check "bad lines: summary on stderr" grep -q '4 of 6 inputs failed' "$TMP/mixed.err"
printf 'short\n%s\nshort\n' "$($PY -c 'print("x" * 300)')" >"$TMP/cap.in"
check "--max-line-bytes: exit 1 for the long line" \
    run_rc 1 "$TMP/cap.out" $ROFORMER embed -m "$M/tiny-char-proj" --max-line-bytes 100 <"$TMP/cap.in"
check "--max-line-bytes: the long line fails alone" sh -c \
    "[ \$(grep -c embedding '$TMP/cap.out') -eq 2 ] && sed -n 2p '$TMP/cap.out' | grep -q 'longer than 100 bytes'"
printf '{"text": "a"} trailing\n{"text": "北京\\u0000欢迎你"}\n北京欢迎你\n' >"$TMP/nul.in"
check "JSON: exit 1 for the line with trailing bytes" \
    run_rc 1 "$TMP/nul.out" $ROFORMER embed -m "$M/tiny-char-proj" <"$TMP/nul.in"
check "JSON: trailing bytes fail the line" sh -c "sed -n 1p '$TMP/nul.out' | grep -q 'bad JSON'"
# BERT's text cleaning drops U+0000, so a kept NUL gives the text without it.
check "JSON: a \\u0000 escape does not cut the text short" $PY -c '
import json, sys, numpy as np
rows = [json.loads(l) for l in open(sys.argv[1])]
assert np.max(np.abs(np.array(rows[1]["embedding"]) - rows[2]["embedding"])) < 1e-5
' "$TMP/nul.out"
printf '{"text": "没有掩码"}\n{"text": "有[MASK]码"}\n' >"$TMP/fm.in"
check "fill-mask: exit 1 for the text without [MASK]" \
    run_rc 1 "$TMP/fm.out" $ROFORMER fill-mask -m "$M/tiny-word-mlm" <"$TMP/fm.in"
check "fill-mask: a text without [MASK] fails alone" sh -c \
    "sed -n 1p '$TMP/fm.out' | grep -q 'no \\[MASK\\]' && sed -n 2p '$TMP/fm.out' | grep -q '\"masks\"'"

# ==== Batching keeps input order ====
check "batching: the reference gives its inputs" \
    run_ok "$TMP/order.jsonl" $PY tests/cli/jobs_reference.py inputs "$M/tiny-word-mlm" embed-cls none
check "--batch-size 1: exit 0" \
    run_ok "$TMP/b1.out" $ROFORMER embed -m "$M/tiny-word-mlm" --batch-size 1 <"$TMP/order.jsonl"
check "--batch-size 16: exit 0" \
    run_ok "$TMP/b16.out" $ROFORMER embed -m "$M/tiny-word-mlm" --batch-size 16 <"$TMP/order.jsonl"
check "batch size 1 and 16 give the same rows in the same order" $PY -c '
import json, sys, numpy as np
a = [json.loads(l)["embedding"] for l in open(sys.argv[1])]
b = [json.loads(l)["embedding"] for l in open(sys.argv[2])]
assert len(a) == len(b) > 3 and np.max(np.abs(np.array(a) - np.array(b))) < 1e-5
' "$TMP/b1.out" "$TMP/b16.out"

# ==== A writer that waits for each answer is served line by line ====
# The writer sends one line, waits (up to 60 s) for its answer, then sends
# the next: a reader that waited for a full batch would see no answer.
{
    echo '今天天气很好'
    i=0
    while [ ! -s "$TMP/co.out" ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    [ -s "$TMP/co.out" ] && echo answered >"$TMP/co.flag"
    echo '明天'
} | $ROFORMER embed -m "$M/tiny-word-mlm" >"$TMP/co.out"
check "line by line: exit 0" [ $? -eq 0 ]
check "an answer comes before the next line is written" \
    sh -c "[ -f '$TMP/co.flag' ] && [ \$(wc -l <'$TMP/co.out') -eq 2 ]"

# ==== .npy output ====
$ROFORMER embed -m "$M/tiny-word-mlm" --format npy -o "$TMP/e.npy" <"$TMP/mixed.txt" 2>/dev/null
check "npy with a bad line: exit 1" [ $? -eq 1 ]
$ROFORMER embed -m "$M/tiny-word-mlm" <"$TMP/mixed.txt" >"$TMP/e.jsonl" 2>/dev/null
check "jsonl with a bad line: exit 1" [ $? -eq 1 ]
check "npy loads with numpy: N x D, NaN rows where lines failed, same values as jsonl" $PY -c '
import json, sys, numpy as np
x = np.load(sys.argv[1])
rows = [json.loads(l) for l in open(sys.argv[2], encoding="utf-8")]
assert x.dtype == np.float32 and x.shape == (6, 64) and len(rows) == 6, (x.dtype, x.shape, len(rows))
for r, row in zip(x, rows):
    if "error" in row: assert np.isnan(r).all()
    else: assert np.max(np.abs(r - np.array(row["embedding"]))) < 1e-6
' "$TMP/e.npy" "$TMP/e.jsonl"
{ $ROFORMER embed -m "$M/tiny-word-mlm" --format npy --normalize 一 二 三; echo $? >"$TMP/pipe.rc"; } |
    cat >"$TMP/pipe.npy"
check "npy through a pipe: exit 0" [ "$(cat "$TMP/pipe.rc")" = 0 ]
check "npy through a pipe, normalized rows" $PY -c '
import sys, numpy as np
x = np.load(sys.argv[1]); assert x.shape == (3, 64)
assert np.allclose(np.linalg.norm(x, axis=1), 1, atol=1e-5)
' "$TMP/pipe.npy"

# ==== similarity ====
printf '今天天气很好\t今天天气不错\n{"text_a": "下雨了", "text_b": "下雨了"}\nno tab here\n' |
    $ROFORMER similarity -m "$M/tiny-word-mlm" --pooling mean >"$TMP/sim.out" 2>/dev/null
check "similarity: exit 1 for the line without TAB" [ $? -eq 1 ]
check "embed --pooling mean: exit 0" \
    run_ok "$TMP/sim.emb" $ROFORMER embed -m "$M/tiny-word-mlm" --pooling mean 今天天气很好 今天天气不错
check "similarity: cosine of the two embeddings; identical texts give 1" $PY -c '
import json, sys
from vectors import cosine, embeddings
s = [json.loads(l) for l in open(sys.argv[1])]
assert abs(s[0]["cosine"] - cosine(*embeddings(sys.argv[2]))) < 1e-5, s
assert abs(s[1]["cosine"] - 1) < 1e-5 and s[2]["line"] == 3, s
' "$TMP/sim.out" "$TMP/sim.emb"

# ==== CAIL2019-SCM ====
if [ -f "$SCM" ]; then
    $ROFORMER scm -m "$M/tiny-word-mlm" --max-length 512 "$SCM" >"$TMP/scm.out" 2>"$TMP/scm.err"
    check "scm: exit 0" [ $? -eq 0 ]
    check "scm: one prediction per triplet" $PY -c '
import json, sys
n = sum(1 for _ in open(sys.argv[2]))
out = [json.loads(l) for l in open(sys.argv[1])]
assert len(out) == n == 400, (len(out), n)
for o in out:
    assert o["prediction"] == ("B" if o["sim_ab"] >= o["sim_ac"] else "C"), o
    assert -1.0001 <= o["sim_ab"] <= 1.0001 and -1.0001 <= o["sim_ac"] <= 1.0001, o
' "$TMP/scm.out" "$SCM"
    check "scm: each distinct document embedded once" grep -q '224 distinct documents' "$TMP/scm.err"
    head -n 4 "$SCM" | $PY -c '
import json, sys
for i, l in enumerate(sys.stdin):
    d = json.loads(l); d["label"] = "BC"[i % 2]; print(json.dumps(d, ensure_ascii=False))
' >"$TMP/scm4.jsonl"
    $ROFORMER scm -m "$M/tiny-word-cls" --mode pair --max-length 256 - <"$TMP/scm4.jsonl" \
        >"$TMP/pair.out" 2>"$TMP/pair.err"
    check "scm --mode pair: exit 0" [ $? -eq 0 ]
    check "scm --mode pair: 4 predictions and the accuracy on stderr" sh -c \
        "[ \$(grep -c prediction '$TMP/pair.out') -eq 4 ] && grep -q 'accuracy .* of 4 labelled' '$TMP/pair.err'"
else
    check_skip "CAIL2019-SCM data absent ($SCM): scm tests"
fi

# ==== progress bar ====
check "--progress: exit 0" run_ok "$TMP/progress.out" $ROFORMER embed -m "$M/tiny-word-mlm" --progress a b c
check "--progress draws on stderr" grep -q '3 inputs' "$TMP/progress.out.err"
check "without --progress: exit 0" run_ok "$TMP/quiet.out" $ROFORMER embed -m "$M/tiny-word-mlm" a b c
check "no progress bar when stderr is not a terminal" [ ! -s "$TMP/quiet.out.err" ]

# ==== --timings ====
printf '%s\n' '今天天气不错' '{"text": "法院认为", "text_pair": "被告人"}' '{"nope": 1}' >"$TMP/t.in"
$ROFORMER embed -m "$M/tiny-word-mlm" --timings <"$TMP/t.in" >"$TMP/t.out" 2>"$TMP/t.err"
check "--timings with a bad line: exit 1" [ $? -eq 1 ]
$ROFORMER embed -m "$M/tiny-word-mlm" <"$TMP/t.in" >"$TMP/t-plain.out" 2>/dev/null
check "without --timings: exit 1" [ $? -eq 1 ]
check "--timings leaves stdout as it is" sh -c "[ -s '$TMP/t.out' ] && cmp -s '$TMP/t.out' '$TMP/t-plain.out'"
# the token count is the tokenizer's, over the two inputs that ran
head -n 2 "$TMP/t.in" >"$TMP/t2.in"
check "tokenize: exit 0" run_ok "$TMP/t2.tok" $ROFORMER tokenize -m "$M/tiny-word-mlm" <"$TMP/t2.in"
tokens=$($PY -c 'import json,sys; print(sum(len(json.loads(l)["input_ids"]) for l in sys.stdin))' <"$TMP/t2.tok")
check "--timings: inputs, real tokens and batches counted" \
    grep -q "^roformer: timings: 2 inputs, $tokens tokens, 1 batches; " "$TMP/t.err"
check "--timings: the three parts add up to the total" $PY -c '
import re, sys
m = re.search(r"; ([0-9.]+) s: encoder ([0-9.]+) s \(([0-9.]+)%\), tokenizer ([0-9.]+) s "
              r"\(([0-9.]+)%\), reading/writing/other (-?[0-9.]+) s \((-?[0-9.]+)%\)",
              open(sys.argv[1]).read())
total, secs, pcts = float(m[1]), [float(m[i]) for i in (2, 4, 6)], [float(m[i]) for i in (3, 5, 7)]
assert all(x >= 0 for x in secs + pcts) and pcts[0] > 0, m[0]
assert abs(sum(secs) - total) < 0.002 and abs(sum(pcts) - 100) < 0.2, m[0]
' "$TMP/t.err"

# ==== --compute bf16 (CPUs with AVX512_BF16) and int8 (AVX2) ====
# Each embedding within the compute type's cosine of f32's, not the same
# numbers (so the type was in effect), the bad line failing alone in its
# place. The bounds are docs/compute.md's lowest per-token cosines with the
# margins of test_bf16.c and test_int8.c (0.9997 and 0.998, with attention
# in bf16 0.9977); these embeddings are the model's pooler (tanh of an f32
# Linear of [CLS]) over one such token, whose lowest cosine on these inputs
# is 0.99937 under int8 on AVX2 (AMD Zen 3), inside the token's bound.
int8_bound=0.998
grep -qwE 'avx512_bf16|amx_bf16' /proc/cpuinfo 2>/dev/null && int8_bound=0.9977
for spec in "bf16 avx512_bf16 AVX512_BF16 0.9997" "int8 avx2 AVX2 $int8_bound"; do
    set -- $spec
    if grep -qw "$2" /proc/cpuinfo 2>/dev/null; then
        $ROFORMER embed -m "$M/tiny-word-mlm" --compute "$1" <"$TMP/t.in" >"$TMP/$1.out" 2>/dev/null
        check "embed --compute $1: the bad line fails alone (exit 1)" [ $? -eq 1 ]
        check "embed --compute $1: the error line is the third" sh -c \
            "[ \$(grep -c . '$TMP/$1.out') -eq 3 ] && sed -n 3p '$TMP/$1.out' | grep -q '\"error\"'"
        check "embed --compute $1: cosine >= $4 to f32, error line in place" \
            $PY tests/vectors.py close "$4" "$TMP/t-plain.out" "$TMP/$1.out" --differ
    else
        check_skip "this CPU has no $3: embed --compute $1 not run"
    fi
done

check_done
