#!/usr/bin/env python3
"""torch_roformer.py — a plain PyTorch RoFormer that reads HuggingFace RoFormer
checkpoints, written from the computation in HF transformers v4.40
`modeling_roformer.py` (RoFormerModel and its MLM / sequence / token / QA heads),
for use as the benchmark peer, the ONNX export source and the trainer of the
default model (scripts/train_default_model.py: dropout, HF initialisation and
the HF state dict / safetensors writers below). RoFormer-v2
checkpoints (config.json `norm_type` other than "layer_norm", `use_bias`
false; JunnYu/RoFormer_pytorch's `roformer` package) run too: the
parameter-free RMS norm in place of every LayerNorm, no encoder biases, and
the MLM head logits = x · word_embᵀ.

Run with Debian's python3 (torch, numpy); never needed by the engine.

    /usr/bin/python3 scripts/torch_roformer.py --check-reference [REF_DIR]

runs every case of every model in REF_DIR/models (default ../shared/reference,
or $ROFORMER_REFERENCE) and prints the max |diff| against expected.safetensors
per model and output; exit status 1 when one is over the reference tolerance
(atol 1e-4; 5e-4 for MLM logits).
"""
import argparse
import json
import math
import os
import struct
import sys

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

# ==== safetensors, read with numpy ====

_ST_DTYPES = {"F32": np.float32, "F16": np.float16, "I64": np.int64, "I32": np.int32}


def read_safetensors(path):
    """All tensors of a .safetensors file as float32/int64 numpy arrays."""
    with open(path, "rb") as f:
        data = f.read()
    (header_len,) = struct.unpack_from("<Q", data, 0)
    header = json.loads(data[8:8 + header_len])
    base = 8 + header_len
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        begin, end = info["data_offsets"]
        raw = data[base + begin:base + end]
        if info["dtype"] == "BF16":
            bits = np.frombuffer(raw, dtype="<u2").astype(np.uint32) << 16
            arr = bits.view(np.float32)
        else:
            arr = np.frombuffer(raw, dtype=np.dtype(_ST_DTYPES[info["dtype"]]).newbyteorder("<"))
        arr = arr.reshape(info["shape"])
        out[name] = arr.astype(np.float32) if arr.dtype.kind == "f" else arr.copy()
    return out


def write_safetensors(path, tensors):
    """Writes {name: float32 tensor} as a .safetensors file (F32, names sorted)."""
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        arr = np.ascontiguousarray(tensors[name].detach().cpu().numpy().astype("<f4"))
        header[name] = {"dtype": "F32", "shape": list(arr.shape), "data_offsets": [offset, offset + arr.nbytes]}
        blobs.append(arr.tobytes())
        offset += arr.nbytes
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * (-len(head) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(head)))
        f.write(head)
        for blob in blobs:
            f.write(blob)


def load_checkpoint(model_dir):
    """(config dict, state dict of float32 tensors) of an HF checkpoint dir."""
    with open(os.path.join(model_dir, "config.json"), encoding="utf-8") as f:
        config = json.load(f)
    st = os.path.join(model_dir, "model.safetensors")
    if os.path.exists(st):
        state = {k: torch.from_numpy(v) for k, v in read_safetensors(st).items()}
    else:
        state = torch.load(os.path.join(model_dir, "pytorch_model.bin"), map_location="cpu")
    return config, {k: v.float() for k, v in state.items()}


# ==== the model ====

ACTIVATIONS = {
    "gelu": lambda x: F.gelu(x),
    "gelu_new": lambda x: 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x.pow(3)))),
    "relu": F.relu,
    "silu": F.silu,
    "swish": F.silu,
    "tanh": torch.tanh,
    "linear": lambda x: x,
}


def rotary_table(max_pos, head_size):
    """[max_pos, head_size]: sin θ_0..θ_{d/2-1}, then cos, θ_i = pos / 10000^(2i/d),
    computed in float64 and rounded to float32 as HF does."""
    pos = np.arange(max_pos, dtype=np.float64)[:, None]
    inv = np.power(10000.0, -2.0 * np.arange(head_size // 2, dtype=np.float64) / head_size)[None, :]
    angle = pos * inv
    return torch.from_numpy(np.concatenate([np.sin(angle), np.cos(angle)], axis=1).astype(np.float32))


def rotate(x, sin, cos):
    """Rotates adjacent pairs (x[2i], x[2i+1]) of x [B, H, L, Dh] by the angles whose
    sin/cos are [L, Dh/2]."""
    sin2 = torch.stack([sin, sin], dim=-1).reshape(sin.shape[0], -1)
    cos2 = torch.stack([cos, cos], dim=-1).reshape(cos.shape[0], -1)
    x_rot = torch.stack([-x[..., 1::2], x[..., ::2]], dim=-1).reshape(x.shape)
    return x * cos2 + x_rot * sin2


class RMSNorm(nn.Module):
    """RoFormer-v2's norm: x / sqrt(mean(x²) + eps), no parameters."""

    def __init__(self, eps):
        super().__init__()
        self.eps = eps

    def forward(self, x):
        return x / torch.sqrt(torch.mean(torch.square(x), dim=-1, keepdim=True) + self.eps)


def make_norm(n, eps, v2):
    return RMSNorm(eps) if v2 else nn.LayerNorm(n, eps=eps)


class Layer(nn.Module):
    def __init__(self, d, heads, ffn, eps, act, rotary_value, v2=False, bias=True, dropout=0.0):
        super().__init__()
        self.heads, self.head_size, self.act, self.rotary_value = heads, d // heads, act, rotary_value
        self.dropout = dropout  # HF's hidden and attention dropout; only active in train()
        self.query, self.key = nn.Linear(d, d, bias=bias), nn.Linear(d, d, bias=bias)
        self.value = nn.Linear(d, d, bias=bias)
        self.attn_out = nn.Linear(d, d, bias=bias)
        self.attn_norm = make_norm(d, eps, v2)
        self.up = nn.Linear(d, ffn, bias=bias)
        self.down = nn.Linear(ffn, d, bias=bias)
        self.out_norm = make_norm(d, eps, v2)

    def split(self, x):
        b, l, _ = x.shape
        return x.view(b, l, self.heads, self.head_size).transpose(1, 2)

    def forward(self, x, mask_add, sin, cos):
        q, k, v = self.split(self.query(x)), self.split(self.key(x)), self.split(self.value(x))
        q, k = rotate(q, sin, cos), rotate(k, sin, cos)
        if self.rotary_value:
            v = rotate(v, sin, cos)
        scores = torch.matmul(q, k.transpose(-1, -2)) / math.sqrt(self.head_size) + mask_add
        probs = F.dropout(torch.softmax(scores, dim=-1), self.dropout, self.training)
        ctx = torch.matmul(probs, v)
        ctx = ctx.transpose(1, 2).reshape(x.shape)
        x = self.attn_norm(F.dropout(self.attn_out(ctx), self.dropout, self.training) + x)
        ffn = self.down(ACTIVATIONS[self.act](self.up(x)))
        return self.out_norm(F.dropout(ffn, self.dropout, self.training) + x)


class RoFormer(nn.Module):
    """RoFormerModel + the head its state dict carries (mlm, seq_cls, token_cls, qa
    or none) + the optional pooler (tanh(dense(CLS))). `dropout` (HF's
    hidden_dropout_prob = attention_probs_dropout_prob) acts only in train()."""

    def __init__(self, config, head, dropout=0.0):
        super().__init__()
        c = config
        self.dropout = dropout
        d, e = c["hidden_size"], c.get("embedding_size", c["hidden_size"])
        self.head = head
        self.act = c.get("hidden_act", "gelu")
        eps = c.get("layer_norm_eps", 1e-12)
        self.v2 = is_v2(c)
        self.word = nn.Embedding(c["vocab_size"], e)
        self.types = nn.Embedding(c.get("type_vocab_size", 2), e)
        self.emb_norm = make_norm(e, eps, self.v2)
        self.project = nn.Linear(e, d) if e != d else None
        self.layers = nn.ModuleList(
            Layer(d, c["num_attention_heads"], c["intermediate_size"], eps, self.act, c.get("rotary_value", False),
                  self.v2, c.get("use_bias", True), dropout)
            for _ in range(c["num_hidden_layers"]))
        head_size = d // c["num_attention_heads"]
        self.register_buffer("rope", rotary_table(c.get("max_position_embeddings", 1536), head_size), persistent=False)
        self.pooler = None
        n_labels = len(c.get("id2label", {})) or c.get("num_labels", 2)
        if head == "mlm" and not self.v2:
            self.mlm_dense, self.mlm_norm = nn.Linear(d, e), nn.LayerNorm(e, eps=eps)
            self.mlm_bias = nn.Parameter(torch.zeros(c["vocab_size"]))
        elif head == "seq_cls":
            self.cls_dense, self.cls_out = nn.Linear(d, d), nn.Linear(d, n_labels)
        elif head == "token_cls":
            self.token_cls = nn.Linear(d, n_labels)
        elif head == "qa":
            self.qa = nn.Linear(d, 2)

    def add_pooler(self, d):
        self.pooler = nn.Linear(d, d)

    def init_weights(self, std=0.02):
        """HF's _init_weights: every weight N(0, std), biases 0, LayerNorms 1 and 0,
        the [PAD] row (id 0) of the word embeddings 0."""
        for m in self.modules():
            if isinstance(m, (nn.Linear, nn.Embedding)):
                nn.init.normal_(m.weight, 0.0, std)
                if isinstance(m, nn.Linear) and m.bias is not None:
                    nn.init.zeros_(m.bias)
            elif isinstance(m, nn.LayerNorm):
                nn.init.ones_(m.weight)
                nn.init.zeros_(m.bias)
        with torch.no_grad():
            self.word.weight[0].zero_()

    def forward(self, input_ids, token_type_ids, attention_mask, all_hidden=False):
        x = self.emb_norm(self.word(input_ids) + self.types(token_type_ids))
        x = F.dropout(x, self.dropout, self.training)
        if self.project is not None:
            x = self.project(x)
        length = input_ids.shape[1]
        half = self.rope.shape[1] // 2
        sin, cos = self.rope[:length, :half], self.rope[:length, half:]
        mask_add = ((1.0 - attention_mask[:, None, None, :].to(x.dtype)) * torch.finfo(x.dtype).min)
        hidden = [x]
        for layer in self.layers:
            x = layer(x, mask_add, sin, cos)
            hidden.append(x)
        out = {"last_hidden_state": x}
        if all_hidden:
            out["hidden_states"] = hidden
        if self.pooler is not None:
            out["pooled"] = torch.tanh(self.pooler(x[:, 0]))
        act = ACTIVATIONS[self.act]
        if self.head == "mlm" and self.v2:
            out["logits"] = F.linear(x, self.word.weight)
        elif self.head == "mlm":
            h = self.mlm_norm(act(self.mlm_dense(x)))
            out["logits"] = F.linear(h, self.word.weight, self.mlm_bias)
        elif self.head == "seq_cls":
            cls = F.dropout(x[:, 0], self.dropout, self.training)
            cls = F.dropout(act(self.cls_dense(cls)), self.dropout, self.training)
            out["logits"] = self.cls_out(cls)
        elif self.head == "token_cls":
            out["logits"] = self.token_cls(x)
        elif self.head == "qa":
            qa = self.qa(x)
            out["start_logits"], out["end_logits"] = qa[..., 0], qa[..., 1]
        return out


# HF name (after the encoder prefix) -> our parameter name
def _hf_names(config, head):
    names = {
        "embeddings.word_embeddings.weight": "word.weight",
        "embeddings.token_type_embeddings.weight": "types.weight",
        "embeddings.LayerNorm.weight": "emb_norm.weight",
        "embeddings.LayerNorm.bias": "emb_norm.bias",
        "embeddings_project.weight": "project.weight",
        "embeddings_project.bias": "project.bias",
        "pooler.dense.weight": "pooler.weight",
        "pooler.dense.bias": "pooler.bias",
    }
    parts = {"attention.self.query": "query", "attention.self.key": "key", "attention.self.value": "value",
             "attention.output.dense": "attn_out", "attention.output.LayerNorm": "attn_norm",
             "intermediate.dense": "up", "output.dense": "down", "output.LayerNorm": "out_norm"}
    for i in range(config["num_hidden_layers"]):
        for hf, ours in parts.items():
            for p in ("weight", "bias"):
                names[f"encoder.layer.{i}.{hf}.{p}"] = f"layers.{i}.{ours}.{p}"
    return names


HEAD_NAMES = {
    "cls.predictions.transform.dense.weight": "mlm_dense.weight",
    "cls.predictions.transform.dense.bias": "mlm_dense.bias",
    "cls.predictions.transform.LayerNorm.weight": "mlm_norm.weight",
    "cls.predictions.transform.LayerNorm.bias": "mlm_norm.bias",
    "cls.predictions.bias": "mlm_bias",
    "classifier.dense.weight": "cls_dense.weight",
    "classifier.dense.bias": "cls_dense.bias",
    "classifier.out_proj.weight": "cls_out.weight",
    "classifier.out_proj.bias": "cls_out.bias",
    "classifier.weight": "token_cls.weight",
    "classifier.bias": "token_cls.bias",
    "qa_outputs.weight": "qa.weight",
    "qa_outputs.bias": "qa.bias",
}
IGNORED = ("encoder.embed_positions.weight", "cls.predictions.decoder.weight", "cls.predictions.decoder.bias")


def is_v2(config):
    return config.get("norm_type", "layer_norm") != "layer_norm"


def detect_head(state, config):
    # a v2 MLM head is the tied decoder alone, absent from model.safetensors
    arch = (config.get("architectures") or [""])[0]
    if "cls.predictions.bias" in state or "cls.predictions.decoder.weight" in state or \
            (is_v2(config) and arch.endswith(("MaskedLM", "CausalLM"))):
        return "mlm"
    if "classifier.out_proj.weight" in state:
        return "seq_cls"
    if "classifier.weight" in state:
        return "token_cls"
    if "qa_outputs.weight" in state:
        return "qa"
    return "none"


def from_state_dict(config, state):
    """Builds the model and loads every tensor of an HF state dict (keys with or
    without the `roformer.` prefix); unknown keys are an error."""
    head = detect_head(state, config)
    model = RoFormer(config, head)
    names = _hf_names(config, head)
    ours = {}
    for key, value in state.items():
        bare = key[len("roformer."):] if key.startswith("roformer.") else key
        if bare in IGNORED:
            continue
        if bare in names:
            ours[names[bare]] = value
        elif key in HEAD_NAMES:
            ours[HEAD_NAMES[key]] = value
        else:
            raise KeyError(f"unexpected tensor {key}")
    if "pooler.weight" in ours:
        model.add_pooler(config["hidden_size"])
    missing, unexpected = model.load_state_dict(ours, strict=False)
    if missing or unexpected:
        raise KeyError(f"missing {missing}, unexpected {unexpected}")
    return model.eval()


def to_state_dict(model, config):
    """The model's tensors under their HF names (RoFormerFor* checkpoints: the
    encoder under `roformer.`), the inverse of from_state_dict."""
    hf = {ours: "roformer." + name for name, ours in _hf_names(config, model.head).items()}
    hf.update({ours: name for name, ours in HEAD_NAMES.items()})
    return {hf[name]: value.detach().clone() for name, value in model.state_dict().items()}


def load_model(model_dir):
    config, state = load_checkpoint(model_dir)
    return from_state_dict(config, state)


# ==== --check-reference ====

def check_reference(ref_dir):
    worst_ok = True
    models_dir = os.path.join(ref_dir, "models")
    for name in sorted(os.listdir(models_dir)):
        mdir = os.path.join(models_dir, name)
        model = load_model(mdir)
        expected = read_safetensors(os.path.join(mdir, "expected.safetensors"))
        diffs = {}
        with open(os.path.join(mdir, "cases.jsonl"), encoding="utf-8") as f:
            cases = [json.loads(line) for line in f if line.strip()]
        for case in cases:
            ids = torch.tensor(case["input_ids"])
            types = torch.tensor(case["token_type_ids"])
            mask = torch.tensor(case["attention_mask"])
            with torch.no_grad():
                out = model(ids, types, mask, all_hidden=True)
            for what in case["outputs"]:
                if what == "logits_at_positions":
                    continue
                if what == "logits_at":
                    pos = torch.from_numpy(expected[case["id"] + ".logits_at_positions"])
                    got = out["logits"][:, pos]
                elif what.startswith("hidden_states."):
                    got = out["hidden_states"][int(what.split(".")[1])]
                else:
                    got = out[what]
                want = expected[case["id"] + "." + what]
                d = float(np.max(np.abs(got.numpy() - want)))
                kind = what.split(".")[0]
                diffs[kind] = max(diffs.get(kind, 0.0), d)
        for kind, d in sorted(diffs.items()):
            tol = 5e-4 if (model.head == "mlm" and kind.startswith("logits")) else 1e-4
            ok = d <= tol
            worst_ok &= ok
            print(f"{name:16s} {kind:20s} max|diff| {d:.3g}  (tol {tol:g}) {'ok' if ok else 'FAIL'}")
    return worst_ok


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--check-reference", nargs="?", metavar="REF_DIR",
                    const=os.environ.get("ROFORMER_REFERENCE", "../shared/reference"))
    args = ap.parse_args()
    if args.check_reference is None:
        ap.print_help()
        return 2
    torch.set_num_threads(1)
    return 0 if check_reference(args.check_reference) else 1


if __name__ == "__main__":
    sys.exit(main())
