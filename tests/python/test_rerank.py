"""Model.predict and Model.rank (sentence-transformers' CrossEncoder) against
HF's logits of the reference pair c02 of tiny-word-cls and against
`roformer rerank` / `roformer classify` on the same pairs (float32 for
float32: the package calls the library as the CLI does); Model's
truncation_direction against the CLI's --truncation-direction."""

import os

import numpy as np
import pytest

import roformer
from conftest import cases, f32, model_dir, read_safetensors, run_cli

QUERY = "这个东西怎么样"
DOCS = ["还行吧", "很好的产品，非常满意", "质量很差，不推荐", "价格便宜，性价比高"]


def test_predict_is_hf_logits_of_the_reference_pair(cls):
    case = next(c for c in cases("tiny-word-cls") if c["id"] == "c02")
    want = read_safetensors(os.path.join(model_dir("tiny-word-cls"),
                                         "expected.safetensors"))["c02.logits"].reshape(-1)
    got = cls.predict((case["text"], case["text_pair"]))
    # 1e-4: the reference README's tolerance for logits
    assert got.shape == (3,) and np.max(np.abs(got - want)) <= 1e-4, (got, want)
    probs = cls.predict([(case["text"], case["text_pair"])], apply_softmax=True)
    e = np.exp(want - want.max())
    # a softmax moves by at most half the largest logit change
    assert probs.shape == (1, 3) and np.max(np.abs(probs[0] - e / e.sum())) <= 1e-4


def test_rank_equals_the_cli(cls):
    out, _ = run_cli(["rerank", "-m", cls.path, "--query", QUERY, "--no-progress"], DOCS)
    got = cls.rank(QUERY, DOCS, return_documents=True)
    assert [h["corpus_id"] for h in got] == [o["index"] for o in out]
    assert all(f32(h["score"]) == f32(o["score"]) and h["text"] == o["text"]
               for h, o in zip(got, out))
    top = cls.rank(QUERY, DOCS, top_k=2)
    assert top == [{"corpus_id": h["corpus_id"], "score": h["score"]} for h in got[:2]]
    raw, _ = run_cli(["rerank", "-m", cls.path, "--query", QUERY, "--raw-scores",
                      "--no-progress"], DOCS)
    got = cls.rank(QUERY, DOCS, raw_scores=True)
    assert [(h["corpus_id"], f32(h["score"])) for h in got] == \
        [(o["index"], f32(o["score"])) for o in raw]


def test_rank_scores_are_classify_probabilities(cls):
    out, _ = run_cli(["classify", "-m", cls.path, "--no-progress"],
                     [{"text": QUERY, "text_pair": d} for d in DOCS])
    want = [o["scores"]["positive"] for o in out]
    got = {h["corpus_id"]: h["score"] for h in cls.rank(QUERY, DOCS)}
    # 1e-5: the same pairs in other batches differ only in float32 summation order
    assert all(abs(got[i] - want[i]) <= 1e-5 for i in range(len(DOCS)))
    assert cls.rerank_scoring == "classifier"


def test_cosine_without_a_classifier(mlm):
    assert mlm.rerank_scoring == "cosine"
    want = mlm.similarity([QUERY] * len(DOCS), DOCS)
    got = mlm.predict([(QUERY, d) for d in DOCS])
    assert got.shape == (len(DOCS),) and np.array_equal(got, want)
    ranked = mlm.rank(QUERY, DOCS + [QUERY])
    assert ranked[0]["corpus_id"] == len(DOCS) and abs(ranked[0]["score"] - 1) <= 1e-5


def test_errors(cls):
    with pytest.raises(roformer.Error) as e:
        cls.rank(QUERY, ["ok", b"bad \xff"])
    assert e.value.index == 1 and "UTF-8" in e.value.message
    ranked = cls.rank(QUERY, ["ok", b"bad \xff"], errors="skip")
    assert [h["corpus_id"] for h in ranked] == [0]
    assert np.isnan(cls.predict([("a", "b"), ("a", b"\xff")], errors="skip")[1]).all()
    with pytest.raises(ValueError):
        cls.rank(QUERY, DOCS, top_k=0)
    with pytest.raises(TypeError):
        cls.predict([("a", "b", "c")])
    assert cls.rank(QUERY, []) == []


def test_truncation_direction_is_the_clis():
    long = "今天天气很好，我们明天去北京玩，价格便宜，性价比高，质量很差"
    for side in ("right", "left"):
        out, _ = run_cli(["classify", "-m", model_dir("tiny-word-cls"), "--max-length", "10",
                          "--truncation-direction", side, "--threads", "1", "--no-progress"], [long])
        with roformer.Model(model_dir("tiny-word-cls"), threads=1, max_length=10,
                            truncation_direction=side) as m:
            got = m.classify(long, top_k=None)
            assert m.truncation_direction == side
        assert {g["label"]: f32(g["score"]) for g in got} == \
            {k: f32(v) for k, v in out[0]["scores"].items()}, side
    with pytest.raises(ValueError, match="truncation_direction"):
        roformer.Model(model_dir("tiny-word-cls"), truncation_direction="middle")
