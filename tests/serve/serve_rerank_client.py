"""serve_rerank_client.py — the rerank suites of tests/serve/serve_client.py
(run through it: serve_client.py SUITE URL ROFORMER MODEL). Expected numbers
come from the `roformer` CLI on the same model (classify, forward,
similarity), never from the server, and are reordered here.

Suites:
  rerank         a three-label classifier (started with
                 --max-client-batch-size 4 --max-input-length 24): /rerank,
                 /v1/rerank, their errors, truncation_direction on /predict and
                 /similarity's parameters, POST / answering /predict
  reranker       a one-label classifier made from it (its label-2 row, started
                 with --auto-truncate --max-input-length 16); $RERANK_SOURCE is
                 the three-label model whose logit 2 it must give
  rerank_cosine  a model without a classifier: cosine scores, POST / embeds
  similarity_prompt  a sentence-transformers folder with a "query" prompt:
                 /similarity's parameters.prompt_name
"""
import json
import math
import os
import subprocess

import requests

from serve_client import (TOL, cli, close, concurrently, error_is, forward, openai_error_is, post,
                          report)

QUERY = "这个东西怎么样"
DOCS = ["还行吧", "很好的产品，非常满意", "质量很差，不推荐", "价格便宜，性价比高"]
LONG = "今天天气很好，我们明天去北京玩，" * 3


def ranked(scores):
    """Indices best first, equal scores in input order."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


def pairs(query, docs):
    return [{"text": query, "text_pair": d} for d in docs]


def sim_pairs(query, docs):
    """`roformer similarity`'s input fields."""
    return [{"text_a": query, "text_b": d} for d in docs]


def tei_expected(scores, docs=None):
    out = [{"index": i, "score": scores[i]} for i in ranked(scores)]
    if docs:
        for o in out:
            o["text"] = docs[o["index"]]
    return out


def suite_rerank(url, roformer, model):
    exp = [c["scores"]["positive"] for c in cli(roformer, model, "classify", pairs(QUERY, DOCS))]
    r = post(url, "/rerank", {"query": QUERY, "texts": DOCS})
    report("/rerank: every document best first, the CLI's probability of \"positive\"",
           r.status_code == 200 and close(r.json(), tei_expected(exp)), r.text[:300])
    r = post(url, "/rerank", {"query": QUERY, "texts": DOCS, "return_text": True})
    report("/rerank return_text: each hit carries its text",
           r.status_code == 200 and close(r.json(), tei_expected(exp, DOCS)), r.text[:300])
    logits = [f["logits"][2] for f in forward(roformer, model, pairs(QUERY, DOCS))]
    r = post(url, "/rerank", {"query": QUERY, "texts": DOCS, "raw_scores": True})
    report("/rerank raw_scores: `roformer forward`'s logit of label 2, ranked",
           r.status_code == 200 and close(r.json(), tei_expected(logits)), r.text[:300])

    docs = [DOCS[0], {"text": DOCS[1]}, DOCS[2], {"text": DOCS[3]}]
    r = post(url, "/v1/rerank", {"model": "my-reranker", "query": QUERY, "documents": docs,
                                 "top_n": 2, "return_documents": True})
    j = r.json() if r.status_code == 200 else {}
    want = [{"index": i, "relevance_score": exp[i], "document": {"text": DOCS[i]}}
            for i in ranked(exp)[:2]]
    report("/v1/rerank top_n 2, return_documents, documents as strings or {\"text\"}",
           r.status_code == 200 and close(j.get("results"), want) and j.get("model") == "my-reranker"
           and j.get("scoring") == "classifier" and j.get("usage", {}).get("total_tokens", 0) > 0,
           r.text[:400])
    r = post(url, "/v1/rerank", {"query": QUERY, "documents": DOCS})
    j = r.json() if r.status_code == 200 else {}
    report("/v1/rerank defaults: every document, no document text",
           r.status_code == 200 and
           close(j.get("results"), [{"index": i, "relevance_score": exp[i]} for i in ranked(exp)]),
           r.text[:300])

    error_is(post(url, "/rerank", {"query": QUERY, "texts": DOCS + ["x"]}), 413,
             "/rerank with 5 texts over --max-client-batch-size 4 is 413", "texts")
    # /v1/rerank, under /v1/, answers errors in OpenAI's shape (as llama.cpp's server)
    openai_error_is(post(url, "/v1/rerank", {"query": QUERY, "documents": DOCS + ["x"]}), 413,
                    "/v1/rerank with 5 documents is 413", "documents")
    error_is(post(url, "/rerank", {"query": QUERY, "texts": []}), 422, "/rerank empty texts is 422",
             "texts")
    error_is(post(url, "/rerank", {"texts": DOCS}), 422, "/rerank without query is 422", "query")
    error_is(post(url, "/rerank", {"query": 3, "texts": DOCS}), 422, "a query not a string is 422",
             "query")
    error_is(post(url, "/rerank", {"query": QUERY, "texts": "one"}), 422,
             "texts not a list is 422", "texts")
    error_is(post(url, "/rerank", {"query": QUERY, "texts": ["a", 5]}), 422,
             "a text not a string is 422 naming it", "texts[1]")
    openai_error_is(post(url, "/v1/rerank", {"query": QUERY, "documents": ["a", {"x": 1}]}), 400,
                    "a document object without text is 400 naming it", "documents[1].text")
    openai_error_is(post(url, "/v1/rerank", {"query": QUERY, "documents": DOCS, "top_n": 0}), 400,
                    "top_n 0 is 400", "top_n")
    error_is(post(url, "/rerank", {"query": QUERY, "texts": DOCS, "return_text": "yes"}), 422,
             "return_text not a boolean is 422", "return_text")
    error_is(post(url, "/rerank", {"query": QUERY, "texts": DOCS, "truncation_direction": "up"}),
             422, "an unknown truncation_direction is 422 naming it", "truncation_direction")
    error_is(post(url, "/rerank", {"query": QUERY, "texts": ["a", LONG]}), 422,
             "a pair over --max-input-length 24 is 422 naming the text", "texts[1]")

    # concurrent rerank requests share batches and each gets its own ranking
    queries = [QUERY, DOCS[1], "好不好"]
    want = {q: [c["scores"]["positive"] for c in cli(roformer, model, "classify", pairs(q, DOCS))]
            for q in queries}
    results = {}
    def client(i):
        q = queries[i % len(queries)]
        rr = post(url, "/rerank", {"query": q, "texts": DOCS})
        results[i] = (q, rr.json() if rr.status_code == 200 else None)
    errors = concurrently(12, client)
    report("12 concurrent /rerank requests, 3 queries: each gets its own query's ranking",
           not errors and len(results) == 12 and
           all(v is not None and close(v, tei_expected(want[q])) for q, v in results.values()),
           errors[:2] or [k for k, (q, v) in results.items() if v is None][:5])

    # truncation: right and left cut different ends, each as the CLI's --max-length 24
    got = {}
    for side in ("right", "left"):
        want = [c["scores"]["positive"] for c in
                cli(roformer, model, "classify", pairs(QUERY, [LONG]), "--max-length", "24",
                    "--truncation-direction", side)]
        r = post(url, "/rerank", {"query": QUERY, "texts": [LONG], "truncate": True,
                                  "truncation_direction": side})
        got[side] = r.json()[0]["score"] if r.status_code == 200 else None
        report("/rerank truncate, truncation_direction %s: the CLI's --truncation-direction %s"
               % (side, side), got[side] is not None and abs(got[side] - want[0]) <= TOL,
               "%s vs %s" % (r.text[:200], want))
    report("left and right truncation score differently",
           None not in got.values() and got["left"] != got["right"], got)
    for side, tei in (("left", "Left"), ("right", "Right")):
        exp = cli(roformer, model, "classify", [{"text": LONG}], "--max-length", "24",
                  "--truncation-direction", side)[0]
        r = post(url, "/predict", {"inputs": LONG, "truncate": True, "truncation_direction": tei})
        report("/predict truncation_direction %s equals the CLI's" % tei,
               r.status_code == 200 and
               close({p["label"]: p["score"] for p in r.json()}, exp["scores"]), r.text[:300])

    # /similarity's TEI parameters
    sim_body = {"inputs": {"source_sentence": LONG, "sentences": [DOCS[1]]}}
    error_is(post(url, "/similarity", sim_body), 422,
             "/similarity with a long source and no truncate is 422", "source_sentence")
    for side in ("right", "left"):
        want = cli(roformer, model, "similarity", sim_pairs(LONG, [DOCS[1]]),
                   "--max-length", "24", "--truncation-direction", side)[0]["cosine"]
        r = post(url, "/similarity", dict(sim_body, parameters={"truncate": True,
                                                                "truncation_direction": side}))
        report("/similarity parameters {truncate, truncation_direction: %s} as the CLI" % side,
               r.status_code == 200 and abs(r.json()[0] - want) <= TOL, "%s vs %s" % (r.text, want))
    error_is(post(url, "/similarity", dict(sim_body, parameters={"truncate": "yes"})), 422,
             "parameters.truncate of the wrong type is 422 naming it", "parameters.truncate")
    error_is(post(url, "/similarity", dict(sim_body, parameters={"prompt_name": "query"})), 422,
             "parameters.prompt_name on a model without prompts is 422", "parameters.prompt_name")
    error_is(post(url, "/similarity", dict(sim_body, parameters=[1])), 422,
             "parameters not an object is 422", "parameters")

    # POST / on a three-label classifier is /predict
    a = post(url, "/", {"inputs": DOCS[1]})
    b = post(url, "/predict", {"inputs": DOCS[1]})
    report("POST / on a classifier answers as /predict",
           a.status_code == 200 and close(a.json(), b.json()), a.text[:200])
    info = requests.get(url + "/info", timeout=10).json()
    report("/info: rerank scoring classifier on label \"positive\", auto_truncate false",
           info.get("rerank") == {"scoring": "classifier", "label": "positive"} and
           info.get("auto_truncate") is False, info.get("rerank"))


def suite_reranker(url, roformer, model):
    source = os.environ["RERANK_SOURCE"]
    fwd = forward(roformer, source, pairs(QUERY, DOCS))
    logit2 = [f["logits"][2] for f in fwd]
    sig = [1 / (1 + math.exp(-x)) for x in logit2]
    info = requests.get(url + "/info", timeout=10).json()
    report("/info of a one-label classifier: TEI's reranker model_type, auto_truncate",
           info.get("model_type") == {"reranker": {"id2label": {"0": "LABEL_0"},
                                                   "label2id": {"LABEL_0": 0}}} and
           info.get("auto_truncate") is True, info.get("model_type"))
    r = post(url, "/rerank", {"query": QUERY, "texts": DOCS})
    report("/rerank on one label: sigmoid of the three-label model's logit 2",
           r.status_code == 200 and close(r.json(), tei_expected(sig)), "%s vs %s" % (r.text[:300], sig))
    r = post(url, "/rerank", {"query": QUERY, "texts": DOCS, "raw_scores": True})
    report("/rerank raw_scores on one label: that logit",
           r.status_code == 200 and close(r.json(), tei_expected(logit2)), r.text[:300])
    r = post(url, "/", {"query": QUERY, "texts": DOCS})
    report("POST / on a one-label classifier reranks",
           r.status_code == 200 and close(r.json(), tei_expected(sig)), r.text[:300])
    r = post(url, "/rerank", {"query": QUERY, "texts": [LONG]})
    report("--auto-truncate: a long pair is cut without \"truncate\"", r.status_code == 200,
           r.text[:200])
    error_is(post(url, "/rerank", {"query": QUERY, "texts": [LONG], "truncate": False}), 422,
             "--auto-truncate: \"truncate\": false still refuses it", "texts[0]")


def suite_rerank_cosine(url, roformer, model):
    exp = [c["cosine"] for c in cli(roformer, model, "similarity", sim_pairs(QUERY, DOCS + [QUERY]))]
    r = post(url, "/rerank", {"query": QUERY, "texts": DOCS + [QUERY]})
    report("/rerank without a classifier: the CLI's cosine similarity, ranked",
           r.status_code == 200 and close(r.json(), tei_expected(exp)) and
           r.json()[0]["index"] == len(DOCS), r.text[:300])
    r = post(url, "/v1/rerank", {"query": QUERY, "documents": DOCS, "top_n": 1})
    j = r.json() if r.status_code == 200 else {}
    report("/v1/rerank says it scored by cosine", j.get("scoring") == "cosine" and
           len(j.get("results", [])) == 1, r.text[:300])
    info = requests.get(url + "/info", timeout=10).json()
    report("/info: rerank scoring cosine", info.get("rerank") == {"scoring": "cosine"},
           info.get("rerank"))
    a = post(url, "/", {"inputs": DOCS[:2]})
    b = post(url, "/embed", {"inputs": DOCS[:2]})
    report("POST / on an embedding model answers as /embed",
           a.status_code == 200 and close(a.json(), b.json()), a.text[:200])

    # Query and document are embedded apart, so they are tokenized and
    # counted apart (the server runs with --max-input-length 24): each may
    # be 24 tokens, whatever the two together, and the tokens counted are
    # the query's once per document plus each document's.
    def token_counts(texts):
        """`roformer tokenize`'s token count of each text, in one run."""
        out = subprocess.run([roformer, "tokenize", "-m", model],
                             input="".join(t + "\n" for t in texts).encode(),
                             stdout=subprocess.PIPE, check=True, timeout=60).stdout.decode()
        return [len(json.loads(l)["input_ids"]) for l in out.splitlines()]
    prefixes = [LONG[:k] for k in range(1, len(LONG))]
    counts = token_counts([QUERY, DOCS[0]] + prefixes)
    q_tokens, first_doc_tokens = counts[0], counts[1]
    doc, doc_tokens = max(((p, n) for p, n in zip(prefixes, counts[2:]) if n <= 24),
                          key=lambda pn: len(pn[0]))
    report("a document of at most 24 tokens that is over 24 with the query (%d + %d)"
           % (q_tokens, doc_tokens), q_tokens + doc_tokens - 1 > 24)
    exp = [c["cosine"] for c in cli(roformer, model, "similarity", sim_pairs(QUERY, [doc, DOCS[0]]))]
    r = post(url, "/rerank", {"query": QUERY, "texts": [doc, DOCS[0]]})
    report("/rerank: a query and document that fit apart are scored, the CLI's cosine",
           r.status_code == 200 and close(r.json(), tei_expected(exp)), r.text[:300])
    want_tokens = 2 * q_tokens + doc_tokens + first_doc_tokens
    report("x-compute-tokens: the query once per document, and each document",
           r.headers.get("x-compute-tokens") == str(want_tokens),
           (r.headers.get("x-compute-tokens"), want_tokens))
    r = post(url, "/v1/rerank", {"query": QUERY, "documents": [doc, DOCS[0]]})
    report("/v1/rerank usage.prompt_tokens counts the same",
           r.status_code == 200 and r.json().get("usage", {}).get("prompt_tokens") == want_tokens,
           r.text[-200:])
    error_is(post(url, "/rerank", {"query": QUERY, "texts": [DOCS[0], LONG]}), 422,
             "/rerank: a document over --max-input-length is 422 naming it", "texts[1]")
    error_is(post(url, "/rerank", {"query": LONG, "texts": DOCS}), 422,
             "/rerank: a query over --max-input-length is 422 naming the query", "query")
    for side in ("right", "left"):
        exp = [c["cosine"] for c in cli(roformer, model, "similarity", sim_pairs(LONG, [LONG, doc]),
                                        "--max-length", "24", "--truncation-direction", side)]
        r = post(url, "/rerank", {"query": LONG, "texts": [LONG, doc], "truncate": True,
                                  "truncation_direction": side})
        report("/rerank truncate %s: query and document cut apart, as the CLI's --max-length 24"
               % side, r.status_code == 200 and close(r.json(), tei_expected(exp)),
               "%s vs %s" % (r.text[:200], exp))


def suite_similarity_prompt(url, roformer, model):
    prompt = json.load(open(os.path.join(model, "config_sentence_transformers.json")))["prompts"]["query"]
    body = {"inputs": {"source_sentence": QUERY, "sentences": DOCS[:2]}}
    plain = [c["cosine"] for c in cli(roformer, model, "similarity", sim_pairs(QUERY, DOCS[:2]))]
    prompted = [c["cosine"] for c in cli(roformer, model, "similarity",
                                         sim_pairs(prompt + QUERY, [prompt + d for d in DOCS[:2]]))]
    r = post(url, "/similarity", body)
    report("/similarity without prompt_name: the texts as they are",
           r.status_code == 200 and close(r.json(), plain), "%s vs %s" % (r.text, plain))
    r = post(url, "/similarity", dict(body, parameters={"prompt_name": "query"}))
    report("/similarity parameters.prompt_name \"query\": the prompt before every sentence",
           r.status_code == 200 and close(r.json(), prompted) and prompted != plain,
           "%s vs %s" % (r.text, prompted))
    error_is(post(url, "/similarity", dict(body, parameters={"prompt_name": "passage"})), 422,
             "a prompt_name the model does not define is 422 naming it", "parameters.prompt_name")
