# test_example.sh — the example program (tools/examples/similarity.c) gives the
# same cosine as `roformer similarity` on a reference model.
. tests/check.sh
EXAMPLE=$(dirname "$ROFORMER")/examples/similarity
if [ -z "$REF" ]; then
    check_skip "reference fixtures absent: example program test"
    check_done; exit
fi
M=$REF/models/tiny-word-mlm
"$EXAMPLE" "$M" 今天天气很好 今天天气不错 >"$TMP/ex.out"
check "example runs" [ $? -eq 0 ]
printf '今天天气很好\t今天天气不错\n' >"$TMP/pair"
$ROFORMER similarity -m "$M" <"$TMP/pair" >"$TMP/cli.out"
check "roformer similarity runs" [ $? -eq 0 ]
want=$(sed -n 's/.*"cosine":\([^}]*\)}.*/\1/p' "$TMP/cli.out")
got=$(sed -n 's/^cosine //p' "$TMP/ex.out")
check "example cosine $got equals roformer similarity $want" \
    awk -v a="$got" -v b="$want" 'BEGIN { d = a - b; exit !(d < 1e-5 && d > -1e-5 && a != "" && b != "") }'
"$EXAMPLE" "$REF/models/tiny-word-cls" 好 坏 >"$TMP/cls.out"
check "example prints the label of a classifier (exit $?)" \
    sh -c "[ $? -eq 0 ] && grep -Eq '^label (negative|neutral|positive) ' '$TMP/cls.out'"
"$EXAMPLE" "$TMP/missing.gguf" a b >/dev/null 2>"$TMP/err"
check "example reports a load error" sh -c "[ $? -eq 1 ] && grep -q '^error: ' '$TMP/err'"
check_done
