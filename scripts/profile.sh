#!/bin/sh
# profile.sh — where `roformer bench` spends its time, per kernel: samples it
# with Linux perf and adds the symbols up into the encoder's kernels (sgemm
# compute, sgemm packing, bf16 GEMM, int8 GEMM, activation, softmax, LayerNorm, RoPE, ...).
#
#   sh scripts/profile.sh MODEL [roformer bench options...]
#   e.g. sh scripts/profile.sh build/base.gguf --batch 8 --seq-len 128 --threads 2 --runs 3
#
# Needs `perf` (Debian linux-perf) and binutils' addr2line; results in
# build/profile/ (perf.data, report.txt, srcline.txt). ROFORMER picks the binary
# (default build/roformer).
set -eu
[ $# -ge 1 ] || { echo "usage: sh scripts/profile.sh MODEL [bench options...]" >&2; exit 2; }
command -v perf >/dev/null || { echo "profile.sh: perf not found (apt-get install linux-perf)" >&2; exit 1; }
ROFORMER=${ROFORMER:-build/roformer}
PYTHON=${PYTHON:-/usr/bin/python3}
OUT=build/profile
mkdir -p "$OUT"
model=$1; shift
perf record -F 999 -o "$OUT/perf.data" -- "$ROFORMER" bench -m "$model" "$@" >"$OUT/bench.txt" 2>"$OUT/perf-record.txt"
grep -E '^(batch|ms per batch|tokens/s|blas):' "$OUT/bench.txt"
perf report -i "$OUT/perf.data" --stdio --no-children --sort dso,symbol -g none 2>/dev/null >"$OUT/report.txt"
"$PYTHON" - "$OUT/report.txt" "$ROFORMER" <<'EOF'
import collections, re, subprocess, sys
report, binary = sys.argv[1], sys.argv[2]
rows = []
for line in open(report, encoding="utf-8", errors="replace"):
    m = re.match(r"\s*([\d.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)", line)
    if m:
        rows.append((float(m.group(1)), m.group(2), m.group(4)))
# perf may leave the engine's own (static) functions as offsets: name them
addrs = sorted({s for _, dso, s in rows if dso == binary.split("/")[-1] and s.startswith("0x")})
names = {}
if addrs:
    out = subprocess.run(["addr2line", "-f", "-e", binary] + addrs, capture_output=True, text=True).stdout.split("\n")
    names = {a: out[2 * i] for i, a in enumerate(addrs)}
KERNELS = [
    ("sgemm compute", r"^sgemm_kernel"),
    ("sgemm packing / beta", r"^sgemm_.*(copy|beta)"),
    ("bf16 GEMM compute", r"^(tile_any|gemm_block)"),
    ("bf16 rounding / packing", r"^(round_rows|pack_rows|pack_transposed)"),
    ("int8 GEMM compute", r"^int8_(tile_any|gemm_block)"),
    ("int8 GEMM scaling (epilogue)", r"^int8_dequantize_tile"),
    ("int8 quantizing inputs", r"^int8_quantize_rows"),
    ("activation (GELU erf, bias)", r"erff|tanhf|bias_act|gelu"),
    ("softmax (exp)", r"softmax|expf"),
    ("LayerNorm", r"norm_row|layernorm"),
    ("RoPE", r"rope"),
    ("embeddings", r"^embed"),
    ("attention glue", r"attention"),
    ("thread pool / sync", r"pool|pthread|futex|sched|spin|worker"),
]
totals = collections.Counter()
detail = collections.Counter()
for pct, dso, sym in rows:
    sym = names.get(sym, sym)
    kind = next((k for k, pat in KERNELS if re.search(pat, sym)), None)
    if kind is None:
        kind = "other BLAS" if "openblas" in dso else "kernel (OS)" if dso.startswith("[kernel") else "other"
    totals[kind] += pct
    detail[(kind, sym)] += pct
print(f"{'kernel':32s} {'% of samples':>12s}   top symbols")
for kind, pct in totals.most_common():
    top = ", ".join(f"{s} {p:.1f}" for (k, s), p in detail.most_common() if k == kind and p >= 0.3)[:90]
    print(f"{kind:32s} {pct:11.1f}%   {top}")
EOF
# The int8 product applies bias and activation to its tile in registers
# (inlined from activations_vec.h and vecmath.h), so those samples carry the
# product's symbol: count them by source line.
perf report -i "$OUT/perf.data" --stdio --no-children --sort sym,srcline -g none 2>/dev/null >"$OUT/srcline.txt"
"$PYTHON" - "$OUT/srcline.txt" <<'EOF'
import re, sys
inlined = 0.0
for line in open(sys.argv[1], encoding="utf-8", errors="replace"):
    m = re.match(r"\s*([\d.]+)%\s+\[.\]\s+(\S+)\s+(\S+)", line)
    if m and re.search(r"gemm_block|tile", m.group(2)) and re.match(r"(activations_vec|vecmath)\.h:", m.group(3)):
        inlined += float(m.group(1))
print(f"{'  of the products: activation':32s} {inlined:11.1f}%   inlined in their epilogue (activations_vec.h, vecmath.h lines)")
EOF
