# test_long_positions.sh — sequences past the model's max_position
# (--extend-positions) and the two rope scalings (--rope-scaling linear|ntk
# --rope-factor F), checked against tests/model/long_reference.py, a float64
# NumPy forward written from the formulas: every reference model at 2048
# tokens, one v1 (tiny-qa) and one v2 (tiny-v2-mlm) model at 4096, and the
# v2 one at 8192, each plain, linear x4 and ntk x4 (CPU time: under a
# minute). Also
# the errors, the checkpoint's default scaling through config.json and
# GGUF, and that below max_position nothing changes.
. tests/check.sh
PY=/usr/bin/python3

require_reference "long-position tests"
M=$REF/models
ids() { # ids N: one JSON line of N token ids (5 .. 4999)
    awk -v n="$1" 'BEGIN { printf "{\"input_ids\":["; for (i = 0; i < n; i++) printf "%s%d", i ? "," : "", 5 + (i * 7919) % 4995; print "]}" }'
}

# ---- errors: one line, exit 2 for bad option values ----
ids 513 >"$TMP/513.jsonl"
$ROFORMER forward -m "$M/tiny-v2-mlm" <"$TMP/513.jsonl" >"$TMP/out" 2>/dev/null
check "forward past max_position without the option: exit 1" [ $? -eq 1 ]
check "forward past max_position without the option: an error line naming extend_positions" \
    grep -q 'longer than the model.s max_position_embeddings (512); truncate it, or set extend_positions' "$TMP/out"
$ROFORMER embed -m "$M/tiny-v2-mlm" --max-length 600 x >/dev/null 2>"$TMP/err"; rc=$?
check "embed --max-length over the maximum: exit 2" [ $rc -eq 2 ]
check "embed --max-length over the maximum: names --extend-positions" grep -q -- "--extend-positions" "$TMP/err"
for bad in "--rope-factor 0" "--rope-factor -1" "--rope-factor x" "--rope-scaling yarn" "--window 2" \
           "--window 64 --stride 62" "--window 64 --stride 64" "--stride 4" "--window 513"; do
    $ROFORMER embed -m "$M/tiny-v2-mlm" $bad x >/dev/null 2>"$TMP/err"; rc=$?
    check "embed $bad: exit 2 with one line" sh -c "[ $rc -eq 2 ] && [ \$(grep -c . '$TMP/err') -le 2 ] && grep -q 'roformer embed: ' '$TMP/err'"
done
$ROFORMER ner -m "$M/tiny-char-proj" --window 64 x >/dev/null 2>&1
check "ner --window: a usage error (windows pool vectors)" [ $? -eq 2 ]

# ---- below max_position: the same bytes with --extend-positions ----
ids 512 >"$TMP/512.jsonl"
check "512 tokens, --hidden-states: exit 0" \
    run_ok "$TMP/plain" $ROFORMER forward -m "$M/tiny-v2-mlm" --hidden-states <"$TMP/512.jsonl"
check "512 tokens, --hidden-states --extend-positions: exit 0" \
    run_ok "$TMP/ext" $ROFORMER forward -m "$M/tiny-v2-mlm" --hidden-states --extend-positions <"$TMP/512.jsonl"
check "512 tokens on a 512-position model: --extend-positions changes no byte" same "$TMP/plain" "$TMP/ext"
check "--rope-scaling none --rope-factor 8: exit 0" \
    run_ok "$TMP/none8" $ROFORMER forward -m "$M/tiny-v2-mlm" --rope-scaling none --rope-factor 8 <"$TMP/512.jsonl"
check "512 tokens: exit 0" run_ok "$TMP/plain1" $ROFORMER forward -m "$M/tiny-v2-mlm" <"$TMP/512.jsonl"
check "--rope-scaling none ignores the factor" same "$TMP/none8" "$TMP/plain1"

# ---- scaling stretches the accepted length: max_position x factor ----
ids 2048 >"$TMP/2048.jsonl"
check "linear x4 takes 4 x 512 tokens without --extend-positions" \
    run_ok "$TMP/lin" $ROFORMER forward -m "$M/tiny-v2-mlm" --head none --rope-scaling linear --rope-factor 4 <"$TMP/2048.jsonl"
ids 2049 >"$TMP/2049.jsonl"
$ROFORMER forward -m "$M/tiny-v2-mlm" --rope-scaling linear --rope-factor 4 <"$TMP/2049.jsonl" >"$TMP/out" 2>/dev/null
check "linear x4 refuses 2049 tokens: exit 1, an error line" sh -c "[ $? -eq 1 ] && grep -q '\"error\"' '$TMP/out'"
$ROFORMER forward -m "$M/tiny-v2-mlm" --head none --rope-scaling ntk --rope-factor 4 <"$TMP/2049.jsonl" >"$TMP/out" 2>/dev/null
check "ntk x4 refuses 2049 tokens too: exit 1, an error line naming the 2048 accepted" \
    sh -c "[ $? -eq 1 ] && grep -q 'longer than the 2048 this context accepts' '$TMP/out'"
check "linear x4 with --extend-positions goes further: 2049 tokens, exit 0" \
    run_ok "$TMP/out" $ROFORMER forward -m "$M/tiny-v2-mlm" --head none --rope-scaling linear --rope-factor 4 \
    --extend-positions <"$TMP/2049.jsonl"

# ---- the checkpoint's default: config.json rope_scaling -> GGUF -> context ----
mkdir "$TMP/scaled"
for f in "$M/tiny-v2-mlm"/*; do ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$TMP/scaled/"; done
rm "$TMP/scaled/config.json"
$PY -c 'import json,sys; c=json.load(open(sys.argv[1])); c["rope_scaling"]={"type":"linear","factor":4.0}; json.dump(c,open(sys.argv[2],"w"))' \
    "$M/tiny-v2-mlm/config.json" "$TMP/scaled/config.json"
$ROFORMER convert "$TMP/scaled" -o "$TMP/scaled.gguf" >/dev/null 2>&1
check "convert: a config with rope_scaling" [ $? -eq 0 ]
check "info on it exits 0" run_ok "$TMP/info" $ROFORMER info -m "$TMP/scaled.gguf"
check "info: the GGUF records linear x4" grep -q 'rope_scaling: *linear, factor 4' "$TMP/info"
check "forward on it: exit 0" run_ok "$TMP/lin-default" $ROFORMER forward -m "$TMP/scaled.gguf" --head none <"$TMP/2048.jsonl"
check "the recorded scaling is the default: same output as --rope-scaling linear --rope-factor 4" \
    same "$TMP/lin" "$TMP/lin-default"
$ROFORMER convert "$M/tiny-v2-mlm" -o "$TMP/plain.gguf" >/dev/null 2>&1
check "convert: a config without rope_scaling" [ $? -eq 0 ]
check "info on it exits 0" run_ok "$TMP/info" $ROFORMER info -m "$TMP/plain.gguf"
check "info: no rope_scaling line for a model without one" sh -c "! grep -q rope_scaling '$TMP/info'"
# --rope-scaling none on a model whose file records linear x4: the trained
# angles, so the outputs of the model converted without the scaling.
check "the scaled model, 512 tokens: exit 0" \
    run_ok "$TMP/scaled-default" $ROFORMER forward -m "$TMP/scaled.gguf" <"$TMP/512.jsonl"
check "the scaled model, 512 tokens, --rope-scaling none: exit 0" \
    run_ok "$TMP/scaled-none" $ROFORMER forward -m "$TMP/scaled.gguf" --rope-scaling none <"$TMP/512.jsonl"
check "the unscaled model, 512 tokens: exit 0" \
    run_ok "$TMP/plain-gguf" $ROFORMER forward -m "$TMP/plain.gguf" <"$TMP/512.jsonl"
check "--rope-scaling none on a model recording linear x4: the unscaled model's outputs" \
    same "$TMP/scaled-none" "$TMP/plain-gguf"
check "the recorded linear x4 changes the outputs at 512 tokens (so the check above can fail)" \
    sh -c "! cmp -s '$TMP/scaled-default' '$TMP/plain-gguf'"
$ROFORMER forward -m "$TMP/scaled.gguf" --rope-scaling none <"$TMP/2048.jsonl" >"$TMP/out" 2>/dev/null
check "--rope-scaling none on the scaled model takes 512 positions again: 2048 tokens exit 1, an error line" \
    sh -c "[ $? -eq 1 ] && grep -q 'max_position_embeddings (512)' '$TMP/out'"

# ---- the caps: --rope-factor at most 1024, --extend-positions 65,536 tokens ----
check "--rope-factor 1024: exit 0" \
    run_ok "$TMP/out" $ROFORMER embed -m "$M/tiny-v2-mlm" --rope-scaling linear --rope-factor 1024 x
$ROFORMER embed -m "$M/tiny-v2-mlm" --rope-scaling linear --rope-factor 1025 x >/dev/null 2>"$TMP/err"; rc=$?
check "--rope-factor 1025: exit 2, naming the bound" \
    sh -c "[ $rc -eq 2 ] && grep -qF -- \"--rope-factor wants a number above 0 and at most 1024, not '1025'\" '$TMP/err'"
check "--extend-positions --max-length 65536: exit 0" \
    run_ok "$TMP/out" $ROFORMER embed -m "$M/tiny-v2-mlm" --extend-positions --max-length 65536 x
$ROFORMER embed -m "$M/tiny-v2-mlm" --extend-positions --max-length 65537 x >/dev/null 2>"$TMP/err"; rc=$?
check "--extend-positions --max-length 65537: exit 2, naming 65536" \
    sh -c "[ $rc -eq 2 ] && grep -qF -- '--max-length 65537 is over the longest accepted, 65536' '$TMP/err'"
# 65,537 ids are refused before any computing (65,536 would take minutes of
# O(L^2) attention here; the --max-length check above accepts that length).
ids 65537 >"$TMP/65537.jsonl"
$ROFORMER forward -m "$M/tiny-v2-mlm" --head none --extend-positions <"$TMP/65537.jsonl" >"$TMP/out" 2>/dev/null
check "--extend-positions, 65537 tokens: exit 1, an error line naming the 65536 accepted" \
    sh -c "[ $? -eq 1 ] && grep -q 'sequence of 65537 tokens is longer than the 65536 this context accepts' '$TMP/out'"

# ---- against the float64 reference ----
require_python "numpy" "float64 reference at 2048/4096/8192"
for m in tiny-word-mlm tiny-word-cls tiny-char-proj tiny-qa small-fp16 tiny-v2-mlm tiny-v2-cls; do
    check "$m at 2048: plain, linear x4, ntk x4 within 1e-4 of float64" \
        $PY tests/model/long_reference.py "$ROFORMER" "$M/$m" 2048:none:1 2048:linear:4 2048:ntk:4
done
check "tiny-qa at 4096: plain, linear x4, ntk x4 within 1e-4 of float64" \
    $PY tests/model/long_reference.py "$ROFORMER" "$M/tiny-qa" 4096:none:1 4096:linear:4 4096:ntk:4
check "tiny-v2-mlm at 4096 and 8192: plain, linear x4, ntk x4 within 1e-4 of float64" \
    $PY tests/model/long_reference.py "$ROFORMER" "$M/tiny-v2-mlm" 4096:none:1 4096:linear:4 4096:ntk:4 \
    8192:none:1 8192:linear:4 8192:ntk:4
check_done
