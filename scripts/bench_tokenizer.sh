#!/bin/sh
# bench_tokenizer.sh — tokenizer throughput on one core, beside jieba-rs and
# Python jieba on the same text, in one run:
#   C cut        jieba segmentation alone (rf_jieba_cut)
#   C tokenize   the whole tokenizer (lower-case, jieba, vocab, WordPiece, ids)
#   jieba-rs     npm @node-rs/jieba 2.0.3 (jieba-rs 0.10.3), cut(line, false)
#   py jieba     Debian python3-jieba, lcut(line, HMM=False)
# on the CJRC legal and CMRC wiki paragraphs of ../shared/data, one input
# per line, MB/s of UTF-8 input (10^6 bytes), median of RUNS passes after
# one warm-up, wall time (on a shared machine, run it when it is quiet).
# Also the jieba dictionary build time.
#
#   scripts/bench_tokenizer.sh            (or: make bench-tokenizer)
#   RUNS=9 scripts/bench_tokenizer.sh
#
# Environment: ROFORMER_DATA (../shared/data), ROFORMER_REFERENCE
# (../shared/reference, for the WoBERT vocab), ROFORMER_JIEBA_DICT.
# jieba-rs is installed with npm into build/bench-node on first use; a peer
# that is missing (no node/npm, no python3-jieba) is reported and skipped.
set -eu
cd "$(dirname "$0")/.."
DATA=${ROFORMER_DATA:-../shared/data}
REF=${ROFORMER_REFERENCE:-../shared/reference}
DICT=${ROFORMER_JIEBA_DICT:-/usr/lib/python3/dist-packages/jieba/dict.txt}
RUNS=${RUNS:-7}
VOCAB=$REF/vocab/wobert_vocab.txt
for f in "$VOCAB" "$DICT"; do
    [ -f "$f" ] || { echo "bench_tokenizer: $f not found" >&2; exit 1; }
done

make -s build/libroformer.a
cc -std=c11 -D_GNU_SOURCE -O2 -Iinclude -Isrc $(pkg-config --cflags libcjson libutf8proc) \
    tests/bench/bench_tokenizer.c build/libroformer.a \
    $(pkg-config --libs libcjson libutf8proc) -lm -o build/bench_tokenizer

NODE_DIR=build/bench-node
if [ ! -d "$NODE_DIR/node_modules/@node-rs/jieba" ] && command -v npm >/dev/null; then
    mkdir -p "$NODE_DIR"
    npm install --silent --prefix "$NODE_DIR" @node-rs/jieba@2.0.3 >/dev/null 2>&1 ||
        echo "bench_tokenizer: npm install @node-rs/jieba failed; jieba-rs skipped" >&2
fi
have_rs=0; [ -d "$NODE_DIR/node_modules/@node-rs/jieba" ] && command -v node >/dev/null && have_rs=1
have_py=0; /usr/bin/python3 -c 'import jieba' 2>/dev/null && have_py=1

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), one thread; runs: $RUNS"
summary=""
ratio() { if [ "$2" = - ]; then echo -; else echo "$1 $2" | awk '{printf "%.2fx", $1 / $2}'; fi; }
for corpus in cail2019_cjrc_legal_paragraphs cmrc2018_wiki_paragraphs; do
    file=$DATA/$corpus/paragraphs.txt
    [ -f "$file" ] || { echo "bench_tokenizer: $file not found, skipped" >&2; continue; }
    echo "== $corpus ($(wc -c <"$file") bytes)"
    out=$(build/bench_tokenizer "$VOCAB" "$DICT" "$file" "$RUNS")
    echo "$out"
    c_cut=$(echo "$out" | awk '$1 == "cut" {print $2}')
    c_tok=$(echo "$out" | awk '$1 == "tokenize" {print $2}')
    c_dict=$(echo "$out" | awk '$1 == "dict" {print $2}')
    rs=-; py=-
    if [ $have_rs = 1 ]; then
        rs_out=$(NODE_PATH=$NODE_DIR/node_modules node scripts/bench_jieba_rs.js "$DICT" "$file" "$RUNS")
        echo "jieba-rs  $rs_out" | tr '\n' ' '; echo
        rs=$(echo "$rs_out" | awk '$1 == "cut_mbs" {print $2}')
    fi
    if [ $have_py = 1 ]; then
        py_out=$(/usr/bin/python3 scripts/bench_jieba_py.py "$DICT" "$file" 3)
        echo "py jieba  $py_out" | tr '\n' ' '; echo
        py=$(echo "$py_out" | awk '$1 == "cut_mbs" {print $2}')
    fi
    summary="$summary$(printf '%-32s %8s %11s %9s %9s %10s %10s %12s' "$corpus" "$c_cut" "$c_tok" "$rs" "$py" \
        "$c_dict" "$(ratio "$c_cut" "$rs")" "$(ratio "$c_tok" "$rs")")
"
done
echo
printf '%-32s %8s %11s %9s %9s %10s %10s %12s\n' "MB/s (median)" "C cut" "C tokenize" "jieba-rs" "py jieba" \
    "dict ms" "cut/rs" "tokenize/rs"
printf '%s' "$summary"
