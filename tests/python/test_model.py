"""roformer.Model against the CLI (same JSON numbers, float32 for float32)
and against HF's expected.safetensors (within the reference tolerances)."""

import json
import sys

import numpy as np
import pytest

import roformer
from conftest import MODELS, cases, data_lines, f32, model_dir, read_safetensors, run_cli


def same(py, cli, where="result"):
    """py (the package's result) equals cli (parsed CLI JSON): same keys,
    same strings and ints, floats equal as float32."""
    if isinstance(cli, dict):
        assert isinstance(py, dict) and set(py) == set(cli), "%s: keys %s vs %s" % (
            where, sorted(py) if isinstance(py, dict) else py, sorted(cli))
        for k in cli:
            same(py[k], cli[k], "%s.%s" % (where, k))
    elif isinstance(cli, list):
        assert len(py) == len(cli), "%s: %d items vs %d" % (where, len(py), len(cli))
        for i, (a, b) in enumerate(zip(py, cli)):
            same(a, b, "%s[%d]" % (where, i))
    elif isinstance(cli, float):
        assert f32(py) == f32(cli), "%s: %r vs %r" % (where, py, cli)
    else:
        assert py == cli, "%s: %r vs %r" % (where, py, cli)


def titles(n):
    return [line.split("\t")[0] for line in data_lines("thucnews_titles/dev.txt", n)]


TEXTS = ["今天天气很好", "这家酒店服务很好，房间也很大", "北京是中国的首都", "", "Hello 世界 123"]


# ==== info ====

def test_info_matches_roformer_info(cls):
    import subprocess
    from conftest import CLI
    out = subprocess.run([CLI, "info", "-m", cls.path], capture_output=True, text=True,
                         check=True).stdout
    fields = dict(line.split(":", 1) for line in out.splitlines())
    fields = {k.strip(): v.strip() for k, v in fields.items()}
    info = cls.info
    for k in ("vocab_size", "embedding_size", "hidden_size", "num_layers", "intermediate_size",
              "max_position", "type_vocab_size"):
        assert str(info[k]) == fields[k], k
    assert fields["num_heads"].startswith(str(info["num_heads"]))
    assert info["head"] == fields["head"] == "cls"
    assert fields["labels"] == "%d (%s)" % (len(info["labels"]), ", ".join(info["labels"]))
    assert info["labels"] == ["negative", "neutral", "positive"]
    assert info["tokenizer"]["mode"] == "wobert" and info["tokenizer"]["do_lower_case"]
    assert info["tokenizer"]["special_tokens"]["[MASK]"] == 103
    assert info["dtype"] == fields["dtype"] and str(info["tensors"]) == fields["tensors"]
    assert info["hidden_act"] == fields["hidden_act"] and info["pooler"] is None
    assert fields["norm_type"] == info["norm_type"] == "layer_norm" and info["use_bias"]
    with roformer.Model(model_dir("tiny-v2-cls")) as v2:
        assert v2.info["norm_type"] == "rms_norm" and not v2.info["use_bias"]
    assert info["file"] == cls.path


# ==== jobs against the CLI ====

def test_classify_matches_cli(cls):
    texts = TEXTS + data_lines("chnsenticorp/dev.tsv", 90)[1:]
    inputs = texts + [("房间很大", "早餐一般"), {"text": "好", "text_pair": "坏"}]
    cli, _ = run_cli(["classify", "-m", cls.path, "--threads", "1"],
                     texts + [{"text": "房间很大", "text_pair": "早餐一般"},
                              {"text": "好", "text_pair": "坏"}])
    got = cls.classify(inputs)
    assert len(got) == len(cli) == len(inputs) > 64  # more than one chunk
    for g, c in zip(got, cli):
        same(g, {"label": c["label"], "score": c["score"]})
    top = cls.classify(inputs, top_k=None)
    for g, c in zip(top, cli):
        same(g, [{"label": k, "score": v} for k, v in c["scores"].items()])
    cli2, _ = run_cli(["classify", "-m", cls.path, "--threads", "1", "--top-k", "2"], texts[:3])
    for g, c in zip(cls.classify(texts[:3], top_k=2), cli2):
        same(g, [{"label": k, "score": v} for k, v in c["scores"].items()])


def test_classify_shapes_follow_hf_pipeline(cls):
    one = cls.classify("很好")
    assert isinstance(one, list) and len(one) == 1 and set(one[0]) == {"label", "score"}
    assert len(cls.classify("很好", top_k=2)) == 2
    assert [len(r) for r in cls.classify(["很好", "不好"], top_k=None)] == [3, 3]
    assert all(isinstance(r, dict) for r in cls.classify(["很好", "不好"]))


@pytest.mark.parametrize("pooling,normalize", [(None, False), ("cls", False), ("mean", True),
                                               ("pooler", False)])
def test_encode_matches_cli(mlm, pooling, normalize):
    texts = titles(150)
    args = ["embed", "-m", mlm.path, "--threads", "1", "--batch-size", "32"]
    args += ["--pooling", pooling] if pooling else []
    args += ["--normalize"] if normalize else []
    cli, _ = run_cli(args, texts)
    got = mlm.encode(texts, pooling=pooling, normalize_embeddings=normalize)
    assert got.dtype == np.float32 and got.shape == (len(texts), mlm.hidden_size)
    want = np.array([c["embedding"] for c in cli], dtype=np.float32)
    assert np.array_equal(got, want)


def test_encode_progress_bar(mlm, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "tqdm", None)  # the counter shown without tqdm
    mlm.encode(["好"] * 70, batch_size=8, show_progress_bar=True)  # chunks of 64
    assert capsys.readouterr().err == "\rencode: 64/70\rencode: 70/70\n"


def test_encode_single_and_batch_size(mlm):
    texts = TEXTS[:3]
    cli, _ = run_cli(["embed", "-m", mlm.path, "--threads", "1", "--batch-size", "1"], texts)
    got = mlm.encode(texts, batch_size=1)
    assert np.array_equal(got, np.array([c["embedding"] for c in cli], np.float32))
    assert np.array_equal(mlm.encode(texts[0], batch_size=1), got[0])  # 1-D for one text
    stats = mlm.stats()
    assert stats["inputs"] >= 4 and stats["tokens"] > 0 and stats["forward_seconds"] > 0


def test_similarity_matches_cli(mlm):
    a = titles(70)
    b = list(reversed(a))
    cli, _ = run_cli(["similarity", "-m", mlm.path, "--threads", "1", "--pooling", "mean"],
                     ["%s\t%s" % p for p in zip(a, b)])
    got = mlm.similarity(a, b, pooling="mean")
    assert got.dtype == np.float32
    assert np.array_equal(got, np.array([c["cosine"] for c in cli], np.float32))
    one, _ = run_cli(["similarity", "-m", mlm.path, "--threads", "1"], ["今天天气很好\t今天天气不错"])
    assert f32(mlm.similarity("今天天气很好", "今天天气不错")) == f32(one[0]["cosine"])


def scm_lines(n):
    return [json.loads(l) for l in data_lines("cail2019_scm/stage1_train.jsonl", n)]


def test_scm_embed_matches_cli(mlm):
    triplets = scm_lines(30)
    triplets.insert(3, {"A": "x", "B": "y"})  # a bad line keeps its place
    cli, err = run_cli(["scm", "-m", mlm.path, "--threads", "1", "--max-length", "256", "-"],
                       triplets, ok=False)
    got = mlm.scm(triplets, max_length=256, errors="skip")
    assert got[3] is None and "error" in cli[3]
    same([g for i, g in enumerate(got) if i != 3], [c for i, c in enumerate(cli) if i != 3])
    # each distinct document embedded once, as the CLI counts them
    assert "%d distinct documents embedded" % mlm.last_scm_documents in err
    with pytest.raises(roformer.Error) as e:
        mlm.scm(triplets, max_length=256)
    assert e.value.index == 3 and e.value.message == cli[3]["error"] == 'missing "C"'


def test_scm_pair_matches_cli(cls):
    triplets = scm_lines(70)
    cli, _ = run_cli(["scm", "-m", cls.path, "--threads", "1", "--mode", "pair",
                      "--max-length", "128", "-"], triplets)
    same(cls.scm(triplets, mode="pair", max_length=128), cli)


def test_fill_mask_matches_cli(mlm):
    texts = ["北京是[MASK]国的首都", "今天[MASK]气很[MASK]", "[MASK]"]
    cli, _ = run_cli(["fill-mask", "-m", mlm.path, "--threads", "1", "--top-k", "3"], texts)
    same(mlm.fill_mask(texts, top_k=3), cli)
    one, _ = run_cli(["fill-mask", "-m", mlm.path, "--threads", "1"], texts[:1])
    same(mlm.fill_mask(texts[0]), one[0])


def test_ner_matches_cli():
    with roformer.Model(model_dir("tiny-char-proj"), threads=1) as m:
        texts = ["张三在北京工作", "李四去了上海。"] + data_lines("cmrc2018_wiki_paragraphs/paragraphs.txt", 3)
        cli, _ = run_cli(["ner", "-m", m.path, "--threads", "1", "--max-length", "256"], texts)
        with roformer.Model(m.path, threads=1, max_length=256) as m256:
            same(m256.ner(texts), cli)
        for e in cli[0]["entities"]:
            assert texts[0][e["start"]:e["end"]] == e["text"]


def test_qa_matches_cli():
    with roformer.Model(model_dir("tiny-qa"), threads=1) as m:
        ctx = data_lines("cail2019_cjrc_legal_paragraphs/paragraphs.txt", 4)
        qs = ["被告人在哪里？", "原告是谁？", "发生了什么？", "多少钱？"]
        lines = [{"question": q, "context": c} for q, c in zip(qs, ctx)]
        cli, _ = run_cli(["qa", "-m", m.path, "--threads", "1", "--doc-stride", "64",
                          "--max-length", "128"], lines)
        with roformer.Model(m.path, threads=1, max_length=128) as m128:
            same(m128.qa(qs, ctx, doc_stride=64), cli)
        one, _ = run_cli(["qa", "-m", m.path, "--threads", "1"], lines[:1])
        same(m.qa(qs[0], ctx[0]), one[0])


def test_tokenize_matches_cli_and_reference(cls):
    texts = TEXTS + [("房间很大", "早餐一般")]
    lines = TEXTS + [{"text": "房间很大", "text_pair": "早餐一般"}]
    for max_length in (None, 6):
        args = ["tokenize", "-m", cls.path] + (["--max-length", str(max_length)] if max_length else [])
        cli, _ = run_cli(args, lines)
        got = cls.tokenize(texts, max_length=max_length, return_tokens=True)
        same(got, {k: [c[k] for c in cli] for k in cli[0]})
    ref = cases("tiny-word-cls")[0]
    one = cls.tokenize(ref["text"])
    assert one["input_ids"] == ref["input_ids"][0] and one["attention_mask"] == ref["attention_mask"][0]
    padded = cls.tokenize(["好", "今天天气很好"], padding=True)
    assert padded["input_ids"][0][3:] == [0] * 5 and padded["attention_mask"][0] == [1] * 3 + [0] * 5


# ==== forward against the CLI and against HF ====

def max_abs_diff(a, want):
    """The largest |a - want|: NaN when either holds a NaN, or the same Inf
    (Inf - Inf), which fails every bound; Inf for an Inf in one of them."""
    with np.errstate(invalid="ignore"):
        return float(np.max(np.abs(a - want))) if a.size else 0.0


def tolerance(head, out):
    """The reference README's: 5e-4 for MLM logits (values up to +-22), 1e-4
    for every other output, classification, token and QA logits included."""
    return 5e-4 if head == "mlm" and out in ("logits", "logits_at") else 1e-4


def test_max_abs_diff_fails_on_nan_and_inf():
    with roformer.Model(model_dir("tiny-word-cls"), threads=1) as m:
        want = m.forward(**m.tokenize("今天天气很好"))["last_hidden_state"]
    assert max_abs_diff(want.copy(), want) == 0.0
    for bad_got, bad_want in ((np.nan, None), (None, np.nan), (np.nan, np.nan), (np.inf, None),
                              (np.inf, np.inf), (-np.inf, -np.inf), (np.inf, -np.inf)):
        a, w = want.copy(), want.copy()
        if bad_got is not None:
            a[1, 3] = bad_got
        if bad_want is not None:
            w[1, 3] = bad_want
        d = max_abs_diff(a, w)
        assert not d <= 1e-4, (bad_got, bad_want, d)


@pytest.mark.parametrize("name", MODELS)
def test_forward_matches_reference_and_cli(name):
    expected = read_safetensors(model_dir(name) + "/expected.safetensors")
    with roformer.Model(model_dir(name), threads=1) as m:
        for case in cases(name):
            kw = {k: case[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
            pos = expected.get(case["id"] + ".logits_at_positions")
            hidden = any(o.startswith("hidden_states.") for o in case["outputs"])
            got = m.forward(**kw, hidden_states=hidden,
                            output_positions=None if pos is None else pos.tolist())
            for out in case["outputs"]:
                if out == "logits_at_positions":
                    continue
                if out.startswith("hidden_states."):
                    a = got["hidden_states"][int(out.split(".")[1])]
                else:
                    a = got[out]
                want = expected[case["id"] + "." + out]
                assert a.shape == want.shape, (case["id"], out)
                diff, tol = max_abs_diff(a, want), tolerance(m.info["head"], out)
                assert diff <= tol, "%s %s max |diff| %g > %g" % (case["id"], out, diff, tol)
            line = dict(kw)
            if pos is not None:
                line["output_positions"] = pos.tolist()
            args = ["forward", "-m", m.path, "--threads", "1"] + (["--hidden-states"] if hidden else [])
            cli, _ = run_cli(args, [line])
            for k, v in cli[0].items():
                assert np.array_equal(got[k], np.array(v, dtype=np.float32)), (case["id"], k)
            assert set(cli[0]) == set(got)


def test_forward_flat_and_heads(mlm):
    ids = mlm.tokenize("北京是[MASK]国的首都")
    out = mlm.forward(**ids, head="none")
    assert set(out) == {"last_hidden_state"} and out["last_hidden_state"].shape == (
        len(ids["input_ids"]), mlm.hidden_size)
    full = mlm.forward(ids["input_ids"], hidden_states=True)
    assert full["logits"].shape == (len(ids["input_ids"]), mlm.info["vocab_size"])
    assert full["hidden_states"].shape[0] == mlm.info["num_layers"] + 1
    assert np.array_equal(full["hidden_states"][-1], full["last_hidden_state"])
    with pytest.raises(roformer.Error, match="head"):
        mlm.forward(ids["input_ids"], head="qa")
