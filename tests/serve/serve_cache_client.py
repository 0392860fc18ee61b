"""serve_cache_client.py SUITE ARGS... — checks `roformer serve --cache-mb`
against servers on 127.0.0.1 and prints one line per check: "ok WHAT" or
"FAIL WHAT: detail" (tests/serve/test_serve_cache.sh starts the servers and
counts the lines). The expected bytes come from a server of the same model
without a cache, never from the server under test.

Suites:
  same PLAIN CACHED HEAD   every route the model answers (HEAD: cls, mlm,
                           ner or qa), each request sent to PLAIN, then twice
                           to CACHED: the three bodies are the same bytes,
                           the second is all hits (x-compute-tokens 0); then
                           requests mixing inputs seen and unseen
  counters PLAIN CACHED    hits, misses and x-compute-tokens move by what
                           each request holds; duplicates in one request run
                           once; 8 clients at once get the plain bytes
  dedupe PLAIN             a request with duplicates on a server without a
                           cache: the values of the one without, its tokens
  evict CACHED MIB TEXTS   distinct inputs past MIB MiB: evictions, and
                           roformer_cache_bytes never over MIB MiB; the
                           least recently used go first
  reload CACHED            after POST /admin/reload the same inputs miss
                           again and give the same bytes
"""
import sys
import threading

import requests

SENTENCES = ["今天天气很好", "这家酒店的服务很差，房间也很脏", "我们明天去北京", "价格便宜，性价比高",
             "hello world 你好", "房间很大，早餐不错", "不推荐", "还可以吧，一般般"]
FRESH = ["第%d句：%s" % (i, s) for i, s in enumerate(SENTENCES * 4)]


def report(what, ok, detail=""):
    print(("ok %s" % what) if ok else ("FAIL %s: %s" % (what, detail)), flush=True)
    return ok


def post(url, path, body):
    return requests.post(url + path, json=body, timeout=60)


def metrics(url):
    """GET /metrics as {series: value}."""
    out = {}
    for line in requests.get(url + "/metrics", timeout=10).text.splitlines():
        if line and not line.startswith("#"):
            series, _, value = line.rpartition(" ")
            out[series] = float(value)
    return out


def cache_counts(url):
    m = metrics(url)
    return {k: m.get("roformer_cache_%s" % k, -1)
            for k in ("hits_total", "misses_total", "evictions_total", "bytes")}


def tokens(r):
    return int(r.headers.get("x-compute-tokens", "-1"))


def bodies_equal(what, plain, cached):
    """plain and cached responses: both 200, the same bytes."""
    ok = plain.status_code == 200 and cached.status_code == 200 and plain.content == cached.content
    return report(what, ok, "status %d / %d, bodies %r / %r" % (
        plain.status_code, cached.status_code, plain.content[:120], cached.content[:120]))


# ==== same: every route, off against on (first and second time) ====

def requests_for(head, plain):
    """(path, body) of every route the model of HEAD answers."""
    two = SENTENCES[:3] + [SENTENCES[0]]  # a duplicate in the request too
    if head == "cls":
        ids = [t["id"] for t in post(plain, "/tokenize", {"inputs": SENTENCES[1]}).json()[0]]
        return [
            ("/embed", {"inputs": two}),
            ("/embed", {"inputs": SENTENCES[0]}),
            ("/embed", {"inputs": two, "normalize": False}),
            ("/embed", {"inputs": [SENTENCES[1] * 3], "truncate": True}),
            ("/embed", {"inputs": [SENTENCES[1] * 3], "truncate": True,
                        "truncation_direction": "left"}),
            ("/embed", {"inputs": [SENTENCES[1] * 3], "window": 8, "stride": 4}),
            ("/embed_all", {"inputs": two}),
            ("/v1/embeddings", {"input": two}),
            ("/v1/embeddings", {"input": two, "encoding_format": "base64"}),
            ("/v1/embeddings", {"input": two, "dimensions": 16}),
            ("/v1/embeddings", {"input": [ids, ids[:4], ids]}),
            ("/embeddings", {"input": SENTENCES[2]}),
            ("/predict", {"inputs": [[s] for s in two]}),
            ("/predict", {"inputs": [[s] for s in two], "raw_scores": True}),
            ("/predict", {"inputs": [[SENTENCES[0], SENTENCES[1]], [SENTENCES[1], SENTENCES[0]]]}),
            ("/", {"inputs": SENTENCES[3]}),
            ("/pipeline/text-classification", {"inputs": two}),
            ("/similarity", {"inputs": {"source_sentence": SENTENCES[0], "sentences": two}}),
            ("/rerank", {"query": SENTENCES[0], "texts": two}),
            ("/rerank", {"query": SENTENCES[0], "texts": two, "raw_scores": True,
                         "return_text": True}),
            ("/v1/rerank", {"query": SENTENCES[1], "documents": two, "top_n": 2}),
            ("/scm", {"inputs": [{"A": SENTENCES[0], "B": SENTENCES[1], "C": SENTENCES[2]},
                                 {"A": SENTENCES[0], "B": SENTENCES[1], "C": SENTENCES[2]},
                                 {"A": SENTENCES[3], "B": SENTENCES[1], "C": SENTENCES[0]}]}),
        ]
    if head == "mlm":
        masked = ["今天[MASK]气很好", "我们明天去[MASK]京", "今天[MASK]气很好"]
        return [
            ("/fill-mask", {"inputs": masked}),
            ("/fill-mask", {"inputs": masked, "top_k": 2}),
            ("/pipeline/fill-mask", {"inputs": masked, "parameters": {"top_k": 3}}),
            ("/rerank", {"query": SENTENCES[0], "texts": two}),
            ("/embed", {"inputs": two}),
        ]
    if head == "ner":
        return [
            ("/ner", {"inputs": two}),
            ("/ner", {"inputs": ["我们明天去北京", "我们明天去北京 "]}),  # one text more
            ("/pipeline/token-classification", {"inputs": two}),
        ]
    context = "北京是中国的首都，也是一座历史悠久的城市。上海是中国最大的经济中心。"
    q = [{"question": "中国的首都是哪里？", "context": context},
         {"question": "上海是什么？", "context": context}]
    return [
        ("/qa", {"inputs": q + q[:1]}),
        ("/qa", {"inputs": q, "max_answer_tokens": 4}),
        ("/qa", {"inputs": [{"question": x["question"], "context": context * 3} for x in q],
                 "doc_stride": 16}),
    ]


def suite_same(plain, cached, head):
    engine_routes = 0
    for path, body in requests_for(head, plain):
        what = "%s %s" % (path, str(body)[:60])
        p = post(plain, path, body)
        first = post(cached, path, body)
        second = post(cached, path, body)
        bodies_equal("%s: cache on, first time, the bytes of cache off" % what, p, first)
        bodies_equal("%s: cache on, second time (hits), the same bytes" % what, p, second)
        report("%s: second time all hits, x-compute-tokens 0" % what, tokens(second) == 0,
               "x-compute-tokens %d" % tokens(second))
        report("%s: first time no more tokens than cache off" % what,
               0 <= tokens(first) <= tokens(p), "%d, off %d" % (tokens(first), tokens(p)))
        engine_routes += 1
    report("%s: %d requests checked" % (head, engine_routes), engine_routes >= 3)

    # inputs seen and unseen in one request
    short = "。".join(SENTENCES[:4])
    mixes = {"cls": ("/embed", lambda xs: {"inputs": xs}),
             "mlm": ("/fill-mask", lambda xs: {"inputs": [x + "[MASK]" for x in xs]}),
             "ner": ("/ner", lambda xs: {"inputs": xs}),
             "qa": ("/qa", lambda xs: {"inputs": [{"question": x, "context": short}
                                                  for x in xs]})}
    path, make = mixes[head]
    seen, unseen = SENTENCES[:2], ["%s 新的" % s for s in SENTENCES[4:7]]
    post(cached, path, make(seen))
    before = cache_counts(cached)
    mixed = [unseen[0], seen[0], unseen[1], seen[1], unseen[2], unseen[0]]
    p = post(plain, path, make(mixed))
    c = post(cached, path, make(mixed))
    bodies_equal("%s: hits and misses in one request, the bytes of cache off" % path, p, c)
    after = cache_counts(cached)
    report("%s: 2 hits and 4 misses counted" % path,
           after["hits_total"] - before["hits_total"] == 2 and
           after["misses_total"] - before["misses_total"] == 4, "%s -> %s" % (before, after))
    only_unseen = post(plain, path, make(unseen))
    report("%s: x-compute-tokens counts the 3 distinct misses only" % path,
           tokens(c) == tokens(only_unseen), "%d, want %d" % (tokens(c), tokens(only_unseen)))


# ==== counters ====

def suite_counters(plain, cached):
    texts = FRESH[:5]
    c0 = cache_counts(cached)
    r1 = post(cached, "/embed", {"inputs": texts})
    c1 = cache_counts(cached)
    report("5 new inputs: 5 misses, no hit",
           c1["misses_total"] - c0["misses_total"] == 5 and c1["hits_total"] == c0["hits_total"],
           "%s -> %s" % (c0, c1))
    report("5 new inputs: the cache holds more bytes", c1["bytes"] > c0["bytes"],
           "%s -> %s" % (c0["bytes"], c1["bytes"]))
    batched = metrics(cached).get("roformer_batch_inputs_sum")
    r2 = post(cached, "/embed", {"inputs": texts})
    c2 = cache_counts(cached)
    report("the same 5 again: answered without a batch (roformer_batch_inputs_sum unchanged)",
           batched is not None and metrics(cached).get("roformer_batch_inputs_sum") == batched)
    report("the same 5 again: 5 hits, no miss",
           c2["hits_total"] - c1["hits_total"] == 5 and c2["misses_total"] == c1["misses_total"],
           "%s -> %s" % (c1, c2))
    report("the same 5 again: same bytes, x-compute-tokens 0",
           r1.content == r2.content and tokens(r2) == 0 and tokens(r1) > 0,
           "tokens %d then %d" % (tokens(r1), tokens(r2)))
    report("the same bytes as without a cache",
           r1.content == post(plain, "/embed", {"inputs": texts}).content)
    # another job on the same texts is another entry
    post(cached, "/embed", {"inputs": texts, "normalize": False})
    c3 = cache_counts(cached)
    report("normalize is applied after the cache: those 5 hit",
           c3["hits_total"] - c2["hits_total"] == 5)
    r4 = post(cached, "/embed_all", {"inputs": texts})
    c4 = cache_counts(cached)
    report("/embed_all of those texts: another job, 5 misses",
           c4["misses_total"] - c3["misses_total"] == 5, "%s -> %s" % (c3, c4))
    report("/embed_all: the bytes of cache off",
           r4.content == post(plain, "/embed_all", {"inputs": texts}).content)
    # two texts that tokenize alike share an entry (the tokenizer lower-cases)
    post(cached, "/embed", {"inputs": ["HELLO World 你好 %d" % 7]})
    c5 = cache_counts(cached)
    post(cached, "/embed", {"inputs": ["hello world 你好 %d" % 7]})
    c6 = cache_counts(cached)
    report("texts with the same token ids share an entry",
           c6["hits_total"] - c5["hits_total"] == 1, "%s -> %s" % (c5, c6))
    # duplicates in one request: one runs
    dup = FRESH[10]
    single = post(plain, "/embed", {"inputs": [dup]})
    c7 = cache_counts(cached)
    r = post(cached, "/embed", {"inputs": [dup, dup, dup]})
    c8 = cache_counts(cached)
    report("3 equal new inputs: x-compute-tokens of one", tokens(r) == tokens(single),
           "%d, one: %d" % (tokens(r), tokens(single)))
    report("3 equal new inputs: one entry put",
           c8["bytes"] > c7["bytes"] and post(cached, "/embed", {"inputs": [dup]}).content ==
           single.content)
    # many clients at once, inputs overlapping
    want = {i: post(plain, "/embed", {"inputs": FRESH[i % 7:i % 7 + 4]}).content for i in range(7)}
    bad = []

    def client(k):
        for j in range(12):
            i = (k + j) % 7
            got = post(cached, "/embed", {"inputs": FRESH[i:i + 4]}).content
            if got != want[i]:
                bad.append(i)
    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    report("8 clients at once, 96 requests: every body the bytes of cache off", not bad,
           "%d differ" % len(bad))


# ==== dedupe: a server without a cache ====

def suite_dedupe(plain):
    a, b = SENTENCES[1], SENTENCES[2]
    for path, make in (("/embed", lambda xs: {"inputs": xs}),
                       ("/predict", lambda xs: {"inputs": [[x] for x in xs]}),
                       ("/embed_all", lambda xs: {"inputs": xs})):
        two = post(plain, path, make([a, b]))
        dups = post(plain, path, make([a, b, a, a, b]))
        j2, j5 = two.json(), dups.json()
        report("%s [a, b, a, a, b]: the values of [a, b], exactly" % path,
               two.status_code == dups.status_code == 200 and
               j5 == [j2[0], j2[1], j2[0], j2[0], j2[1]])
        report("%s [a, b, a, a, b]: x-compute-tokens of [a, b]" % path,
               tokens(dups) == tokens(two) > 0, "%d, want %d" % (tokens(dups), tokens(two)))
    m = metrics(plain)
    report("without --cache-mb the cache series read 0",
           m.get("roformer_cache_hits_total") == 0 and m.get("roformer_cache_bytes") == 0)


# ==== evict ====

def suite_evict(cached, mib, texts_file):
    limit = float(mib) * 1024 * 1024
    texts = [l.split("\t")[0] for l in open(texts_file, encoding="utf-8").read().splitlines()]
    texts = list(dict.fromkeys(t for t in texts if t))[:1200]
    worst = 0.0
    first = texts[:8]
    post(cached, "/embed_all", {"inputs": first})
    for k in range(0, len(texts), 16):
        post(cached, "/embed_all", {"inputs": texts[k:k + 16]})
        c = cache_counts(cached)
        worst = max(worst, c["bytes"])
    c = cache_counts(cached)
    report("%d distinct /embed_all inputs past %s MiB: evictions" % (len(texts), mib),
           c["evictions_total"] > 0, str(c))
    report("roformer_cache_bytes stayed within %s MiB (largest seen %d)" % (mib, worst),
           0 < worst <= limit, "largest %d, limit %d" % (worst, limit))
    # the oldest went first: the first inputs miss, the last ones hit
    before = cache_counts(cached)
    post(cached, "/embed_all", {"inputs": texts[-4:]})
    mid = cache_counts(cached)
    post(cached, "/embed_all", {"inputs": first[:4]})
    after = cache_counts(cached)
    report("the most recent inputs are still there (4 hits)",
           mid["hits_total"] - before["hits_total"] == 4, "%s -> %s" % (before, mid))
    report("the least recently used went first (4 misses)",
           after["misses_total"] - mid["misses_total"] == 4, "%s -> %s" % (mid, after))


# ==== reload ====

def suite_reload(cached):
    body = {"inputs": SENTENCES[:4]}
    first = post(cached, "/embed", body)
    c0 = cache_counts(cached)
    second = post(cached, "/embed", body)
    c1 = cache_counts(cached)
    report("before the reload: 4 hits", c1["hits_total"] - c0["hits_total"] == 4)
    r = requests.post(cached + "/admin/reload", timeout=120)
    report("POST /admin/reload: 200", r.status_code == 200, r.text[:200])
    c2 = cache_counts(cached)
    report("the reload dropped the model's entries (roformer_cache_bytes 0)", c2["bytes"] == 0,
           str(c2))
    third = post(cached, "/embed", body)
    c3 = cache_counts(cached)
    report("after the reload the same inputs miss again (4 misses, no hit)",
           c3["misses_total"] - c2["misses_total"] == 4 and c3["hits_total"] == c2["hits_total"],
           "%s -> %s" % (c2, c3))
    report("after the reload: computed again (x-compute-tokens > 0), the same bytes",
           tokens(third) > 0 and first.content == second.content == third.content)


def main():
    suite, args = sys.argv[1], sys.argv[2:]
    {"same": suite_same, "counters": suite_counters, "dedupe": suite_dedupe,
     "evict": suite_evict, "reload": suite_reload}[suite](*args)


if __name__ == "__main__":
    main()
