"""Model.encode with sentence-transformers' arguments, roformer.quantization
and roformer.util, against expectations written here from
sentence-transformers' definitions (its quantize_embeddings, cos_sim and
semantic_search) in plain numpy and Python loops, and against HF's
expected.safetensors for the token vectors. (sentence-transformers itself
is not a dependency.)"""

import sys

import numpy as np
import pytest

import roformer
from roformer import quantization, util
from conftest import cases, model_dir, read_safetensors

TEXTS = ["今天天气很好", "这家酒店服务很好，房间也很大", "北京是中国的首都", "Hello 世界 123",
         "没有想象的好", "速度快！服务周到！"]


@pytest.fixture(scope="module")
def m():
    with roformer.Model(model_dir("tiny-word-cls"), threads=1) as model:
        yield model


@pytest.fixture(scope="module")
def emb(m):
    return m.encode(TEXTS)


# ==== precision ====

def expected_uint8(x):
    """quantize_embeddings' uint8 in float64: (x - min) / ((max - min) / 255)
    per dimension, truncated. Returned as float64 before truncation too."""
    x = x.astype(np.float64)
    out = np.empty(x.shape)
    for d in range(x.shape[1]):
        lo, hi = min(x[:, d]), max(x[:, d])
        for i in range(x.shape[0]):
            out[i, d] = (x[i, d] - lo) / ((hi - lo) / 255)
    return out


def check_levels(got, exact, offset):
    """got equals trunc(exact + offset) except where `exact` lies within
    1e-3 of a whole number: the library's float32 arithmetic ((x - min) /
    step, relative error a few 1e-7 on values up to 255, so below 1e-4)
    may truncate to the neighbour there."""
    want = np.trunc(exact + offset)
    near = np.abs(exact - np.round(exact)) < 1e-3
    assert np.array_equal(got[~near], want[~near])
    assert np.all(np.abs(got[near].astype(np.int64) - want[near]) <= 1)


def test_precision_uint8_and_int8(m, emb):
    exact = expected_uint8(emb)
    u = m.encode(TEXTS, precision="uint8")
    assert u.dtype == np.uint8 and u.shape == emb.shape
    check_levels(u, exact, 0)
    i = m.encode(TEXTS, precision="int8")
    assert i.dtype == np.int8
    check_levels(i, exact, -128)
    # every dimension spans its whole range: min -> 0, max -> 255
    assert np.all(u.min(axis=0) == 0) and np.all(u.max(axis=0) >= 254)


def expected_bits(x):
    """sign bits packed 8 per byte, the first dimension in the high bit."""
    rows = []
    for v in x:
        row = []
        for b0 in range(0, len(v), 8):
            byte = 0
            for k, val in enumerate(v[b0:b0 + 8]):
                if val > 0:
                    byte |= 0x80 >> k
            row.append(byte)
        rows.append(row)
    return np.array(rows)


def test_precision_binary_and_ubinary(m, emb):
    want = expected_bits(emb)
    ub = m.encode(TEXTS, precision="ubinary")
    assert ub.dtype == np.uint8 and ub.shape == (len(TEXTS), emb.shape[1] // 8)
    assert np.array_equal(ub, want)
    b = m.encode(TEXTS, precision="binary")
    assert b.dtype == np.int8 and np.array_equal(b.astype(np.int64), want - 128)
    assert np.array_equal(m.encode(TEXTS[0], precision="ubinary"), want[0])  # one text: 1-D


def test_quantize_embeddings_calibration_and_ranges(emb):
    cal = np.vstack([emb, emb * 2])
    got = quantization.quantize_embeddings(emb[:2], "uint8", calibration_embeddings=cal)
    check_levels(got, expected_uint8(np.vstack([cal, emb[:2]]))[-2:], 0)
    unit = emb / np.linalg.norm(emb, axis=1, keepdims=True)  # within the ranges [-1, 1]
    ranges = np.vstack([np.full(emb.shape[1], -1.0), np.full(emb.shape[1], 1.0)])
    got = quantization.quantize_embeddings(unit, "uint8", ranges=ranges)
    check_levels(got, (unit.astype(np.float64) + 1) / (2 / 255), 0)
    with pytest.raises(ValueError, match="float"):
        quantization.quantize_embeddings(got, "int8")


# ==== truncate_dim, normalize, prompts, output types ====

def test_truncate_dim_renormalizes_the_first_components(m, emb):
    got = m.encode(TEXTS, truncate_dim=8, normalize_embeddings=True)
    assert got.shape == (len(TEXTS), 8)
    for g, v in zip(got, emb.astype(np.float64)):
        want = v[:8] / np.sqrt(sum(x * x for x in v[:8]))
        # float32 rounding of 8 squares summed and one division: 1e-6 of |1|
        assert np.max(np.abs(g - want)) <= 1e-6
    assert np.array_equal(m.encode(TEXTS, truncate_dim=8), emb[:, :8])


def test_prompts(m):
    want = m.encode(["query: " + t for t in TEXTS])
    assert np.array_equal(m.encode(TEXTS, prompt="query: "), want)
    m.prompts = {"query": "query: ", "doc": ""}
    try:
        assert np.array_equal(m.encode(TEXTS, prompt_name="query"), want)
        assert np.array_equal(m.encode(TEXTS, prompt_name="query", prompt="query: "), want)
        m.default_prompt_name = "query"
        assert np.array_equal(m.encode(TEXTS), want)
        assert np.array_equal(m.encode(TEXTS, prompt_name="doc"), m.encode(TEXTS, prompt=""))
        with pytest.raises(ValueError, match="'passage' is not one of the model's prompts"):
            m.encode(TEXTS, prompt_name="passage")
    finally:
        m.prompts, m.default_prompt_name = {}, None


def test_token_embeddings_match_reference(m):
    expected = read_safetensors(model_dir("tiny-word-cls") + "/expected.safetensors")
    case = next(c for c in cases("tiny-word-cls") if "text" in c)
    want = expected[case["id"] + ".last_hidden_state"][0]
    got = m.encode(case["text"], output_value="token_embeddings")
    assert got.shape == want.shape  # [CLS] ... [SEP], one row per token
    assert float(np.max(np.abs(got - want))) <= 1e-4  # the reference README's hidden-state tolerance
    many = m.encode([case["text"], "好"], output_value="token_embeddings", batch_size=2)
    assert many[0].shape == want.shape and many[1].shape == (3, m.hidden_size)
    assert float(np.max(np.abs(many[0] - want))) <= 1e-4


def test_output_value_none(m, emb):
    out = m.encode(TEXTS[:2], output_value=None)
    assert len(out) == 2
    # the same batch as encode's: the same bits (a batch's padding may move the last bits)
    for r, t, v in zip(out, TEXTS, m.encode(TEXTS[:2])):
        assert set(r) == {"sentence_embedding", "token_embeddings", "input_ids",
                          "token_type_ids", "attention_mask"}
        assert np.array_equal(r["sentence_embedding"], v)
        assert list(r["input_ids"]) == m.tokenize(t)["input_ids"]
        assert r["token_embeddings"].shape == (len(r["input_ids"]), m.hidden_size)


def test_numpy_list_and_tensor(m, emb):
    rows = m.encode(TEXTS, convert_to_numpy=False)
    assert isinstance(rows, list) and all(np.array_equal(a, b) for a, b in zip(rows, emb))
    torch = pytest.importorskip("torch")
    t = m.encode(TEXTS, convert_to_tensor=True)
    assert isinstance(t, torch.Tensor) and np.array_equal(t.numpy(), emb)
    assert m.encode(TEXTS, convert_to_tensor=True, precision="int8").dtype == torch.int8


def test_convert_to_tensor_without_torch(m, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now fails
    with pytest.raises(ImportError, match="convert_to_tensor=True needs PyTorch"):
        m.encode(TEXTS, convert_to_tensor=True)


@pytest.mark.parametrize("kw, msg", [
    ({"device": "cuda"}, 'device must be "cpu"'),
    ({"precision": "float16"}, "precision must be one of"),
    ({"output_value": "pooled"}, "output_value must be"),
    ({"truncate_dim": 0}, "truncate_dim must be"),
    ({"truncate_dim": 10 ** 6}, "truncate_dim must be"),
    ({"precision": "int8", "errors": "skip"}, "cannot hold the NaN rows"),
])
def test_bad_arguments(m, kw, msg):
    with pytest.raises(ValueError, match=msg):
        m.encode(TEXTS, **kw)


def test_earlier_calls(m, emb):
    assert np.array_equal(m.encode(texts=TEXTS), emb)  # the earlier keyword
    with pytest.raises(TypeError, match="give batch_size=8 by name"):
        m.encode(TEXTS, 8)  # the earlier second positional argument
    with pytest.raises(TypeError, match="takes the texts once"):
        m.encode(TEXTS, texts=TEXTS)


def test_device_cpu_and_existing_calls(m, emb):
    assert np.array_equal(m.encode(TEXTS, device="cpu"), emb)
    assert np.array_equal(m.encode(TEXTS, batch_size=32, pooling="cls", normalize_embeddings=False,
                                   show_progress_bar=False, errors="raise"), emb)


def test_progress_bar_tqdm(m, capsys):
    pytest.importorskip("tqdm")
    m.encode(["好"] * 70, batch_size=8, show_progress_bar=True)
    err = capsys.readouterr().err
    assert "70/70" in err and "encode" in err and "\rencode: 70/70\n" not in err


# ==== util ====

def test_cos_sim(emb):
    a, b = emb[:2], emb[2:]
    got = util.cos_sim(a, b)
    assert got.shape == (2, len(b)) and got.dtype == np.float32
    for i in range(2):
        for j in range(len(b)):
            x, y = a[i].astype(np.float64), b[j].astype(np.float64)
            want = x @ y / np.sqrt((x @ x) * (y @ y))
            # float32 dot products of D terms of unit vectors: D * 2^-24 bounds the error
            assert abs(got[i, j] - want) <= len(x) * 2 ** -24
    assert util.cos_sim(emb[0], emb[1]).shape == (1, 1)
    assert util.cos_sim(np.zeros(4), np.ones(4))[0, 0] == 0  # a zero vector: 0, not NaN
    torch = pytest.importorskip("torch")
    t = util.cos_sim(torch.from_numpy(a), b)
    assert isinstance(t, torch.Tensor) and np.array_equal(t.numpy(), got)


def test_semantic_search(emb):
    q, corpus = emb[:2], emb
    sims = util.cos_sim(q, corpus)
    for chunk in (1, 2, 100):
        got = util.semantic_search(q, corpus, query_chunk_size=chunk, corpus_chunk_size=chunk,
                                   top_k=3)
        assert len(got) == 2
        for i, hits in enumerate(got):
            order = sorted(range(len(corpus)), key=lambda j: (-sims[i, j], j))[:3]
            assert [h["corpus_id"] for h in hits] == order
            # a chunk's product may round differently: D * 2^-24 as in test_cos_sim
            assert np.allclose([h["score"] for h in hits], [sims[i, j] for j in order], rtol=0,
                               atol=corpus.shape[1] * 2 ** -24)
            assert hits[0]["corpus_id"] == i  # each query finds itself first
    assert len(util.semantic_search(q, corpus, top_k=100)[0]) == len(corpus)
    with pytest.raises(ValueError, match="top_k must be a positive integer"):
        util.semantic_search(q, corpus, top_k=0)
