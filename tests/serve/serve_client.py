"""serve_client.py SUITE URL ROFORMER MODEL [ARGS...] — talks to a running
`roformer serve` on 127.0.0.1 with Python's requests, urllib and raw sockets,
and prints one line per check: "ok WHAT" or "FAIL WHAT: detail". Expected
numbers come from the `roformer` CLI run on the same model (ROFORMER), never
from the server. tests/serve/test_serve.sh starts the servers and counts the lines.

Suites: cls (every TEI/OpenAI route and error code on a classifier),
openai (dimensions, token-id inputs, OpenAI's error shape, /embeddings),
tei (/embed_all, /decode, x-* headers, te_* metrics, HF text-classification),
mlm (/fill-mask, /embed pooler), hf_mlm and hf_ner (HuggingFace's fill-mask
and token-classification shapes), ner, qa, limits (401, 413, 429 on a server
started with small limits), cors (--cors-allow-origin, --max-batch-requests),
batching (--max-batch-tokens 64), cors_any (--cors-allow-origin '*'), ipv6
(--host ::1), cli_bytes FLAGS... (a server started with the CLI flags FLAGS:
its vectors are the CLI's bytes), shutdown PID SIGNAL (SIGTERM or SIGINT
with requests in flight); rerank, reranker, rerank_cosine and
similarity_prompt are in serve_rerank_client.py.

Nothing here waits on a sleep: where a check needs the server in some state
(a request holding the only slot, jobs queued behind a running batch, the
listener closed), it polls GET /metrics for that state, with a deadline."""
import base64
import json
import os
import signal
import socket
import struct
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request

import requests

TOL = 1e-5
SENTENCES = ["今天天气很好", "这家酒店的服务很差，房间也很脏", "我们明天去北京", "价格便宜，性价比高",
             "hello world 你好", "房间很大，早餐不错", "不推荐", "还可以吧，一般般"]


def report(what, ok, detail=""):
    print(("ok %s" % what) if ok else ("FAIL %s: %s" % (what, detail)), flush=True)
    return ok


def cli(roformer, model, cmd, lines, *args):
    """Runs a job command on JSON lines; returns its output objects."""
    inp = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    out = subprocess.run([roformer, cmd, "-m", model, "--no-progress", *args], input=inp.encode(),
                         stdout=subprocess.PIPE, check=True, timeout=120).stdout.decode()
    return [json.loads(l) for l in out.splitlines()]


def forward(roformer, model, lines):
    """`roformer forward` on JSON lines: one output object per line."""
    inp = "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    out = subprocess.run([roformer, "forward", "-m", model], input=inp.encode(),
                         stdout=subprocess.PIPE, check=True, timeout=120).stdout.decode()
    return [json.loads(l) for l in out.splitlines()]


def close(a, b):
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return abs(a - b) <= TOL
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close(a[k], b[k]) for k in a)
    return a == b


def maxdiff(a, b):
    """The largest |a[i] - b[i]|, or NaN when any difference is NaN (a null,
    NaN or Inf from the server): max() keeps NaN only when it comes first, so
    it is looked for, and a NaN fails every `<= TOL` it meets."""
    diffs = [abs(x - y) for x, y in zip(a, b)]
    return float("nan") if any(d != d for d in diffs) else max(diffs, default=0.0)


def post(url, path, body, **kw):
    return requests.post(url + path, json=body, timeout=60, **kw)


def concurrently(n, fn, timeout=60):
    """Runs fn(i) for i in range(n), each on its own thread, waiting at most
    `timeout` seconds for each; returns what they raised (as repr)."""
    errors = []

    def run(i):
        try:
            fn(i)
        except Exception as e:  # noqa: BLE001 - returned to the caller
            errors.append(repr(e))
    threads = [threading.Thread(target=run, args=(i,)) for i in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout)
    return errors


def metrics(url, headers=None):
    """GET /metrics as {series: value}, a series being the name with its labels."""
    text = requests.get(url + "/metrics", headers=headers or {}, timeout=10).text
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            out[series] = float(value)
    return out


def wait_for(cond, timeout=60):
    """Polls cond() every 5 ms until it is true or `timeout` seconds have
    passed; returns whether it became true."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def error_is(r, status, what, field=None):
    try:
        j = r.json()
    except ValueError:
        return report(what, False, "status %d, body not JSON: %r" % (r.status_code, r.text[:100]))
    ok = (r.status_code == status and isinstance(j.get("error"), str) and
          isinstance(j.get("error_type"), str) and (field is None or field in j["error"]))
    return report(what, ok, "status %d, body %s" % (r.status_code, r.text[:200]))


# ==== cls: a sequence classifier; every TEI / OpenAI route and error ====

def suite_cls(url, roformer, model):
    r = requests.get(url + "/health", timeout=10)
    report("GET /health is 200", r.status_code == 200, r.status_code)
    info = requests.get(url + "/info", timeout=10).json()
    report("GET /info: labels, dims, limits, version",
           info.get("labels") == ["negative", "neutral", "positive"] and info.get("hidden_size") == 32
           and info.get("max_client_batch_size") == 32 and info.get("max_input_length") == 40
           and isinstance(info.get("version"), str), info)
    config = json.load(open(os.path.join(model, "config.json")))
    tei = {"model_id": os.path.basename(model), "model_sha": None, "model_dtype": "float32",
           "model_type": {"classifier": {"id2label": config["id2label"], "label2id": config["label2id"]}},
           "max_concurrent_requests": 512, "max_input_length": 40, "max_batch_tokens": 16384,
           "max_batch_requests": None, "max_client_batch_size": 32}
    report("GET /info: TEI's fields, model_type with config.json's id2label and label2id",
           all(info.get(k, "absent") == v for k, v in tei.items()) and
           isinstance(info.get("tokenization_workers"), int) and info.get("head") == "cls",
           {k: info.get(k, "absent") for k in tei})

    # /predict: one text, one pair, a batch mixing both
    exp = cli(roformer, model, "classify", [{"text": s} for s in SENTENCES])
    def as_tei(e):
        return [{"label": k, "score": v} for k, v in e["scores"].items()]
    r = post(url, "/predict", {"inputs": SENTENCES[0]})
    report("/predict one text: all labels, best first, equal to the CLI",
           r.status_code == 200 and close(r.json(), as_tei(exp[0])), r.text[:300])
    r = post(url, "/predict", {"inputs": [[s] for s in SENTENCES]})
    report("/predict batch: a list per input, equal to the CLI",
           r.status_code == 200 and close(r.json(), [as_tei(e) for e in exp]), r.text[:300])
    pair_exp = cli(roformer, model, "classify", [{"text": SENTENCES[0], "text_pair": SENTENCES[1]}])
    r = post(url, "/predict", {"inputs": [SENTENCES[0], SENTENCES[1]]})
    report("/predict [a, b] is one pair, equal to the CLI's text_pair",
           r.status_code == 200 and close(r.json(), as_tei(pair_exp[0])), r.text[:300])
    r = post(url, "/predict", {"inputs": [[SENTENCES[2]], [SENTENCES[0], SENTENCES[1]]]})
    report("/predict batch of a text and a pair",
           r.status_code == 200 and close(r.json(), [as_tei(exp[2]), as_tei(pair_exp[0])]), r.text[:300])

    # raw_scores: the head's logits, as `roformer forward` prints them, all
    # labels (config.json's id2label), best first
    id2label = json.load(open(os.path.join(model, "config.json")))["id2label"]
    def as_raw(logits):
        order = sorted(range(len(logits)), key=lambda k: -logits[k])
        return [{"label": id2label[str(k)], "score": logits[k]} for k in order]
    fwd = forward(roformer, model, [{"text": s} for s in SENTENCES[:3]] +
                  [{"text": SENTENCES[0], "text_pair": SENTENCES[1]}])
    raw_exp = [as_raw(f["logits"]) for f in fwd]
    r = post(url, "/predict", {"inputs": SENTENCES[0], "raw_scores": True})
    report("/predict raw_scores: the logits of `roformer forward`, best first",
           r.status_code == 200 and close(r.json(), raw_exp[0]) and
           any(p["score"] < 0 for p in r.json()), r.text[:300])
    r = post(url, "/predict", {"inputs": [[s] for s in SENTENCES[:3]] + [[SENTENCES[0], SENTENCES[1]]],
                               "raw_scores": True})
    report("/predict raw_scores batch of texts and a pair: `roformer forward`'s logits",
           r.status_code == 200 and close(r.json(), raw_exp), r.text[:300])
    error_is(post(url, "/predict", {"inputs": "x", "raw_scores": "yes"}), 422,
             "raw_scores of the wrong type is 422 naming it", "raw_scores")

    # /embed, /v1/embeddings, /similarity
    raw = [e["embedding"] for e in cli(roformer, model, "embed", [{"text": s} for s in SENTENCES])]
    norm = [e["embedding"] for e in cli(roformer, model, "embed", [{"text": s} for s in SENTENCES],
                                        "--normalize")]
    r = post(url, "/embed", {"inputs": SENTENCES})
    got = r.json() if r.status_code == 200 else []
    report("/embed batch (normalize default true) equals `roformer embed --normalize`",
           len(got) == len(norm) and all(maxdiff(a, b) <= TOL for a, b in zip(got, norm)),
           r.text[:200])
    r = post(url, "/embed", {"inputs": SENTENCES[1], "normalize": False})
    got = r.json() if r.status_code == 200 else [[]]
    report("/embed one text, normalize false: [[floats]] equal to `roformer embed`",
           len(got) == 1 and len(got[0]) == 32 and maxdiff(got[0], raw[1]) <= TOL, r.text[:200])
    toks = [len(json.loads(l)["input_ids"]) for l in subprocess.run(
        [roformer, "tokenize", "-m", model], input="\n".join(SENTENCES[:3]).encode() + b"\n",
        stdout=subprocess.PIPE, check=True).stdout.decode().splitlines()]
    r = post(url, "/v1/embeddings", {"input": SENTENCES[:3], "model": "my-model"})
    j = r.json()
    ok = (r.status_code == 200 and j.get("object") == "list" and j.get("model") == "my-model" and
          j.get("usage") == {"prompt_tokens": sum(toks), "total_tokens": sum(toks)} and
          [d["index"] for d in j["data"]] == [0, 1, 2] and
          all(d["object"] == "embedding" and maxdiff(d["embedding"], norm[i]) <= TOL
              for i, d in enumerate(j["data"])))
    report("/v1/embeddings: OpenAI's shape, usage = the CLI's token counts, normalized vectors",
           ok, r.text[:300])
    r = post(url, "/v1/embeddings", {"input": SENTENCES[0], "encoding_format": "base64"})
    j = r.json()
    vec = list(struct.unpack("<32f", base64.b64decode(j["data"][0]["embedding"]))) \
        if r.status_code == 200 else []
    report("/v1/embeddings base64: little-endian float32 bytes of the same vector",
           len(vec) == 32 and maxdiff(vec, norm[0]) <= TOL and j.get("model") == os.path.basename(model),
           r.text[:200])
    sim = cli(roformer, model, "similarity", [{"text_a": SENTENCES[0], "text_b": s} for s in SENTENCES[1:4]])
    r = post(url, "/similarity", {"inputs": {"source_sentence": SENTENCES[0], "sentences": SENTENCES[1:4]}})
    report("/similarity equals `roformer similarity` per sentence",
           r.status_code == 200 and close(r.json(), [s["cosine"] for s in sim]), r.text[:200])
    # windows: "window" / "stride" as `roformer embed --window N --stride S`
    long_text = "今天天气很好，我们去公园散步。" * 20
    want = cli(roformer, model, "embed", [{"text": long_text}], "--normalize", "--window", "32",
               "--stride", "8")[0]["embedding"]
    r = post(url, "/embed", {"inputs": long_text, "window": 32, "stride": 8})
    report("/embed with window 32, stride 8 equals `roformer embed --window 32 --stride 8`",
           r.status_code == 200 and maxdiff(r.json()[0], want) <= TOL, r.text[:200])
    error_is(post(url, "/embed", {"inputs": long_text}), 422,
             "/embed without window: the long text is over --max-input-length, 422", "tokens")
    error_is(post(url, "/embed", {"inputs": "x", "window": 32, "stride": 30}), 422,
             "/embed stride >= window - 2: 422", "stride")
    error_is(post(url, "/embed", {"inputs": "x", "stride": 3}), 422,
             "/embed stride without window: 422", "stride")
    error_is(post(url, "/embed", {"inputs": "x", "window": 2}), 422, "/embed window 2: 422", "window")
    error_is(post(url, "/embed", {"inputs": "x", "window": 1 << 19}), 422,
             "/embed window over --max-input-length: 422", "window")
    scm_in = [{"A": SENTENCES[0], "B": SENTENCES[5], "C": SENTENCES[6]},
              {"A": SENTENCES[1], "B": SENTENCES[2], "C": SENTENCES[3]},
              {"A": SENTENCES[0], "B": SENTENCES[5], "C": SENTENCES[6]}]
    scm = cli(roformer, model, "scm", scm_in, "--threads", "2", "-")
    r = post(url, "/scm", {"inputs": scm_in})
    # both run rf_scm on the same triplets with the same pipeline options: the same bits
    report("/scm equals `roformer scm` exactly", r.status_code == 200 and r.json() == scm,
           r.text[:200])

    # /tokenize: TEI's token list; character offsets; add_special_tokens
    text = "今天天气很好 hello"
    exp_t = json.loads(subprocess.run([roformer, "tokenize", "-m", model], input=text.encode() + b"\n",
                                      stdout=subprocess.PIPE, check=True).stdout)
    r = post(url, "/tokenize", {"inputs": text})
    j = r.json()[0] if r.status_code == 200 else []
    ok = ([t["id"] for t in j] == exp_t["input_ids"] and j[0]["special"] and j[0]["start"] is None and
          all(text[t["start"]:t["stop"]] == t["text"] for t in j[1:-1]) and j[-2]["text"] == "hello")
    report("/tokenize: the CLI's ids, text = the characters [start, stop) of the input", ok, r.text[:300])
    r = post(url, "/tokenize", {"inputs": [text, "你好"], "add_special_tokens": False})
    j = r.json()
    report("/tokenize add_special_tokens false: no [CLS]/[SEP], one list per input",
           r.status_code == 200 and len(j) == 2 and [t["id"] for t in j[0]] == exp_t["input_ids"][1:-1],
           r.text[:200])

    # errors: TEI's shape, the field named
    error_is(requests.get(url + "/nowhere", timeout=10), 404, "unknown route is 404")
    r = requests.get(url + "/embed", timeout=10)
    error_is(r, 405, "GET /embed is 405")
    report("405 names the allowed method", r.headers.get("Allow") == "POST", r.headers)
    error_is(requests.post(url + "/embed", data=b'{"inputs": ', timeout=10), 422, "bad JSON is 422", "JSON")
    error_is(post(url, "/embed", {"text": "x"}), 422, "missing inputs is 422 naming it", "inputs")
    error_is(post(url, "/embed", {"inputs": "x", "normalize": "yes"}), 422,
             "normalize of the wrong type is 422 naming it", "normalize")
    error_is(post(url, "/embed", {"inputs": ["ok", 3]}), 422, "a number among the inputs is 422",
             "inputs[1]")
    error_is(requests.post(url + "/embed", data=b'{"inputs": ["ok", "bad \xff byte"]}', timeout=10), 422,
             "invalid UTF-8 is 422 naming the input", "inputs[1]")
    error_is(post(url, "/embed", {"inputs": []}), 422, "an empty list is 422")
    long_text = "今天天气很好" * 20
    error_is(post(url, "/embed", {"inputs": ["ok", long_text]}), 422,
             "over --max-input-length without truncate is 422 naming the input", "inputs[1]")
    r = post(url, "/embed", {"inputs": long_text, "truncate": True})
    exp_trunc = cli(roformer, model, "embed", [{"text": long_text}], "--normalize", "--max-length", "40")
    report("truncate: true cuts at --max-input-length, as the CLI's --max-length",
           r.status_code == 200 and maxdiff(r.json()[0], exp_trunc[0]["embedding"]) <= TOL, r.text[:200])
    error_is(post(url, "/embed", {"inputs": ["x"] * 33}), 413, "33 inputs (over 32) is 413")
    error_is(requests.post(url + "/embed", data=b'{"inputs": "' + b"a" * 2100000 + b'"}', timeout=30),
             413, "a body over 2 MB is 413")
    error_is(post(url, "/fill-mask", {"inputs": "[MASK]"}), 400, "/fill-mask on a classifier is 400", "mlm")
    error_is(post(url, "/predict", {"inputs": ["a", "b", "c"]}), 422, "three strings is neither pair nor batch")
    r = post(url, "/embed", {"inputs": SENTENCES[2], "normalize": False})
    report("a good request after the bad ones still gets its numbers",
           r.status_code == 200 and maxdiff(r.json()[0], raw[2]) <= TOL, r.text[:100])

    # concurrent clients: each gets its own numbers
    results = {}
    def client(i):
        for rep in range(3):
            s = SENTENCES[(i + rep) % len(SENTENCES)]
            rr = post(url, "/embed", {"inputs": s, "normalize": False})
            results[(i, rep)] = (s, rr.json()[0] if rr.status_code == 200 else None)
    errors = concurrently(32, client)
    ok = not errors and len(results) == 96 and all(
        v is not None and maxdiff(v, raw[SENTENCES.index(s)]) <= TOL for s, v in results.values())
    report("32 concurrent clients x 3 requests: each gets its own sentence's vector", ok,
           errors[:2] or [k for k, (s, v) in results.items() if v is None][:5])

    m = requests.get(url + "/metrics", timeout=10).text
    batches = [l for l in m.splitlines() if l.startswith("roformer_batch_jobs_count")]
    multi = [l for l in m.splitlines() if l.startswith('roformer_batch_jobs_bucket{le="1"}')]
    ok = ('roformer_requests_total{route="/embed",status="200"}' in m and
          'roformer_requests_total{route="/embed",status="422"}' in m and
          "roformer_queue_size 0" in m and "roformer_inference_duration_seconds_count" in m and
          'roformer_request_duration_seconds_bucket{route="/predict",le="+Inf"}' in m and
          batches and multi)
    report("/metrics: requests by route and status, queue, batches, latency, inference time", ok, m[:300])

    # urllib, the standard library's client
    req = urllib.request.Request(url + "/embed", data=json.dumps({"inputs": "你好"}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as resp:
        report("urllib client: 200 and a vector", resp.status == 200 and len(json.load(resp)[0]) == 32)


# ==== the other heads ====

def suite_mlm(url, roformer, model):
    info = requests.get(url + "/info", timeout=10).json()
    report("GET /info of a model with a pooler: TEI's embedding model_type, pooling \"pooler\"",
           info.get("model_type") == {"embedding": {"pooling": "pooler"}} and info.get("head") == "mlm",
           info.get("model_type"))
    texts = ["今天[MASK]气很好", "我们[MASK]天去[MASK]京"]
    exp = cli(roformer, model, "fill-mask", [{"text": t} for t in texts], "--top-k", "3")
    r = post(url, "/fill-mask", {"inputs": texts, "top_k": 3})
    report("/fill-mask batch equals `roformer fill-mask --top-k 3`",
           r.status_code == 200 and close(r.json(), exp), r.text[:300])
    exp5 = cli(roformer, model, "fill-mask", [{"text": texts[0]}])
    r = post(url, "/fill-mask", {"inputs": texts[0]})
    report("/fill-mask one text: one object, top 5 by default",
           r.status_code == 200 and close(r.json(), exp5[0]), r.text[:300])
    error_is(post(url, "/fill-mask", {"inputs": ["今天[MASK]", "no mask here"]}), 422,
             "a text without [MASK] is 422 naming it", "inputs[1]")
    error_is(post(url, "/fill-mask", {"inputs": "[MASK]", "top_k": 0}), 422, "top_k 0 is 422", "top_k")
    emb = cli(roformer, model, "embed", [{"text": t} for t in SENTENCES[:2]], "--normalize")
    r = post(url, "/embed", {"inputs": SENTENCES[:2]})
    report("/embed with the model's pooler equals the CLI",
           r.status_code == 200 and all(maxdiff(a, b["embedding"]) <= TOL for a, b in zip(r.json(), emb)),
           r.text[:200])
    error_is(post(url, "/predict", {"inputs": "x"}), 400, "/predict on an MLM model is 400")


def suite_ner(url, roformer, model):
    info = requests.get(url + "/info", timeout=10).json()
    report("GET /info of a model without a pooler: TEI's embedding model_type, pooling \"cls\"",
           info.get("model_type") == {"embedding": {"pooling": "cls"}}, info.get("model_type"))
    texts = ["张三在北京工作", "李四去上海"]
    exp = cli(roformer, model, "ner", [{"text": t} for t in texts])
    r = post(url, "/ner", {"inputs": texts})
    report("/ner equals `roformer ner`", r.status_code == 200 and close(r.json(), exp), r.text[:300])
    r = post(url, "/ner", {"inputs": texts[1]})
    report("/ner one text: one object", r.status_code == 200 and close(r.json(), exp[1]), r.text[:200])


def suite_qa(url, roformer, model):
    items = [{"question": "谁在北京", "context": "张三在北京工作，李四在上海"},
             {"question": "李四在哪", "context": "张三在北京工作，李四在上海"}]
    exp = cli(roformer, model, "qa", items)
    r = post(url, "/qa", {"inputs": items})
    report("/qa equals `roformer qa`", r.status_code == 200 and close(r.json(), exp), r.text[:300])
    error_is(post(url, "/qa", {"inputs": {"question": "x"}}), 422, "/qa without context is 422",
             "inputs.context")

    # long contexts (the reference cases', up to 934 characters) on a server
    # started with --max-input-length 64: refused, truncated, or read in
    # windows with doc_stride, each as `roformer qa` with the same options
    long_items = []
    for line in open(os.path.join(model, "cases.jsonl"), encoding="utf-8"):
        case = json.loads(line)
        for q, c in zip(case.get("texts") or [case["text"]], case.get("text_pairs") or [case["text_pair"]]):
            if len(c) > 100:
                long_items.append({"question": q, "context": c})
    error_is(post(url, "/qa", {"inputs": [items[0]] + long_items}), 422,
             "/qa over --max-input-length without truncate or doc_stride is 422 naming it", "doc_stride")
    exp = cli(roformer, model, "qa", long_items, "--max-length", "64")
    r = post(url, "/qa", {"inputs": long_items, "truncate": True})
    report("/qa truncate: equals `roformer qa --max-length 64`",
           r.status_code == 200 and close(r.json(), exp), r.text[:300])
    options = [(16, None), (16, 2), (30, 4), (None, 3)]
    expected = {}
    for stride, answer in options:
        flags = ["--max-length", "64"]
        flags += ["--doc-stride", str(stride)] if stride is not None else []
        flags += ["--max-answer-tokens", str(answer)] if answer is not None else []
        expected[(stride, answer)] = cli(roformer, model, "qa", long_items if stride is not None else items,
                                         *flags)
    def qa_body(stride, answer):
        body = {"inputs": long_items if stride is not None else items}
        if stride is not None:
            body["doc_stride"] = stride
        if answer is not None:
            body["max_answer_tokens"] = answer
        return body
    for stride, answer in options:
        r = post(url, "/qa", qa_body(stride, answer))
        report("/qa doc_stride %s, max_answer_tokens %s: equals `roformer qa` with those flags"
               % (stride, answer), r.status_code == 200 and close(r.json(), expected[(stride, answer)]),
               r.text[:300])
    report("the options change the answers (the checks above can tell them apart)",
           expected[(16, None)] != expected[(16, 2)] and expected[(16, 2)] != expected[(30, 4)],
           expected)
    # concurrent requests with different options: batched only with their like
    results = []
    def client(k):
        for rep in range(4):
            opt = options[(k + rep) % len(options)]
            rr = post(url, "/qa", qa_body(*opt))
            results.append(rr.status_code == 200 and close(rr.json(), expected[opt]))
    errors = concurrently(8, client, 120)
    report("8 concurrent clients with different doc_stride / max_answer_tokens each get their own answers",
           not errors and len(results) == 32 and all(results), errors[:2] or results)
    error_is(post(url, "/qa", {"inputs": items, "doc_stride": -1}), 422, "doc_stride -1 is 422 naming it",
             "doc_stride")
    error_is(post(url, "/qa", {"inputs": items, "max_answer_tokens": 0}), 422,
             "max_answer_tokens 0 is 422 naming it", "max_answer_tokens")
    error_is(post(url, "/qa", {"inputs": items, "max_answer_tokens": 2.5}), 422,
             "max_answer_tokens 2.5 is 422 naming it", "max_answer_tokens")
    error_is(post(url, "/qa", {"inputs": long_items, "doc_stride": 60}), 422,
             "a doc_stride that leaves no progress in a 64-token window is 422 naming it", "doc_stride")


# ==== OpenAI's edge cases (on the cls server, --max-input-length 40) ====

# OpenAI's error code by status (docs/serving.md); null for the others
OPENAI_CODES = {401: "invalid_api_key", 404: "unknown_url", 429: "rate_limit_exceeded"}


def openai_error_is(r, status, what, param=None):
    """OpenAI's error shape: {"error": {"message", "type", "param", "code"}},
    `code` the one OpenAI gives that status."""
    try:
        e = r.json()["error"]
        ok = (r.status_code == status and isinstance(e, dict) and
              set(e) == {"message", "type", "param", "code"} and isinstance(e["message"], str) and
              e["type"] == ("server_error" if status >= 500 else "invalid_request_error") and
              e["code"] == OPENAI_CODES.get(status) and (param is None or e["param"] == param))
    except (ValueError, KeyError, TypeError):
        ok = False
    return report(what, ok, "status %d, body %s" % (r.status_code, r.text[:200]))


def unit(v):
    n = sum(x * x for x in v) ** 0.5
    return [x / n for x in v]


def suite_openai(url, roformer, model):
    raw = [e["embedding"] for e in cli(roformer, model, "embed", [{"text": s} for s in SENTENCES[:3]])]
    norm = [unit(v) for v in raw]
    ids = [json.loads(l)["input_ids"] for l in subprocess.run(
        [roformer, "tokenize", "-m", model], input="\n".join(SENTENCES[:3]).encode() + b"\n",
        stdout=subprocess.PIPE, check=True).stdout.decode().splitlines()]
    def vectors(r):
        return [d["embedding"] for d in r.json()["data"]] if r.status_code == 200 else []
    def all_close(got, exp):
        return len(got) == len(exp) and all(len(a) == len(b) and maxdiff(a, b) <= TOL
                                            for a, b in zip(got, exp))

    # dimensions: the first N components of the CLI's vector, re-normalized
    r = post(url, "/v1/embeddings", {"input": SENTENCES[:3], "dimensions": 8})
    report("dimensions 8: the first 8 components of `roformer embed`, re-normalized",
           all_close(vectors(r), [unit(v[:8]) for v in raw]), r.text[:300])
    r = post(url, "/v1/embeddings", {"input": SENTENCES[0], "dimensions": 8, "encoding_format": "base64"})
    got = [list(struct.unpack("<8f", base64.b64decode(d["embedding"]))) for d in r.json()["data"]] \
        if r.status_code == 200 else []
    report("dimensions 8 with base64: 32 bytes, the same 8 floats", all_close(got, [unit(raw[0][:8])]),
           r.text[:200])
    r = post(url, "/v1/embeddings", {"input": SENTENCES[0], "dimensions": 32})
    report("dimensions = hidden size: the whole normalized vector", all_close(vectors(r), norm[:1]),
           r.text[:200])
    openai_error_is(post(url, "/v1/embeddings", {"input": "x", "dimensions": 33}), 400,
                    "dimensions over the hidden size is 400 in OpenAI's shape, param dimensions, code null",
                    "dimensions")
    openai_error_is(post(url, "/v1/embeddings", {"input": "x", "dimensions": 0}), 400,
                    "dimensions 0 is 400 naming it", "dimensions")
    openai_error_is(post(url, "/v1/embeddings", {"input": "x", "dimensions": "8"}), 400,
                    "dimensions as a string is 400 naming it", "dimensions")

    # token ids, as LangChain sends them: run as given
    r = post(url, "/v1/embeddings", {"input": ids[0]})
    report("input as one list of token ids ([CLS] ... [SEP] from `roformer tokenize`) = the text's vector",
           all_close(vectors(r), norm[:1]) and r.json()["usage"]["prompt_tokens"] == len(ids[0]),
           r.text[:200])
    r = post(url, "/v1/embeddings", {"input": ids})
    report("input as lists of token ids: one vector per list, usage their total",
           all_close(vectors(r), norm) and r.json()["usage"]["total_tokens"] == sum(map(len, ids)) and
           [d["index"] for d in r.json()["data"]] == [0, 1, 2], r.text[:200])
    bare = ids[0][1:4]  # no [CLS] / [SEP]: nothing is added to what is sent
    info = requests.get(url + "/info", timeout=10).json()
    fwd = forward(roformer, model, [{"input_ids": bare}])[0]
    exp = fwd["pooled"] if info["pooling"] == "pooler" else (
        fwd["last_hidden_state"][0] if info["pooling"] == "cls" else
        [sum(c) / len(bare) for c in zip(*fwd["last_hidden_state"])])
    exp = exp[0] if exp and isinstance(exp[0], list) else exp
    r = post(url, "/embeddings", {"input": [bare], "user": "someone", "model": "m"})
    report("/embeddings alias, ids without [CLS]/[SEP] run as given (`roformer forward` on those ids), "
           "user accepted", all_close(vectors(r), [unit(exp)]) and r.json()["model"] == "m", r.text[:200])
    openai_error_is(post(url, "/v1/embeddings", {"input": [ids[0], [1, 2, 50000]]}), 400,
                    "a token id outside the vocabulary is 400 naming it", "input[1][2]")
    openai_error_is(post(url, "/v1/embeddings", {"input": [101] * 41}), 400,
                    "41 token ids over --max-input-length 40 is 400 naming the input", "input")
    openai_error_is(post(url, "/v1/embeddings", {"input": [[1, 2], []]}), 400,
                    "an empty list of ids is 400 naming it", "input[1]")
    openai_error_is(post(url, "/v1/embeddings", {"input": [1, -2]}), 400, "a negative id is 400",
                    "input[1]")
    openai_error_is(post(url, "/v1/embeddings", {"input": "x", "user": 5}), 400,
                    "user of the wrong type is 400 naming it", "user")

    # every error of /v1/* in OpenAI's shape
    openai_error_is(requests.post(url + "/v1/embeddings", data=b'{"input": ', timeout=10), 400,
                    "bad JSON is 400 in OpenAI's shape")
    openai_error_is(post(url, "/v1/embeddings", {"text": "x"}), 400, "missing input names it", "input")
    openai_error_is(post(url, "/v1/embeddings", {"input": ["x"] * 33}), 413, "33 inputs is 413")
    openai_error_is(requests.get(url + "/v1/embeddings", timeout=10), 405, "GET is 405")
    openai_error_is(post(url, "/v1/nowhere", {}), 404, "an unknown /v1 route is 404, code unknown_url")
    error_is(post(url, "/embed", {"inputs": "x", "normalize": "yes"}), 422,
             "TEI routes keep TEI's error shape and 422", "normalize")


# ==== TEI's other routes, headers and metrics (the cls server) ====

def wordpiece_decode(tokens):
    """HF tokenizers' WordPiece decoder: " tok" or "##"-glued pieces, each cleaned up."""
    out = ""
    for i, t in enumerate(tokens):
        piece = t if i == 0 else (t[2:] if t.startswith("##") else " " + t)
        for a, b in [(" .", "."), (" ?", "?"), (" !", "!"), (" ,", ","), (" ' ", "'"), (" n't", "n't"),
                     (" 'm", "'m"), (" do not", " don't"), (" 's", "'s"), (" 've", "'ve"), (" 're", "'re")]:
            piece = piece.replace(a, b)
        out += piece
    return out


SPECIAL = {"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"}


def suite_tei(url, roformer, model):
    text = "今天天气很好 hello, world."
    tok = json.loads(subprocess.run([roformer, "tokenize", "-m", model], input=text.encode() + b"\n",
                                    stdout=subprocess.PIPE, check=True).stdout)
    r = post(url, "/decode", {"ids": tok["input_ids"]})
    report("/decode: HF's WordPiece decoding, special tokens skipped",
           r.status_code == 200 and r.json() == ["今 天 天 气 很 好 hello, world."] and
           r.json() == [wordpiece_decode([t for t in tok["tokens"] if t not in SPECIAL])], r.text[:200])
    r = post(url, "/decode", {"ids": [tok["input_ids"], tok["input_ids"][1:3]], "skip_special_tokens": False})
    report("/decode of two lists, skip_special_tokens false keeps [CLS] and [SEP]",
           r.status_code == 200 and r.json() == [wordpiece_decode(tok["tokens"]), "今 天"], r.text[:200])
    error_is(post(url, "/decode", {"ids": [[1], [2, 50000]]}), 422, "/decode: an id outside the vocabulary",
             "ids[1][1]")
    error_is(post(url, "/decode", {"ids": "x"}), 422, "/decode: ids not a list", "ids")

    fwd = forward(roformer, model, [{"text": s} for s in SENTENCES[:2]])
    r = post(url, "/embed_all", {"inputs": SENTENCES[:2]})
    got = r.json() if r.status_code == 200 else []
    report("/embed_all: every token's vector, [CLS] and [SEP] included, = `roformer forward`'s last_hidden_state",
           len(got) == 2 and all(len(g) == len(f["last_hidden_state"]) and
                                 all(maxdiff(a, b) <= TOL for a, b in zip(g, f["last_hidden_state"]))
                                 for g, f in zip(got, fwd)), r.text[:200])
    r = post(url, "/embed_all", {"inputs": SENTENCES[0]})
    report("/embed_all one text: [[token vectors]]", r.status_code == 200 and len(r.json()) == 1 and
           all(maxdiff(a, b) <= TOL for a, b in zip(r.json()[0], fwd[0]["last_hidden_state"])), r.text[:100])
    error_is(post(url, "/embed_all", {"inputs": "今天天气很好" * 20}), 422,
             "/embed_all over --max-input-length is 422", "inputs")

    exp = cli(roformer, model, "classify", [{"text": s} for s in SENTENCES[:2]])
    as_hf = [[{"label": k, "score": v} for k, v in e["scores"].items()] for e in exp]
    r = post(url, "/pipeline/text-classification", {"inputs": SENTENCES[0]})
    report("/pipeline/text-classification one text: [[{label, score}]] (HF's shape), the CLI's scores",
           r.status_code == 200 and close(r.json(), as_hf[:1]), r.text[:200])
    r = post(url, "/pipeline/text-classification", {"inputs": SENTENCES[:2]})
    report("/pipeline/text-classification two texts", r.status_code == 200 and close(r.json(), as_hf),
           r.text[:200])

    # TEI's response headers
    r = post(url, "/embed", {"inputs": [SENTENCES[0], SENTENCES[4]]})
    h = r.headers
    names = ["x-compute-time", "x-total-time", "x-tokenization-time", "x-queue-time", "x-inference-time",
             "x-compute-characters", "x-compute-tokens"]
    ntok = sum(len(json.loads(l)["input_ids"]) for l in subprocess.run(
        [roformer, "tokenize", "-m", model], input=(SENTENCES[0] + "\n" + SENTENCES[4] + "\n").encode(),
        stdout=subprocess.PIPE, check=True).stdout.decode().splitlines())
    report("TEI's x-* headers: whole milliseconds, the characters and the CLI's token count",
           all(h.get(n, "").isdigit() for n in names) and h.get("x-compute-type") == "cpu" and
           int(h["x-compute-characters"]) == len(SENTENCES[0]) + len(SENTENCES[4]) and
           int(h["x-compute-tokens"]) == ntok, dict(h))
    r = requests.options(url + "/embed", headers={"Origin": "http://a.example"}, timeout=10)
    report("without --cors-allow-origin: OPTIONS is 405 and no CORS header",
           r.status_code == 405 and "Access-Control-Allow-Origin" not in r.headers, r.status_code)

    m = requests.get(url + "/metrics", timeout=10).text
    def value(line_start):
        for l in m.splitlines():
            if l.startswith(line_start + " "):
                return float(l.split()[-1])
        return None
    ok = (value('te_request_count{method="single"}') and value('te_request_count{method="batch"}') and
          value('te_request_success{method="batch"}') and value('te_request_failure{err="validation"}') and
          value("te_queue_size") == 0 and value("te_batch_next_size_count") and
          value("te_batch_next_tokens_count") and value("te_request_duration_count") and
          value("te_request_queue_duration_count") and value("te_request_inference_duration_count") and
          value("te_batch_inference_duration_count") == value("roformer_inference_duration_seconds_count") and
          'roformer_requests_total{route="/embed",status="200"}' in m)
    report("/metrics: TEI's te_* names and labels beside the roformer_* ones", ok,
           [l for l in m.splitlines() if l.startswith("te_") and "bucket" not in l])


# ==== HuggingFace's task shapes on the other heads ====

def suite_hf_mlm(url, roformer, model):
    texts = ["今天[MASK]气很好", "我们[MASK]天去[MASK]京"]
    exp = cli(roformer, model, "fill-mask", [{"text": t} for t in texts], "--top-k", "3")
    toks = [json.loads(l)["tokens"] for l in subprocess.run(
        [roformer, "tokenize", "-m", model], input=("\n".join(texts) + "\n").encode(),
        stdout=subprocess.PIPE, check=True).stdout.decode().splitlines()]
    def as_hf(e, tokens):
        masks = [k for k, t in enumerate(tokens) if t == "[MASK]"]
        out = []
        for k, cands in zip(masks, e["masks"]):
            row = []
            for c in cands:
                filled = tokens[:k] + [c["token"]] + tokens[k + 1:]
                kept = filled if len(masks) > 1 else [t for t in filled if t not in SPECIAL]
                row.append({"score": c["score"], "token": c["id"], "token_str": c["token"],
                            "sequence": wordpiece_decode(kept)})
            out.append(row)
        return out[0] if len(masks) == 1 else out
    r = post(url, "/pipeline/fill-mask", {"inputs": texts[0], "parameters": {"top_k": 3}})
    report("/pipeline/fill-mask one [MASK]: [{score, token, token_str, sequence}], the CLI's candidates",
           r.status_code == 200 and close(r.json(), as_hf(exp[0], toks[0])), r.text[:300])
    r = post(url, "/pipeline/fill-mask", {"inputs": texts, "parameters": {"top_k": 3}})
    report("/pipeline/fill-mask two texts, the second with two [MASK]s: a list per mask, [CLS] kept",
           r.status_code == 200 and close(r.json(), [as_hf(e, t) for e, t in zip(exp, toks)]), r.text[:300])
    error_is(post(url, "/pipeline/fill-mask", {"inputs": "[MASK]", "parameters": {"top_k": 0}}), 422,
             "parameters.top_k 0 is 422 naming it", "parameters.top_k")
    r = post(url, "/fill-mask", {"inputs": texts[0], "top_k": 3})
    report("/fill-mask keeps the CLI's shape", r.status_code == 200 and close(r.json(), exp[0]), r.text[:200])


def suite_hf_ner(url, roformer, model):
    texts = ["张三在北京工作", "李四去上海"]
    exp = cli(roformer, model, "ner", [{"text": t} for t in texts])
    def as_hf(e):
        return [{"entity_group": g["entity"], "score": g["score"],
                 "word": wordpiece_decode([t["token"] for t in e["tokens"]
                                           if t["start"] >= g["start"] and t["end"] <= g["end"]]),
                 "start": g["start"], "end": g["end"]} for g in e["entities"]]
    r = post(url, "/pipeline/token-classification", {"inputs": texts[0]})
    report("/pipeline/token-classification: [{entity_group, score, word, start, end}], the CLI's entities",
           r.status_code == 200 and close(r.json(), as_hf(exp[0])), r.text[:300])
    r = post(url, "/pipeline/token-classification", {"inputs": texts})
    report("/pipeline/token-classification two texts: a list each",
           r.status_code == 200 and close(r.json(), [as_hf(e) for e in exp]), r.text[:300])


# ==== --cors-allow-origin http://a.example,http://b.example --max-batch-requests 2 --api-key secret ====

def suite_cors(url, roformer, model):
    auth = {"Authorization": "Bearer secret"}
    r = requests.options(url + "/embed", timeout=10, headers={
        "Origin": "http://a.example", "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "authorization, content-type"})
    h = r.headers
    report("preflight OPTIONS /embed from a listed origin: 204, no key needed, the CORS answers",
           r.status_code == 204 and h.get("Access-Control-Allow-Origin") == "http://a.example" and
           h.get("Access-Control-Allow-Methods") == "POST, OPTIONS" and
           h.get("Access-Control-Allow-Headers") == "authorization, content-type" and
           h.get("Access-Control-Max-Age") == "86400" and h.get("Vary") == "Origin", dict(h))
    r = post(url, "/embed", {"inputs": "x"}, headers=dict(auth, Origin="http://b.example"))
    report("POST from the second listed origin: its origin allowed, x-* headers exposed",
           r.status_code == 200 and r.headers.get("Access-Control-Allow-Origin") == "http://b.example" and
           "x-compute-time" in r.headers.get("Access-Control-Expose-Headers", ""), dict(r.headers))
    r = post(url, "/embed", {"inputs": "x"}, headers=dict(auth, Origin="http://c.example"))
    report("an origin not listed gets no Access-Control-Allow-Origin",
           r.status_code == 200 and "Access-Control-Allow-Origin" not in r.headers, dict(r.headers))
    r = requests.options(url + "/embed", headers={"Origin": "http://c.example"}, timeout=10)
    report("a preflight from an origin not listed: 204 without Access-Control-Allow-Origin",
           r.status_code == 204 and "Access-Control-Allow-Origin" not in r.headers, dict(r.headers))
    error_is(post(url, "/embed", {"inputs": "x"}, headers={"Origin": "http://a.example"}), 401,
             "the request itself still needs the key")
    info = requests.get(url + "/info", headers=auth, timeout=10).json()
    report("/info: max_batch_requests 2", info.get("max_batch_requests") == 2, info)

    raw = [e["embedding"] for e in cli(roformer, model, "embed", [{"text": s} for s in SENTENCES])]
    results = {}
    def client(i):
        rr = post(url, "/embed", {"inputs": SENTENCES[i % 8], "normalize": False}, headers=auth)
        results[i] = rr.json()[0] if rr.status_code == 200 else None
    errors = concurrently(16, client)
    report("16 concurrent requests under --max-batch-requests 2: each its own vector",
           not errors and len(results) == 16 and
           all(v is not None and maxdiff(v, raw[i % 8]) <= TOL for i, v in results.items()), errors[:2])
    m = requests.get(url + "/metrics", headers=auth, timeout=10).text
    le2 = [l for l in m.splitlines() if l.startswith('te_batch_next_size_bucket{le="2"}')]
    count = [l for l in m.splitlines() if l.startswith("te_batch_next_size_count")]
    report("no batch held more than 2 inputs (te_batch_next_size)",
           le2 and count and le2[0].split()[-1] == count[0].split()[-1], le2 + count)


# ==== limits: --api-key, --max-client-batch-size 4, --payload-limit 1000,
# --max-concurrent-requests 1 ====

def raw_request(port, path, body, send_all=True, key="secret"):
    """A socket with the headers and (part of) the body sent."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = ("POST %s HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer %s\r\n"
            "Content-Type: application/json\r\nContent-Length: %d\r\n\r\n" % (path, key, len(body)))
    s.sendall(head.encode() + (body if send_all else body[:5]))
    return s


def read_status(s):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, rest = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        if k.strip().lower() == b"content-length":
            length = int(v)
    while len(rest) < length:
        chunk = s.recv(65536)
        if not chunk:
            break
        rest += chunk
    s.close()
    status = int(head.split()[1]) if head else 0
    return status, rest


def suite_limits(url, roformer, model):
    port = int(url.rsplit(":", 1)[1])
    auth = {"Authorization": "Bearer secret"}
    error_is(post(url, "/embed", {"inputs": "x"}), 401, "no Authorization is 401")
    error_is(post(url, "/embed", {"inputs": "x"}, headers={"Authorization": "Bearer wrong"}), 401,
             "a wrong key is 401")
    error_is(requests.get(url + "/info", timeout=10), 401, "GET /info needs the key too")
    openai_error_is(post(url, "/v1/embeddings", {"input": "x"}, headers={"Authorization": "Bearer wrong"}),
                    401, "a wrong key on /v1/embeddings: 401 in OpenAI's shape, code invalid_api_key")
    info = requests.get(url + "/info", headers={"Authorization": "Bearer secret"}, timeout=10).json()
    report("GET /info: the limits the server was started with",
           info.get("max_client_batch_size") == 4 and info.get("max_concurrent_requests") == 1 and
           info.get("payload_limit") == 1000, info)
    report("GET /health needs no key", requests.get(url + "/health", timeout=10).status_code == 200)
    r = post(url, "/embed", {"inputs": "x"}, headers=auth)
    report("the right key is 200", r.status_code == 200, r.text[:200])
    error_is(post(url, "/embed", {"inputs": ["x"] * 5}, headers=auth), 413,
             "5 inputs over --max-client-batch-size 4 is 413", "max-client-batch-size")
    error_is(post(url, "/embed", {"inputs": "x" * 2000}, headers=auth), 413,
             "a body over --payload-limit 1000 is 413")
    # one request holds the only slot: its headers are in, its body is not
    body = json.dumps({"inputs": "今天天气很好"}).encode()
    held = raw_request(port, "/embed", body, send_all=False)
    report("the held request takes the only slot (roformer_requests_in_flight 1)",
           wait_for(lambda: metrics(url, auth).get("roformer_requests_in_flight") == 1))
    error_is(post(url, "/embed", {"inputs": "x"}, headers=auth), 429,
             "a second request while --max-concurrent-requests 1 is taken is 429")
    openai_error_is(post(url, "/v1/embeddings", {"input": "x"}, headers=auth), 429,
                    "on /v1/embeddings: 429 in OpenAI's shape, code rate_limit_exceeded")
    held.sendall(body[5:])
    status, _ = read_status(held)
    report("the held request, finished, is 200", status == 200, status)
    # its slot is given back before its response is sent: no wait needed
    r = post(url, "/embed", {"inputs": "x"}, headers=auth)
    report("after it, the slot is free again", r.status_code == 200, r.status_code)


# ==== --max-batch-tokens 64: a batch's real tokens stay within it ====

def small_text(roformer, model, lo, hi):
    """The shortest prefix of the joined SENTENCES whose tokens (the CLI's
    count, [CLS] and [SEP] included) are from lo to hi; and that count."""
    joined = "".join(SENTENCES)
    prefixes = [joined[:k] for k in range(1, len(joined) + 1)]
    out = subprocess.run([roformer, "tokenize", "-m", model], input=("\n".join(prefixes) + "\n").encode(),
                         stdout=subprocess.PIPE, check=True, timeout=120).stdout.decode().splitlines()
    for text, line in zip(prefixes, out):
        n = len(json.loads(line)["input_ids"])
        if lo <= n <= hi:
            return text, n
    raise ValueError("no prefix of %d to %d tokens" % (lo, hi))


def suite_batching(url, roformer, model):
    info = requests.get(url + "/info", timeout=10).json()
    report("/info: max_batch_tokens 64", info.get("max_batch_tokens") == 64, info.get("max_batch_tokens"))
    # three requests of t tokens, 2t <= 64 < 3t: two share a batch, the third
    # cannot; without the bound the three would run as one batch of 3t
    text, t = small_text(roformer, model, 22, 32)
    want = cli(roformer, model, "embed", [{"text": text}])[0]["embedding"]
    # a long windowed text keeps the engine busy while the three queue
    # behind it: the one way to have them waiting together, whatever the
    # machine's speed (it is taken alone, over the bound: the oldest job
    # always is)
    blocker = {"inputs": "今天天气很好，我们去公园散步。" * 40000, "window": 32, "stride": 8}
    before = metrics(url)
    answers = {}

    def send(key, body):
        data = json.dumps(body, ensure_ascii=False).encode()
        rr = requests.post(url + "/embed", data=data, timeout=300,
                           headers={"Content-Type": "application/json"})
        answers[key] = rr.json()[0] if rr.status_code == 200 else rr.status_code
    first = threading.Thread(target=send, args=("blocker", blocker))
    first.start()
    ran = wait_for(lambda: metrics(url).get("roformer_batch_running_jobs") == 1)
    report("the long request runs alone (roformer_batch_running_jobs 1)", ran)
    small = [threading.Thread(target=send, args=(i, {"inputs": text, "normalize": False})) for i in range(3)]
    for th in small:
        th.start()
    queued = ran and wait_for(lambda: metrics(url).get("roformer_queue_size") == 3)
    report("three %d-token requests wait behind it together (roformer_queue_size 3)" % t, queued)
    for th in [first] + small:
        th.join(300)
    report("the long request is 200, the three get the CLI's vector",
           isinstance(answers.get("blocker"), list) and
           all(isinstance(answers.get(i), list) and maxdiff(answers[i], want) <= TOL for i in range(3)),
           [a if not isinstance(a, list) else "ok" for a in (answers.get(k) for k in ("blocker", 0, 1, 2))])
    after = metrics(url)

    def grew(series):
        return after.get(series, 0) - before.get(series, 0)
    jobs = {le: grew('roformer_batch_jobs_bucket{le="%s"}' % le) for le in ("1", "2", "+Inf")}
    tokens = {le: grew('roformer_batch_tokens_bucket{le="%s"}' % le) for le in ("64", "256", "+Inf")}
    report("three batches: the long request, two of the three together, the third (roformer_batch_jobs)",
           queued and jobs == {"1": 2, "2": 3, "+Inf": 3}, jobs)
    report("no batch over --max-batch-tokens 64 but the long request (roformer_batch_tokens: "
           "the pair's %d and the single's %d tokens in le=64, none in (64, 256])" % (2 * t, t),
           queued and tokens == {"64": 2, "256": 2, "+Inf": 3}, tokens)
    report("te_batch_next_tokens counts the same batches",
           all(grew('te_batch_next_tokens_bucket{le="%s"}' % le) == n for le, n in tokens.items()),
           {le: grew('te_batch_next_tokens_bucket{le="%s"}' % le) for le in tokens})
    report("idle again: roformer_batch_running_jobs 0, roformer_queue_size 0",
           after.get("roformer_batch_running_jobs") == 0 and after.get("roformer_queue_size") == 0,
           {k: after.get(k) for k in ("roformer_batch_running_jobs", "roformer_queue_size")})


# ==== --cors-allow-origin '*' ====

EXPOSED = ("x-compute-type, x-compute-time, x-compute-characters, x-compute-tokens, x-total-time, "
           "x-tokenization-time, x-queue-time, x-inference-time")


def suite_cors_any(url, roformer, model):
    r = requests.options(url + "/embed", timeout=10, headers={
        "Origin": "http://any.example", "Access-Control-Request-Method": "POST"})
    h = r.headers
    report("'*': preflight OPTIONS /embed from any origin: 204, Access-Control-Allow-Origin *, no Vary, "
           "the route's method, the default headers, Access-Control-Max-Age 86400",
           r.status_code == 204 and h.get("Access-Control-Allow-Origin") == "*" and "Vary" not in h and
           h.get("Access-Control-Allow-Methods") == "POST, OPTIONS" and
           h.get("Access-Control-Allow-Headers") == "authorization, content-type" and
           h.get("Access-Control-Max-Age") == "86400", dict(h))
    r = requests.options(url + "/info", timeout=10, headers={
        "Origin": "http://other.example", "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-custom"})
    h = r.headers
    report("'*': preflight OPTIONS /info: GET, the headers asked for, Max-Age 86400",
           r.status_code == 204 and h.get("Access-Control-Allow-Origin") == "*" and
           h.get("Access-Control-Allow-Methods") == "GET, OPTIONS" and
           h.get("Access-Control-Allow-Headers") == "x-custom" and
           h.get("Access-Control-Max-Age") == "86400", dict(h))
    r = post(url, "/embed", {"inputs": "x"}, headers={"Origin": "http://any.example"})
    h = r.headers
    report("'*': POST /embed from any origin: 200, Access-Control-Allow-Origin *, the x-* headers exposed, "
           "no Vary, no Max-Age (a preflight's)",
           r.status_code == 200 and h.get("Access-Control-Allow-Origin") == "*" and
           h.get("Access-Control-Expose-Headers") == EXPOSED and "Vary" not in h and
           "Access-Control-Max-Age" not in h, dict(h))
    r = post(url, "/embed", {"inputs": "x"})
    report("'*': a request without Origin gets no CORS header",
           r.status_code == 200 and not any(k.lower().startswith("access-control-") for k in r.headers),
           dict(r.headers))


# ==== --host ::1 ====

def suite_ipv6(url, roformer, model):
    report("the server's URL is an IPv6 one", url.startswith("http://[::1]:"), url)
    r = requests.get(url + "/health", timeout=10)
    report("GET /health over IPv6 is 200", r.status_code == 200, r.status_code)
    want = cli(roformer, model, "embed", [{"text": SENTENCES[0]}], "--normalize")[0]["embedding"]
    r = post(url, "/embed", {"inputs": SENTENCES[0]})
    report("POST /embed over IPv6: the CLI's vector",
           r.status_code == 200 and maxdiff(r.json()[0], want) <= TOL, r.text[:200])


# ==== a server started with CLI flags (--compute, --pooling) ====

def suite_cli_bytes(url, roformer, model, *flags):
    """A request alone in its batch with the inputs of one `roformer embed`
    run, both with `flags` and the same threads: the same library calls on
    the same batch, printed by the same float writer, so the same bytes."""
    opts = dict(zip(flags[::2], flags[1::2]))
    info = requests.get(url + "/info", timeout=10).json()
    dtype = {"f32": "float32", "bf16": "bfloat16", "int8": "int8"}[opts.get("--compute", "f32")]
    report("/info: model_dtype %s%s" % (dtype, ", pooling " + opts["--pooling"] if "--pooling" in opts else ""),
           info.get("model_dtype") == dtype and info.get("pooling") == opts.get("--pooling", info.get("pooling")),
           {k: info.get(k) for k in ("model_dtype", "pooling")})
    args = ["--threads", "2", *flags]
    for normalize in (False, True):
        out = subprocess.run([roformer, "embed", "-m", model, "--no-progress", *args] +
                             (["--normalize"] if normalize else []),
                             input=("\n".join(SENTENCES) + "\n").encode(), stdout=subprocess.PIPE,
                             check=True, timeout=120).stdout.decode().splitlines()
        prefix = '{"embedding":'
        want = "[" + ",".join(l[len(prefix):-1] for l in out if l.startswith(prefix)) + "]"
        r = post(url, "/embed", {"inputs": SENTENCES, "normalize": normalize})
        report("/embed normalize %s: byte for byte `roformer embed %s%s`" %
               (str(normalize).lower(), " ".join(args), " --normalize" if normalize else ""),
               r.status_code == 200 and len(out) == len(SENTENCES) and r.text == want,
               (r.text[:120], want[:120]))


# ==== shutdown: SIGTERM or SIGINT with requests in flight loses none ====

def suite_shutdown(url, roformer, model, pid, signame):
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"inputs": SENTENCES}).encode()
    held = [raw_request(port, "/embed", body, send_all=False, key="") for _ in range(4)]
    results, errors = [], []
    def client():
        try:
            results.append(post(url, "/embed", {"inputs": SENTENCES}).status_code)
        except Exception as e:  # noqa: BLE001
            errors.append(repr(e))
    busy = [threading.Thread(target=client) for _ in range(8)]
    for t in busy:
        t.start()
    # all 12 have begun: each is in flight, or already answered
    def begun():
        m = metrics(url)
        done = sum(v for k, v in m.items() if k.startswith('roformer_requests_total{route="/embed",'))
        return m.get("roformer_requests_in_flight", 0) + done >= 12
    report("12 requests begun before SIG%s (roformer_requests_in_flight + answered)" % signame,
           wait_for(begun))
    # the drain is watched on a connection opened before the signal: /metrics
    # still answers there, and says so once the listener is shut
    watch = requests.Session()
    watch.get(url + "/metrics", timeout=10)
    os.kill(pid, getattr(signal, "SIG" + signame))
    try:
        drained = wait_for(lambda: "\nroformer_draining 1\n" in watch.get(url + "/metrics", timeout=10).text,
                           30)
        detail = ""
    except requests.RequestException as e:
        drained, detail = False, repr(e)
    report("after SIG%s /metrics on an open connection says roformer_draining 1" % signame, drained, detail)
    refused = False
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
    except OSError:
        refused = True
    report("after SIG%s no new connection is accepted" % signame, refused)
    for s in held:
        s.sendall(body[5:])
    statuses = [read_status(s)[0] for s in held]
    for t in busy:
        t.join(30)
    report("requests begun before SIG%s all get 200" % signame,
           statuses == [200] * 4 and results == [200] * 8 and not errors,
           "held %s, busy %s %s" % (statuses, results, errors[:2]))


def main():
    suite, url, roformer, model = sys.argv[1:5]
    if suite == "shutdown":
        suite_shutdown(url, roformer, model, int(sys.argv[5]), sys.argv[6])
    elif "suite_" + suite in globals():
        globals()["suite_" + suite](url, roformer, model, *sys.argv[5:])
    else:
        import serve_rerank_client
        getattr(serve_rerank_client, "suite_" + suite)(url, roformer, model)


if __name__ == "__main__":
    main()
