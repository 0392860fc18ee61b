#!/usr/bin/python3
"""bench_jieba_py.py DICT FILE RUNS — Python jieba `lcut(line, HMM=False)`
over every line of FILE. Prints "load_ms X" and "cut_mbs MEDIAN MIN MAX
WORDS" (MB = 10^6 bytes of UTF-8). Run by scripts/bench_tokenizer.sh with
Debian's python3-jieba."""
import logging
import sys
import time

import jieba

dict_path, path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
jieba.setLogLevel(logging.ERROR)
tok = jieba.Tokenizer(dictionary=dict_path)
t0 = time.perf_counter()
tok.initialize()
print("load_ms %.1f" % ((time.perf_counter() - t0) * 1e3))
with open(path, encoding="utf-8") as f:
    lines = f.read().split("\n")
nbytes = sum(len(l.encode("utf-8")) for l in lines)
secs = []
words = 0
for r in range(-1, runs):  # run -1 warms up
    t0 = time.perf_counter()
    words = sum(len(tok.lcut(l, HMM=False)) for l in lines)
    if r >= 0:
        secs.append(time.perf_counter() - t0)
secs.sort()
mbs = lambda s: "%.2f" % (nbytes / s / 1e6)
print("cut_mbs", mbs(secs[len(secs) // 2]), mbs(secs[-1]), mbs(secs[0]), words)
