#!/usr/bin/env python3
"""export_onnx.py — exports the PyTorch RoFormer of scripts/torch_roformer.py, loaded
from an HF checkpoint directory, to ONNX for the ONNX Runtime peer benchmark.

    /usr/bin/python3 scripts/export_onnx.py HF_DIR -o model.onnx [--opset 14] [--logits]

Inputs input_ids, token_type_ids, attention_mask (int64, [batch, seq]), output
last_hidden_state ([batch, seq, hidden]); batch and seq are dynamic axes. By default
only the encoder is exported (the head is a few hundred FLOPs per sequence, and the
engine's bench times the encoder too); --logits adds the head's "logits" as a second
output (MLM, sequence or token classification heads), for accuracy comparisons
(scripts/int8_agreement.py). Beside it, MODEL.onnx.check.json holds a small padded
batch and PyTorch's output for it, which `node scripts/ort_bench.js --check` compares
with ONNX Runtime's, so the peer is known to compute the same thing.
"""
import argparse
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_roformer import load_model  # noqa: E402


class EncoderOnly(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model

    def forward(self, input_ids, token_type_ids, attention_mask):
        return self.model(input_ids, token_type_ids, attention_mask)["last_hidden_state"]


class EncoderAndLogits(EncoderOnly):
    def forward(self, input_ids, token_type_ids, attention_mask):
        out = self.model(input_ids, token_type_ids, attention_mask)
        return out["last_hidden_state"], out["logits"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("model_dir")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--opset", type=int, default=14)
    ap.add_argument("--logits", action="store_true", help="also output the head's logits")
    args = ap.parse_args()

    model = (EncoderAndLogits if args.logits else EncoderOnly)(load_model(args.model_dir)).eval()
    ids = torch.randint(200, 1000, (2, 16), dtype=torch.int64)
    types = torch.zeros_like(ids)
    mask = torch.ones_like(ids)
    mask[1, 12:] = 0
    axes = {0: "batch", 1: "seq"}
    os.makedirs(os.path.dirname(os.path.abspath(args.output)), exist_ok=True)
    names = ["input_ids", "token_type_ids", "attention_mask", "last_hidden_state"]
    dynamic = {name: axes for name in names}
    with torch.no_grad():
        expected = model(ids, types, mask)
        if args.logits:
            # per-token logits (MLM, token classification) have a seq axis, per-sequence ones do not
            dynamic["logits"] = axes if expected[1].dim() == 3 else {0: "batch"}
            expected = expected[0]
        torch.onnx.export(model, (ids, types, mask), args.output, opset_version=args.opset,
                          input_names=names[:3], output_names=names[3:] + (["logits"] if args.logits else []),
                          dynamic_axes=dynamic, do_constant_folding=True)
    with open(args.output + ".check.json", "w", encoding="utf-8") as f:
        json.dump({"input_ids": ids.tolist(), "token_type_ids": types.tolist(), "attention_mask": mask.tolist(),
                   "last_hidden_state": expected.flatten().tolist()}, f)
    print(f"{args.output}: {os.path.getsize(args.output) / 1e6:.1f} MB, opset {args.opset}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
