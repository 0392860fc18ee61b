"""sentence-transformers folders: `roformer convert` reads modules.json,
1_Pooling/config.json, sentence_bert_config.json and
config_sentence_transformers.json; `embed`, `info` and roformer.Model use
what they say. Checked against the pooling written here in numpy from
sentence-transformers' definitions, over HF's own hidden states
(expected.safetensors of the reference model)."""

import json
import os
import subprocess

import numpy as np
import pytest

import roformer
from conftest import CLI, cases, model_dir, read_safetensors, run_cli

BASE = "tiny-word-cls"
MODES = {"cls": "pooling_mode_cls_token", "mean": "pooling_mode_mean_tokens",
         "max": "pooling_mode_max_tokens", "last": "pooling_mode_lasttoken"}
# HF hidden states vs the engine's: the reference README's 1e-4. Pooling
# adds at most that (a mean or a max of values each within it); a unit
# vector's components move by at most 2 x 1e-4 / |v|, and |v| > 1 here.
TOL = 2e-4


def st_folder(tmp, mode, normalize=False, sbert=None, prompts=None, modules=None,
              pooling_extra=None):
    """A sentence-transformers folder over the reference model's files."""
    d = os.path.join(tmp, "st-%s-%d-%d" % (mode, normalize, len(os.listdir(tmp))))
    os.makedirs(os.path.join(d, "1_Pooling"))
    src = model_dir(BASE)
    for f in os.listdir(src):
        if f not in ("cases.jsonl", "expected.safetensors"):
            os.symlink(os.path.abspath(os.path.join(src, f)), os.path.join(d, f))
    mods = [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
            {"idx": 1, "name": "1", "path": "1_Pooling",
             "type": "sentence_transformers.models.Pooling"}]
    if normalize:
        mods.append({"idx": 2, "name": "2", "path": "2_Normalize",
                     "type": "sentence_transformers.models.Normalize"})
    pool = {"word_embedding_dimension": 32, "include_prompt": True}
    pool.update({key: m == mode for m, key in MODES.items()})
    pool.update(pooling_extra or {})
    files = {"modules.json": mods if modules is None else modules,
             "1_Pooling/config.json": pool}
    if sbert is not None:
        files["sentence_bert_config.json"] = sbert
    if prompts is not None:
        files["config_sentence_transformers.json"] = prompts
    for name, obj in files.items():
        with open(os.path.join(d, name), "w", encoding="utf-8") as f:
            f.write(obj if isinstance(obj, str) else json.dumps(obj, ensure_ascii=False))
    return d


def convert(folder, ok=True):
    out = folder + ".gguf"
    p = subprocess.run([CLI, "convert", folder, "-o", out], capture_output=True, timeout=120)
    if ok:
        assert p.returncode == 0, p.stderr.decode()
        return out
    assert p.returncode != 0 and not os.path.exists(out)
    return p.stderr.decode()


def pool(hidden, mask, mode):
    """sentence-transformers' Pooling over one sequence's hidden states."""
    real = hidden[np.asarray(mask) == 1].astype(np.float64)
    if mode == "cls":
        return real[0]
    if mode == "mean":
        return real.sum(axis=0) / len(real)
    if mode == "max":
        return real.max(axis=0)
    return real[-1]  # lasttoken: the last token the mask keeps


def reference_inputs():
    """(CLI input line, HF hidden states, mask) for every reference input
    of one text or pair without a max_length."""
    expected = read_safetensors(model_dir(BASE) + "/expected.safetensors")
    out = []
    for c in cases(BASE):
        if "max_length" in c:
            continue
        hidden = expected[c["id"] + ".last_hidden_state"]
        texts = c.get("texts") or [c["text"]]
        for b, text in enumerate(texts):
            line = {"text": text}
            if c.get("text_pair"):
                line["text_pair"] = c["text_pair"]
            out.append((line, hidden[b], c["attention_mask"][b]))
    return out


@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("normalize", [False, True])
def test_embed_pools_as_the_folder_says(tmp_path, mode, normalize):
    gguf = convert(st_folder(str(tmp_path), mode, normalize))
    inputs = reference_inputs()
    got, _ = run_cli(["embed", "-m", gguf, "--threads", "1"], [i[0] for i in inputs])
    for (line, hidden, mask), g in zip(inputs, got):
        want = pool(hidden, mask, mode)
        if normalize:
            want = want / np.linalg.norm(want)
        diff = np.max(np.abs(np.array(g["embedding"]) - want))
        assert diff <= TOL, "%s %s: max |diff| %g" % (mode, line, diff)
    # --pooling and --no-normalize still choose
    cls, _ = run_cli(["embed", "-m", gguf, "--threads", "1", "--pooling", "cls",
                      "--no-normalize"], [inputs[0][0]])
    want = pool(inputs[0][1], inputs[0][2], "cls")
    assert np.max(np.abs(np.array(cls[0]["embedding"]) - want)) <= TOL


def test_max_seq_length_truncates(tmp_path):
    c = next(c for c in cases(BASE) if "max_length" in c)
    hidden = read_safetensors(model_dir(BASE) + "/expected.safetensors")[c["id"] +
                                                                          ".last_hidden_state"]
    gguf = convert(st_folder(str(tmp_path), "mean", sbert={"max_seq_length": c["max_length"],
                                                           "do_lower_case": False}))
    got, _ = run_cli(["embed", "-m", gguf], [{"text": c["text"]}])  # the text has line breaks
    want = pool(hidden[0], c["attention_mask"][0], "mean")
    assert np.max(np.abs(np.array(got[0]["embedding"]) - want)) <= TOL
    with roformer.Model(gguf) as m:
        assert m.max_length == c["max_length"]
        assert np.array_equal(m.encode(c["text"]), np.float32(got[0]["embedding"]))
    p = subprocess.run([CLI, "info", "-m", gguf], capture_output=True, timeout=60)
    assert ("sentence-transformers: pooling mean, normalize false, max_seq_length %d, "
            "do_lower_case false, default prompt none" % c["max_length"]) in p.stdout.decode()


def test_prompts(tmp_path):
    prompts = {"__version__": {"sentence_transformers": "3.0.1"},
               "prompts": {"query": "查询：", "passage": ""}, "default_prompt_name": "query",
               "similarity_fn_name": "cosine"}
    gguf = convert(st_folder(str(tmp_path), "mean", prompts=prompts))
    plain = convert(st_folder(str(tmp_path), "mean"))
    texts = ["今天天气很好", "北京是中国的首都"]
    want, _ = run_cli(["embed", "-m", plain], ["查询：" + t for t in texts])
    bare, _ = run_cli(["embed", "-m", plain], texts)
    assert run_cli(["embed", "-m", gguf], texts)[0] == want  # the default prompt
    assert run_cli(["embed", "-m", gguf, "--prompt-name", "query"], texts)[0] == want
    assert run_cli(["embed", "-m", gguf, "--prompt-name", "passage"], texts)[0] == bare
    assert run_cli(["embed", "-m", gguf, "--prompt", "查询："], texts)[0] == want
    p = subprocess.run([CLI, "embed", "-m", gguf, "--prompt-name", "doc", "x"],
                       capture_output=True, timeout=60)
    assert p.returncode == 2 and b"'doc': the model has no such prompt" in p.stderr
    with roformer.Model(gguf) as m:
        assert m.prompts == {"query": "查询：", "passage": ""}
        assert m.default_prompt_name == "query"
        assert m.info["sentence_transformers"] == {
            "pooling": "mean", "normalize": False, "max_seq_length": None,
            "do_lower_case": False, "prompts": {"query": "查询：", "passage": ""},
            "default_prompt_name": "query"}
        assert np.array_equal(m.encode(texts), np.float32([w["embedding"] for w in want]))
        assert np.array_equal(m.encode(texts, prompt_name="passage"),
                              np.float32([w["embedding"] for w in bare]))


def test_python_uses_pooling_and_normalize(tmp_path):
    gguf = convert(st_folder(str(tmp_path), "max", normalize=True))
    texts = ["今天天气很好", "北京是中国的首都"]
    cli, _ = run_cli(["embed", "-m", gguf], texts)
    with roformer.Model(gguf) as m:
        got = m.encode(texts)
        assert np.array_equal(got, np.float32([c["embedding"] for c in cli]))
        # the Normalize module runs before truncate_dim, as in sentence-transformers
        assert np.array_equal(m.encode(texts, truncate_dim=4), got[:, :4])


@pytest.mark.parametrize("change, message", [
    ({"pooling_extra": {"include_prompt": False}}, "'include_prompt' false"),
    ({"pooling_extra": {"pooling_mode_mean_sqrt_len_tokens": True, "pooling_mode_mean_tokens": False}},
     "'pooling_mode_mean_sqrt_len_tokens' is not supported"),
    ({"pooling_extra": {"pooling_mode_max_tokens": True}}, "2 pooling modes are true"),
    ({"pooling_extra": {"word_embedding_dimension": 768}}, "must be the hidden size 32"),
    ({"pooling_extra": {"pooling_mode_cls_token": "yes"}}, "'pooling_mode_cls_token' must be true or false"),
    ({"modules": [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                  {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"},
                  {"idx": 2, "name": "2", "path": "2_Dense", "type": "sentence_transformers.models.Dense"}]},
     "module 2 'sentence_transformers.models.Dense' is not supported"),
    ({"modules": [{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
                  {"idx": 1, "name": "1", "path": "../1_Pooling", "type": "sentence_transformers.models.Pooling"}]},
     "is not a folder inside the model's"),
    ({"modules": "[{"}, "not a JSON list of modules"),
    ({"sbert": {"max_seq_length": 100000}}, "'max_seq_length' must be an integer from 2"),
    ({"sbert": {"max_seq_length": 16, "do_lower_case": "no"}}, "'do_lower_case' must be true or false"),
    ({"prompts": {"prompts": {"query": 3}}}, "prompt 'query' must be a string"),
    ({"prompts": {"prompts": {"query": "q: "}, "default_prompt_name": "doc"}},
     "'default_prompt_name' 'doc' is not one of 'prompts'"),
    ({"prompts": "[]"}, "not a JSON object"),
])
def test_bad_folders_are_refused(tmp_path, change, message):
    err = convert(st_folder(str(tmp_path), "mean", **change), ok=False)
    assert message in err and err.count("\n") == 1, err


def test_missing_pooling_config(tmp_path):
    d = st_folder(str(tmp_path), "mean")
    os.remove(os.path.join(d, "1_Pooling", "config.json"))
    assert "1_Pooling/config.json: cannot open" in convert(d, ok=False)


def test_folder_loads_directly(tmp_path):
    d = st_folder(str(tmp_path), "last", normalize=True)
    with roformer.Model(d) as m:
        assert m.info["sentence_transformers"]["pooling"] == "last"
    with roformer.Model(model_dir(BASE)) as m:
        assert m.info["sentence_transformers"] is None and m.prompts == {}


def post(url, path, body):
    import urllib.request
    req = urllib.request.Request(url + path, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def test_serve_uses_the_folder(tmp_path):
    import re
    import time
    prompts = {"prompts": {"query": "查询："}, "default_prompt_name": "query"}
    gguf = convert(st_folder(str(tmp_path), "max", normalize=True,
                             sbert={"max_seq_length": 24}, prompts=prompts))
    texts = ["今天天气很好", "北京是中国的首都"]
    want, _ = run_cli(["embed", "-m", gguf, "--threads", "1"], texts)  # the default prompt
    log = open(os.path.join(str(tmp_path), "serve.log"), "w+")
    p = subprocess.Popen(["timeout", "120", CLI, "serve", "-m", gguf, "--port", "0",
                          "--threads", "1"], stderr=log)
    try:
        url = None
        for _ in range(600):
            log.seek(0)
            m = re.search(r"listening on (http://127\.0\.0\.1:\d+)", log.read())
            if m:
                url = m.group(1)
                break
            time.sleep(0.1)
        assert url, "the server did not start"
        import urllib.request
        with urllib.request.urlopen(url + "/info", timeout=60) as r:
            info = json.loads(r.read())
        assert info["pooling"] == "max" and info["max_input_length"] == 24
        got = post(url, "/embed", {"inputs": texts})
        # the server normalizes each row after pooling, the CLI inside rf_embed: the
        # same rf_l2_normalize on the same pooled floats
        assert np.array_equal(np.float32(got), np.float32([w["embedding"] for w in want]))
        got = post(url, "/v1/embeddings", {"input": texts, "model": "m"})
        assert np.array_equal(np.float32([d["embedding"] for d in got["data"]]),
                              np.float32([w["embedding"] for w in want]))
    finally:
        p.terminate()
        p.wait(timeout=30)
        log.close()
