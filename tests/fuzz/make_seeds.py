#!/usr/bin/python3
"""make_seeds.py OUT_DIR [--v2] — writes a tiny RoFormer checkpoint directory
(config.json, tokenizer_config.json, vocab.txt, a 6-word jieba dict,
model.safetensors, pytorch_model.bin) with hidden size 4 and one layer.
--v2: a RoFormer-v2 masked LM instead (norm_type rms_norm, use_bias false:
no norm or encoder-bias tensors; the tied decoder left out of
model.safetensors, stored in pytorch_model.bin).

The committed seed corpora under tests/fuzz/corpus/ were made from it:
its model.safetensors, pytorch_model.bin (torch_zip), data.pkl (pickle),
JSON files (hf_config) and its `roformer convert` output (gguf, model).
Needs Debian's python3-torch; run with /usr/bin/python3.
"""
import collections
import json
import os
import sys

import torch

out = sys.argv[1]
v2 = "--v2" in sys.argv[2:]
os.makedirs(out, exist_ok=True)
vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "今天", "天气", "不错", "好", "##s", "a", "的"]
V, D, F, T = len(vocab), 4, 8, 2
config = {
    "architectures": ["RoFormerForSequenceClassification"],
    "model_type": "roformer", "vocab_size": V, "embedding_size": D, "hidden_size": D,
    "num_hidden_layers": 1, "num_attention_heads": 2, "intermediate_size": F,
    "hidden_act": "gelu", "max_position_embeddings": 16, "type_vocab_size": T,
    "layer_norm_eps": 1e-12, "rotary_value": False, "pad_token_id": 0,
    "id2label": {"0": "neg", "1": "pos"}, "label2id": {"neg": 0, "pos": 1},
}
if v2:
    for k in ("id2label", "label2id"):
        del config[k]
    config.update({"architectures": ["RoFormerForMaskedLM"], "hidden_act": "relu",
                   "norm_type": "rms_norm", "use_bias": False})
tok_config = {"tokenizer_class": "RoFormerTokenizer", "do_lower_case": True,
              "cls_token": "[CLS]", "sep_token": "[SEP]", "pad_token": "[PAD]",
              "unk_token": "[UNK]", "mask_token": "[MASK]"}
with open(os.path.join(out, "config.json"), "w") as f:
    json.dump(config, f, indent=1)
with open(os.path.join(out, "tokenizer_config.json"), "w") as f:
    json.dump(tok_config, f, indent=1)
with open(os.path.join(out, "vocab.txt"), "w") as f:
    f.write("\n".join(vocab) + "\n")
with open(os.path.join(out, "dict.txt"), "w") as f:
    f.write("今天 100 t\n天气 80 n\n不错 50 a\n今 10\n天 20 n\n好 300 a\n")

g = torch.Generator().manual_seed(0)
def t(*shape):
    return torch.randn(*shape, generator=g) * 0.1

sd = collections.OrderedDict()
sd["roformer.embeddings.word_embeddings.weight"] = t(V, D)
sd["roformer.embeddings.token_type_embeddings.weight"] = t(T, D)
if not v2:
    sd["roformer.embeddings.LayerNorm.weight"] = torch.ones(D)
    sd["roformer.embeddings.LayerNorm.bias"] = torch.zeros(D)
p = "roformer.encoder.layer.0."
for name, shape in [("attention.self.query", (D, D)), ("attention.self.key", (D, D)),
                    ("attention.self.value", (D, D)), ("attention.output.dense", (D, D)),
                    ("intermediate.dense", (F, D)), ("output.dense", (D, F))]:
    sd[p + name + ".weight"] = t(*shape)
    if not v2:
        sd[p + name + ".bias"] = t(shape[0])
for name in [] if v2 else ["attention.output.LayerNorm", "output.LayerNorm"]:
    sd[p + name + ".weight"] = torch.ones(D)
    sd[p + name + ".bias"] = torch.zeros(D)
if v2:
    # tied: the same storage as the word embeddings, as torch.save keeps it
    sd["cls.predictions.decoder.weight"] = sd["roformer.embeddings.word_embeddings.weight"]
else:
    sd["classifier.dense.weight"] = t(D, D)
    sd["classifier.dense.bias"] = t(D)
    sd["classifier.out_proj.weight"] = t(2, D)
    sd["classifier.out_proj.bias"] = t(2)
    # one strided (transposed) view and one half tensor exercise the pickle reader's copy path
    sd["classifier.dense.weight"] = t(D, D).t()

torch.save(sd, os.path.join(out, "pytorch_model.bin"))
if v2:  # save_pretrained(safe_serialization=True) leaves the tied copy out
    del sd["cls.predictions.decoder.weight"]

# safetensors written by hand (no safetensors module needed): 8-byte header size, JSON, data
header, blobs, off = {}, [], 0
for k, v in sd.items():
    b = v.contiguous().numpy().astype("<f4").tobytes()
    header[k] = {"dtype": "F32", "shape": list(v.shape), "data_offsets": [off, off + len(b)]}
    blobs.append(b)
    off += len(b)
header["__metadata__"] = {"format": "pt"}
h = json.dumps(header, separators=(",", ":")).encode()
h += b" " * (-len(h) % 8)
with open(os.path.join(out, "model.safetensors"), "wb") as f:
    f.write(len(h).to_bytes(8, "little") + h + b"".join(blobs))
