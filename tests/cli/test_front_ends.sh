# test_front_ends.sh — the same inputs through the CLI, `roformer serve`,
# the Python package and its Dask jobs, each with no options of its own,
# give identical output: embeddings of a sentence-transformers folder (its
# pooling, normalization and max_seq_length, all decided by the library),
# rerank (the library's label), QA over a context longer than the model
# reads at once (doc_stride, the library's window plan), and CAIL2019-SCM
# with windows (the library's stride and rf_scm_score). The CLI's lines are
# written here; tests/cli/front_ends/compare.py asks the server, Python and
# Dask and compares each value exactly, as float32.
. tests/check.sh
. tests/serve/serve_helpers.sh
require_reference "the CLI, server, Python and Dask parity"
PY=/usr/bin/python3
require_python "numpy" "the parity of the four front ends"
# the build's library for Python, as tests/python/test_python.sh finds it (an ASan
# build's library needs the sanitizer runtimes loaded first)
build=$(dirname "$ROFORMER")
case "$build" in
*asan*)
    export LD_PRELOAD="$(cc -print-file-name=libasan.so) $(cc -print-file-name=libubsan.so)"
    export ASAN_OPTIONS=detect_leaks=0 ;;
esac
export ROFORMER_LIBRARY="$build/libroformer.so" PYTHONPATH="tools/python"
M=$REF/models
DATA=${ROFORMER_DATA:-../shared/data}

# a sentence-transformers folder over tiny-word-mlm: mean pooling (the model
# has a pooler, which a plain default would use), Normalize, 12 tokens
ST=$TMP/st-mean
st_folder "$ST" "$M/tiny-word-mlm" normalize
printf '%s' '{"max_seq_length": 12, "do_lower_case": false}' >"$ST/sentence_bert_config.json"

# the inputs, one file per job
printf '%s\n' 今天天气很好 北京是中国的首都 '这家酒店的服务很好，房间干净，早餐丰富，位置方便，下次出差还会再来住' \
    >"$TMP/embed.txt"
printf '%s\n' 还行吧 很好的产品，非常满意 质量很差，不推荐 物流很快 >"$TMP/docs.txt"
echo 这个东西怎么样 >"$TMP/query.txt"
$PY - "$TMP/qa.jsonl" <<'PYEOF'
import json, sys
ctx = "张三在北京的一家银行工作。" + "他每天早上坐地铁上班，晚上回家做饭。" * 120
with open(sys.argv[1], "w", encoding="utf-8") as f:
    f.write(json.dumps({"question": "张三在哪里工作？", "context": ctx}, ensure_ascii=False) + "\n")
PYEOF
head -n 4 "$DATA/cail2019_scm/stage1_train.jsonl" >"$TMP/scm.jsonl" 2>/dev/null
[ -s "$TMP/scm.jsonl" ] || check_skip "the CAIL2019-SCM data absent: scm parity"

# the CLI
"$ROFORMER" embed -m "$ST" <"$TMP/embed.txt" >"$TMP/cli.embed" 2>"$TMP/err"
check "cli embed runs" [ $? -eq 0 ]
"$ROFORMER" rerank -m "$M/tiny-word-cls" --query "$(cat "$TMP/query.txt")" <"$TMP/docs.txt" \
    >"$TMP/cli.rerank" 2>>"$TMP/err"
check "cli rerank runs" [ $? -eq 0 ]
"$ROFORMER" qa -m "$M/tiny-qa" --doc-stride 128 <"$TMP/qa.jsonl" >"$TMP/cli.qa" 2>>"$TMP/err"
check "cli qa runs" [ $? -eq 0 ]
if [ -s "$TMP/scm.jsonl" ]; then
    "$ROFORMER" scm -m "$M/tiny-word-mlm" --window 128 "$TMP/scm.jsonl" >"$TMP/cli.scm" 2>>"$TMP/err"
    check "cli scm --window runs" [ $? -eq 0 ]
fi
[ "$check_failed" -eq 0 ] || cat "$TMP/err"

# one server per model, each stopped before the next starts
for job in embed:$ST rerank:$M/tiny-word-cls qa:$M/tiny-qa scm:$M/tiny-word-mlm; do
    name=${job%%:*}; model=${job#*:}
    [ "$name" = scm ] && [ ! -s "$TMP/scm.jsonl" ] && continue
    if start "$name" "$model"; then
        echo "$URL" >"$TMP/url.$name"
        timeout 120 $PY tests/cli/front_ends/compare.py server "$name" "$model" "$TMP" \
            >"$TMP/server.$name" 2>"$TMP/server.$name.err"
        rc=$?
        check "the server answers $name within 120 s (compare.py exit $rc)" [ $rc -eq 0 ]
        [ $rc -eq 0 ] || tail -n 5 "$TMP/server.$name.err"
        stop "$name"
    else
        check "server $name starts" false
    fi
done

# Python and Dask, then the comparison of everything
timeout 300 $PY tests/cli/front_ends/compare.py python all "$M" "$TMP" "$ST" >"$TMP/out" 2>"$TMP/py.err"
rc=$?
while IFS= read -r line; do
    case "$line" in
        "ok "*) check "${line#ok }" true ;;
        "FAIL "*) echo "$line"; check "${line#FAIL }" false ;;
        "skip "*) check_skip "${line#skip }" ;;
    esac
done <"$TMP/out"
check "the comparison ran to the end" [ $rc -eq 0 ]
[ $rc -eq 0 ] || tail -n 15 "$TMP/py.err"
check_done
