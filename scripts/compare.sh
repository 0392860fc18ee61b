#!/bin/sh
# compare.sh — the engine against ONNX Runtime and PyTorch on RoFormer-base
# dimensions, same weights, same batch shapes, interleaved runs; prints medians
# and ratios. One command from a clean checkout (run from the repository root):
#
#   sh scripts/compare.sh
#
# What it does, skipping each step whose output is already there:
#   0. installs the Debian packages it needs (sh scripts/setup.sh --bench:
#      python3-torch, Node.js and npm);
#   1. make (build/roformer);
#   2. installs the peer: npm onnxruntime-node into build/peer/node_modules
#      (ONNXRUNTIME_NODE_INSTALL=skip: the package ships the Linux x64 library);
#   3. a random-weight roformer_chinese_base-size checkpoint (build/base-checkpoint,
#      scripts/make_base_checkpoint.py), converted with `roformer convert`
#      (build/base.gguf) and exported to ONNX (build/peer/base.onnx; ONNX Runtime's
#      output is checked against PyTorch's on a padded batch before timing);
#      with roformer-int8 among the peers, also converted with --dtype q8
#      (build/base-q8.gguf); with ort-int8, the ONNX graph quantized to int8 by
#      $TOOLS/quantize_ort_int8.py (build/peer/base-int8.onnx, the form ONNX
#      Runtime's quantize_dynamic writes; needs Debian's python3-onnx); with
#      VARIANT=v2 these names take -v2 like the others;
#   4. mixed-length batches of 32 real texts (scripts/corpus_lengths.py):
#      CJRC court-judgment paragraphs and ChnSentiCorp reviews, max length 512;
#      the engine runs them with the real tokens packed (--skip-padding, as
#      the job commands do), the peers padded to the longest;
#   5. ROUNDS rounds; in each, for every shape, `roformer bench`, ONNX Runtime
#      and PyTorch one after the other (RUNS timed runs each after WARMUP);
#   6. a table of medians over all timed runs, and ratios.
#
# Environment: SHAPES (default "8x128 8x512 1x128 1x1536 mixed-cjrc
# mixed-chnsenticorp"), ROUNDS (3), RUNS (2), WARMUP (1), THREADS (2),
# PEERS ("ort torch"; add roformer-bf16 for the engine with --compute bf16,
# on CPUs with AVX512_BF16; roformer-int8 for --compute int8 on the q8 file, on
# CPUs with AVX2; ort-int8 for ONNX Runtime on the int8 graph), TORCH_SHAPES
# (the shapes PyTorch runs, default the fixed ones: it is the slow reference,
# not the target), TORCH_RUNS (1), ROFORMER (build/roformer), PYTHON
# (/usr/bin/python3), TOOLS (../shared/tools), ROFORMER_REFERENCE
# (../shared/reference), ROFORMER_DATA (../shared/data), OUT (build/compare),
# VARIANT (v1; v2: a RoFormer-v2 checkpoint of the same size, RMS norm and no
# encoder biases, make_base_checkpoint.py --v2, in build/base-v2-checkpoint,
# build/base-v2.gguf and build/peer/base-v2.onnx; OUT default build/compare-v2).
# Raw results: $OUT/results.jsonl; the table: $OUT/table.md.
set -eu

PYTHON=${PYTHON:-/usr/bin/python3}
REF=${ROFORMER_REFERENCE:-../shared/reference}
DATA=${ROFORMER_DATA:-../shared/data}
VARIANT=${VARIANT:-v1}
case $VARIANT in
    v1) suffix=""; ckpt_args="" ;;
    v2) suffix="-v2"; ckpt_args="--v2" ;;
    *) echo "compare: VARIANT must be v1 or v2, not '$VARIANT'" >&2; exit 2 ;;
esac
OUT=${OUT:-build/compare$suffix}
SHAPES=${SHAPES:-"8x128 8x512 1x128 1x1536 mixed-cjrc mixed-chnsenticorp"}
ROUNDS=${ROUNDS:-3}
RUNS=${RUNS:-2}
WARMUP=${WARMUP:-1}
THREADS=${THREADS:-2}
PEERS=${PEERS:-"ort torch"}
TORCH_SHAPES=${TORCH_SHAPES:-"8x128 8x512 1x128 1x1536"}
TORCH_RUNS=${TORCH_RUNS:-1}
ROFORMER=${ROFORMER:-build/roformer}
TOOLS=${TOOLS:-../shared/tools}
CKPT=build/base$suffix-checkpoint
GGUF=build/base$suffix.gguf
GGUF_Q8=build/base$suffix-q8.gguf
ONNX=build/peer/base$suffix.onnx
ONNX_INT8=build/peer/base$suffix-int8.onnx

say() { echo "compare: $*" >&2; }
[ -d "$REF/vocab" ] || { say "reference directory $REF not found (set ROFORMER_REFERENCE)"; exit 1; }

say "installing what is missing (scripts/setup.sh --bench)"
sh scripts/setup.sh --bench >&2
say "building"
make -s -j2 >&2

case " $PEERS " in *" ort "*|*" ort-int8 "*)
    if [ ! -d build/peer/node_modules/onnxruntime-node ]; then
        say "installing onnxruntime-node into build/peer"
        mkdir -p build/peer
        [ -f build/peer/package.json ] || echo '{"name": "roformer-peer", "private": true}' >build/peer/package.json
        (cd build/peer && ONNXRUNTIME_NODE_INSTALL=skip npm install --no-audit --no-fund --silent onnxruntime-node@1.30 >&2)
    fi ;;
esac

if [ ! -f "$CKPT/pytorch_model.bin" ]; then
    say "making the base-size checkpoint"
    "$PYTHON" scripts/make_base_checkpoint.py -o "$CKPT" --reference "$REF" $ckpt_args >&2
fi
if [ ! -f "$GGUF" ] || [ "$CKPT/pytorch_model.bin" -nt "$GGUF" ]; then
    say "converting to $GGUF"
    "$ROFORMER" convert "$CKPT" -o "$GGUF" >&2
fi
case " $PEERS " in *" roformer-int8 "*)
    if [ ! -f "$GGUF_Q8" ] || [ "$CKPT/pytorch_model.bin" -nt "$GGUF_Q8" ]; then
        say "converting to $GGUF_Q8"
        "$ROFORMER" convert "$CKPT" -o "$GGUF_Q8" --dtype q8 >&2
    fi ;;
esac
case " $PEERS " in *" ort "*|*" ort-int8 "*)
    if [ ! -f "$ONNX" ] || [ "$CKPT/pytorch_model.bin" -nt "$ONNX" ]; then
        say "exporting ONNX"
        "$PYTHON" scripts/export_onnx.py "$CKPT" -o "$ONNX" >&2
    fi ;;
esac
case " $PEERS " in *" ort-int8 "*)
    if [ ! -f "$ONNX_INT8" ] || [ "$ONNX" -nt "$ONNX_INT8" ]; then
        say "quantizing ONNX to int8"
        "$PYTHON" "$TOOLS/quantize_ort_int8.py" "$ONNX" "$ONNX_INT8" >&2
    fi ;;
esac

mkdir -p "$OUT"
RESULTS=$OUT/results.jsonl
: >"$RESULTS"
for shape in $SHAPES; do
    case $shape in mixed-*)
        "$PYTHON" scripts/corpus_lengths.py --corpus "${shape#mixed-}" --data "$DATA" --reference "$REF" \
            --batch 32 --max-length 512 --roformer "$ROFORMER" -m "$GGUF" >"$OUT/$shape.txt" ;;
    esac
done

# one run of one engine on one shape: appends {"shape": ..., <bench JSON>} to
# $RESULTS; any failure stops the script
run_engine() { # engine shape round
    case $2 in
        # the engine runs mixed batches as the job commands do: real tokens
        # packed (--skip-padding); the peers get them padded to the longest
        mixed-*) eng_args="--lengths-from $OUT/$2.txt --skip-padding"; peer_args="--lengths $OUT/$2.txt" ;;
        *) eng_args="--batch ${2%x*} --seq-len ${2#*x}"; peer_args="--shape $2" ;;
    esac
    check=""
    [ "$3" = 1 ] && check="--check $ONNX.check.json"
    case $1 in
        roformer) "$ROFORMER" bench -m "$GGUF" $eng_args --threads "$THREADS" --runs "$RUNS" --warmup "$WARMUP" ;;
        roformer-bf16) "$ROFORMER" bench -m "$GGUF" $eng_args --threads "$THREADS" --runs "$RUNS" \
                           --warmup "$WARMUP" --compute bf16 ;;
        roformer-int8) "$ROFORMER" bench -m "$GGUF_Q8" $eng_args --threads "$THREADS" --runs "$RUNS" \
                           --warmup "$WARMUP" --compute int8 ;;
        # no --check: the int8 graph is not meant to match PyTorch's f32 output
        ort-int8) node scripts/ort_bench.js --model "$ONNX_INT8" $peer_args --threads "$THREADS" \
                      --runs "$RUNS" --warmup "$WARMUP" ;;
        ort) node scripts/ort_bench.js --model "$ONNX" $peer_args --threads "$THREADS" --runs "$RUNS" \
                 --warmup "$WARMUP" $check ;;
        torch) "$PYTHON" scripts/torch_bench.py "$CKPT" $peer_args --threads "$THREADS" --runs "$TORCH_RUNS" \
                   --warmup "$WARMUP" ;;
    esac >"$OUT/last.out"
    tail -n 1 "$OUT/last.out" | sed "s/^{/{\"shape\": \"$2\", \"round\": $3, \"engine_name\": \"$1\", /" >>"$RESULTS"
}

round=1
while [ "$round" -le "$ROUNDS" ]; do
    for shape in $SHAPES; do
        for engine in roformer $PEERS; do
            if [ "$engine" = torch ]; then
                case " $TORCH_SHAPES " in *" $shape "*) ;; *) continue ;; esac
            fi
            say "round $round/$ROUNDS: $shape: $engine"
            run_engine "$engine" "$shape" "$round"
        done
    done
    round=$((round + 1))
done

"$PYTHON" - "$RESULTS" "$SHAPES" <<'EOF' | tee "$OUT/table.md"
import json, platform, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
shapes = sys.argv[2].split()
names = {"roformer": "roformer", "roformer-bf16": "roformer bf16", "roformer-int8": "roformer int8",
         "ort": "ONNX Runtime", "ort-int8": "ONNX Runtime int8", "torch": "PyTorch"}
engines = [e for e in ("roformer", "roformer-bf16", "roformer-int8", "ort", "ort-int8", "torch")
           if any(r["engine_name"] == e for r in rows)]
peers = [e for e in engines if not e.startswith("roformer")]
# ratio columns: (numerator engine, denominator engine) = denominator time / numerator time
ratios = [("roformer", e) for e in peers]
for fast in ("roformer-bf16", "roformer-int8"):
    if fast in engines:
        ratios = [(fast, "roformer")] + ratios + [(fast, e) for e in peers]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), platform.machine())
core = next((r.get("blas_core") for r in rows if r.get("blas_core")), "?")
print(f"CPU {cpu}; OpenBLAS core {core}; threads {rows[0]['threads'] if rows else '?'}; "
      f"medians over {len(set(r['round'] for r in rows))} interleaved rounds")
print()
head = "| shape | real tokens |" + "".join(f" {names[e]} ms | {names[e]} tok/s |" for e in engines)
head += "".join(f" {names[a]} / {names[b]} |" for a, b in ratios)
print(head)
print("|" + "---|" * (head.count("|") - 1))
for shape in shapes:
    med = {}
    real = None
    for e in engines:
        ms = [m for r in rows if r["shape"] == shape and r["engine_name"] == e for m in r["ms"]]
        if ms:
            med[e] = statistics.median(ms)
            real = next(r["real_tokens"] for r in rows if r["shape"] == shape and r["engine_name"] == e)
    if not med:
        continue
    line = f"| {shape} | {real} |"
    for e in engines:
        line += f" {med[e]:.1f} | {real / med[e] * 1000:.0f} |" if e in med else " - | - |"
    for a, b in ratios:
        line += f" {med[b] / med[a]:.2f}x |" if a in med and b in med else " - |"
    print(line)
print()
print("A / B = B's time / A's time (tokens/s ratio); > 1 means A is faster.")
EOF
