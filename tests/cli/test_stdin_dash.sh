# test_stdin_dash.sh — a lone "-" argument is stdin for every job and for
# tokenize and forward: `CMD -` prints exactly what `CMD` prints reading the
# same stdin, and not what the text "-" gives; "-" beside another input
# argument is a usage error.
. tests/check.sh

require_reference "the '-' argument of the jobs"
M=$REF/models
SENT=models/sentiment-zh-small.gguf
for m in tiny-word-mlm tiny-char-proj tiny-qa; do
    $ROFORMER convert "$M/$m" -o "$TMP/$m.gguf" >/dev/null 2>"$TMP/err"
    check "convert $m: exit 0" [ $? -eq 0 ]
done
MLM=$TMP/tiny-word-mlm.gguf

# Several lines each, so that the output of the one text "-" cannot match.
printf '%s\n' 今天天气很好 这家酒店的服务很差 '{"text": "北京是中国的首都"}' >"$TMP/texts"
printf '%s\t%s\n' 今天天气很好 今天天气不错 房间很大 早餐一般 >"$TMP/pairs"
printf '%s\t%s\n' 首都是哪里 北京是中国的首都 天气怎么样 今天天气很好 >"$TMP/questions"
printf '%s\n' 今天天气很[MASK] 北京是中国的[MASK]都 >"$TMP/masked"
printf '%s\n' '{"A": "今天天气很好", "B": "今天天气不错", "C": "房间很大"}' \
    '{"A": "北京是中国的首都", "B": "首都是北京", "C": "早餐一般"}' >"$TMP/triplets"

# dash_is_stdin NAME INPUT LITERAL_RC CMD...: `CMD -` and `CMD`, both on
# INPUT, exit 0 with the same output, not empty; the text "-" alone on
# stdin exits LITERAL_RC with another output (LITERAL_RC "": "-" is no
# input of CMD, a file name or nothing).
dash_is_stdin() {
    name=$1; input=$2; literal_rc=$3; shift 3
    "$@" <"$input" >"$TMP/plain.out" 2>"$TMP/err"
    check "$name: reading stdin exits 0" [ $? -eq 0 ]
    check "$name: reading stdin prints results" [ -s "$TMP/plain.out" ]
    "$@" - <"$input" >"$TMP/dash.out" 2>"$TMP/err"
    check "$name -: exits 0" [ $? -eq 0 ]
    check "$name -: prints what reading stdin prints" cmp -s "$TMP/plain.out" "$TMP/dash.out"
    [ -n "$literal_rc" ] || return 0
    echo - | "$@" >"$TMP/literal.out" 2>"$TMP/err"
    check "$name, the text '-': exits $literal_rc" [ $? -eq "$literal_rc" ]
    check "$name -: not what the text '-' gives" \
        sh -c "[ -s '$TMP/literal.out' ] && ! cmp -s '$TMP/dash.out' '$TMP/literal.out'"
}

# ==== Each command: "-" is stdin ====
dash_is_stdin classify "$TMP/texts" 0 $ROFORMER classify -m "$SENT"
dash_is_stdin embed "$TMP/texts" 0 $ROFORMER embed -m "$MLM"
dash_is_stdin similarity "$TMP/pairs" 1 $ROFORMER similarity -m "$MLM"
dash_is_stdin scm "$TMP/triplets" "" $ROFORMER scm -m "$MLM"
dash_is_stdin rerank "$TMP/texts" 0 $ROFORMER rerank -m "$SENT" --query 天气
dash_is_stdin fill-mask "$TMP/masked" 1 $ROFORMER fill-mask -m "$MLM"
dash_is_stdin ner "$TMP/texts" 0 $ROFORMER ner -m "$TMP/tiny-char-proj.gguf"
dash_is_stdin qa "$TMP/questions" 1 $ROFORMER qa -m "$TMP/tiny-qa.gguf"
dash_is_stdin tokenize "$TMP/texts" "" $ROFORMER tokenize -m "$MLM"
dash_is_stdin forward "$TMP/texts" "" $ROFORMER forward -m "$MLM"

# "-" before the options reads stdin too.
$ROFORMER embed - -m "$MLM" <"$TMP/texts" >"$TMP/first.out" 2>"$TMP/err"
check "embed - -m MODEL: exits 0" [ $? -eq 0 ]
$ROFORMER embed -m "$MLM" <"$TMP/texts" >"$TMP/plain.out" 2>"$TMP/err"
check "embed - -m MODEL: prints what reading stdin prints" \
    sh -c "[ -s '$TMP/first.out' ] && cmp -s '$TMP/first.out' '$TMP/plain.out'"

# ==== "-" beside other input arguments: a usage error, nothing run ====
for job in classify embed similarity scm rerank fill-mask ner qa; do
    query=""; [ $job = rerank ] && query="--query q"
    for args in "x -" "- x" "- -"; do
        # $query and $args are split into their words on purpose
        $ROFORMER $job -m "$SENT" $query $args </dev/null >"$TMP/out" 2>"$TMP/err"
        check "$job $args: exit 2" [ $? -eq 2 ]
        check "$job $args: nothing on stdout" [ ! -s "$TMP/out" ]
        check "$job $args: stderr says why" \
            grep -q "^roformer $job: '-' (read stdin) must be the only input argument" "$TMP/err"
    done
done
for cmd in tokenize forward; do
    $ROFORMER $cmd -m "$MLM" - - </dev/null >"$TMP/out" 2>"$TMP/err"
    check "$cmd - -: exit 2" [ $? -eq 2 ]
    check "$cmd - -: nothing on stdout" [ ! -s "$TMP/out" ]
done

check_done
