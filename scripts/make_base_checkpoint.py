#!/usr/bin/env python3
"""make_base_checkpoint.py — writes a random-weight HuggingFace RoFormer checkpoint
with the real roformer_chinese_base dimensions (12 layers, hidden 768, 12 heads,
FFN 3072, vocab 50,000), for benchmarks: the weights are random, the shapes and
the file layout are those of the real model.

    /usr/bin/python3 scripts/make_base_checkpoint.py -o build/base-checkpoint \
        [--reference ../shared/reference] [--head seq_cls|none] [--seed 0] [--v2]

OUT gets config.json (the real config, plus max_position_embeddings 1536 and the
labels of the head), vocab.txt (the WoBERT vocab, copied from the reference
directory at run time), tokenizer_config.json and pytorch_model.bin (torch.save
of the state dict with HF names under `roformer.`, as save_pretrained writes it,
including the fixed rotary table `roformer.encoder.embed_positions.weight`).

--v2 makes a RoFormer-v2 checkpoint of the same size (the layout of
junnyu/roformer_v2_chinese_char_base: config norm_type "rms_norm", use_bias
false, hidden_act relu): no LayerNorm weights and no encoder biases; the
classification head keeps its biases. The vocab stays WoBERT's 50,000 words
(the public v2 vocab of 12,000 characters is not in the reference
directory) and max_position_embeddings 1536 (the public v2: 512), so that
v1 and v2 run the same inputs; neither changes the encoder's work.

Scales follow the reference fixtures: LayerNorm weight 1 + N(0, 0.1²), biases
N(0, 0.02²), embeddings N(0, 0.5²), query/key N(0, 3/hidden) (attention scores of
standard deviation ≈ 3, so attention is not uniform), other matrices
N(0, 1/fan_in) (activations keep unit scale).
"""
import argparse
import json
import os
import shutil
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from torch_roformer import rotary_table  # noqa: E402


def make_state(config, head, gen, v2=False):
    d, e, f = config["hidden_size"], config["embedding_size"], config["intermediate_size"]
    v, t = config["vocab_size"], config["type_vocab_size"]

    def normal(shape, std):
        return torch.randn(*shape, generator=gen) * std

    def norm_pair(prefix, n):
        if v2:  # the RMS norm has no parameters
            return
        state[prefix + ".weight"] = 1.0 + normal((n,), 0.1)
        state[prefix + ".bias"] = normal((n,), 0.02)

    def linear(prefix, out_f, in_f, std=None, bias=True):
        state[prefix + ".weight"] = normal((out_f, in_f), std if std else in_f ** -0.5)
        if bias:
            state[prefix + ".bias"] = normal((out_f,), 0.02)

    def layer_linear(prefix, out_f, in_f, std=None):
        linear(prefix, out_f, in_f, std, bias=not v2)

    state = {}
    state["roformer.embeddings.word_embeddings.weight"] = normal((v, e), 0.5)
    state["roformer.embeddings.token_type_embeddings.weight"] = normal((t, e), 0.5)
    norm_pair("roformer.embeddings.LayerNorm", e)
    if e != d:
        linear("roformer.embeddings_project", d, e)
    heads = config["num_attention_heads"]
    state["roformer.encoder.embed_positions.weight"] = rotary_table(config["max_position_embeddings"], d // heads)
    for i in range(config["num_hidden_layers"]):
        p = f"roformer.encoder.layer.{i}."
        layer_linear(p + "attention.self.query", d, d, (3.0 / d) ** 0.5)
        layer_linear(p + "attention.self.key", d, d, (3.0 / d) ** 0.5)
        layer_linear(p + "attention.self.value", d, d)
        layer_linear(p + "attention.output.dense", d, d)
        norm_pair(p + "attention.output.LayerNorm", d)
        layer_linear(p + "intermediate.dense", f, d)
        layer_linear(p + "output.dense", d, f)
        norm_pair(p + "output.LayerNorm", d)
    if head == "seq_cls":
        linear("classifier.dense", d, d)
        linear("classifier.out_proj", len(config["id2label"]), d)
    return state


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--reference", default=os.environ.get("ROFORMER_REFERENCE", "../shared/reference"))
    ap.add_argument("--head", choices=["seq_cls", "none"], default="seq_cls")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--v2", action="store_true", help="a RoFormer-v2 checkpoint (RMS norm, no encoder biases, relu)")
    args = ap.parse_args()

    vocab_dir = os.path.join(args.reference, "vocab")
    with open(os.path.join(vocab_dir, "roformer_chinese_base_config.json"), encoding="utf-8") as f:
        config = json.load(f)
    config.setdefault("max_position_embeddings", 1536)  # HF's default; the real config omits it
    if args.head == "seq_cls":
        config["architectures"] = ["RoFormerForSequenceClassification"]
        config["id2label"] = {"0": "negative", "1": "positive"}
        config["label2id"] = {"negative": 0, "positive": 1}
    else:
        config["architectures"] = ["RoFormerModel"]
    config["torch_dtype"] = "float32"
    if args.v2:
        config.update({"norm_type": "rms_norm", "use_bias": False, "hidden_act": "relu"})

    gen = torch.Generator().manual_seed(args.seed)
    state = make_state(config, args.head, gen, args.v2)
    os.makedirs(args.output, exist_ok=True)
    with open(os.path.join(args.output, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, indent=2, ensure_ascii=False)
    with open(os.path.join(args.output, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump({"tokenizer_class": "RoFormerTokenizer", "do_lower_case": True}, f, indent=2)
    shutil.copyfile(os.path.join(vocab_dir, "wobert_vocab.txt"), os.path.join(args.output, "vocab.txt"))
    torch.save(state, os.path.join(args.output, "pytorch_model.bin"))
    n = sum(t.numel() for t in state.values())
    print(f"{args.output}: {n / 1e6:.1f}M parameters, head {args.head}, seed {args.seed}"
          f"{', RoFormer-v2' if args.v2 else ''}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
