"""serve_invariance_client.py URL DIR — 16 concurrent clients against one
`roformer serve` (models "cls" and "mlm"), each sending the texts of
DIR/texts.txt (and DIR/masked.txt to fill-mask) in random groups of 1 to 6,
in random order; every answer must be the bytes the CLI gave the text run
alone (DIR/embed.jsonl, classify.jsonl, fill_mask.jsonl, from --batch-size 1
--threads 1): floats compared as float32, exactly. Prints "ok WHAT" /
"FAIL WHAT: detail" lines (tests/serve/serve_helpers.sh's client_checks)."""
import json
import random
import sys
import threading
import urllib.request

import numpy as np

url, folder = sys.argv[1], sys.argv[2]


def lines(name):
    with open(f"{folder}/{name}", encoding="utf-8") as f:
        return [line.rstrip("\n") for line in f]


texts, masked = lines("texts.txt"), lines("masked.txt")
embed_ref = [np.float32(json.loads(l)["embedding"]) for l in lines("embed.jsonl")]
classify_ref = [json.loads(l)["scores"] for l in lines("classify.jsonl")]
fill_ref = [json.loads(l)["masks"] for l in lines("fill_mask.jsonl")]


def post(route, body):
    req = urllib.request.Request(url + route, json.dumps(body).encode(),
                                 {"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=60) as r:
        return json.loads(r.read())


def f32(x):
    return np.float32(x)


def same_embedding(i, got):
    return np.array_equal(np.float32(got), embed_ref[i])


def same_classify(i, got):
    # /predict: every label, best first; the CLI: {"label": score} per label
    want = {k: f32(v) for k, v in classify_ref[i].items()}
    return {d["label"]: f32(d["score"]) for d in got} == want


def same_fill(i, got):
    want = [[(d["id"], f32(d["score"])) for d in mask] for mask in fill_ref[i]]
    return [[(d["id"], f32(d["score"])) for d in mask] for mask in got["masks"]] == want


jobs = [
    ("/models/cls/embed", lambda group: {"inputs": [texts[i] for i in group],
                                         "normalize": False}, same_embedding),
    ("/models/cls/predict", lambda group: {"inputs": [[texts[i]] for i in group]},
     same_classify),
    ("/models/mlm/fill-mask", lambda group: {"inputs": [masked[i] for i in group], "top_k": 5},
     same_fill),
]
differ = {route: [] for route, _, _ in jobs}
errors = []
answers = [0]
lock = threading.Lock()


def client(seed):
    rnd = random.Random(seed)
    for _ in range(12):
        route, body, same = jobs[rnd.randrange(len(jobs))]
        group = rnd.sample(range(len(texts)), rnd.randint(1, 6))
        try:
            got = post(route, body(group))
        except Exception as e:  # noqa: BLE001 - any failure is a failed check
            with lock:
                errors.append(f"{route}: {e}")
            continue
        with lock:
            for i, g in zip(group, got):
                answers[0] += 1
                if not same(i, g):
                    differ[route].append(i)


threads = [threading.Thread(target=client, args=(s,)) for s in range(16)]
for t in threads:
    t.start()
for t in threads:
    t.join()
print(("ok" if not errors else "FAIL") + " 16 concurrent clients: every request answered" +
      ("" if not errors else f": {len(errors)} failed, first {errors[0]}"))
print(("ok" if answers[0] >= 16 * 12 else "FAIL") + f" {answers[0]} answers compared")
for route, bad in differ.items():
    print(("ok" if not bad else "FAIL") + f" {route}: every answer is the text's bytes alone" +
          ("" if not bad else f": {len(bad)} differ, first text {bad[0]}"))
