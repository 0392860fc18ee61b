#!/usr/bin/env python3
"""train_default_model.py — trains the project's default model from scratch: a
small Chinese sentiment classifier (RoFormerForSequenceClassification, labels
negative / positive) on ChnSentiCorp, and writes models/sentiment-zh-small.gguf.

    make -j2 && /usr/bin/python3 scripts/train_default_model.py

Run with Debian's python3 (python3-torch, numpy); it needs build/roformer and
reads, in place, ../shared/data/chnsenticorp/{train,dev}.tsv and the WoBERT
vocab ../shared/reference/vocab/wobert_vocab.txt.

1. Tokens. Every text is tokenized by the engine itself (`roformer tokenize`:
   HF RoFormerTokenizer = jieba words, then BERT basic + WordPiece), so the
   training tokens are exactly those the engine sees at inference.
2. Vocab. The WoBERT vocab (50,000 entries) less the multi-character entries
   that occur fewer than --min-count times in the tokenized training set.
   Every special token and every single-character entry (and "##" + one
   character) stays, so a word that is dropped falls back, as RoFormerTokenizer
   does for any word not in its vocab, to its characters. The tokenizer is
   still RoFormerTokenizer over a WoBERT vocab; the embedding table shrinks to
   what the GGUF size budget (16 MB, of which the jieba dictionary takes 7)
   allows, and rare words, whose vectors the data cannot train, become
   characters, which it can.
3. Training: AdamW, linear warm-up and decay, dropout 0.1, fixed seeds, one
   thread, length-bucketed batches. No pretraining: the weights start from
   HF's random initialisation.
4. Output: the HF checkpoint directory (--work/checkpoint: config.json,
   vocab.txt, tokenizer_config.json, model.safetensors; not committed), the
   GGUF from `roformer convert --dtype f16`, and the PyTorch predictions on
   dev.tsv (models/sentiment-zh-small.dev-expected.jsonl, one line per dev
   line: label and probabilities) computed with the weights rounded to f16 as
   the GGUF stores them. tests/cli/test_default_model.sh checks the engine
   against that file; the script prints both dev accuracies.
"""
import argparse
import json
import math
import os
import random
import shutil
import subprocess
import sys
import time

import numpy as np
import torch
import torch.nn.functional as F

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_roformer  # noqa: E402

LABELS = ["negative", "positive"]  # ChnSentiCorp: 0 negative, 1 positive

CONFIG = {
    "architectures": ["RoFormerForSequenceClassification"],
    "model_type": "roformer",
    "vocab_size": None,  # the pruned vocab's size
    "embedding_size": 64,
    "hidden_size": 128,
    "num_hidden_layers": 4,
    "num_attention_heads": 2,
    "intermediate_size": 512,
    "hidden_act": "gelu",
    "hidden_dropout_prob": 0.1,
    "attention_probs_dropout_prob": 0.1,
    "max_position_embeddings": 1536,
    "type_vocab_size": 2,
    "initializer_range": 0.02,
    "layer_norm_eps": 1e-12,
    "pad_token_id": 0,
    "rotary_value": False,
    "id2label": {str(i): name for i, name in enumerate(LABELS)},
    "label2id": {name: i for i, name in enumerate(LABELS)},
    "torch_dtype": "float32",
}

TOKENIZER_CONFIG = {
    "tokenizer_class": "RoFormerTokenizer",
    "do_lower_case": True,
    "unk_token": "[UNK]", "sep_token": "[SEP]", "pad_token": "[PAD]",
    "cls_token": "[CLS]", "mask_token": "[MASK]",
}


def log(msg):
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def read_tsv(path):
    """[(label, text)] of a ChnSentiCorp file (header `label<TAB>text_a`)."""
    rows = []
    with open(path, encoding="utf-8") as f:
        next(f)
        for n, line in enumerate(f, start=2):
            label, sep, text = line.rstrip("\n").partition("\t")
            if not sep or label not in ("0", "1"):
                raise ValueError(f"{path}:{n}: expected 'label<TAB>text'")
            rows.append((int(label), text))
    return rows


def write_checkpoint(path, config, vocab, model):
    os.makedirs(path, exist_ok=True)
    with open(os.path.join(path, "config.json"), "w", encoding="utf-8") as f:
        json.dump(config, f, ensure_ascii=False, indent=2)
    with open(os.path.join(path, "tokenizer_config.json"), "w", encoding="utf-8") as f:
        json.dump(TOKENIZER_CONFIG, f, indent=2)
    with open(os.path.join(path, "vocab.txt"), "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in vocab))
    torch_roformer.write_safetensors(os.path.join(path, "model.safetensors"),
                                     torch_roformer.to_state_dict(model, config))


def new_model(vocab, seed):
    config = dict(CONFIG, vocab_size=len(vocab))
    torch.manual_seed(seed)
    model = torch_roformer.RoFormer(config, "seq_cls", dropout=config["hidden_dropout_prob"])
    model.init_weights(config["initializer_range"])
    return config, model


def engine_tokenize(roformer, model_dir, texts, max_length):
    """input_ids of each text, from `roformer tokenize` on the checkpoint dir."""
    lines = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts)
    run = subprocess.run([roformer, "tokenize", "-m", model_dir, "--max-length", str(max_length)],
                         input=lines.encode(), stdout=subprocess.PIPE, check=True)
    out = [json.loads(line) for line in run.stdout.decode().splitlines()]
    if len(out) != len(texts) or any("error" in o for o in out):
        raise RuntimeError("roformer tokenize failed on some input")
    return [o["input_ids"] for o in out]


def engine_classify(roformer, model, texts, max_length):
    """[n, 2] probabilities from `roformer classify` (negative, positive)."""
    lines = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts)
    run = subprocess.run([roformer, "classify", "-m", model, "--max-length", str(max_length)],
                         input=lines.encode(), stdout=subprocess.PIPE, check=True)
    out = [json.loads(line) for line in run.stdout.decode().splitlines()]
    if len(out) != len(texts):
        raise RuntimeError("roformer classify gave fewer outputs than inputs")
    return np.array([[o["scores"][name] for name in LABELS] for o in out])


def prune_vocab(vocab, train_ids, min_count):
    counts = np.bincount(np.concatenate([np.asarray(ids) for ids in train_ids]), minlength=len(vocab))

    def keep(i, tok):
        special = tok.startswith("[") and tok.endswith("]")
        single = len(tok[2:] if tok.startswith("##") else tok) == 1
        return special or single or counts[i] >= min_count

    return [tok for i, tok in enumerate(vocab) if keep(i, tok)]


def batches(ids, batch_size, rng):
    """Index batches of similar lengths: shuffle, sort within chunks of 50
    batches by length, shuffle the batches."""
    order = list(range(len(ids)))
    rng.shuffle(order)
    chunk = batch_size * 50
    out = []
    for c in range(0, len(order), chunk):
        part = sorted(order[c:c + chunk], key=lambda i: len(ids[i]))
        out += [part[b:b + batch_size] for b in range(0, len(part), batch_size)]
    rng.shuffle(out)
    return out


def collate(ids, idx):
    length = max(len(ids[i]) for i in idx)
    input_ids = torch.zeros(len(idx), length, dtype=torch.long)
    mask = torch.zeros(len(idx), length, dtype=torch.long)
    for r, i in enumerate(idx):
        input_ids[r, :len(ids[i])] = torch.tensor(ids[i])
        mask[r, :len(ids[i])] = 1
    return input_ids, torch.zeros_like(input_ids), mask


def predict(model, ids, batch_size=64):
    """Softmax probabilities [n, 2], in input order."""
    model.eval()
    probs = torch.zeros(len(ids), len(LABELS), dtype=torch.float64)
    order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
    with torch.no_grad():
        for b in range(0, len(order), batch_size):
            idx = order[b:b + batch_size]
            logits = model(*collate(ids, idx))["logits"]
            probs[idx] = torch.softmax(logits.double(), dim=-1)
    return probs


def round_to_f16(model):
    """Rounds every matrix (2-D weight) to f16 and back, as `convert --dtype f16`
    stores it; vectors stay f32."""
    with torch.no_grad():
        for p in model.parameters():
            if p.dim() == 2:
                p.copy_(p.half().float())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--data", default="../shared/data/chnsenticorp")
    ap.add_argument("--vocab", default="../shared/reference/vocab/wobert_vocab.txt")
    ap.add_argument("--roformer", default="build/roformer")
    ap.add_argument("--work", default="build/default-model", help="scratch dir: checkpoints")
    ap.add_argument("--out", default="models/sentiment-zh-small.gguf")
    ap.add_argument("--expected", default="models/sentiment-zh-small.dev-expected.jsonl")
    ap.add_argument("--max-length", type=int, default=256)
    ap.add_argument("--min-count", type=int, default=2)
    ap.add_argument("--epochs", type=int, default=3)
    ap.add_argument("--batch-size", type=int, default=32)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--weight-decay", type=float, default=0.01)
    ap.add_argument("--warmup", type=float, default=0.1, help="fraction of the steps")
    ap.add_argument("--seed", type=int, default=20210420)
    ap.add_argument("--threads", type=int, default=1,
                    help="PyTorch threads; 1 because OpenMP threads spin, and on cores shared with "
                    "other work more of them ran slower, not faster (docs/performance.md)")
    args = ap.parse_args()

    start = time.time()
    torch.set_num_threads(args.threads)
    random.seed(args.seed)
    np.random.seed(args.seed)
    train = read_tsv(os.path.join(args.data, "train.tsv"))
    dev = read_tsv(os.path.join(args.data, "dev.tsv"))
    with open(args.vocab, encoding="utf-8") as f:
        wobert = [line.rstrip("\n") for line in f]
    log(f"{len(train)} train, {len(dev)} dev texts; WoBERT vocab {len(wobert)}")

    # 1-2. Tokens from the engine with the full vocab, the pruned vocab, the tokens again.
    full_dir = os.path.join(args.work, "tokenizer-full")
    full_config, full_model = new_model(wobert, args.seed)
    write_checkpoint(full_dir, full_config, wobert, full_model)
    full_ids = engine_tokenize(args.roformer, full_dir, [t for _, t in train], args.max_length)
    vocab = prune_vocab(wobert, full_ids, args.min_count)
    config, model = new_model(vocab, args.seed)
    ckpt = os.path.join(args.work, "checkpoint")
    write_checkpoint(ckpt, config, vocab, model)
    train_ids = engine_tokenize(args.roformer, ckpt, [t for _, t in train], args.max_length)
    dev_ids = engine_tokenize(args.roformer, ckpt, [t for _, t in dev], args.max_length)
    lengths = np.array([len(i) for i in train_ids])
    log(f"vocab {len(vocab)} entries (min count {args.min_count}); train tokens per text: "
        f"mean {lengths.mean():.0f}, median {np.median(lengths):.0f}, "
        f"{(lengths >= args.max_length).mean():.1%} truncated at {args.max_length}")

    # 3. Training.
    train_y = torch.tensor([y for y, _ in train])
    dev_y = np.array([y for y, _ in dev])
    rng = random.Random(args.seed)
    steps_per_epoch = math.ceil(len(train_ids) / args.batch_size)
    total = steps_per_epoch * args.epochs
    warmup = max(1, int(total * args.warmup))
    decay = [p for n, p in model.named_parameters() if p.dim() == 2 and n != "types.weight"]
    rest = [p for n, p in model.named_parameters() if not (p.dim() == 2 and n != "types.weight")]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": args.weight_decay},
                             {"params": rest, "weight_decay": 0.0}], lr=args.lr)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warmup, max(0.0, (total - s) / (total - warmup))))
    step = 0
    for epoch in range(args.epochs):
        model.train()
        loss_sum, seen = 0.0, 0
        for idx in batches(train_ids, args.batch_size, rng):
            logits = model(*collate(train_ids, idx))["logits"]
            loss = F.cross_entropy(logits, train_y[idx])
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            sched.step()
            step += 1
            loss_sum += loss.item() * len(idx)
            seen += len(idx)
            if step % 50 == 0:
                log(f"epoch {epoch + 1} step {step}/{total} loss {loss_sum / seen:.4f}")
        acc = float((predict(model, dev_ids).argmax(1).numpy() == dev_y).mean())
        log(f"epoch {epoch + 1}: train loss {loss_sum / seen:.4f}, dev accuracy (PyTorch, f32) {acc:.4f}")

    # 4. Checkpoint with f16-rounded matrices, GGUF, PyTorch dev predictions.
    round_to_f16(model)
    write_checkpoint(ckpt, config, vocab, model)
    tmp = args.out + ".tmp"
    subprocess.run([args.roformer, "convert", ckpt, "-o", tmp, "--dtype", "f16"], check=True)
    os.replace(tmp, args.out)
    probs = predict(model, dev_ids)
    pred = probs.argmax(1).numpy()
    with open(args.expected + ".tmp", "w", encoding="utf-8") as f:
        for n, p in enumerate(probs.tolist()):
            f.write(json.dumps({"label": LABELS[int(pred[n])], "scores": {LABELS[k]: round(p[k], 8) for k in range(len(LABELS))}}) + "\n")
    os.replace(args.expected + ".tmp", args.expected)
    acc = float((pred == dev_y).mean())
    log(f"wrote {args.out} ({os.path.getsize(args.out)} bytes) and {args.expected}")
    log(f"dev accuracy (PyTorch, f16-rounded weights, max length {args.max_length}): {acc:.4f}")
    engine = engine_classify(args.roformer, args.out, [t for _, t in dev], args.max_length)
    log(f"dev accuracy (roformer classify --max-length {args.max_length}): "
        f"{float((engine.argmax(1) == dev_y).mean()):.4f}; labels as PyTorch's on "
        f"{int((engine.argmax(1) == pred).sum())} of {len(dev)}, "
        f"max |p diff| {float(np.abs(engine - probs.numpy()).max()):.2g}")
    log(f"total time {time.time() - start:.0f} s")
    shutil.rmtree(full_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
