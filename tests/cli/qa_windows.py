#!/usr/bin/python3
"""qa_windows.py — what `roformer qa --doc-stride` must answer, worked out
independently: the windows are cut here from the untruncated tokenization
(HF's truncation="only_second" with a stride), each window's QA logits come
from `roformer forward --head qa` on its ids (the forward pass is checked
against HF elsewhere), and the best span of all windows is chosen here.

  qa_windows.py ROFORMER MODEL_DIR INPUTS MAX_LENGTH DOC_STRIDE OUT

INPUTS is JSONL {"question", "context"}; OUT the CLI's output for it.
Prints what differs and exits 1 on any mismatch; prints the window counts.
"""
import json
import subprocess
import sys

import numpy as np

from jobs_reference import qa_best_span, strip_wp


def run(args, lines):
    p = subprocess.run(args, input="".join(json.dumps(l, ensure_ascii=False) + "\n" for l in lines),
                       capture_output=True, text=True, check=True)
    return [json.loads(l) for l in p.stdout.splitlines()]


def windows(enc, max_length, stride):
    """(first context token, count) of every window, and the header length."""
    types = enc["token_type_ids"]
    header = types.index(1)
    context = len(types) - header - 1
    room = max_length - header - 1
    out, first = [], 0
    while True:
        count = min(room, context - first)
        out.append((first, count))
        if first + count >= context:
            return header, out
        first += room - stride


def main():
    roformer, model, inputs_path, max_length, stride, out_path = sys.argv[1:7]
    max_length, stride = int(max_length), int(stride)
    inputs = [json.loads(l) for l in open(inputs_path, encoding="utf-8")]
    got = [json.loads(l) for l in open(out_path, encoding="utf-8")]
    encs = run([roformer, "tokenize", "-m", model],
               [{"text": x["question"], "text_pair": x["context"]} for x in inputs])
    failures = 0
    for k, (x, enc, out) in enumerate(zip(inputs, encs, got)):
        header, wins = windows(enc, max_length, stride)
        rows = []
        for first, count in wins:
            pick = list(range(header)) + [header + first + i for i in range(count)] + [len(enc["input_ids"]) - 1]
            rows.append({f: [enc[f][i] for i in pick] for f in ("input_ids", "token_type_ids")})
            rows[-1]["attention_mask"] = [1] * len(pick)
            rows[-1]["tokens"] = [enc["tokens"][i] for i in pick]
        logits = run([roformer, "forward", "-m", model, "--head", "qa"],
                     [{f: r[f] for f in ("input_ids", "token_type_ids", "attention_mask")} for r in rows])
        best = None
        for w, (r, lg) in enumerate(zip(rows, logits)):
            allowed = np.array([i >= header and i < len(r["input_ids"]) - 1 for i in range(len(r["input_ids"]))])
            score, span = qa_best_span(np.array(lg["start_logits"], dtype=np.float64),
                                    np.array(lg["end_logits"], dtype=np.float64), allowed)
            if best is None or score > best[0]:
                best = (score, w, span)
        score, w, (s, e) = best
        pieces = [strip_wp(t) for t in rows[w]["tokens"][s:e + 1]]
        print(f"input {k + 1}: {len(wins)} windows, best in window {w + 1}")
        if not abs(out["score"] - score) <= 1e-5 * max(1.0, score):
            failures += 1
            print(f"input {k + 1}: score {out['score']} want {score}")
        if x["context"][out["start"]:out["end"]] != out["answer"]:
            failures += 1
            print(f"input {k + 1}: offsets {out['start']}:{out['end']} do not cut out {out['answer']!r}")
        if "[UNK]" not in pieces and "".join(out["answer"].lower().split()) != "".join(pieces):
            failures += 1
            print(f"input {k + 1}: answer {out['answer']!r} want the tokens {pieces}")
    if len(got) != len(inputs):
        failures += 1
        print(f"{len(got)} outputs for {len(inputs)} inputs")
    sys.exit(1 if failures else 0)


main()
