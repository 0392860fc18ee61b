"""serve_compare.py OLD NEW MODELS_DIR — starts `roformer serve` from two
builds on each model, sends both every route's requests (good ones, windows,
truncation, errors) and prints each route's outcome: the same status and
body bytes, or the first difference. Exits 1 on any difference. For
checking a change to the server that must not change its answers.
MODELS_DIR holds NAME.gguf for each NAME of REQUESTS, converted from
../shared/reference/models/NAME (`roformer convert DIR -o NAME.gguf`)."""
import json, re, subprocess, sys, urllib.request, urllib.error

LONG = "一个长一点的句子，用来测试窗口和截断之后的结果是否一样。" * 3
Q = {"question": "张三在哪里工作？", "context": "张三在北京的一家银行工作。"}
TRIP = {"A": "今天天气很好", "B": "今天天气不错", "C": LONG}
REQUESTS = {
    "tiny-word-cls": [
        ("/predict", {"inputs": "这家酒店服务很好"}),
        ("/predict", {"inputs": [["房间很大", "早餐一般"], ["还行"], [LONG]], "raw_scores": True}),
        ("/predict", {"inputs": LONG, "window": 8, "stride": 2}),
        ("/predict", {"inputs": [LONG, "短"], "truncate": True, "truncation_direction": "left"}),
        ("/predict", {"inputs": LONG}),
        ("/pipeline/text-classification", {"inputs": ["这家酒店服务很好", LONG], "truncate": True}),
        ("/rerank", {"query": "这个东西怎么样", "texts": ["还行吧", "很好的产品", LONG], "return_text": True, "truncate": True}),
        ("/rerank", {"query": "这个东西怎么样", "texts": ["还行吧", "很好"], "raw_scores": True}),
        ("/v1/rerank", {"query": "这个东西怎么样", "documents": ["还行吧", {"text": "很好"}], "top_n": 1, "return_documents": True}),
        ("/", {"inputs": "这家酒店服务很好"}),
        ("/embed", {"inputs": ["今天天气很好", LONG], "truncate": True}),
        ("/fill-mask", {"inputs": "北京"}),
        ("/scm", {"inputs": [TRIP, TRIP]}),
    ],
    "tiny-word-mlm": [
        ("/embed", {"inputs": ["今天天气很好", "北京"]}),
        ("/embed", {"inputs": [LONG, "北京"], "window": 8, "stride": 2, "normalize": False}),
        ("/embed", {"inputs": LONG, "window": 8, "truncate": True}),
        ("/embed", {"inputs": LONG}),
        ("/v1/embeddings", {"input": ["今天天气很好", LONG], "dimensions": 8, "truncate": True}),
        ("/v1/embeddings", {"input": LONG, "window": 8, "truncate": True}),
        ("/v1/embeddings", {"input": [[101, 2000, 102], [101, 102]], "encoding_format": "base64"}),
        ("/embeddings", {"input": "北京"}),
        ("/embed_all", {"inputs": ["今天", "北京天气"]}),
        ("/similarity", {"inputs": {"source_sentence": "今天天气很好", "sentences": ["今天天气不错", LONG]}, "parameters": {"truncate": True}}),
        ("/similarity", {"inputs": {"source_sentence": LONG, "sentences": ["今天天气不错"]}, "window": 8}),
        ("/tokenize", {"inputs": ["今天天气很好", LONG]}),
        ("/decode", {"ids": [[101, 2000, 102], [5, 6]]}),
        ("/fill-mask", {"inputs": ["北京是[MASK]国的首都", "北京[MASK][MASK]"], "top_k": 3}),
        ("/fill-mask", {"inputs": ["没有掩码"]}),
        ("/pipeline/fill-mask", {"inputs": ["北京是[MASK]国的首都", "[MASK]天[MASK]气"], "parameters": {"top_k": 2}}),
        ("/scm", {"inputs": [TRIP, {"A": LONG, "B": "北京", "C": "今天天气很好"}]}),
        ("/scm", {"inputs": TRIP, "window": 8, "stride": 2}),
        ("/rerank", {"query": "今天天气", "texts": ["今天天气不错", LONG], "truncate": True}),
        ("/rerank", {"query": LONG, "texts": ["今天天气不错", LONG, "北京"], "truncate": True, "truncation_direction": "left", "return_text": True}),
        ("/rerank", {"query": "今天天气", "texts": []}),
        ("/v1/rerank", {"query": "今天天气", "documents": ["今天天气不错", {"text": "北京"}, "今天"], "top_n": 2, "return_documents": True}),
        ("/", {"inputs": "北京"}),
        ("/predict", {"inputs": "北京"}),
    ],
    "tiny-char-proj": [
        ("/ner", {"inputs": "张三在北京工作"}),
        ("/ner", {"inputs": ["张三在北京工作", LONG], "truncate": True, "truncation_direction": "left"}),
        ("/pipeline/token-classification", {"inputs": ["张三在北京工作", "李四"]}),
        ("/ner", {"inputs": [LONG]}),
    ],
    "tiny-qa": [
        ("/qa", {"inputs": Q}),
        ("/qa", {"inputs": [Q, {"question": "谁？", "context": LONG}], "max_answer_tokens": 4}),
        ("/qa", {"inputs": {"question": "谁？", "context": LONG}, "doc_stride": 4}),
        ("/qa", {"inputs": {"question": "谁？", "context": LONG}, "truncate": True}),
        ("/qa", {"inputs": {"question": "谁？", "context": LONG}}),
        ("/qa", {"inputs": {"question": "谁？", "context": ""}}),
    ],
}


def start(binary, model):
    p = subprocess.Popen([binary, "serve", "-m", model, "--port", "0", "--threads", "1",
                          "--max-input-length", "24"],
                         stderr=subprocess.PIPE, text=True)
    for line in p.stderr:
        m = re.search(r"http://[^ ]*:(\d+)", line)
        if m:
            return p, int(m.group(1))
    raise SystemExit(f"{binary}: no port")


def post(port, path, body):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


def main():
    old, new, models = sys.argv[1:4]
    bad = 0
    for model, reqs in REQUESTS.items():
        servers = [start(b, f"{models}/{model}.gguf") for b in (old, new)]
        try:
            for path, body in reqs:
                (s1, b1), (s2, b2) = (post(port, path, body) for _, port in servers)
                same = s1 == s2 and b1 == b2
                bad += not same
                print(f"{'same' if same else 'DIFF'} {model} {path} {s1} {len(b1)}B"
                      + ("" if same else f"\n  old {s1} {b1[:200]!r}\n  new {s2} {b2[:200]!r}"))
        finally:
            for p, _ in servers:
                p.terminate()
                p.wait()
    print(f"{bad} differences")
    sys.exit(1 if bad else 0)


main()
