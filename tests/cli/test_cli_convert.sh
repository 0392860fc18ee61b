#!/bin/sh
# test_cli_convert.sh — `roformer convert` and `roformer info`: results on
# stdout, one-line errors on stderr, exit codes 0 / 1 / 2.
. tests/check.sh

# runs the CLI; keeps stdout in $TMP/out, stderr in $TMP/err, exit code in $rc
run() { "$ROFORMER" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
exit_is() { [ "$rc" -eq "$1" ]; }
out_has() { grep -qF -- "$1" "$TMP/out"; }
err_has() { grep -qF -- "$1" "$TMP/err"; }
one_error_line() { [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^roformer: error: ' "$TMP/err" && [ ! -s "$TMP/out" ]; }

run convert --help
check "convert --help exits 0" exit_is 0
check "convert --help prints the usage" out_has "usage: roformer convert HF_DIR -o MODEL.gguf"
run info --help
check "info --help exits 0" exit_is 0
run convert
check "convert without arguments is a usage error" exit_is 2
check "usage error names the command" err_has "roformer convert: missing the HF checkpoint directory"
run convert somedir
check "convert without -o is a usage error" exit_is 2
check "missing -o is named" err_has "missing -o MODEL.gguf"
run convert somedir -o x.gguf --dtype f8
check "bad --dtype is a usage error" exit_is 2
check "bad --dtype is named" err_has "--dtype must be f32, f16, bf16 or q8, not 'f8'"
run convert somedir -o x.gguf --tokenizer jieba
check "bad --tokenizer is a usage error" exit_is 2
run convert somedir -o x.gguf --frobnicate
check "unknown option is a usage error" exit_is 2
run convert somedir -o
check "-o without a value is a usage error" exit_is 2
run info
check "info without -m is a usage error" exit_is 2
run info -m "$TMP/missing.gguf"
check "info on a missing file exits 1" exit_is 1
check "info on a missing file: one line naming it" one_error_line
check "the message names the path" err_has "$TMP/missing.gguf: cannot open"
run convert "$TMP/nowhere" -o "$TMP/x.gguf"
check "convert of a missing directory exits 1" exit_is 1
check "convert of a missing directory: one line" one_error_line
check "no output written" test ! -e "$TMP/x.gguf"

if [ -z "$REF" ]; then
    check_skip "reference fixtures not found (../shared/reference or \$ROFORMER_REFERENCE): conversion runs not tested"
    check_done; exit $?
fi
M="$REF/models"

run convert "$M/tiny-word-cls" -o "$TMP/cls.gguf"
check "convert tiny-word-cls exits 0" exit_is 0
check "convert prints nothing on stdout" test ! -s "$TMP/out"
check "the GGUF file is written" test -s "$TMP/cls.gguf"
check "the file starts with GGUF" sh -c "head -c 4 '$TMP/cls.gguf' | grep -q GGUF"
run info -m "$TMP/cls.gguf"
check "info exits 0" exit_is 0
check "info: head" out_has "head:                cls"
check "info: labels" out_has "labels:              3 (negative, neutral, positive)"
check "info: sizes" out_has "hidden_size:         32"
check "info: layers" out_has "num_layers:          2"
check "info: tokenizer" out_has "tokenizer:           wobert (do_lower_case true)"
check "info: special ids" out_has "[PAD]=0 [UNK]=100 [CLS]=101 [SEP]=102 [MASK]=103"
check "info: dtype" out_has "dtype:               f32"
check "info: tensor count" out_has "tensors:             40"
check "info: nothing on stderr" test ! -s "$TMP/err"

run info -m "$M/tiny-char-proj"
check "info -m HF directory exits 0" exit_is 0
check "info -m HF directory: token head, 5 labels" out_has "labels:              5 (O, B-PER, I-PER, B-LOC, I-LOC)"
check "info -m HF directory: projection sizes" out_has "embedding_size:      32"
check "info -m HF directory: rotary_value" out_has "rotary_value:        true"
check "info -m HF directory: gelu_new" out_has "hidden_act:          gelu_new"

run convert "$M/tiny-char-proj" -o "$TMP/char.gguf" --tokenizer bert --dtype f16
check "convert --tokenizer bert --dtype f16 exits 0" exit_is 0
run info -m "$TMP/char.gguf"
check "info on it exits 0" exit_is 0
check "info: bert tokenizer" out_has "tokenizer:           bert (do_lower_case true)"
check "info: f16 storage" out_has "dtype:               f16"
run convert "$M/small-fp16" -o "$TMP/small.gguf" --dtype bf16
check "convert --dtype bf16 exits 0" exit_is 0
run info -m "$TMP/small.gguf"
check "info on it exits 0" exit_is 0
check "info: bf16 storage" out_has "dtype:               bf16"
check "info: no head" out_has "head:                none"
run convert "$M/tiny-word-cls" -o "$TMP/cls-q8.gguf" --dtype q8
check "convert --dtype q8 exits 0" exit_is 0
check "the q8 file is smaller than the f32 one" \
    test "$(wc -c <"$TMP/cls-q8.gguf")" -lt "$(wc -c <"$TMP/cls.gguf")"
run info -m "$TMP/cls-q8.gguf"
check "info on it exits 0" exit_is 0
check "info: q8 storage" out_has "dtype:               q8"
# converting.md: q8 is about a quarter of the f32 file where the weights are
# most of it (tiny-v2-mlm: a character vocabulary, no jieba dictionary):
# one byte per weight, an f32 scale per row, biases and norms in f32.
run convert "$M/tiny-v2-mlm" -o "$TMP/v2.gguf"
check "convert tiny-v2-mlm exits 0" exit_is 0
run convert "$M/tiny-v2-mlm" -o "$TMP/v2-q8.gguf" --dtype q8
check "convert tiny-v2-mlm --dtype q8 exits 0" exit_is 0
check "tiny-v2-mlm: the q8 file is 25% to 30% of the f32 file" \
    sh -c "f=\$(wc -c <'$TMP/v2.gguf'); q=\$(wc -c <'$TMP/v2-q8.gguf'); [ \$((100 * q)) -ge \$((25 * f)) ] && [ \$((100 * q)) -le \$((30 * f)) ]"
# A checkpoint directory is converted in memory: the same numbers as its
# GGUF file.
printf '%s\n' 这家酒店服务很好 '{"text": "房间很大", "text_pair": "早餐一般"}' >"$TMP/cls.in"
check "classify -m the directory: exit 0" \
    run_ok "$TMP/cls-dir.out" "$ROFORMER" classify -m "$M/tiny-word-cls" <"$TMP/cls.in"
check "classify -m its GGUF file: exit 0" \
    run_ok "$TMP/cls-gguf.out" "$ROFORMER" classify -m "$TMP/cls.gguf" <"$TMP/cls.in"
check "a directory and its GGUF file classify to the same bytes" same "$TMP/cls-dir.out" "$TMP/cls-gguf.out"
printf '{"text": "这家酒店服务很好"}\n' >"$TMP/q8.in"
"$ROFORMER" forward -m "$TMP/cls-q8.gguf" --compute int8 <"$TMP/q8.in" >"$TMP/out" 2>"$TMP/err"; rc=$?
# a CPU without AVX2 (make test-x86 CPU=Nehalem) refuses int8 compute,
# which forward reports in the line's place
if [ "$rc" -eq 1 ] && out_has "int8 compute needs a CPU with AVX2, which this one lacks"; then
    check_skip "forward --compute int8 on the q8 file: $(cat "$TMP/out")"
else
    check "forward --compute int8 on the q8 file exits 0" exit_is 0
    check "forward --compute int8 on the q8 file gives logits" out_has '"logits":['
fi
run convert "$M/tiny-word-mlm" -o "$TMP/mlm.gguf" --jieba-dict "$TMP/nodict.txt"
check "missing --jieba-dict exits 1" exit_is 1
check "missing --jieba-dict: one line naming it" err_has "$TMP/nodict.txt: cannot open"

head -c 100000 "$TMP/cls.gguf" >"$TMP/cut.gguf"
run info -m "$TMP/cut.gguf"
check "truncated model exits 1" exit_is 1
check "truncated model: one line" one_error_line
check "truncated model: says so" err_has "truncated file"

mkdir "$TMP/bad"
for f in vocab.txt tokenizer_config.json model.safetensors; do ln -s "$(cd "$M/tiny-qa" && pwd)/$f" "$TMP/bad/$f"; done
printf '{"hidden_size": 48,' >"$TMP/bad/config.json"
run convert "$TMP/bad" -o "$TMP/bad.gguf"
check "bad config.json exits 1" exit_is 1
check "bad config.json: one line" one_error_line
check "bad config.json: named" err_has "config.json: bad JSON"
run info -m "$TMP/bad"
check "info -m on a bad HF directory exits 1" exit_is 1
check "no partial output" test ! -e "$TMP/bad.gguf"

# RoFormer-v2: the norm and the biases in info
run info -m "$M/tiny-v2-mlm"
check "info on a v2 checkpoint exits 0" exit_is 0
check "info v2: rms_norm" out_has "norm_type:           rms_norm (RoFormer-v2, no parameters)"
check "info v2: no encoder biases" out_has "encoder biases:      false"
check "info v2: mlm head" out_has "head:                mlm"
run info -m "$TMP/cls.gguf"
check "info on a v1 model exits 0" exit_is 0
check "info v1: layer_norm" out_has "norm_type:           layer_norm"
check "info v1: encoder biases" out_has "encoder biases:      true"

# --pooler-activation: RoFormer-Sim's pooler without tanh
run convert "$M/tiny-word-mlm" -o "$TMP/linear.gguf" --pooler-activation linear
check "convert --pooler-activation linear exits 0" exit_is 0
run info -m "$TMP/linear.gguf"
check "info on it exits 0" exit_is 0
check "info shows the linear pooler" out_has "pooler:              linear"
run info -m "$M/tiny-word-mlm"
check "info on tiny-word-mlm exits 0" exit_is 0
check "info: config.json's pooler (tanh) by default" out_has "pooler:              tanh"
run convert "$M/tiny-word-mlm" -o "$TMP/x.gguf" --pooler-activation relu
check "bad --pooler-activation is a usage error" exit_is 2
check "bad --pooler-activation is named" err_has "--pooler-activation must be tanh or linear, not 'relu'"
run convert "$M/tiny-word-cls" -o "$TMP/x.gguf" --pooler-activation linear
check "--pooler-activation without a pooler exits 1" exit_is 1
check "--pooler-activation without a pooler: one line" one_error_line
check "--pooler-activation without a pooler: said" err_has "the checkpoint has no pooler"
check "--pooler-activation without a pooler: nothing written" test ! -e "$TMP/x.gguf"
# embed --pooling pooler honours it: linear = atanh of tanh's output
check "embed --pooling pooler on the linear pooler exits 0" \
    run_ok "$TMP/lin.json" "$ROFORMER" embed -m "$TMP/linear.gguf" --pooling pooler 今天天气很好
check "embed --pooling pooler on the tanh pooler exits 0" \
    run_ok "$TMP/tanh.json" "$ROFORMER" embed -m "$M/tiny-word-mlm" --pooling pooler 今天天气很好
check "embed --pooling pooler: tanh(linear pooler) = the tanh pooler" /usr/bin/python3 -c '
import json, math, sys
lin = json.load(open(sys.argv[1]))["embedding"]
th = json.load(open(sys.argv[2]))["embedding"]
assert len(lin) == len(th) == 64
assert max(abs(math.tanh(a) - b) for a, b in zip(lin, th)) < 1e-5
assert max(abs(a - b) for a, b in zip(lin, th)) > 0.05
' "$TMP/lin.json" "$TMP/tanh.json"

run convert "$M/tiny-qa" -o "$TMP/no/such/dir/qa.gguf"
check "unwritable output exits 1" exit_is 1
check "unwritable output: one line" one_error_line

check_done
