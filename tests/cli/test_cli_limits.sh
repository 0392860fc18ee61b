#!/bin/sh
# test_cli_limits.sh — the CLI's cap on input line length: a line over
# --max-line-bytes gets an error object in its place, the lines around it
# their results, the exit status 1; the default cap is 1 MiB; a bad value
# is a usage error. The options several commands share (--threads,
# --max-length, --model) have one range and one error text in each.
. tests/check.sh

if [ -z "$REF" ]; then
    check_skip "no reference directory: the CLI limit tests need a model"
    check_done; exit
fi
M=$REF/models/tiny-char-proj
long=$(head -c 300 /dev/zero | tr '\0' 'a')
printf '%s\n%s\n%s\n' '{"text": "好"}' "$long" '今天' >"$TMP/in"

"$ROFORMER" tokenize -m "$M" --max-line-bytes 100 <"$TMP/in" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "tokenize: a line over the cap fails, exit 1" [ "$rc" -eq 1 ]
check "tokenize: one output line per input line" [ "$(wc -l <"$TMP/out")" -eq 3 ]
check "tokenize: the long line's error names the cap" \
    grep -qxF '{"error":"line is longer than 100 bytes (--max-line-bytes)","line":2}' "$TMP/out"
check "tokenize: the lines around it have results" \
    sh -c "sed -n '1p;3p' '$TMP/out' | grep -c '\"input_ids\"' | grep -qx 2"
"$ROFORMER" tokenize -m "$M" --max-line-bytes 300 <"$TMP/in" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "tokenize: a line exactly at the cap is read" [ "$rc" -eq 0 ]

# the default cap: 1 MiB
head -c 1048577 /dev/zero | tr '\0' 'a' >"$TMP/big"; echo >>"$TMP/big"
"$ROFORMER" tokenize -m "$M" <"$TMP/big" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "tokenize: a line over the default 1 MiB cap: exit 1" [ "$rc" -eq 1 ]
check "tokenize: a line over the default 1 MiB cap fails" \
    grep -qF '"error":"line is longer than 1048576 bytes (--max-line-bytes)"' "$TMP/out"

"$ROFORMER" tokenize -m "$M" --max-line-bytes 0 </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
check "tokenize: --max-line-bytes 0 is a usage error" [ "$rc" -eq 2 ]
check "tokenize: the usage error names the range" \
    grep -qF -- "--max-line-bytes wants an integer from 1 to 1073741824, not '0'" "$TMP/err"

"$ROFORMER" forward -m "$M" --max-line-bytes 100 <"$TMP/in" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "forward: a line over the cap fails alone, exit 1" \
    sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$TMP/out') -eq 3 ] && sed -n 2p '$TMP/out' | grep -qxF '{\"error\":\"line is longer than 100 bytes (--max-line-bytes)\",\"line\":2}'"
check "forward: the lines around it have results" \
    sh -c "sed -n '1p;3p' '$TMP/out' | grep -c last_hidden_state | grep -qx 2"
"$ROFORMER" forward -m "$M" --max-line-bytes x </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
check "forward: a bad --max-line-bytes is a usage error" [ "$rc" -eq 2 ]

# the job commands share the reader and the flag
"$ROFORMER" embed -m "$M" --max-line-bytes 100 <"$TMP/in" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "embed: a line over the cap fails alone" \
    sh -c "[ $rc -eq 1 ] && [ \$(wc -l <'$TMP/out') -eq 3 ] && sed -n 2p '$TMP/out' | grep -qF 'line is longer than 100 bytes'"
# the options several commands share: one name, range and error text in each
for cmd in classify embed qa scm forward tokenize serve bench; do
    case $cmd in tokenize) opt=--max-length; bad=1; want="--max-length wants an integer from 2 to 1048576, not '1'" ;;
    *) opt=--threads; bad=257; want="--threads wants an integer from 0 to 256, not '257'" ;; esac
    "$ROFORMER" $cmd -m "$M" $opt=$bad </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "$cmd $opt=$bad: exit 2, \"$want\"" sh -c "[ $rc -eq 2 ] && grep -qF -- \"$want\" '$TMP/err'"
done
for cmd in classify forward tokenize serve bench info; do
    "$ROFORMER" $cmd --model </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "$cmd --model without a value: exit 2, said" \
        sh -c "[ $rc -eq 2 ] && grep -qF 'option --model needs a value' '$TMP/err'"
done
# every command reads its options through one table: the same refusal of an
# unknown word, a value missing at the end, and NAME=VALUE, in each
"$ROFORMER" bench -m "$M" --bogus </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
check "bench --bogus: exit 2, \"unknown option '--bogus'\" (not \"needs a value\")" \
    sh -c "[ $rc -eq 2 ] && grep -qF \"unknown option '--bogus'\" '$TMP/err'"
for opt in --log-format --host --pooling --port; do
    "$ROFORMER" serve -m "$M" $opt </dev/null >"$TMP/out" 2>"$TMP/err"; rc=$?
    check "serve $opt without a value: exit 2 (no crash), said" \
        sh -c "[ $rc -eq 2 ] && grep -qF 'option $opt needs a value' '$TMP/err'"
done
"$ROFORMER" convert "$M" --output="$TMP/eq.gguf" --dtype=f16 </dev/null >"$TMP/out" 2>"$TMP/err"
check "convert takes --output= and --dtype= as the other commands take NAME=VALUE" \
    sh -c "[ $? -eq 0 ] && [ -s '$TMP/eq.gguf' ]"
"$ROFORMER" bench -m "$M" --seq-len=8 --batch=1 --runs=1 --warmup=0 </dev/null >"$TMP/out" 2>"$TMP/err"
check "bench takes --seq-len= --batch= --runs= --warmup=" sh -c "[ $? -eq 0 ] && grep -qF 'batch: 1 x 8' '$TMP/out'"
echo 今天天气很好我们去公园散步吧 >"$TMP/in"
"$ROFORMER" forward --model="$M" --threads=1 --max-length=8 <"$TMP/in" >"$TMP/out" 2>"$TMP/err"
check "forward --model= --threads= --max-length=: exit 0" [ $? -eq 0 ]
check "forward takes --model=, --threads= and --max-length= as the jobs do: 8 rows" \
    /usr/bin/python3 -c 'import json, sys; assert len(json.load(open(sys.argv[1]))["last_hidden_state"]) == 8' "$TMP/out"

check_done
