#!/usr/bin/env python3
"""torch_bench.py — times PyTorch eager (the computation HF transformers runs) on the
RoFormer of scripts/torch_roformer.py, as a peer of the engine's `roformer bench`.

    /usr/bin/python3 scripts/torch_bench.py HF_DIR [--threads 2] [--runs 5] [--warmup 1]
        [--shape BxL]... [--lengths FILE]

Same batches as scripts/ort_bench.js (--lengths: one padded batch of those
lengths); prints one JSON object per shape with batch, seq_len, real_tokens, runs,
ms_median, ms_min, ms_max, tokens_per_second (real tokens / median time), threads.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_roformer import load_model  # noqa: E402


def make_batch(lengths, seed=12345):
    """Random ids (CLS ... SEP) right-padded to the longest, with the mask."""
    gen = torch.Generator().manual_seed(seed)
    b, l = len(lengths), max(lengths)
    ids = torch.zeros(b, l, dtype=torch.int64)
    mask = torch.zeros(b, l, dtype=torch.int64)
    for i, n in enumerate(lengths):
        ids[i, :n] = torch.randint(1000, 50000, (n,), generator=gen)
        ids[i, 0], ids[i, n - 1] = 101, 102
        mask[i, :n] = 1
    return ids, torch.zeros_like(ids), mask


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--warmup", type=int, default=1)
    ap.add_argument("--shape", action="append", default=[], help="BxL")
    ap.add_argument("--lengths", help="file of sequence lengths, one a line: one padded batch")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    shapes = []
    for s in args.shape:
        b, l = s.split("x")
        shapes.append([int(l)] * int(b))
    if args.lengths:
        with open(args.lengths, encoding="utf-8") as f:
            shapes.append([int(x) for x in f.read().split()])
    model = load_model(args.model_dir)
    with torch.no_grad():
        for lengths in shapes:
            ids, types, mask = make_batch(lengths)
            for _ in range(args.warmup):
                model(ids, types, mask)
            ms = []
            for _ in range(args.runs):
                t0 = time.perf_counter()
                model(ids, types, mask)
                ms.append((time.perf_counter() - t0) * 1000.0)
            med = statistics.median(ms)
            real = sum(lengths)
            print(json.dumps({"engine": "pytorch", "batch": len(lengths), "seq_len": max(lengths),
                              "real_tokens": real, "runs": args.runs, "ms_median": med, "ms_min": min(ms),
                              "ms_max": max(ms), "tokens_per_second": real / (med / 1000.0),
                              "threads": args.threads, "ms": ms}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
