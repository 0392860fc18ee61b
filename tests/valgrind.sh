#!/bin/sh
# valgrind.sh BUILD_DIR — the CLI (convert, info, tokenize, forward, the
# job commands, and pull from a stand-in hub) on the reference models under
# valgrind (memcheck, --leak-check=full): every run must end with no memory
# error and no leak of any kind, and with the exit status the run should
# have. Everything is skipped, visibly, when ../shared/reference (or
# $ROFORMER_REFERENCE) or valgrind is absent.
# Prints "valgrind: P ok, F failed, S skipped".
build=${1:-build}
ROFORMER="$build/roformer"
. tests/check.sh

# valgrind does not decode AVX-512: keep OpenBLAS on AVX2 kernels, one thread.
export OPENBLAS_CORETYPE=Haswell OPENBLAS_NUM_THREADS=1
VG="valgrind --quiet --error-exitcode=99 --leak-check=full --show-leak-kinds=all
    --errors-for-leak-kinds=all --track-origins=no"

# vg "what" ARGS... <input: the CLI under valgrind (redirect stdin from a
# file, not a pipe: a pipeline would run vg in a subshell and lose counts); passes when valgrind
# reports nothing (its exit code 99 means an error or a leak). The CLI's own
# exit code is kept in $rc, its stderr in $TMP/err.
vg() {
    what=$1; shift
    $VG "$ROFORMER" "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ "$rc" -eq 99 ] || grep -q '^==[0-9]*== ' "$TMP/err"; then
        check_failed=$((check_failed + 1))
        echo "FAIL valgrind: $what" >&2
        grep '^==[0-9]*== ' "$TMP/err" | head -n 30 >&2
    else
        check_passed=$((check_passed + 1))
    fi
}
exit_is() { [ "$rc" -eq "$1" ]; }
# the three lines of $TMP/lines: two results and an error in place of the third
three_lines_one_error() {
    [ "$rc" -eq 1 ] && [ "$(wc -l <"$TMP/out")" -eq 3 ] && [ "$(grep -c '"error"' "$TMP/out")" -eq 1 ]
}

if ! command -v valgrind >/dev/null; then
    check_skip "valgrind is not installed (scripts/setup.sh installs it)"
    check_done; exit
fi
if [ -z "$REF" ]; then
    check_skip "no reference directory (../shared/reference or \$ROFORMER_REFERENCE)"
    check_done; exit
fi
M=$REF/models

# convert: safetensors (word-level, jieba dictionary) and torch zip
vg "convert tiny-word-cls" convert "$M/tiny-word-cls" -o "$TMP/cls.gguf"
check "convert tiny-word-cls exits 0" exit_is 0
vg "convert tiny-word-mlm from pytorch_model.bin" convert "$M/tiny-word-mlm" -o "$TMP/mlm.gguf"
check "convert tiny-word-mlm exits 0" exit_is 0
vg "convert tiny-char-proj --dtype f16" convert "$M/tiny-char-proj" -o "$TMP/char.gguf" --dtype f16
check "convert tiny-char-proj exits 0" exit_is 0
vg "convert a missing directory" convert "$TMP/none" -o "$TMP/x.gguf"
check "convert of a missing directory exits 1" exit_is 1

# info: a GGUF file, an HF directory, a corrupt file
vg "info" info -m "$TMP/cls.gguf"
check "info exits 0" exit_is 0
vg "info on an HF directory" info -m "$M/tiny-qa"
check "info on an HF directory exits 0" exit_is 0
head -c 3000 "$TMP/char.gguf" >"$TMP/trunc.gguf"
vg "info on a truncated file" info -m "$TMP/trunc.gguf"
check "info on a truncated file exits 1" exit_is 1

# the jobs: each with a good line, a bad line and a pair
printf '%s\n' '今天天气不错' '{"text": "北京大学", "text_pair": "好"}' '{"text": ' >"$TMP/lines"
head -n 1 "$M/tiny-word-mlm/cases.jsonl" >"$TMP/case"
vg "tokenize" tokenize -m "$TMP/cls.gguf" --max-length 16 <"$TMP/lines"
check "tokenize: one line per input, the bad one an error, exit 1" three_lines_one_error
vg "forward --head auto" forward -m "$TMP/cls.gguf" <"$TMP/lines"
check "forward: one line per input, the bad one an error, exit 1" three_lines_one_error
vg "forward pre-tokenized, MLM" forward -m "$TMP/mlm.gguf" --hidden-states <"$TMP/case"
check "forward pre-tokenized exits 0" exit_is 0
vg "forward past max_position, ntk" forward -m "$M/tiny-v2-mlm" --extend-positions \
    --rope-scaling ntk --rope-factor 2 <"$TMP/lines"
check "forward --extend-positions: one line per input, the bad one an error, exit 1" three_lines_one_error
vg "embed --pooling mean" embed -m "$TMP/char.gguf" --pooling mean --normalize <"$TMP/lines"
check "embed: one line per input, the bad one an error, exit 1" three_lines_one_error
vg "embed --format npy" embed -m "$TMP/cls.gguf" --format npy -o "$TMP/e.npy" <"$TMP/lines"
check "embed --format npy: the bad line fails, exit 1, a file written" sh -c "[ $rc -eq 1 ] && [ -s '$TMP/e.npy' ]"
vg "embed --window (texts cut into windows)" embed -m "$TMP/char.gguf" --window 4 --stride 1 <"$TMP/lines"
check "embed --window: one line per input, the bad one an error, exit 1" three_lines_one_error
vg "classify" classify -m "$TMP/cls.gguf" --top-k 2 <"$TMP/lines"
check "classify: one line per input, the bad one an error, exit 1" three_lines_one_error
printf '%s\n' '今天[MASK]气不错' '{"text": ' >"$TMP/masks"
vg "fill-mask" fill-mask -m "$TMP/mlm.gguf" --top-k 3 <"$TMP/masks"
check "fill-mask: a result and an error, exit 1" \
    sh -c "[ $rc -eq 1 ] && [ \$(grep -c '\"masks\"' '$TMP/out') -eq 1 ]"
vg "ner" ner -m "$TMP/char.gguf" <"$TMP/lines"
check "ner: one line per input, the bad one an error, exit 1" three_lines_one_error
printf '%s\n' '{"question": "天气如何", "context": "今天天气不错"}' 'no tab here' >"$TMP/qa"
vg "qa" qa -m "$M/tiny-qa" <"$TMP/qa"
check "qa: an answer and an error, exit 1" \
    sh -c "[ $rc -eq 1 ] && [ \$(grep -c '\"answer\"' '$TMP/out') -eq 1 ]"
printf '%s\n' '{"question": "天气如何", "context": "今天天气不错，明天下雨，后天多云转晴，大后天刮风"}' \
    >"$TMP/qa-long"
vg "qa in windows" qa -m "$M/tiny-qa" --max-length 16 --doc-stride 3 <"$TMP/qa-long"
check "qa in windows: an answer" sh -c "[ $rc -eq 0 ] && grep -q '\"answer\"' '$TMP/out'"
printf '今天\t明天\n{"text_a": "好"}\n' >"$TMP/pairs"
vg "similarity" similarity -m "$TMP/char.gguf" --pooling mean <"$TMP/pairs"
check "similarity: a cosine and an error, exit 1" \
    sh -c "[ $rc -eq 1 ] && [ \$(grep -c '\"cosine\"' '$TMP/out') -eq 1 ]"
printf '%s\n' '今天天气不错' '{"nope": 1}' '明天下雨，后天多云转晴，大后天刮风' >"$TMP/docs"
vg "rerank, left truncation" rerank -m "$TMP/cls.gguf" --query 天气 --max-length 8 \
    --truncation-direction left <"$TMP/docs"
check "rerank: two ranked, then the error, exit 1" \
    sh -c "[ $rc -eq 1 ] && [ \$(grep -c '\"index\"' '$TMP/out') -eq 2 ]"
vg "rerank by cosine" rerank -m "$TMP/char.gguf" --query 天气 --top-n 1 <"$TMP/docs"
check "rerank by cosine: the best one, then the error" \
    sh -c "[ $rc -eq 1 ] && [ \$(grep -c '\"index\"' '$TMP/out') -eq 1 ]"

# RoFormer-v2 (RMS norm, no biases): conversion from the torch zip, the MLM
# head and the classification head
if [ -d "$M/tiny-v2-mlm" ]; then
    mkdir -p "$TMP/v2"
    for f in config.json vocab.txt tokenizer_config.json pytorch_model.bin; do
        ln -s "$(cd "$M/tiny-v2-mlm" && pwd)/$f" "$TMP/v2/$f"
    done
    vg "convert tiny-v2-mlm from pytorch_model.bin" convert "$TMP/v2" -o "$TMP/v2.gguf"
    check "convert tiny-v2-mlm exits 0" exit_is 0
    vg "fill-mask on v2" fill-mask -m "$TMP/v2.gguf" --top-k 3 <"$TMP/masks"
    check "fill-mask on v2: a result and an error, exit 1" \
        sh -c "[ $rc -eq 1 ] && [ \$(grep -c '\"masks\"' '$TMP/out') -eq 1 ]"
    vg "classify on v2" classify -m "$M/tiny-v2-cls" <"$TMP/lines"
    check "classify on v2: one line per input, the bad one an error, exit 1" three_lines_one_error
else
    check_skip "no RoFormer-v2 fixtures in $M"
fi

# pull from the stand-in hub (tests/hub/hub_server.py): a cut download, its
# resume, a bad checksum, and -m hf: from the cache
if [ -x /usr/bin/python3 ]; then
    /usr/bin/python3 tests/hub/hub_server.py --root "$M" --port-file "$TMP/port" --log "$TMP/log" \
        --timeout 300 &
    server=$!
    trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
    i=0
    while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
    check "the stand-in hub listens within 10 s" test -s "$TMP/port"
    export HF_ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")" ROFORMER_CACHE="$TMP/cache"
    vg "pull, connection cut" pull drop/tiny-qa
    check "pull with the connection cut exits 1" exit_is 1
    vg "pull, resumed" pull drop/tiny-qa
    check "the resumed pull exits 0" exit_is 0
    vg "pull, bad checksum" pull badsum/tiny-qa
    check "pull with a bad checksum exits 1" exit_is 1
    vg "info -m hf: from the cache" info -m hf:drop/tiny-qa
    check "info -m hf: exits 0" exit_is 0
else
    check_skip "no /usr/bin/python3 for the stand-in hub: pull not run"
fi
check_done
