#!/usr/bin/python3
"""jobs_reference.py — derives what the job commands must print from the
HuggingFace reference outputs (expected.safetensors) and compares.

  jobs_reference.py maxlens MODEL_DIR JOB            the max_length groups ("none", 512, ...)
  jobs_reference.py inputs  MODEL_DIR JOB MAXLEN     JSONL inputs for the CLI
  jobs_reference.py check   MODEL_DIR JOB MAXLEN OUT compares the CLI output OUT; exit 1 on mismatch

JOB: embed-cls, embed-mean, embed-pooler, classify, ner, qa, fill-mask.
The expected values are computed here from the reference tensors (never
from the engine): [CLS] row, mask-aware mean, pooled; softmax and argmax of
the logits; the best QA span; the top-k of the MLM logits at [MASK].
"""
import json
import struct
import sys

import numpy as np

ATOL = 1e-4
QA_MAX_ANSWER_TOKENS = 15
FILL_MASK_TOP_K = 5


def load_safetensors(path):
    data = open(path, "rb").read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8:8 + n])
    types = {"F32": np.float32, "F16": np.float16, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        start, end = info["data_offsets"]
        out[name] = np.frombuffer(data[8 + n + start:8 + n + end],
                                  dtype=types[info["dtype"]]).reshape(info["shape"])
    return out


def cases(model_dir):
    with open(model_dir + "/cases.jsonl", encoding="utf-8") as f:
        return [json.loads(line) for line in f]


def vocab(model_dir):
    with open(model_dir + "/vocab.txt", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


def wanted(case, job, vocab_list):
    has_pair = "text_pair" in case or "text_pairs" in case
    if job == "ner":
        return not has_pair and "logits" in case["outputs"]
    if job == "qa":
        return has_pair and "start_logits" in case["outputs"]
    if job == "fill-mask":
        mask_id = vocab_list.index("[MASK]")
        return "logits" in case["outputs"] and any(mask_id in row for row in case["input_ids"])
    if job == "classify":
        return "logits" in case["outputs"]
    if job == "embed-pooler":
        return "pooled" in case["outputs"]
    return True


def selected(model_dir, job, maxlen):
    """(case, row, input object) for every input of this job and max_length group."""
    vocab_list = vocab(model_dir)
    for case in cases(model_dir):
        if not wanted(case, job, vocab_list):
            continue
        if str(case.get("max_length", "none")) != str(maxlen):
            continue
        texts = case["texts"] if "texts" in case else [case["text"]]
        pairs = case.get("text_pairs") or ([case["text_pair"]] if "text_pair" in case else None)
        for row, text in enumerate(texts):
            if job == "qa":
                obj = {"question": text, "context": pairs[row]}
            else:
                obj = {"text": text}
                if pairs is not None:
                    obj["text_pair"] = pairs[row]
            yield case, row, obj


def softmax(x):
    e = np.exp(x.astype(np.float64) - x.max())
    return e / e.sum()


def qa_best_span(start, end, allowed):
    """HF's pipeline: the span s <= e of allowed tokens, at most
    QA_MAX_ANSWER_TOKENS long, with the largest start[s] + end[e]; its score
    p(start) * p(end), softmax over the allowed tokens and [CLS].
    Returns (score, (s, e))."""
    idx = np.nonzero(allowed)[0]
    best, span = -np.inf, None
    for s in idx:
        for e in idx[(idx >= s) & (idx < s + QA_MAX_ANSWER_TOKENS)]:
            if start[s] + end[e] > best:
                best, span = start[s] + end[e], (s, e)
    norm = list(np.concatenate([[0], idx]))
    ps, pe = softmax(start[norm]), softmax(end[norm])
    return ps[norm.index(span[0])] * pe[norm.index(span[1])], span


def strip_wp(tok):
    return tok[2:] if tok.startswith("##") and len(tok) > 2 else tok


class Checker:
    def __init__(self):
        self.failures = 0
        self.max_diff = 0.0

    def close(self, what, got, want, atol=ATOL):
        got = np.asarray(got, dtype=np.float64)
        want = np.asarray(want, dtype=np.float64)
        if got.shape != want.shape:
            return self.fail("%s: shape %s, expected %s" % (what, got.shape, want.shape))
        diff = float(np.max(np.abs(got - want))) if got.size else 0.0
        self.max_diff = diff if diff != diff else max(self.max_diff, diff)
        if not diff <= atol:
            self.fail("%s: max |diff| %.3g > %.3g" % (what, diff, atol))

    def equal(self, what, got, want):
        if got != want:
            self.fail("%s: got %r, expected %r" % (what, got, want))

    def fail(self, msg):
        self.failures += 1
        print("mismatch: " + msg, file=sys.stderr)


def check(model_dir, job, maxlen, out_path):
    exp = load_safetensors(model_dir + "/expected.safetensors")
    vocab_list = vocab(model_dir)
    config = json.load(open(model_dir + "/config.json"))
    with open(out_path, encoding="utf-8") as f:
        outputs = [json.loads(line) for line in f]
    inputs = list(selected(model_dir, job, maxlen))
    c = Checker()
    if len(outputs) != len(inputs):
        c.fail("%d output lines for %d inputs" % (len(outputs), len(inputs)))
        return c
    special = {vocab_list.index(t) for t in ("[CLS]", "[SEP]")}
    for (case, row, obj), out in zip(inputs, outputs):
        cid = case["id"]
        what = "%s[%d]" % (cid, row)
        if "error" in out:
            c.fail("%s: error %s" % (what, out["error"]))
            continue
        ids = np.array(case["input_ids"][row])
        mask = np.array(case["attention_mask"][row])
        types = np.array(case["token_type_ids"][row])
        if job.startswith("embed-"):
            lhs = exp[cid + ".last_hidden_state"][row]
            want = {"embed-cls": lambda: lhs[0],
                    "embed-mean": lambda: lhs[mask == 1].astype(np.float64).mean(axis=0),
                    "embed-pooler": lambda: exp[cid + ".pooled"][row]}[job]()
            c.close(what + " embedding", out["embedding"], want)
        elif job == "classify":
            probs = softmax(exp[cid + ".logits"][row])
            labels = [config["id2label"][str(i)] for i in range(len(probs))]
            c.equal(what + " label", out["label"], labels[int(np.argmax(probs))])
            c.equal(what + " labels", sorted(out["scores"]), sorted(labels))
            c.close(what + " scores", [out["scores"][l] for l in labels if l in out["scores"]],
                    probs)
        elif job == "ner":
            logits = exp[cid + ".logits"][row]
            keep = [t for t in range(len(ids)) if mask[t] and ids[t] not in special]
            want_labels = [config["id2label"][str(int(np.argmax(logits[t])))] for t in keep]
            want_scores = [softmax(logits[t]).max() for t in keep]
            c.equal(what + " labels", [t["label"] for t in out["tokens"]], want_labels)
            c.close(what + " scores", [t["score"] for t in out["tokens"]], want_scores)
            text = obj["text"]
            for t, tok in zip(keep, out["tokens"]):  # offsets cut the token out of the text
                piece = vocab_list[ids[t]]
                if piece != "[UNK]":
                    c.equal(what + " token text", text[tok["start"]:tok["end"]].lower(),
                            strip_wp(piece))
            for ent in out["entities"]:
                c.equal(what + " entity text", text[ent["start"]:ent["end"]], ent["text"])
        elif job == "qa":
            start = exp[cid + ".start_logits"][row].astype(np.float64)
            end = exp[cid + ".end_logits"][row].astype(np.float64)
            allowed = (types == 1) & (mask == 1) & ~np.isin(ids, list(special))
            score, span = qa_best_span(start, end, allowed)
            c.close(what + " score", [out["score"]], [score])
            pieces = [vocab_list[i] for i in ids[span[0]:span[1] + 1]]
            context = obj["context"]
            c.equal(what + " offsets", context[out["start"]:out["end"]], out["answer"])
            if "[UNK]" not in pieces:
                c.equal(what + " answer", "".join(out["answer"].lower().split()),
                        "".join(strip_wp(p) for p in pieces))
        elif job == "fill-mask":
            logits = exp[cid + ".logits"][row]
            mask_id = vocab_list.index("[MASK]")
            positions = [t for t in range(len(ids)) if ids[t] == mask_id and mask[t]]
            c.equal(what + " mask count", len(out["masks"]), len(positions))
            filled = obj["text"]
            for m, t in enumerate(positions[:len(out["masks"])]):
                probs = softmax(logits[t])
                top = list(np.argsort(-probs, kind="stable")[:FILL_MASK_TOP_K])
                c.equal(what + " top-k ids", [x["id"] for x in out["masks"][m]], [int(i) for i in top])
                c.equal(what + " top-k tokens", [x["token"] for x in out["masks"][m]],
                        [vocab_list[i] for i in top])
                c.close(what + " top-k scores", [x["score"] for x in out["masks"][m]], probs[top])
                filled = filled.replace("[MASK]", strip_wp(vocab_list[top[0]]), 1)
            c.equal(what + " sequence", out["sequence"], filled)
    return c


def main():
    cmd, model_dir, job = sys.argv[1:4]
    if cmd == "maxlens":
        groups = []
        for case in cases(model_dir):
            g = str(case.get("max_length", "none"))
            if wanted(case, job, vocab(model_dir)) and g not in groups:
                groups.append(g)
        print(" ".join(groups))
    elif cmd == "inputs":
        for _, _, obj in selected(model_dir, job, sys.argv[4]):
            print(json.dumps(obj, ensure_ascii=False))
    elif cmd == "check":
        c = check(model_dir, job, sys.argv[4], sys.argv[5])
        print("%s %s max_length=%s: max |diff| %.3g, %d mismatches"
              % (model_dir.rstrip("/").split("/")[-1], job, sys.argv[4], c.max_diff, c.failures))
        sys.exit(1 if c.failures else 0)


if __name__ == "__main__":
    main()
