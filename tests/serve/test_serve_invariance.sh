#!/bin/sh
# test_serve_invariance.sh — the server's dynamic batches change no output
# (docs/compute.md, "Reproducibility"): 16 concurrent clients send 30 texts
# of mixed lengths in random groups to /embed, /predict and /fill-mask, and
# every answer equals, as float32 bits, the CLI's output for the text run
# alone (--batch-size 1 --threads 1). For f32 and int8 (where the CPU has
# the int8 kernel's AVX2, or is ARM64), with one replica on 2 threads and
# with --replicas 2; bf16 where the CPU has AVX512_BF16 (or ARM64 BF16).
. tests/check.sh
. tests/serve/serve_helpers.sh
PY=/usr/bin/python3
require_reference "the server's batch invariance"
require_python numpy "the server's batch invariance"
cls=$REF/models/tiny-word-cls
mlm=$REF/models/tiny-word-mlm

# 30 ChnSentiCorp reviews cut to 1 to 300 characters, and the same with
# their second character masked
$PY - "${ROFORMER_DATA:-../shared/data}/chnsenticorp/dev.tsv" "$TMP" <<'PYEOF'
import sys
lengths = [1, 3, 6, 9, 14, 20, 27, 36, 48, 64, 90, 120, 170, 230, 300]
rows = [l.rstrip("\n").split("\t", 1)[1] for l in open(sys.argv[1], encoding="utf-8")][1:31]
texts = [r[:lengths[i % 15]] for i, r in enumerate(rows)]
with open(sys.argv[2] + "/texts.txt", "w", encoding="utf-8") as f:
    f.write("".join(t + "\n" for t in texts))
with open(sys.argv[2] + "/masked.txt", "w", encoding="utf-8") as f:
    f.write("".join(t[:1] + "[MASK]" + t[2:] + "\n" for t in texts))
PYEOF

computes="f32"
arch=$(uname -m)
if [ "$arch" = aarch64 ] || grep -qw avx2 /proc/cpuinfo; then computes="$computes int8"
else check_skip "int8: this CPU has no AVX2"; fi
if [ "$arch" = aarch64 ] && grep -qw bf16 /proc/cpuinfo || grep -qw avx512_bf16 /proc/cpuinfo ||
    grep -qw amx_bf16 /proc/cpuinfo; then computes="$computes bf16"
else check_skip "bf16: this CPU has no AVX512_BF16, AMX-BF16 or ARM64 BF16"; fi

for c in $computes; do
    alone="--batch-size 1 --threads 1 --compute $c"
    run_ok "$TMP/embed.jsonl" "$ROFORMER" embed -m "$cls" --pooling mean $alone - <"$TMP/texts.txt"
    check "$c: the CLI embeds each text alone" [ "$(wc -l <"$TMP/embed.jsonl")" -eq 30 ]
    run_ok "$TMP/classify.jsonl" "$ROFORMER" classify -m "$cls" --top-k 100 $alone - <"$TMP/texts.txt"
    check "$c: the CLI classifies each text alone" [ "$(wc -l <"$TMP/classify.jsonl")" -eq 30 ]
    run_ok "$TMP/fill_mask.jsonl" "$ROFORMER" fill-mask -m "$mlm" --top-k 5 $alone - <"$TMP/masked.txt"
    check "$c: the CLI fills each mask alone" [ "$(wc -l <"$TMP/fill_mask.jsonl")" -eq 30 ]
    for replicas in "--replicas 1" "--replicas 2 --threads 1"; do
        if start "$c" "cls=$cls" -m "mlm=$mlm" --pooling mean --compute "$c" $replicas; then
            client_checks "$c, $replicas" $PY tests/serve/serve_invariance_client.py "$URL" "$TMP"
            stop "$c, $replicas"
        else
            check "$c, $replicas: server starts" false
        fi
    done
done
check_done
