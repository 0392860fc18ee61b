#!/bin/sh
# seeds.sh BUILD_DIR OUT_DIR — seed inputs made at run time from the
# reference files (../shared/reference or $ROFORMER_REFERENCE), which are
# never copied into the repository: OUT_DIR/<target>/ for each target.
# Prints a SKIP line and makes nothing when the reference is absent.
build=$1; out=$2
ref=${ROFORMER_REFERENCE:-../shared/reference}
if [ ! -d "$ref/models" ]; then
    echo "SKIP fuzz seeds: no reference directory at $ref (committed seeds only)" >&2
    exit 0
fi
rm -rf "$out"
mkdir -p "$out/gguf" "$out/model" "$out/safetensors" "$out/torch_zip" "$out/pickle" \
         "$out/hf_config" "$out/tokenizer"
for d in "$ref"/models/*/; do
    m=$(basename "$d")
    # converted models: only the small ones make useful whole-file seeds
    if [ "$(wc -c <"$d/model.safetensors")" -le 2000000 ]; then
        "$build/roformer" convert "$d" -o "$out/gguf/$m.gguf" >/dev/null 2>&1 &&
            cp "$out/gguf/$m.gguf" "$out/model/$m.gguf"
        cp "$d/model.safetensors" "$out/safetensors/$m.safetensors"
    fi
    cp "$d/expected.safetensors" "$out/safetensors/$m-expected.safetensors" 2>/dev/null
    if [ -f "$d/tokenizer_config.json" ]; then
        { cat "$d/config.json"; printf '\000'; cat "$d/tokenizer_config.json"; } >"$out/hf_config/$m.json"
    else
        cp "$d/config.json" "$out/hf_config/$m.json"
    fi
    # the pickle of a torch archive, read from the zip's central directory
    if [ -f "$d/pytorch_model.bin" ] && command -v unzip >/dev/null; then
        unzip -p "$d/pytorch_model.bin" '*/data.pkl' >"$out/pickle/$m.pkl" 2>/dev/null
    fi
done
cp "$ref/vocab/roformer_chinese_base_config.json" "$out/hf_config/chinese-base.json" 2>/dev/null
# tokenizer: one flags byte (WoBERT, no truncation) and a line of the cases
if [ -f "$ref/tokenizer/cases.jsonl" ]; then
    i=0
    head -n 300 "$ref/tokenizer/cases.jsonl" | while IFS= read -r line; do
        i=$((i + 1))
        { printf '\000'; printf '%s' "$line"; } >"$out/tokenizer/case$i.txt"
    done
fi
