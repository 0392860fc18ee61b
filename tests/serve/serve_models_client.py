"""serve_models_client.py SUITE ARGS... — checks a `roformer serve` of
several models, its reload and its replicas, started by
tests/serve/test_serve_models.sh; prints one line per check ("ok WHAT" or
"FAIL WHAT: detail"). Expected numbers come from one-model servers (whose
answers tests/serve/test_serve.sh holds to the CLI's), from the `roformer` CLI,
or from the files themselves (sha256 by hashlib), never from the server
under test.

Suites:
  two URL_TWO URL_A URL_B PATH_A PATH_B   a server of a=PATH_A, b=PATH_B
      against one-model servers of each: the same bytes per request, the
      choice by path prefix and by "model", 404 for an unknown name,
      GET /v1/models, /info's checksum, the metrics' model label
  reload URL ROFORMER LIVE OLD NEW PID LOG  a client loop on URL (serving
      a=LIVE, a copy of OLD) while NEW is renamed over LIVE and PID gets
      SIGHUP: no failed request, answers going from OLD's numbers to NEW's;
      then a broken file: one log line, NEW still served
  replicas URL_1 URL_2    servers of one model with --replicas 1 and 2: the
      same bytes
  replica_limits URL      --replicas 2 --max-concurrent-requests 2: two
      held requests take both slots, a third is 429
"""
import hashlib
import json
import math
import os
import signal
import socket
import subprocess
import sys
import threading
import time

import requests

from serve_client import read_status

TOL = 1e-5
SENTENCES = ["今天天气很好", "这家酒店的服务很差，房间也很脏", "我们明天去北京"]


def report(what, ok, detail=""):
    print(("ok %s" % what) if ok else ("FAIL %s: %s" % (what, str(detail)[:300])), flush=True)
    return ok


def post(url, path, body, **kw):
    return requests.post(url + path, json=body, timeout=60, **kw)


def unit(v):
    n = math.sqrt(sum(x * x for x in v))
    return [x / n for x in v]


def close(a, b):
    return len(a) == len(b) and all(abs(x - y) <= TOL for x, y in zip(a, b))


def cli_vector(roformer, model, text):
    out = subprocess.run([roformer, "embed", "-m", model, "--no-progress"],
                         input=(json.dumps({"text": text}, ensure_ascii=False) + "\n").encode(),
                         stdout=subprocess.PIPE, check=True, timeout=120).stdout.decode()
    return unit(json.loads(out.splitlines()[0])["embedding"])


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def same_bytes(what, r, want):
    report(what, r.status_code == want.status_code == 200 and r.content == want.content,
           "%d %r vs %d %r" % (r.status_code, r.content[:120], want.status_code, want.content[:120]))


# ==== Two models against two one-model servers ====

def suite_two(two, url_a, url_b, path_a, path_b):
    emb = {"inputs": SENTENCES}
    same_bytes("/models/a/embed = a's own server's /embed", post(two, "/models/a/embed", emb),
               post(url_a, "/embed", emb))
    same_bytes("/models/b/embed = b's own server's /embed", post(two, "/models/b/embed", emb),
               post(url_b, "/embed", emb))
    same_bytes("/embed without a choice runs the first model", post(two, "/embed", emb),
               post(url_a, "/embed", emb))
    pred = {"inputs": SENTENCES[1]}
    same_bytes("/models/b/predict = b's own /predict", post(two, "/models/b/predict", pred),
               post(url_b, "/predict", pred))
    same_bytes("/models/b/ (the model's task) = b's own POST /", post(two, "/models/b/", pred),
               post(url_b, "/", pred))
    for name, url in (("a", url_a), ("b", url_b)):
        body = {"input": SENTENCES, "model": name}
        same_bytes('/v1/embeddings "model": "%s" = its own server\'s answer' % name,
                   post(two, "/v1/embeddings", body), post(url, "/v1/embeddings", body))
    rr = {"query": "这个东西怎么样", "documents": ["还行吧", "很好"], "model": "b"}
    same_bytes('/v1/rerank "model": "b" = b\'s own /v1/rerank', post(two, "/v1/rerank", rr),
               post(url_b, "/v1/rerank", rr))
    r = post(two, "/models/a/predict", pred)
    report("/models/a/predict: a's head (mlm) has no classifier: 400", r.status_code == 400, r.text)

    # unknown names: 404 naming the models, in each API's shape
    r = post(two, "/models/zz/embed", emb)
    body = r.json() if r.headers.get("content-type") == "application/json" else {}
    report("/models/zz/embed: 404 in TEI's shape listing a, b",
           r.status_code == 404 and body.get("error_type") == "NotFound" and
           "'zz'" in body.get("error", "") and "a, b" in body.get("error", ""), r.text)
    r = post(two, "/v1/embeddings", {"input": "x", "model": "zz"})
    err = r.json().get("error", {}) if r.status_code == 404 else {}
    report('/v1/embeddings "model": "zz": 404 in OpenAI\'s shape, param model, listing a, b',
           r.status_code == 404 and err.get("param") == "model" and
           err.get("code") == "model_not_found" and "a, b" in err.get("message", ""), r.text)
    r = post(two, "/v1/rerank", dict(rr, model="zz"))
    report('/v1/rerank "model": "zz": 404', r.status_code == 404, r.text)
    r = requests.get(two + "/models/zz/info", timeout=10)
    report("GET /models/zz/info: 404", r.status_code == 404, r.text)

    r = requests.get(two + "/v1/models", timeout=10)
    data = r.json().get("data", []) if r.status_code == 200 else []
    report("GET /v1/models: OpenAI's list of a and b",
           r.status_code == 200 and r.json().get("object") == "list" and
           [m.get("id") for m in data] == ["a", "b"] and
           all(m.get("object") == "model" and isinstance(m.get("created"), int) and
               m.get("owned_by") for m in data), r.text)

    for name, path in (("a", path_a), ("b", path_b)):
        info = requests.get(two + "/models/%s/info" % name, timeout=10).json()
        report("/models/%s/info: model_id %s, the file's sha256, models a and b" % (name, name),
               info.get("model_id") == name and info.get("file_sha256") == sha256(path) and
               info.get("models") == ["a", "b"] and info.get("load") == 1 and
               isinstance(info.get("loaded_at"), str), info)
    info = requests.get(two + "/info", timeout=10).json()
    report("/info without a prefix is the first model's", info.get("model_id") == "a", info)

    text = requests.get(two + "/metrics", timeout=10).text
    report("/metrics: requests counted per model (model=\"b\" on /predict)",
           'roformer_requests_total{model="b",route="/predict",status="200"} 1' in text, text[:300])
    report("/metrics: each model's queue", 'roformer_queue_size{model="a"} 0' in text and
           'roformer_queue_size{model="b"} 0' in text)
    report("/metrics: te_ series per model too",
           'te_request_success{model="b",method="single"}' in text)


# ==== Reload under load ====

def suite_reload(url, roformer, live, old, new, pid, log):
    pid = int(pid)
    want_old = cli_vector(roformer, old, SENTENCES[0])
    want_new = cli_vector(roformer, new, SENTENCES[0])
    report("the two models differ (else the switch could not be seen)", not close(want_old, want_new))
    seen, failures, stop = [], [], threading.Event()
    sent, answered, seen_lock = [], [], threading.Lock()

    def loop():
        with requests.Session() as s:
            while not stop.is_set():
                sent_at = time.monotonic()
                try:
                    r = s.post(url + "/embed", json={"inputs": SENTENCES[0]}, timeout=60)
                except requests.RequestException as e:
                    failures.append(repr(e))
                    continue
                if r.status_code != 200:
                    failures.append("%d %s" % (r.status_code, r.text[:100]))
                    continue
                v = r.json()[0]
                label = "old" if close(v, want_old) else "new" if close(v, want_new) else "other"
                with seen_lock:
                    seen.append(label)
                    sent.append(sent_at)
                    answered.append(time.monotonic())

    clients = [threading.Thread(target=loop) for _ in range(3)]
    for t in clients:
        t.start()
    deadline = time.monotonic() + 30
    while len(seen) < 30 and time.monotonic() < deadline:
        time.sleep(0.01)
    # the new model goes to a temporary name, then over the live path at once
    with open(new, "rb") as f, open(live + ".tmp", "wb") as g:
        g.write(f.read())
    os.rename(live + ".tmp", live)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 60
    while "new" not in seen[-5:] and time.monotonic() < deadline:
        time.sleep(0.01)
    n = len(seen)
    while len(seen) < n + 30 and time.monotonic() < deadline:
        time.sleep(0.01)
    stop.set()
    for t in clients:
        t.join(60)
    report("reload under load: no request failed (%d answered)" % len(seen), not failures,
           failures[:3])
    report("every answer is the old model's or the new one's", "other" not in seen)
    # A request admitted before the switch may still be answered after the
    # first new answer (its batch runs on the old weights beside the new
    # ones), so order alone proves nothing; but a request sent after a new
    # answer arrived was admitted after the switch and must be answered by
    # the new model.
    first_new = seen.index("new") if "new" in seen else len(seen)
    switched_at = answered[first_new] if first_new < len(seen) else float("inf")
    late_old = [i for i, label in enumerate(seen) if label == "old" and sent[i] > switched_at]
    report("answers switch from the old model to the new one",
           "old" in seen[:first_new] and first_new < len(seen) and not late_old and
           seen.count("new") >= 25, (late_old, seen[first_new - 3:first_new + 12]))
    info = requests.get(url + "/info", timeout=10).json()
    report("/info after the reload: the new file's sha256, load 2",
           info.get("file_sha256") == sha256(new) and info.get("load") == 2, info)
    with open("/proc/%d/maps" % pid) as f:
        maps = f.read()
    report("the old weights are unmapped once their requests are done",
           "(deleted)" not in maps, [l for l in maps.splitlines() if "gguf" in l])

    # a broken file: the reload fails, the model loaded last goes on serving
    with open(log) as f:
        before = f.read().count("\n")
    with open(live + ".tmp", "wb") as g:
        g.write(b"GGUF not really a model")
    os.rename(live + ".tmp", live)
    os.kill(pid, signal.SIGHUP)
    deadline = time.monotonic() + 30
    lines = []
    while not lines and time.monotonic() < deadline:
        time.sleep(0.05)
        with open(log) as f:
            lines = [l for l in f.read().splitlines()[before:] if "reload" in l]
    report("a broken file: one log line saying the model was not reloaded and why",
           len(lines) == 1 and "a: not reloaded, still serving load 2" in lines[0], lines)
    r = post(url, "/embed", {"inputs": SENTENCES[0]})
    report("after it, the model loaded last still answers",
           r.status_code == 200 and close(r.json()[0], want_new), r.text[:200])
    r = requests.post(url + "/admin/reload", timeout=60)
    m = r.json().get("models", [{}])[0] if r.headers.get("content-type") == "application/json" else {}
    report("POST /admin/reload of the broken file: 500, reloaded false, why, load 2 still",
           r.status_code == 500 and m.get("name") == "a" and m.get("reloaded") is False and
           "not reloaded" in m.get("message", "") and m.get("load") == 2, r.text)
    with open(new, "rb") as f, open(live + ".tmp", "wb") as g:
        g.write(f.read())
    os.rename(live + ".tmp", live)
    r = requests.post(url + "/admin/reload", timeout=60)
    m = r.json().get("models", [{}])[0] if r.status_code == 200 else {}
    report("POST /admin/reload of a good file: 200, reloaded, load 3",
           m.get("reloaded") is True and m.get("load") == 3 and
           m.get("file_sha256") == sha256(new), r.text)


# ==== Replicas ====

def suite_replicas(url_1, url_2):
    for k, text in enumerate(SENTENCES + [SENTENCES]):
        body = {"inputs": text}
        same_bytes("--replicas 2 answers as --replicas 1 (/embed %d)" % k,
                   post(url_2, "/embed", body), post(url_1, "/embed", body))
    pred = {"inputs": [[t] for t in SENTENCES]}
    same_bytes("--replicas 2 answers as --replicas 1 (/predict)", post(url_2, "/predict", pred),
               post(url_1, "/predict", pred))
    # many at once: every answer still its own sentence's (batched with
    # others, its numbers equal its own within TOL, not in every byte)
    want = {t: post(url_1, "/embed", {"inputs": t}).json()[0] for t in SENTENCES}
    got, lock = [], threading.Lock()

    def one(i):
        t = SENTENCES[i % len(SENTENCES)]
        r = post(url_2, "/embed", {"inputs": t})
        with lock:
            got.append(r.status_code == 200 and close(r.json()[0], want[t]))
    threads = [threading.Thread(target=one, args=(i,)) for i in range(24)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    report("24 concurrent requests over 2 replicas: each its own sentence's numbers",
           len(got) == 24 and all(got), got)


def held_request(port, body):
    """A request whose headers are in and whose body is not: it holds a slot."""
    s = socket.create_connection(("127.0.0.1", port), timeout=30)
    head = ("POST /embed HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % len(body))
    s.sendall(head.encode() + body[:5])
    return s


def suite_replica_limits(url):
    port = int(url.rsplit(":", 1)[1])
    body = json.dumps({"inputs": SENTENCES[0]}).encode()
    held = [held_request(port, body) for _ in range(2)]

    def in_flight():
        for line in requests.get(url + "/metrics", timeout=10).text.splitlines():
            if line.startswith("roformer_requests_in_flight "):
                return float(line.split()[1])
        return -1
    deadline = time.monotonic() + 30
    while in_flight() != 2 and time.monotonic() < deadline:
        time.sleep(0.01)
    r = post(url, "/embed", {"inputs": "x"})
    report("--replicas 2, --max-concurrent-requests 2 taken: a third request is 429",
           r.status_code == 429, r.status_code)
    for s in held:
        s.sendall(body[5:])
        s.settimeout(30)
        status, answer = read_status(s)
        report("a held request, finished, is 200", status == 200, (status, answer[:40]))
    r = post(url, "/embed", {"inputs": "x"})
    report("then the slots are free again", r.status_code == 200, r.status_code)


def main():
    suites = {"two": suite_two, "reload": suite_reload, "replicas": suite_replicas,
              "replica_limits": suite_replica_limits}
    suites[sys.argv[1]](*sys.argv[2:])


if __name__ == "__main__":
    main()
