#!/usr/bin/python3
"""compare_tokenizer.py MODEL MODE [N] — `roformer tokenize` against a
line-by-line Python restatement of HF's slow tokenizer (transformers v4.40
RoFormerTokenizer with jieba, or BertTokenizer when MODE is bert) on N
random texts built to stress the rules: case mapping one character at a
time, NFC / NFD with combining marks and Hangul jamo, compatibility
ideographs, controls and format characters, odd spaces, punctuation,
literal special tokens, every plane.

The restatement is checked first on ../shared/reference/tokenizer (it must
reproduce every reference case), then the texts are compared. Texts with a
character that Python's Unicode database (unicodedata) leaves unassigned
but utf8proc knows are reported apart: HF drops such characters as
unassigned (category Cn) while the engine, on newer Unicode data, keeps
them (as [UNK]).

    scripts/compare_tokenizer.py ../shared/reference/models/tiny-word-mlm wobert 5000
    scripts/compare_tokenizer.py build/char.gguf bert 5000   # converted with --tokenizer bert

Needs Debian's python3-jieba (for wobert mode); the HF package is not used.
"""
import ctypes
import json
import logging
import os
import random
import re
import subprocess
import sys
import unicodedata

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]


# ==== HF tokenization_bert.py / tokenization_roformer.py, restated ====

def is_whitespace(c):
    return c in " \t\n\r" or unicodedata.category(c) == "Zs"


def is_control(c):
    return c not in "\t\n\r" and unicodedata.category(c).startswith("C")


def is_punctuation(c):
    cp = ord(c)
    if 33 <= cp <= 47 or 58 <= cp <= 64 or 91 <= cp <= 96 or 123 <= cp <= 126:
        return True
    return unicodedata.category(c).startswith("P")


def is_chinese(cp):
    return (0x4E00 <= cp <= 0x9FFF or 0x3400 <= cp <= 0x4DBF or 0x20000 <= cp <= 0x2A6DF
            or 0x2A700 <= cp <= 0x2B73F or 0x2B740 <= cp <= 0x2B81F or 0x2B820 <= cp <= 0x2CEAF
            or 0xF900 <= cp <= 0xFAFF or 0x2F800 <= cp <= 0x2FA1F)


def basic_tokenize(text):
    text = "".join(" " if is_whitespace(c) else c for c in text
                   if not (ord(c) == 0 or ord(c) == 0xFFFD or is_control(c)))
    text = "".join(" %s " % c if is_chinese(ord(c)) else c for c in text)
    text = unicodedata.normalize("NFC", text)
    out = []
    for tok in text.strip().split():
        tok = tok.lower()
        tok = "".join(c for c in unicodedata.normalize("NFD", tok) if unicodedata.category(c) != "Mn")
        word = ""
        for c in tok:
            if is_punctuation(c):
                out += [word, c] if word else [c]
                word = ""
            else:
                word += c
        if word:
            out.append(word)
    return " ".join(out).strip().split()


def wordpiece(word, vocab):
    if len(word) > 100:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        end = len(word)
        while start < end:
            piece = ("##" if start else "") + word[start:end]
            if piece in vocab:
                break
            end -= 1
        if start == end:
            return ["[UNK]"]
        pieces.append(piece)
        start = end
    return pieces


def tokenize(text, vocab, jieba):
    specials = "(" + "|".join(re.escape(s) for s in SPECIALS) + ")"
    text = re.sub(specials + "|(.+?)", lambda m: m.group(1) or m.group(2).lower(), text, flags=re.DOTALL)
    out = []
    for piece in re.split(specials, text):
        if piece in SPECIALS:
            out.append(piece)
            continue
        words = jieba.lcut(piece, HMM=False) if jieba and piece else [piece]
        for w in words:
            if jieba and w in vocab:
                out.append(w)
            else:
                for t in basic_tokenize(w):
                    out += wordpiece(t, vocab)
    return out


# ==== random texts ====

RANGES = [(0x20, 0x7E), (0x41, 0x5A), (0xC0, 0x24F), (0x300, 0x36F), (0x370, 0x3FF), (0x400, 0x4FF),
          (0x1100, 0x11FF), (0xAC00, 0xAC40), (0x3040, 0x30FF), (0x4E00, 0x9FFF), (0x3400, 0x4DBF),
          (0xF900, 0xFAFF), (0x20000, 0x2FA1F), (0x2000, 0x206F), (0x3000, 0x303F), (0xFF00, 0xFFEF),
          (0xE000, 0xE0FF), (0x1F300, 0x1FAFF), (0x1, 0x1F), (0x80, 0xBF), (0x0B00, 0x0DFF),
          (0x1D15E, 0x1D1C0), (0xFE00, 0xFE0F), (0x1, 0x10FFFF), (0x2C00, 0x2C7F), (0x10400, 0x1044F)]
PICKS = [0x130, 0x3A3, 0x1E9E, 0x212A, 0x212B, 0x2126, 0xDF, 0x149, 0x390, 0xFB01, 0xB47, 0xB3E,
         0x1025, 0x102E, 0x340, 0x344, 0xF73, 0x2028, 0x2029, 0xA0, 0x3000, 0xAD, 0x200D, 0xFEFF]
COMMON = "中国人民北京大学的了是在和有我们他这个上来到说时年要就出会可也你对生能而子那得于着下自之"


def random_text(rng):
    chars = []
    for _ in range(rng.randint(0, 30)):
        r = rng.random()
        if r < 0.3:
            chars.append(rng.choice(COMMON))
        elif r < 0.4:
            chars.append(chr(rng.choice(PICKS)))
        else:
            a, b = rng.choice(RANGES)
            cp = rng.randint(a, b)
            chars.append(chr(0x4E2D if 0xD800 <= cp <= 0xDFFF or cp == 0x10FFFF else cp))
    if rng.random() < 0.1:
        chars.insert(rng.randint(0, len(chars)), rng.choice(SPECIALS + ["[mask]", "[unused1]"]))
    return "".join(chars)


def main():
    model, mode = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 2000
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    ref = os.environ.get("ROFORMER_REFERENCE", os.path.join(root, "..", "shared", "reference"))
    roformer = os.environ.get("ROFORMER", os.path.join(root, "build", "roformer"))
    jieba = None
    if mode == "wobert":
        import jieba as jieba_module
        jieba_module.setLogLevel(logging.ERROR)
        jieba = jieba_module
    vocab_path = os.path.join(model, "vocab.txt") if os.path.isdir(model) else None
    if mode == "bert" and not vocab_path:
        vocab_path = os.path.join(ref, "models", "tiny-char-proj", "vocab.txt")
    if not vocab_path:
        vocab_path = os.path.join(ref, "vocab", "wobert_vocab.txt")
    with open(vocab_path, encoding="utf-8") as f:
        vocab = {t.rstrip("\n"): i for i, t in enumerate(f.readlines())}

    cases = os.path.join(ref, "tokenizer", "cases.jsonl" if mode == "wobert" else "cases_bert_char.jsonl")
    if os.path.exists(cases):
        bad = sum(tokenize(c["text"], vocab, jieba) != c["tokens"]
                  for c in map(json.loads, open(cases, encoding="utf-8")))
        print("restatement on %s: %d differences" % (os.path.basename(cases), bad))
        if bad:
            sys.exit("the Python restatement does not reproduce HF; fix it first")

    rng = random.Random(20240501)
    texts = [random_text(rng) for _ in range(n)]
    lines = "".join(json.dumps({"text": t}) + "\n" for t in texts)
    out = subprocess.run([roformer, "tokenize", "-m", model], input=lines.encode(), capture_output=True)
    got = [json.loads(l) for l in out.stdout.decode().splitlines()]
    if len(got) != n:
        sys.exit("roformer tokenize gave %d lines for %d texts: %s" % (len(got), n, out.stderr.decode()))
    utf8proc = ctypes.CDLL("libutf8proc.so.2")
    newer = lambda t: any(unicodedata.category(c) == "Cn" and utf8proc.utf8proc_category(ord(c)) != 0 for c in t)
    differ, unicode_age = 0, 0
    for text, g in zip(texts, got):
        want = tokenize(text, vocab, jieba)
        if g.get("tokens", [None])[1:-1] == want:
            continue
        if newer(text):
            unicode_age += 1
            continue
        differ += 1
        if differ <= 5:
            print("differs: %s\n  engine %s\n  HF     %s" % ([hex(ord(c)) for c in text], g.get("tokens"), want))
    print("%d texts: %d differ, %d more differ only by characters newer than Python's Unicode %s"
          % (n, differ, unicode_age, unicodedata.unidata_version))
    sys.exit(1 if differ else 0)


if __name__ == "__main__":
    main()
