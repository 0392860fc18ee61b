"""A text's output does not depend on its batch or the thread count
(docs/compute.md, "Reproducibility"): 30 texts of mixed lengths through
Model.encode, classify and fill_mask, shuffled, in batches of 2 to 64 on 1
to 7 threads, equal each text run alone (batch_size=1, one thread) bit for
bit, in f32 and, where the CPU has AVX2 (or is ARM64), int8."""
import platform
import random

import numpy as np
import pytest

import roformer
from conftest import cpu_has, data_lines, model_dir

LENGTHS = [1, 3, 6, 9, 14, 20, 27, 36, 48, 64, 90, 120, 170, 230, 300]


@pytest.fixture(scope="module")
def texts():
    rows = [line.split("\t", 1)[1] for line in data_lines("chnsenticorp/dev.tsv", 31)[1:]]
    return [r[:LENGTHS[i % 15]] for i, r in enumerate(rows)]


def computes():
    int8 = platform.machine() == "aarch64" or cpu_has("avx2")
    return ["f32"] + (["int8"] if int8 else [])


def shuffles(n):
    rnd = random.Random(7)
    for threads, batch in [(1, 2), (2, 5), (3, 64), (7, 13)]:
        order = list(range(n))
        rnd.shuffle(order)
        yield threads, batch, order


@pytest.mark.parametrize("compute", computes())
def test_encode_same_bits_in_any_batch(texts, compute):
    M = model_dir("tiny-char-proj")  # an embedding projection: f32 products under int8 too
    with roformer.Model(M, threads=1, compute=compute) as m:
        alone = [m.encode([t], batch_size=1, pooling="mean")[0] for t in texts]
    for threads, batch, order in shuffles(len(texts)):
        with roformer.Model(M, threads=threads, compute=compute) as m:
            got = m.encode([texts[i] for i in order], batch_size=batch, pooling="mean")
        for row, i in zip(got, order):
            assert np.array_equal(row, alone[i]), (threads, batch, i)


@pytest.mark.parametrize("compute", computes())
def test_classify_and_fill_mask_same_bits_in_any_batch(texts, compute):
    masked = [t[:1] + "[MASK]" + t[2:] for t in texts]
    with roformer.Model(model_dir("tiny-word-cls"), threads=1, compute=compute) as c, \
            roformer.Model(model_dir("tiny-word-mlm"), threads=1, compute=compute) as f:
        cls_alone = [c.classify([t], top_k=None, batch_size=1)[0] for t in texts]
        mask_alone = [f.fill_mask([t], batch_size=1)[0] for t in masked]
    for threads, batch, order in shuffles(len(texts)):
        with roformer.Model(model_dir("tiny-word-cls"), threads=threads, compute=compute) as c, \
                roformer.Model(model_dir("tiny-word-mlm"), threads=threads, compute=compute) as f:
            got_cls = c.classify([texts[i] for i in order], top_k=None, batch_size=batch)
            got_mask = f.fill_mask([masked[i] for i in order], batch_size=batch)
        for g, i in zip(got_cls, order):
            assert g == cls_alone[i], (threads, batch, i)
        for g, i in zip(got_mask, order):
            assert g == mask_alone[i], (threads, batch, i)
