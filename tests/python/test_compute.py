"""Model(compute=...) against the CLI's --compute: compute="int8" gives the
CLI's `--compute int8` float32 numbers to the last bit (encode, classify,
forward) and not the f32 ones, so the option is in effect; a CPU without a
compute type's instructions gets the library's own refusal at load, the
line the CLI prints."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

import roformer
from conftest import MODELS, cases, cpu_has, data_lines, model_dir, read_safetensors, run_cli

# the /proc/cpuinfo flag each compute type needs, and the word the library's
# refusal names it by
NEEDS = {"int8": ("avx2", "AVX2"), "bf16": ("avx512_bf16", "AVX512_BF16")}


def int8_model(name, **kw):
    path = model_dir(name)
    if not cpu_has("avx2"):
        pytest.skip('this CPU has no AVX2: compute="int8" is refused (checked on its own)')
    return roformer.Model(path, threads=1, compute="int8", **kw)


def f32_model(name, **kw):
    return roformer.Model(model_dir(name), threads=1, **kw)


def cosines(a, b):
    """Row-wise cosine of two float32 arrays of vectors."""
    a, b = a.reshape(-1, a.shape[-1]).astype(np.float64), b.reshape(-1, b.shape[-1]).astype(np.float64)
    return np.sum(a * b, 1) / np.linalg.norm(a, axis=1) / np.linalg.norm(b, axis=1)


def test_cosine_checks_fail_on_nan_and_inf(tmp_path):
    """cosines() here and `vectors.py close` (the shell tests') fail a vector
    holding a NaN or an Inf, in one file or the same value in both."""
    with f32_model("tiny-word-mlm") as m:
        want = m.encode(["今天天气很好", "北京是中国的首都"], pooling="mean")
    vectors = [sys.executable, os.path.join(os.path.dirname(__file__), "..", "vectors.py"), "close",
               "0.995"]

    def write(path, rows):
        path.write_text("".join(json.dumps({"embedding": r.tolist()}) + "\n" for r in rows))
        return str(path)

    def close(a, b):
        run = subprocess.run(vectors + [write(tmp_path / "a", a), write(tmp_path / "b", b)],
                             capture_output=True, timeout=60)
        return run.returncode == 0

    assert cosines(want, want).min() >= 0.995 and close(want, want)
    for bad in (np.nan, np.inf, -np.inf):
        got = want.copy()
        got[1, 5] = bad
        with np.errstate(invalid="ignore"):
            assert not cosines(got, want).min() >= 0.995, bad
            assert not cosines(got, got).min() >= 0.995, bad
        assert not close(got, want) and not close(want, got) and not close(got, got), bad


# ==== loading ====

@pytest.mark.parametrize("compute", sorted(NEEDS))
def test_compute_loads_or_is_refused_with_the_librarys_message(compute):
    path = model_dir("tiny-word-cls")
    flag, word = NEEDS[compute]
    if cpu_has(flag):
        with roformer.Model(path, threads=1, compute=compute) as m:
            assert m.compute == compute and m.classify("很好")[0]["label"] in m.labels
        return
    with pytest.raises(roformer.Error) as e:
        roformer.Model(path, threads=1, compute=compute)
    assert e.value.status == "unsupported" and word in e.value.message
    _, err = run_cli(["classify", "-m", path, "--compute", compute], ["很好"], ok=False)
    assert "error: " + e.value.message in err  # the CLI's line, word for word


def test_unknown_compute_is_a_value_error():
    with pytest.raises(ValueError, match='"f32", "bf16" or "int8"'):
        roformer.Model(model_dir("tiny-word-cls"), compute="int4")


# ==== int8 against the CLI ====

def test_int8_encode_matches_cli():
    texts = [line.split("\t")[0] for line in data_lines("thucnews_titles/dev.txt", 150)]
    with int8_model("tiny-word-mlm") as m, f32_model("tiny-word-mlm") as m32:
        cli, _ = run_cli(["embed", "-m", m.path, "--threads", "1", "--batch-size", "32",
                          "--pooling", "mean", "--compute", "int8"], texts)
        got = m.encode(texts, pooling="mean")
        want = np.array([c["embedding"] for c in cli], dtype=np.float32)
        assert got.dtype == np.float32 and np.array_equal(got, want)
        f32 = m32.encode(texts, pooling="mean")
    assert not np.array_equal(got, f32), "int8 gave the f32 numbers: not in effect"
    # the 0.995 test_int8 asks of every token's hidden state (these stay above 0.9996)
    assert cosines(got, f32).min() >= 0.995


def test_int8_classify_matches_cli():
    texts = ["今天天气很好", "这家酒店服务很好，房间也很大", ""] + data_lines("chnsenticorp/dev.tsv", 90)[1:]
    with int8_model("tiny-word-cls") as m, f32_model("tiny-word-cls") as m32:
        cli, _ = run_cli(["classify", "-m", m.path, "--threads", "1", "--compute", "int8"], texts)
        got = m.classify(texts, top_k=None)
        f32 = m32.classify(texts, top_k=None)
    assert len(got) == len(cli) == len(texts) > 64  # more than one chunk
    scores = [[np.float32(s["score"]) for s in g] for g in got]
    for g, c in zip(got, cli):
        assert [(s["label"], np.float32(s["score"])) for s in g] == [
            (k, np.float32(v)) for k, v in c["scores"].items()]
    assert scores != [[np.float32(s["score"]) for s in g] for g in f32], "int8 not in effect"


@pytest.mark.parametrize("name", MODELS)
def test_int8_forward_matches_cli(name):
    expected = read_safetensors(model_dir(name) + "/expected.safetensors")
    differs = False
    with int8_model(name) as m, f32_model(name) as m32:
        for case in cases(name):
            kw = {k: case[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
            pos = expected.get(case["id"] + ".logits_at_positions")
            hidden = any(o.startswith("hidden_states.") for o in case["outputs"])
            opts = {"hidden_states": hidden,
                    "output_positions": None if pos is None else pos.tolist()}
            got = m.forward(**kw, **opts)
            line = dict(kw)
            if pos is not None:
                line["output_positions"] = pos.tolist()
            args = ["forward", "-m", m.path, "--threads", "1", "--compute", "int8"]
            cli, _ = run_cli(args + (["--hidden-states"] if hidden else []), [line])
            assert set(cli[0]) == set(got)
            for k, v in cli[0].items():
                assert np.array_equal(got[k], np.array(v, dtype=np.float32)), (case["id"], k)
            f32 = m32.forward(**kw, **opts)["last_hidden_state"]
            differs |= not np.array_equal(got["last_hidden_state"], f32)
    assert differs, "int8 gave the f32 numbers on every case: not in effect"
