#!/usr/bin/env python3
"""int8_agreement.py — how often int8 compute keeps f32's token-classification
argmax, for the engine and for ONNX Runtime's own int8, on the same model and the
same token ids: the reference token-classification cases.

    /usr/bin/python3 scripts/int8_agreement.py [--model-dir DIR] [--roformer build/roformer]
                                               [--threads 2] [--out build/int8_agreement]

DIR (default $ROFORMER_REFERENCE/models/tiny-char-proj, reference ../shared/reference)
is an HF token-classification checkpoint with its cases.jsonl. Needs build/roformer
(make), Node.js with onnxruntime-node (as scripts/compare.sh installs it, in
build/peer) and Debian's python3-torch and python3-onnx; the int8 graph comes from
$TOOLS/quantize_ort_int8.py (TOOLS default ../shared/tools), the form ONNX
Runtime's quantize_dynamic writes.

  engine:  `roformer forward --compute int8` against `roformer forward` (f32);
  ORT:     the graph of scripts/export_onnx.py --logits, quantized (every weight
           MatMul: the embedding projection, the layers and the classifier), against
           the fp32 graph;
  ORT, f32 head: the int8 graph's last_hidden_state through the f32 classifier, as
           the engine's int8 leaves its heads f32.
For each: tokens whose argmax agrees (real tokens only), how many of those that
differ were within 0.05 of a tie in f32, and the lowest cosine of a token's last
hidden state to f32. Also engine f32 against ORT fp32, to show both compute the
same model. Exit status 1 when a step fails.
"""
import argparse
import json
import os
import subprocess
import sys

import numpy as np
import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_roformer import load_model  # noqa: E402

NEAR_TIE = 0.05


def read_cases(model_dir):
    with open(os.path.join(model_dir, "cases.jsonl"), encoding="utf-8") as f:
        cases = [json.loads(line) for line in f if line.strip()]
    return [{k: c[k] for k in ("input_ids", "token_type_ids", "attention_mask")} for c in cases]


def run_lines(cmd, cases):
    """Feeds one JSON line per case to cmd; returns its JSON output lines."""
    stdin = "".join(json.dumps(c) + "\n" for c in cases)
    out = subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True).stdout
    results = [json.loads(line) for line in out.splitlines() if line.strip()]
    if len(results) != len(cases) or any("error" in r for r in results):
        sys.exit(f"int8_agreement: {cmd[0]}: {len(results)} results for {len(cases)} cases, or an error")
    return results


def engine(args, cases, compute):
    res = run_lines([args.roformer, "forward", "-m", args.model_dir, "--threads", str(args.threads),
                     "--compute", compute], cases)
    return [(np.array(r["last_hidden_state"], np.float32), np.array(r["logits"], np.float32)) for r in res]


def ort(args, cases, model):
    res = run_lines(["node", os.path.join(os.path.dirname(os.path.abspath(__file__)), "ort_forward.js"),
                     "--model", model, "--threads", str(args.threads)], cases)

    def arr(t):
        return np.array(t["data"], np.float32).reshape(t["dims"])
    return [(arr(r["last_hidden_state"]), arr(r["logits"])) for r in res]


def compare(cases, ref, test):
    """Agreement of test with ref over the real tokens of every case."""
    agree = total = near_tie_diffs = 0
    min_cos, max_diff_margin = 1.0, 0.0
    for c, (h0, l0), (h1, l1) in zip(cases, ref, test):
        real = np.array(c["attention_mask"], bool)
        h0, h1, l0, l1 = h0[real], h1[real], l0[real], l1[real]
        cos = (h0 * h1).sum(-1) / np.sqrt((h0 * h0).sum(-1) * (h1 * h1).sum(-1))
        min_cos = min(min_cos, float(cos.min()))
        top2 = np.sort(l0, axis=-1)[:, -2:]
        margin = top2[:, 1] - top2[:, 0]
        same = l0.argmax(-1) == l1.argmax(-1)
        agree += int(same.sum())
        total += same.size
        near_tie_diffs += int((~same & (margin < NEAR_TIE)).sum())
        if (~same).any():
            max_diff_margin = max(max_diff_margin, float(margin[~same].max()))
    return {"agree": agree, "total": total, "near_tie_diffs": near_tie_diffs,
            "max_margin_of_a_diff": max_diff_margin, "min_cosine": min_cos}


def near_ties(cases, ref):
    n = total = 0
    for c, (_, logits) in zip(cases, ref):
        top2 = np.sort(logits[np.array(c["attention_mask"], bool)], axis=-1)[:, -2:]
        n += int((top2[:, 1] - top2[:, 0] < NEAR_TIE).sum())
        total += len(top2)
    return n, total


def main():
    ref_root = os.environ.get("ROFORMER_REFERENCE", "../shared/reference")
    tools = os.environ.get("TOOLS", "../shared/tools")
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model-dir", default=os.path.join(ref_root, "models", "tiny-char-proj"))
    ap.add_argument("--roformer", default="build/roformer")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--out", default="build/int8_agreement")
    args = ap.parse_args()

    model = load_model(args.model_dir).eval()
    if model.head != "token_cls":
        sys.exit(f"int8_agreement: {args.model_dir} is not a token-classification model")
    cases = read_cases(args.model_dir)
    os.makedirs(args.out, exist_ok=True)
    name = os.path.basename(os.path.normpath(args.model_dir))
    fp32, int8 = (os.path.join(args.out, f"{name}{s}.onnx") for s in ("", "-int8"))
    here = os.path.dirname(os.path.abspath(__file__))
    subprocess.run([sys.executable, os.path.join(here, "export_onnx.py"), args.model_dir, "-o", fp32, "--logits"],
                   check=True, stdout=subprocess.DEVNULL)
    subprocess.run([sys.executable, os.path.join(tools, "quantize_ort_int8.py"), fp32, int8],
                   check=True, stdout=subprocess.DEVNULL)

    eng_f32, eng_int8 = engine(args, cases, "f32"), engine(args, cases, "int8")
    ort_f32, ort_int8 = ort(args, cases, fp32), ort(args, cases, int8)
    with torch.no_grad():
        ort_int8_f32_head = [(h, model.token_cls(torch.from_numpy(h)).numpy()) for h, _ in ort_int8]

    rows = [("engine int8 vs engine f32", compare(cases, eng_f32, eng_int8)),
            ("ORT int8 vs ORT fp32", compare(cases, ort_f32, ort_int8)),
            ("ORT int8, f32 head, vs ORT fp32", compare(cases, ort_f32, ort_int8_f32_head)),
            ("engine f32 vs ORT fp32", compare(cases, ort_f32, eng_f32))]
    for ref, label in ((eng_f32, "engine f32"), (ort_f32, "ORT fp32")):
        n, total = near_ties(cases, ref)
        print(f"# {name}, {len(cases)} cases: {n} of {total} tokens within {NEAR_TIE} of a tie in {label}")
    for label, r in rows:
        print(f"{label:34} argmax agrees {r['agree']}/{r['total']} ({100.0 * r['agree'] / r['total']:.1f}%), "
              f"{r['total'] - r['agree']} differ ({r['near_tie_diffs']} within {NEAR_TIE} of a tie in f32, "
              f"largest f32 margin {r['max_margin_of_a_diff']:.3f}), lowest cosine {r['min_cosine']:.5f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
