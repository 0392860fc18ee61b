"""The *_encodings functions through the ctypes declarations of _capi.py:
each called with encodings made by the library's own rf_tokenize_truncated
(right side, the pipeline's max_length; none with windows or for rf_qa's
windows) gives the bytes of its text twin on the same pipeline (same
library, two paths: equal bits, no tolerance), and the same per-input
statuses."""

import ctypes
from ctypes import byref

import numpy as np
import pytest

from roformer import _capi
from conftest import model_dir

LONG = "一个长一点的句子，用来测试窗口和截断之后的结果是否一样。"


def text(t, pair=None):
    b = t.encode()
    p = pair.encode() if pair is not None else None
    return _capi.rf_text(b, len(b), p, len(p) if p is not None else 0)


def texts(items):
    return (_capi.rf_text * len(items))(*items)


class Loaded:
    """A reference model loaded through the C API, freed on close."""

    def __init__(self, name):
        self.h = ctypes.c_void_p()
        err = _capi.rf_error()
        st = _capi.rf_model_load(model_dir(name).encode(), byref(self.h), byref(err))
        assert st == _capi.RF_OK, err.message.decode()
        self.hp = _capi.rf_model_hparams(self.h).contents
        self.pipelines, self.encodings = [], []

    def pipeline(self, max_length, window=0):
        pp = _capi.rf_pipeline_default_params()
        pp.context.n_threads = 1
        pp.batch_size = 2
        pp.max_length = max_length
        pp.window = window
        pp.stride = 2 if window else _capi.RF_STRIDE_DEFAULT
        pl = ctypes.c_void_p()
        err = _capi.rf_error()
        assert _capi.rf_pipeline_create(self.h, byref(pp), byref(pl), byref(err)) == _capi.RF_OK, \
            err.message.decode()
        self.pipelines.append(pl)
        return pl

    def encode(self, inputs, max_length):
        """rf_tokenize_truncated of each input, as the pipeline does."""
        encs = (_capi.rf_encoding * len(inputs))()
        for i, t in enumerate(inputs):
            err = _capi.rf_error()
            st = _capi.rf_tokenize_truncated(self.h, t.text, t.text_len, t.pair, t.pair_len,
                                             max_length, _capi.RF_TRUNCATE_RIGHT, byref(encs[i]),
                                             byref(err))
            assert st == _capi.RF_OK, err.message.decode()
        self.encodings.append(encs)
        return encs

    def close(self):
        for encs in self.encodings:
            for e in encs:
                _capi.rf_encoding_free(byref(e))
        for pl in self.pipelines:
            _capi.rf_pipeline_free(pl)
        _capi.rf_model_free(self.h)


@pytest.fixture
def load():
    held = []

    def _load(name):
        held.append(Loaded(name))
        return held[-1]
    yield _load
    for m in held:
        m.close()


def run(fn, *args, n):
    """Calls fn(*args, items, err); returns the per-input statuses."""
    items = (_capi.rf_item_status * n)()
    err = _capi.rf_error()
    st = fn(*args, items, byref(err))
    assert st == _capi.RF_OK, err.message.decode()
    return [it.status for it in items]


def floats(n):
    return (ctypes.c_float * n)()


def same_bits(a, b):
    return np.asarray(a).tobytes() == np.asarray(b).tobytes()


@pytest.mark.parametrize("window", [0, 8])
def test_embed_encodings(load, window):
    m = load("tiny-word-mlm")
    D = m.hp.hidden_size
    inp = texts([text("今天天气很好"), text(LONG), text("北京")])
    pl = m.pipeline(0 if window else 12, window)
    encs = m.encode(inp, 0 if window else 12)
    # the windowed twin; without windows also the one that never cuts them,
    # with rf_embed's parameters and its bytes
    twins = [_capi.rf_embed_windowed_encodings] + ([] if window else [_capi.rf_embed_encodings])
    for twin in twins:
        for normalize in (False, True):
            va, vb = floats(3 * D), floats(3 * D)
            a = run(_capi.rf_embed, pl, inp, 3, _capi.RF_POOLING_MEAN, normalize, va, n=3)
            b = run(twin, pl, encs, 3, _capi.RF_POOLING_MEAN, normalize, vb, n=3)
            assert a == b == [_capi.RF_OK] * 3
            assert same_bits(va, vb)


@pytest.mark.parametrize("window", [0, 8])
def test_classify_and_rerank_encodings(load, window):
    m = load("tiny-word-cls")
    N = m.hp.num_labels
    inp = texts([text("这家酒店服务很好"), text("房间很大", "早餐一般"), text(LONG)])
    pl = m.pipeline(0 if window else 10, window)
    encs = m.encode(inp, 0 if window else 10)
    for fn, twin in ((_capi.rf_classify, _capi.rf_classify_encodings),
                     (_capi.rf_classify_logits, _capi.rf_classify_logits_encodings)):
        pa, pb = floats(3 * N), floats(3 * N)
        assert run(fn, pl, inp, 3, pa, n=3) == run(twin, pl, encs, 3, pb, n=3)
        assert same_bits(pa, pb), twin.__name__
    pairs = texts([text("这个东西怎么样", "还行吧"), text("这个东西怎么样", LONG)])
    penc = m.encode(pairs, 0 if window else 10)
    rp = _capi.rf_rerank_default_params()
    for raw in (False, True):
        rp.raw_scores = raw
        sa, sb = floats(2), floats(2)
        assert run(_capi.rf_rerank_score, pl, pairs, 2, byref(rp), sa, n=2) == \
            run(_capi.rf_rerank_score_encodings, pl, penc, 2, byref(rp), sb, n=2)
        assert same_bits(sa, sb)


def test_similarity_encodings(load):
    """Each pair's sides tokenized apart (2i, 2i + 1), as a cosine reranker's
    are, and each cut at max_length on its own."""
    m = load("tiny-word-mlm")
    pairs = texts([text("这个东西怎么样", "还行吧"), text("这个东西怎么样", LONG),
                   text(LONG, "北京")])
    sides = texts([text(t) for p in (("这个东西怎么样", "还行吧"), ("这个东西怎么样", LONG),
                                     (LONG, "北京")) for t in p])
    pl = m.pipeline(10)
    encs = m.encode(sides, 10)
    sa, sb = floats(3), floats(3)
    a = run(_capi.rf_similarity, pl, pairs, 3, _capi.RF_POOLING_MEAN, sa, n=3)
    b = run(_capi.rf_similarity_encodings, pl, encs, 3, _capi.RF_POOLING_MEAN, sb, n=3)
    assert a == b == [_capi.RF_OK] * 3
    assert same_bits(sa, sb)
    # a cosine model's rerank scores are these
    rp = _capi.rf_rerank_default_params()
    rp.pooling = _capi.RF_POOLING_MEAN
    sc = floats(3)
    assert run(_capi.rf_rerank_score, pl, pairs, 3, byref(rp), sc, n=3) == a
    assert same_bits(sa, sc)


def test_fill_mask_encodings(load):
    m = load("tiny-word-mlm")
    inp = texts([text("北京是[MASK]国的首都"), text("没有掩码")])
    pl = m.pipeline(12)
    encs = m.encode(inp, 12)
    ra, rb = (_capi.rf_fill_mask_result * 2)(), (_capi.rf_fill_mask_result * 2)()
    try:
        assert run(_capi.rf_fill_mask, pl, inp, 2, 3, ra, n=2) == \
            run(_capi.rf_fill_mask_encodings, pl, inp, encs, 2, 3, rb, n=2)
        assert ra[0].n_masks == rb[0].n_masks == 1 and rb[1].n_masks == 0
        k = ra[0].n_masks * ra[0].top_k
        assert ra[0].top_k == rb[0].top_k == 3
        assert ra[0].positions[0] == rb[0].positions[0]
        assert ra[0].ids[:k] == rb[0].ids[:k]
        assert same_bits(ra[0].scores[:k], rb[0].scores[:k])
        assert ra[0].sequence == rb[0].sequence
    finally:
        for r in list(ra) + list(rb):
            _capi.rf_fill_mask_result_free(byref(r))


def test_token_classify_encodings(load):
    m = load("tiny-char-proj")
    inp = texts([text("张三在北京工作"), text(LONG)])
    pl = m.pipeline(12)
    encs = m.encode(inp, 12)
    ra, rb = (_capi.rf_ner_result * 2)(), (_capi.rf_ner_result * 2)()
    try:
        assert run(_capi.rf_token_classify, pl, inp, 2, ra, n=2) == \
            run(_capi.rf_token_classify_encodings, pl, inp, encs, 2, rb, n=2)
        for x, y in zip(ra, rb):
            assert x.n_tokens == y.n_tokens > 0 and x.n_entities == y.n_entities
            assert ctypes.string_at(x.tokens, ctypes.sizeof(_capi.rf_token_tag) * x.n_tokens) == \
                ctypes.string_at(y.tokens, ctypes.sizeof(_capi.rf_token_tag) * y.n_tokens)
            for e, f in zip(x.entities[:x.n_entities], y.entities[:y.n_entities]):
                assert ctypes.string_at(e.type, e.type_len) == ctypes.string_at(f.type, f.type_len)
                assert (e.first, e.last, e.start, e.end) == (f.first, f.last, f.start, f.end)
                assert same_bits(np.float32(e.score), np.float32(f.score))
    finally:
        for r in list(ra) + list(rb):
            _capi.rf_ner_result_free(byref(r))


@pytest.mark.parametrize("stride", [-1, 2])
def test_qa_encodings(load, stride):
    m = load("tiny-qa")
    q = "张三在哪里工作？"
    inp = texts([text(q, "张三在北京的一家银行工作。"), text(q, LONG)])
    pl = m.pipeline(16)
    encs = m.encode(inp, 16 if stride < 0 else 0)
    ra, rb = (_capi.rf_qa_result * 2)(), (_capi.rf_qa_result * 2)()
    assert run(_capi.rf_qa, pl, inp, 2, 5, stride, ra, n=2) == \
        run(_capi.rf_qa_encodings, pl, inp, encs, 2, 5, stride, rb, n=2)
    assert bytes(ra) == bytes(rb)


def test_scm_encodings(load):
    m = load("tiny-word-mlm")
    docs = [text("今天天气很好"), text(LONG), text("北京")]
    pl = m.pipeline(12)
    encs = m.encode(texts(docs), 12)
    order = [(0, 1, 2), (2, 1, 0)]  # a document repeated: embedded once
    trip = (_capi.rf_triplet * 2)()
    tenc = (_capi.rf_encoding * 6)()
    for k, abc in enumerate(order):
        for s, d in enumerate(abc):
            trip[k].doc[s], trip[k].len[s] = docs[d].text, docs[d].text_len
            tenc[3 * k + s] = encs[d]
    sp = _capi.rf_scm_default_params()
    sa, sb = (_capi.rf_scm_result * 2)(), (_capi.rf_scm_result * 2)()
    da, db = ctypes.c_int32(), ctypes.c_int32()
    assert run(_capi.rf_scm, pl, trip, 2, byref(sp), sa, byref(da), n=2) == \
        run(_capi.rf_scm_encodings, pl, trip, tenc, 2, byref(sp), sb, byref(db), n=2)
    assert da.value == db.value == 3
    assert bytes(sa) == bytes(sb)
