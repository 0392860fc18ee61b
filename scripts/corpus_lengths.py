#!/usr/bin/env python3
"""corpus_lengths.py — token counts of a random batch of real texts, for the
mixed-length benchmark (`roformer bench --lengths-from`, ort_bench.js --lengths).

    /usr/bin/python3 scripts/corpus_lengths.py --corpus cjrc|scm|cmrc|chnsenticorp
        [--data ../shared/data] [--batch 32] [--seed 1] [--max-length 512]
        [--roformer build/roformer -m MODEL]

Draws --batch texts (fixed seed) from the corpus in the shared data directory and
prints their token counts with [CLS]/[SEP], truncated at --max-length, one a line.
The counts come from the engine's tokenizer (`roformer tokenize`, the same ids as
HF's RoFormerTokenizer) when --roformer and -m are given and it runs; otherwise
from an approximation (python3-jieba words, one token per vocab word, else one per
character), announced on stderr.
"""
import argparse
import json
import os
import random
import subprocess
import sys

CORPORA = {
    "cjrc": "cail2019_cjrc_legal_paragraphs/paragraphs.txt",
    "cmrc": "cmrc2018_wiki_paragraphs/paragraphs.txt",
    "scm": "cail2019_scm/stage1_train.jsonl",
    "chnsenticorp": "chnsenticorp/train.tsv",
}


def read_texts(data_dir, corpus):
    path = os.path.join(data_dir, CORPORA[corpus])
    with open(path, encoding="utf-8") as f:
        lines = [line.rstrip("\n") for line in f]
    if corpus == "scm":
        docs = set()
        for line in lines:
            if line.strip():
                d = json.loads(line)
                docs.update((d["A"], d["B"], d["C"]))
        return sorted(docs)
    if corpus == "chnsenticorp":  # label<TAB>text, with a header line
        return [line.split("\t", 1)[1] for line in lines[1:] if "\t" in line]
    return [line for line in lines if line.strip()]


def engine_lengths(roformer, model, texts, max_length):
    inp = "".join(json.dumps({"text": t}, ensure_ascii=False) + "\n" for t in texts)
    res = subprocess.run([roformer, "tokenize", "-m", model, "--max-length", str(max_length)],
                         input=inp.encode("utf-8"), capture_output=True, check=True)
    out = [json.loads(line) for line in res.stdout.decode("utf-8").splitlines() if line.strip()]
    if len(out) != len(texts):
        raise RuntimeError(f"roformer tokenize gave {len(out)} lines for {len(texts)} texts")
    return [len(o["input_ids"]) for o in out]


def approx_lengths(texts, max_length, vocab_path):
    import jieba
    jieba.setLogLevel(60)
    with open(vocab_path, encoding="utf-8") as f:
        vocab = set(line.rstrip("\n") for line in f)
    lengths = []
    for t in texts:
        n = 2
        for w in jieba.lcut(t.lower(), HMM=False):
            w = w.strip()
            if w:
                n += 1 if w in vocab else len(w)
        lengths.append(min(n, max_length))
    return lengths


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--corpus", choices=sorted(CORPORA), default="cjrc")
    ap.add_argument("--data", default="../shared/data")
    ap.add_argument("--reference", default=os.environ.get("ROFORMER_REFERENCE", "../shared/reference"))
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--max-length", type=int, default=512)
    ap.add_argument("--roformer")
    ap.add_argument("-m", "--model")
    args = ap.parse_args()

    texts = read_texts(args.data, args.corpus)
    batch = random.Random(args.seed).sample(texts, args.batch)
    lengths = None
    if args.roformer and args.model:
        try:
            lengths = engine_lengths(args.roformer, args.model, batch, args.max_length)
            print(f"corpus_lengths: {args.corpus}: counts from roformer tokenize", file=sys.stderr)
        except (OSError, subprocess.CalledProcessError, RuntimeError, ValueError) as e:
            print(f"corpus_lengths: roformer tokenize failed ({e}); approximating", file=sys.stderr)
    if lengths is None:
        lengths = approx_lengths(batch, args.max_length,
                                 os.path.join(args.reference, "vocab", "wobert_vocab.txt"))
        print(f"corpus_lengths: {args.corpus}: APPROXIMATE counts (python jieba + vocab lookup)", file=sys.stderr)
    print("\n".join(str(n) for n in lengths))
    return 0


if __name__ == "__main__":
    sys.exit(main())
