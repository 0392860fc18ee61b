"""long_reference.py — a float64 NumPy forward of a RoFormer encoder (v1 and
v2) at any length, written from the formulas of the RoFormer paper (Su et
al. 2021, eq. 34) and HF's RoFormer semantics (shared/reference/README.md,
"The computation, as HF does it"), not from the engine's code; and the two
published ways to stretch RoPE: linear position interpolation (Chen et al.
2023: positions times trained / target = 1 / factor) and NTK-aware scaling
(base times factor^(d / (d - 2))).

usage: long_reference.py ROFORMER MODEL_DIR LENGTH:SCALING:FACTOR...

For each LENGTH:SCALING:FACTOR (e.g. 4096:ntk:4), runs `ROFORMER forward
--head none --extend-positions --rope-scaling SCALING --rope-factor FACTOR`
on LENGTH random token ids (seeded by LENGTH) and compares its
last_hidden_state with this forward; one line per run. Exit 0 when every
value of every run is within
1e-4, the tolerance of every other check of hidden states
(shared/reference/README.md): hidden states have unit scale after the last
norm, and the engine's float32 differs from float64 by float32 rounding
through two layers (about 1e-6 relative per product, sums of up to LENGTH
attention terms whose weights add to 1, so the error of a weighted mean of
unit-scale values stays near the float32 rounding of its terms, not LENGTH
times it); 1e-4 leaves two orders of magnitude above that.
"""
import json
import math
import subprocess
import sys

import numpy as np

TOLERANCE = 1e-4


def read_safetensors(path):
    """name -> float64 array, from the file's JSON header and raw bytes."""
    with open(path, "rb") as f:
        n = int.from_bytes(f.read(8), "little")
        header = json.loads(f.read(n))
        data = f.read()
    dtypes = {"F32": np.float32, "F16": np.float16, "BF16": None, "I64": np.int64}
    out = {}
    for name, t in header.items():
        if name == "__metadata__":
            continue
        a, b = t["data_offsets"]
        out[name] = np.frombuffer(data[a:b], dtype=dtypes[t["dtype"]]).reshape(t["shape"]).astype(np.float64)
    return out


def weights(w, name):
    """A tensor by its name with or without the `roformer.` prefix."""
    return w.get("roformer." + name, w.get(name))


def norm(x, cfg, w, prefix):
    eps = cfg.get("layer_norm_eps", 1e-12)
    if cfg.get("norm_type", "layer_norm") != "layer_norm":  # v2: parameter-free RMS norm
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + eps)
    mu = x.mean(axis=-1, keepdims=True)
    var = ((x - mu) ** 2).mean(axis=-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * weights(w, prefix + ".weight") + weights(w, prefix + ".bias")


def linear(x, w, prefix):
    y = x @ weights(w, prefix + ".weight").T
    b = weights(w, prefix + ".bias")
    return y if b is None else y + b


_erf = np.frompyfunc(math.erf, 1, 1)


def act(x, name):
    if name == "gelu":
        return 0.5 * x * (1.0 + _erf(x / math.sqrt(2.0)).astype(np.float64))
    if name == "gelu_new":
        return 0.5 * x * (1.0 + np.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * x ** 3)))
    if name == "relu":
        return np.maximum(x, 0.0)
    raise SystemExit("unsupported activation " + name)


def rotary(L, d, scaling, factor):
    """cos, sin [L][d/2] of the angle of pair i at position p."""
    base, pos = 10000.0, np.arange(L, dtype=np.float64)
    if scaling == "linear":
        pos = pos / factor
    elif scaling == "ntk":
        base = base * factor ** (d / (d - 2.0))
    inv_freq = base ** (-np.arange(0, d, 2, dtype=np.float64) / d)
    angle = pos[:, None] * inv_freq[None, :]
    return np.cos(angle), np.sin(angle)


def rotate(x, cos, sin):
    """x [L][H][d]: pair (2i, 2i+1) of every head turned by angle i."""
    a, b = x[..., 0::2], x[..., 1::2]
    c, s = cos[:, None, :], sin[:, None, :]
    out = np.empty_like(x)
    out[..., 0::2] = a * c - b * s
    out[..., 1::2] = b * c + a * s
    return out


def attention(q, k, v, block=512):
    """softmax(q k^T / sqrt(d)) v per head, q blocks at a time ([L][H][d])."""
    L, H, d = q.shape
    out = np.empty_like(q)
    for h in range(H):
        kh, vh = k[:, h, :], v[:, h, :]
        for q0 in range(0, L, block):
            s = q[q0:q0 + block, h, :] @ kh.T / math.sqrt(d)
            s = np.exp(s - s.max(axis=1, keepdims=True))
            out[q0:q0 + block, h, :] = (s @ vh) / s.sum(axis=1, keepdims=True)
    return out


def forward(cfg, w, ids, scaling, factor):
    D, H = cfg["hidden_size"], cfg["num_attention_heads"]
    d, L = D // H, len(ids)
    x = weights(w, "embeddings.word_embeddings.weight")[ids]
    x = x + weights(w, "embeddings.token_type_embeddings.weight")[0]
    x = norm(x, cfg, w, "embeddings.LayerNorm")
    if weights(w, "embeddings_project.weight") is not None:
        x = linear(x, w, "embeddings_project")
    cos, sin = rotary(L, d, scaling, factor)
    for i in range(cfg["num_hidden_layers"]):
        p = "encoder.layer.%d." % i
        q = rotate(linear(x, w, p + "attention.self.query").reshape(L, H, d), cos, sin)
        k = rotate(linear(x, w, p + "attention.self.key").reshape(L, H, d), cos, sin)
        v = linear(x, w, p + "attention.self.value").reshape(L, H, d)
        if cfg.get("rotary_value", False):
            v = rotate(v, cos, sin)
        a = attention(q, k, v).reshape(L, D)
        x = norm(x + linear(a, w, p + "attention.output.dense"), cfg, w, p + "attention.output.LayerNorm")
        f = act(linear(x, w, p + "intermediate.dense"), cfg.get("hidden_act", "gelu"))
        x = norm(x + linear(f, w, p + "output.dense"), cfg, w, p + "output.LayerNorm")
    return x


def check(roformer, model, cfg, w, L, scaling, factor):
    """One run of the engine against this forward; True when within tolerance."""
    rng = np.random.default_rng(L)
    ids = rng.integers(5, cfg["vocab_size"], size=L)
    line = json.dumps({"input_ids": [int(t) for t in ids]}) + "\n"
    run = subprocess.run([roformer, "forward", "-m", model, "--head", "none", "--threads", "2",
                          "--extend-positions", "--rope-scaling", scaling, "--rope-factor", str(factor)],
                         input=line, capture_output=True, text=True, check=True)
    got = np.array(json.loads(run.stdout)["last_hidden_state"], dtype=np.float64).reshape(L, -1)
    want = forward(cfg, w, ids, scaling, factor)
    diff = float(np.abs(got - want).max())
    print("%s L=%d %s x%g: max |diff| %.3g (last row starts %s, reference %s)"
          % (model.rstrip("/").split("/")[-1], L, scaling, factor,
             diff, np.round(got[-1, :3], 5).tolist(), np.round(want[-1, :3], 5).tolist()))
    return diff <= TOLERANCE


def main():
    roformer, model = sys.argv[1], sys.argv[2]
    cfg = json.load(open(model + "/config.json"))
    w = read_safetensors(model + "/model.safetensors")
    ok = True
    for spec in sys.argv[3:]:
        L, scaling, factor = spec.split(":")
        ok = check(roformer, model, cfg, w, int(L), scaling, float(factor)) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
