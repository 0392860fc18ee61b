"""serve_promises_client.py SUITE URL PID [ARGS...] — what docs/serving.md
promises of `roformer serve`'s drain, refusals, counters, limits and
headers, held against a running server on 127.0.0.1 (PID: its process).
Prints one line per check: "ok WHAT" or "FAIL WHAT: detail";
tests/serve/test_serve_promises.sh starts the servers and counts the lines.

Suites:
  drain          after SIGTERM, a request other than /metrics on a
                 connection already open is 503 (TEI's shape, OpenAI's on
                 /v1/), counted as te_request_failure{err="unhealthy"}.
  queue_timeout  the 503 of --queue-timeout says Overloaded in TEI's shape
                 and server_error in OpenAI's, and counts as "overloaded".
  cap CAP        --max-connections CAP under a soft open-file limit below
                 it: the server raised its limit, serves CAP connections at
                 once and closes the next one unanswered.
  first_model    with models a and b, a 401, a 404 and a 429 asked of b or
                 of no model served count for a, the first.
  unknown_fields a field a route does not know changes nothing: every POST
                 route answers the same bytes with and without one.
  te_failures    te_request_failure moves by one under the err each error
                 of serving.md's list names; te_request_tokenization_duration
                 counts every success.
  times          x-* times against what they measure: the parts within the
                 total, the inference as the batch's forward passes, the
                 queue covering the batches run ahead of it.
  gone LOG       clients that hang up, or only shut their sending side,
                 while queued: dropped, logged 499 in LOG.
  reload FILE    two reloads at once run one after the other; file_sha256
                 is FILE's checksum for a file and null for a directory.
  hf_sha FILE    an hf: model's file_sha256 is its pulled copy FILE's.
  prefix_wins    under /models/NAME/ the prefix picks the model, "model"
                 is only echoed.
  bad_neighbours good and bad requests at once: the good ones as alone.
  examples DOC.. the curl examples of the docs answer as shown.
  idle SECONDS   --request-timeout closes silent connections.

Every wait polls with a deadline."""
import concurrent.futures
import hashlib
import json
import os
import re
import resource
import signal
import socket
import sys
import time

import requests

from serve_client import metrics, raw_request, read_status, report, wait_for
from serve_connections import BUSY_BODY, LONG, host_port, poll_until

TEXT = "今天天气很好"


def value(m, series):
    """One sample of /metrics as parsed by metrics(); 0 when absent (a
    counter not yet moved is left out of te_request_failure)."""
    return m.get(series, 0.0)


def moved(before, after, series):
    return value(after, series) - value(before, series)


def tei_error(r, status, error_type):
    """Whether r is `status` with TEI's error shape and this error_type."""
    try:
        j = r.json()
    except ValueError:
        return False
    return (r.status_code == status and isinstance(j.get("error"), str) and
            j.get("error_type") == error_type)


def openai_error(r, status, kind):
    """Whether r is `status` with OpenAI's error shape and this type."""
    try:
        e = r.json().get("error")
    except (ValueError, AttributeError):
        return False
    return (r.status_code == status and isinstance(e, dict) and isinstance(e.get("message"), str)
            and e.get("type") == kind and "param" in e and "code" in e)


def sha256(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


# ==== drain ====

def suite_drain(url, pid):
    port = int(url.rsplit(":", 1)[1])
    # connections opened before the signal, one per request after it (a
    # draining server closes each connection after its answer)
    sessions = {k: requests.Session() for k in ("watch", "embed", "openai", "health", "after")}
    for s in sessions.values():
        s.get(url + "/health", timeout=10)
    before = metrics(url)
    # a request begun and not finished keeps the server draining
    body = json.dumps({"inputs": TEXT}).encode()
    held = raw_request(port, "/embed", body, send_all=False, key="")
    report("the held request has begun (roformer_requests_in_flight 1)",
           wait_for(lambda: metrics(url).get("roformer_requests_in_flight") == 1, 30))
    report("before the signal, roformer_draining 0", "\nroformer_draining 0\n" in
           sessions["watch"].get(url + "/metrics", timeout=10).text)
    os.kill(pid, signal.SIGTERM)
    try:
        drained = wait_for(lambda: "\nroformer_draining 1\n" in
                           sessions["watch"].get(url + "/metrics", timeout=10).text, 30)
    except requests.RequestException as e:
        drained = report("draining: /metrics on an open connection", False, repr(e))
    report("after SIGTERM, /metrics on an open connection says roformer_draining 1", drained)

    def ask(name, method, path, **kw):
        try:
            return sessions[name].request(method, url + path, timeout=10, **kw)
        except requests.RequestException as e:
            return e
    r = ask("embed", "POST", "/embed", json={"inputs": TEXT})
    report("draining: POST /embed on a connection already open is 503 in TEI's shape",
           not isinstance(r, Exception) and tei_error(r, 503, "Unhealthy"),
           r if isinstance(r, Exception) else "%d %s" % (r.status_code, r.text[:200]))
    r = ask("openai", "POST", "/v1/embeddings", json={"input": TEXT})
    report("draining: POST /v1/embeddings on a connection already open is 503 in OpenAI's shape "
           "(server_error)", not isinstance(r, Exception) and openai_error(r, 503, "server_error"),
           r if isinstance(r, Exception) else "%d %s" % (r.status_code, r.text[:200]))
    r = ask("health", "GET", "/health")
    report("draining: GET /health on a connection already open is 503 (only /metrics answers)",
           not isinstance(r, Exception) and r.status_code == 503,
           r if isinstance(r, Exception) else r.status_code)
    r = ask("after", "GET", "/metrics")
    after = {}
    if not isinstance(r, Exception):
        for line in r.text.splitlines():
            if line and not line.startswith("#"):
                series, _, v = line.rpartition(" ")
                after[series] = float(v)
    report("draining: the 503 of /embed and /v1/embeddings counted as "
           "te_request_failure{err=\"unhealthy\"} (2 more)",
           moved(before, after, 'te_request_failure{err="unhealthy"}') == 2,
           {k: v for k, v in after.items() if k.startswith("te_request_failure")})
    held.sendall(body[5:])
    status, _ = read_status(held)
    report("draining: the request begun before SIGTERM is still answered 200", status == 200, status)


# ==== --queue-timeout ====

def burst(url, path, body, n=48):
    """n concurrent requests of `body`; their responses."""
    def one(_):
        return requests.post(url + path, json=body, timeout=120)
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def suite_queue_timeout(url, pid):
    before = metrics(url)
    tei = [r for r in burst(url, "/embed", BUSY_BODY) if r.status_code == 503]
    openai = [r for r in burst(url, "/v1/embeddings", {"input": [LONG] * 32, "truncate": True})
              if r.status_code == 503]
    report("--queue-timeout: a burst on /embed and one on /v1/embeddings each have 503s",
           tei and openai, "%d and %d" % (len(tei), len(openai)))
    report("--queue-timeout: each 503 of /embed is TEI's error with error_type Overloaded and "
           "Retry-After: 1", all(tei_error(r, 503, "Overloaded") and
                                  r.headers.get("Retry-After") == "1" for r in tei),
           [r.text[:120] for r in tei[:2]])
    report("--queue-timeout: each 503 of /v1/embeddings is OpenAI's error, type server_error, "
           "with Retry-After: 1", all(openai_error(r, 503, "server_error") and
                                      r.headers.get("Retry-After") == "1" for r in openai),
           [r.text[:120] for r in openai[:2]])
    after = metrics(url)
    n = moved(before, after, 'te_request_failure{err="overloaded"}')
    report("--queue-timeout: every 503 counted as te_request_failure{err=\"overloaded\"}",
           n == len(tei) + len(openai), "%s counted, %d 503s" % (n, len(tei) + len(openai)))


# ==== --max-connections under a low open-file limit ====

def soft_file_limit(pid):
    for line in open("/proc/%d/limits" % pid):
        if line.startswith("Max open files"):
            return int(line.split()[3])
    return 0


HEALTH = b"GET /health HTTP/1.1\r\nHost: x\r\n\r\n"


def health_on(sock, timeout=10):
    """Sends GET /health on an open connection; its status, or 0 when the
    connection closes or stays silent first."""
    sock.settimeout(timeout)
    try:
        sock.sendall(HEALTH)
        data = b""
        while b"\r\n\r\n" not in data:
            chunk = sock.recv(4096)
            if not chunk:
                return 0
            data += chunk
        head, _, rest = data.partition(b"\r\n\r\n")
        length = [int(l.split(b":")[1]) for l in head.split(b"\r\n")
                  if l.lower().startswith(b"content-length:")]
        while length and len(rest) < length[0]:
            rest += sock.recv(4096)
        return int(head.split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def suite_cap(url, pid, cap):
    cap = int(cap)
    limit = soft_file_limit(pid)
    report("the server raised its soft open-file limit to hold --max-connections %d (now %d)"
           % (cap, limit), limit >= cap, limit)
    socks = []
    try:
        for _ in range(cap):
            socks.append(socket.create_connection(host_port(url), timeout=10))
        answered = sum(health_on(s) == 200 for s in socks)
        report("%d connections open at once, each answered" % cap, answered == cap,
               "%d of %d answered" % (answered, cap))
        extra = socket.create_connection(host_port(url), timeout=10)
        status = health_on(extra, 5)
        extra.close()
        report("connection %d, over --max-connections, is closed unanswered" % (cap + 1),
               status == 0, "answered %d" % status)
        socks.pop().close()

        def next_served():
            s = socket.create_connection(host_port(url), timeout=10)
            socks.append(s)
            return health_on(s, 5) == 200
        report("once one of them closes, a new connection is served",
               poll_until(10, next_served))
    finally:
        for s in socks:
            s.close()


# ==== several models: refusals count for the first ====

def suite_first_model(url, pid):
    port = int(url.rsplit(":", 1)[1])
    auth = {"Authorization": "Bearer secret"}
    series = 'roformer_requests_total{model="%s",route="%s",status="%d"}'
    fail = 'te_request_failure{model="%s",err="%s"}'

    def check(what, send, route, status, err):
        before = metrics(url, auth)
        r = send()
        after = metrics(url, auth)
        report("%s: %d, counted for the first model a (%s, err %s), not for b" % (what, status, route, err),
               r.status_code == status and moved(before, after, series % ("a", route, status)) == 1
               and moved(before, after, series % ("b", route, status)) == 0 and
               moved(before, after, fail % ("a", err)) == 1 and
               moved(before, after, fail % ("b", err)) == 0,
               "status %d; a %s, b %s" % (r.status_code,
                                          moved(before, after, series % ("a", route, status)),
                                          moved(before, after, series % ("b", route, status))))
    text = requests.get(url + "/metrics", headers=auth, timeout=10).text
    samples = [l for l in text.splitlines() if l and not l.startswith("#")]
    unlabelled = [l for l in samples if not l.startswith(("roformer_requests_in_flight ",
                                                         "roformer_draining "))
                  and not l.split(" ")[0].split("{", 1)[-1].startswith('model="')]
    report("two models: every /metrics series but roformer_requests_in_flight and "
           "roformer_draining has model=\"NAME\" as its first label",
           samples and not unlabelled and "roformer_requests_in_flight 0" in samples and
           "roformer_draining 0" in samples, unlabelled[:5])
    report("... both models' series there (roformer_queue_size of a and of b)",
           'roformer_queue_size{model="a"} 0' in samples and
           'roformer_queue_size{model="b"} 0' in samples)
    check("POST /models/b/embed without the key",
          lambda: requests.post(url + "/models/b/embed", json={"inputs": TEXT}, timeout=30),
          "/embed", 401, "other")
    check("POST /models/nobody/embed", lambda: requests.post(
        url + "/models/nobody/embed", json={"inputs": TEXT}, headers=auth, timeout=30),
        "/embed", 404, "other")
    check("POST /v1/embeddings with model \"nobody\"", lambda: requests.post(
        url + "/v1/embeddings", json={"input": TEXT, "model": "nobody"}, headers=auth, timeout=30),
        "/v1/embeddings", 404, "other")
    body = json.dumps({"inputs": TEXT}).encode()
    held = raw_request(port, "/models/b/embed", body, send_all=False)
    report("a request to b holds the only slot",
           wait_for(lambda: metrics(url, auth).get("roformer_requests_in_flight") == 1, 30))
    check("POST /models/b/embed while --max-concurrent-requests 1 is taken",
          lambda: requests.post(url + "/models/b/embed", json={"inputs": TEXT}, headers=auth,
                                timeout=30), "/embed", 429, "overloaded")
    r = requests.post(url + "/models/a/embed", json={"inputs": TEXT}, headers=auth, timeout=30)
    report("--max-concurrent-requests holds for the server as a whole: a request to a while "
           "b's holds the slot is 429", r.status_code == 429, r.status_code)
    before = metrics(url, auth)
    held.sendall(body[5:])
    status, _ = read_status(held)
    after = metrics(url, auth)
    report("the held request, answered 200, counts for b",
           status == 200 and moved(before, after, series % ("b", "/embed", 200)) == 1, status)


# ==== fields a route does not know ====

UNKNOWN = {"zz_unknown": {"nested": [1, "x", None]}, "options": True}


def suite_unknown_fields(url, pid):
    # (model, route, body, a body with unknown fields inside its objects)
    qa = {"question": "天气怎么样", "context": "今天天气很好，我们去公园散步吧。"}
    cases = [
        ("cls", "/embed", {"inputs": [TEXT, "不推荐"]}, None),
        ("cls", "/embed_all", {"inputs": TEXT}, None),
        ("cls", "/v1/embeddings", {"input": [TEXT], "model": "cls"}, None),
        ("cls", "/embeddings", {"input": TEXT}, None),
        ("cls", "/predict", {"inputs": [[TEXT], [TEXT, "不推荐"]]}, None),
        ("cls", "/similarity", {"inputs": {"source_sentence": TEXT, "sentences": ["不推荐"]}},
         {"inputs": {"source_sentence": TEXT, "sentences": ["不推荐"], "zz": 1},
          "parameters": {"zz": 1}}),
        ("cls", "/tokenize", {"inputs": TEXT}, None),
        ("cls", "/decode", {"ids": [[101, 791, 102]]}, None),
        ("cls", "/scm", {"inputs": {"A": TEXT, "B": "不推荐", "C": "很好"}},
         {"inputs": {"A": TEXT, "B": "不推荐", "C": "很好", "zz": 1}}),
        ("cls", "/pipeline/text-classification", {"inputs": TEXT}, None),
        ("cls", "/rerank", {"query": TEXT, "texts": ["不推荐", "很好"]}, None),
        ("cls", "/v1/rerank", {"query": TEXT, "documents": [{"text": "不推荐"}, "很好"]},
         {"query": TEXT, "documents": [{"text": "不推荐", "zz": 1}, "很好"]}),
        ("cls", "/", {"inputs": TEXT}, None),
        ("mlm", "/fill-mask", {"inputs": "今天[MASK]气很好"}, None),
        ("mlm", "/pipeline/fill-mask", {"inputs": "今天[MASK]气很好", "parameters": {"top_k": 3}},
         {"inputs": "今天[MASK]气很好", "parameters": {"top_k": 3, "zz": 1}}),
        ("ner", "/ner", {"inputs": TEXT}, None),
        ("ner", "/pipeline/token-classification", {"inputs": TEXT}, None),
        ("qa", "/qa", {"inputs": qa}, {"inputs": dict(qa, zz=1)}),
    ]
    for model, route, body, nested in cases:
        path = "/models/%s%s" % (model, route)
        plain = requests.post(url + path, json=body, timeout=60)
        extra = requests.post(url + path, json=dict(body, **UNKNOWN), timeout=60)
        report("POST %s with unknown top-level fields: 200, the same bytes as without" % path,
               plain.status_code == 200 and extra.status_code == 200 and
               plain.content == extra.content,
               "%d %r / %d %r" % (plain.status_code, plain.text[:100], extra.status_code,
                                  extra.text[:100]))
        if nested:
            inner = requests.post(url + path, json=nested, timeout=60)
            report("POST %s with unknown fields inside its objects: the same bytes" % path,
                   plain.status_code == 200 and inner.status_code == 200 and
                   plain.content == inner.content, "%d %r" % (inner.status_code, inner.text[:150]))


def suite_prefix_wins(url, pid):
    """Models cls and mlm (hidden sizes alike, weights not): under
    /models/NAME/ the prefix chooses, "model" is only echoed."""
    def vectors(path, model):
        r = requests.post(url + path, json={"input": [TEXT], "model": model}, timeout=60)
        j = r.json() if r.status_code == 200 else {}
        return [d["embedding"] for d in j.get("data", [])], j.get("model")
    cls, _ = vectors("/v1/embeddings", "cls")
    mlm, _ = vectors("/v1/embeddings", "mlm")
    got, echoed = vectors("/models/cls/v1/embeddings", "mlm")
    report("/models/cls/v1/embeddings with \"model\": \"mlm\": cls's vectors, \"mlm\" echoed",
           cls and cls != mlm and got == cls and echoed == "mlm", (echoed, got[:1]))
    got, echoed = vectors("/models/mlm/v1/embeddings", "nobody")
    report("/models/mlm/v1/embeddings with a \"model\" not served: mlm's vectors, the name echoed",
           mlm and got == mlm and echoed == "nobody", echoed)


def suite_bad_neighbours(url, pid):
    """Good and bad requests at once, under /models/cls/: each good one gets
    what it gets alone (within 1e-5, as serving.md's Batching says of
    neighbours), each bad one its own refusal."""
    good = [{"inputs": [TEXT, s]} for s in ("不推荐", "很好", "价格便宜，性价比高", "hello world")]
    alone = [requests.post(url + "/models/cls/embed", json=b, timeout=60).json() for b in good]
    bad = [(b"{\"inputs\": ", 422), (json.dumps({"inputs": []}).encode(), 422),
           (json.dumps({"inputs": LONG}).encode(), 422),
           (json.dumps({"inputs": [TEXT] * 40}).encode(), 413),
           (json.dumps({"inputs": "\u4eca", "truncate": "yes"}).encode(), 422)]
    jobs = [("good", i) for i in range(len(good))] * 4 + [("bad", i) for i in range(len(bad))] * 4

    def send(job):
        kind, i = job
        if kind == "good":
            r = requests.post(url + "/models/cls/embed", json=good[i], timeout=60)
            return r.status_code == 200 and all(
                max(abs(a - b) for a, b in zip(x, y)) <= 1e-5 for x, y in zip(r.json(), alone[i]))
        r = requests.post(url + "/models/cls/embed", data=bad[i][0], timeout=60,
                          headers={"Content-Type": "application/json"})
        return r.status_code == bad[i][1]
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        results = list(pool.map(send, jobs))
    report("%d good and %d bad requests at once: every good one as it is alone (within 1e-5), "
           "every bad one refused with its own status" % (len(good) * 4, len(bad) * 4),
           all(results), [j for j, ok in zip(jobs, results) if not ok])


def close_to(a, b, tol):
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(close_to(a[k], b[k], tol) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(close_to(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, float) or isinstance(b, float):
        return abs(a - b) <= tol
    return a == b


def suite_examples(url, pid, *docs):
    """The curl examples of README.md and docs/serving.md (a `-d BODY` and
    the `# ANSWER` comment after it), against tiny-word-cls as the first
    model: the same answer, scores within 1e-6 (the examples print 7 or 8
    significant digits of the f32 scores)."""
    for doc in docs:
        # a curl command (lines joined at a trailing backslash), then "# ANSWER"
        text = open(doc, encoding="utf-8").read().replace("\\\n", " ")
        found = re.findall(r"^(curl -s [^\n]*)\n# (\[.*\])$", text, re.M)
        report("%s has its curl examples with answers" % os.path.basename(doc), found, doc)
        for command, answer in found:
            path = re.search(r"(?:localhost|127\.0\.0\.1):8080(/[\w/-]*)", command).group(1)
            body = re.search(r"-d '(\{[^']*\})'", command).group(1)
            r = requests.post(url + path, data=body.encode(), timeout=60,
                              headers={"Content-Type": "application/json"})
            report("%s: POST %s %s answers as shown" % (os.path.basename(doc), path, body[:40]),
                   r.status_code == 200 and close_to(r.json(), json.loads(answer), 1e-6),
                   "%d %s, shown %s" % (r.status_code, r.text[:200], answer))


# ==== --request-timeout: silent connections closed ====

def closed_after(sock, seconds):
    """Seconds until the server closes `sock` (reads end-of-file or a
    reset), at most `seconds`; None when it is still open then."""
    t = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(4096):
            pass
    except socket.timeout:
        return None
    except OSError:
        pass
    return time.monotonic() - t


def suite_idle(url, pid, timeout_s):
    timeout_s = float(timeout_s)
    silent = socket.create_connection(host_port(url), timeout=10)
    between = socket.create_connection(host_port(url), timeout=10)
    status = health_on(between)
    t = time.monotonic()
    took = [closed_after(silent, timeout_s + 5), None]
    took[1] = closed_after(between, max(0.1, timeout_s + 5 - (time.monotonic() - t)))
    took[1] = took[1] and time.monotonic() - t
    silent.close()
    between.close()
    report("--request-timeout %g: a connection that sends nothing is closed after it "
           "(within %g to %g s)" % (timeout_s, timeout_s - 1, timeout_s + 5),
           took[0] is not None and took[0] >= timeout_s - 1, took[0])
    report("--request-timeout %g: a connection silent after its request (answered %d) is closed "
           "after it too" % (timeout_s, status),
           status == 200 and took[1] is not None and took[1] >= timeout_s - 1, took[1])


# ==== te_request_failure by err, te_request_tokenization_duration ====

def suite_te_failures(url, pid):
    port = int(url.rsplit(":", 1)[1])
    errs = ["validation", "tokenizer", "empty", "overloaded", "unhealthy", "backend", "other"]

    def only(err, what, send, status):
        before = metrics(url)
        r = send()
        after = metrics(url)
        moves = {e: moved(before, after, 'te_request_failure{err="%s"}' % e) for e in errs}
        report("%s: %d, te_request_failure{err=\"%s\"} one more, no other err" % (what, status, err),
               r.status_code == status and moves == {e: (1 if e == err else 0) for e in errs},
               "status %d, moves %s" % (r.status_code, moves))
    info = requests.get(url + "/info", timeout=10).json()
    report("/info tokenization_workers = max_concurrent_requests (1)",
           info.get("tokenization_workers") == info.get("max_concurrent_requests") == 1, info)
    text = requests.get(url + "/metrics", timeout=10).text
    labelled = [l for l in text.splitlines() if 'model="' in l]
    report("one model: no series has a model label", "roformer_queue_size 0" in text and
           not labelled, labelled[:3])
    only("validation", "POST /embed with bad JSON",
         lambda: requests.post(url + "/embed", data=b"{\"inputs\": ", timeout=30), 422)
    only("validation", "POST /embed of an input over --max-input-length",
         lambda: requests.post(url + "/embed", json={"inputs": LONG}, timeout=30), 422)
    only("empty", "POST /embed of an empty list",
         lambda: requests.post(url + "/embed", json={"inputs": []}, timeout=30), 422)
    only("other", "POST /models/nobody/embed (a model not served)",
         lambda: requests.post(url + "/models/nobody/embed", json={"inputs": TEXT}, timeout=30), 404)
    body = json.dumps({"inputs": TEXT}).encode()
    held = raw_request(port, "/embed", body, send_all=False, key="")
    report("a request holds the only slot",
           wait_for(lambda: metrics(url).get("roformer_requests_in_flight") == 1, 30))
    only("overloaded", "POST /embed while --max-concurrent-requests 1 is taken",
         lambda: requests.post(url + "/embed", json={"inputs": TEXT}, timeout=30), 429)
    held.sendall(body[5:])
    read_status(held)

    before = metrics(url)
    statuses = [requests.post(url + path, json=b, timeout=30).status_code for path, b in
                [("/embed", {"inputs": TEXT}), ("/predict", {"inputs": TEXT}),
                 ("/v1/embeddings", {"input": [TEXT, "不推荐"]})]]
    after = metrics(url)
    hist = "te_request_tokenization_duration"
    report("3 requests answered 200: te_request_tokenization_duration_count 3 more, its sum grows",
           statuses == [200] * 3 and moved(before, after, hist + "_count") == 3 and
           moved(before, after, hist + "_sum") > 0 and
           moved(before, after, hist + '_bucket{le="+Inf"}') == 3,
           "%s; count +%s, sum +%s" % (statuses, moved(before, after, hist + "_count"),
                                       moved(before, after, hist + "_sum")))
    report("... and te_request_duration_count, te_request_queue_duration_count, "
           "te_request_inference_duration_count 3 more each",
           all(moved(before, after, "te_request_%s_count" % h) == 3
               for h in ("duration", "queue_duration", "inference_duration")))


# ==== x-* times ====

TIMES = ["x-total-time", "x-compute-time", "x-tokenization-time", "x-queue-time",
         "x-inference-time"]


def timed_post(url, body):
    """POST /embed: the response, its x-* times (ms) and the client's own
    milliseconds around it."""
    t = time.monotonic()
    r = requests.post(url + "/embed", json=body, timeout=120)
    wall = (time.monotonic() - t) * 1000
    times = {h: int(r.headers[h]) for h in TIMES if r.headers.get(h, "").isdigit()}
    return r, times, wall


def parts_fit(t):
    return len(t) == len(TIMES) and t["x-compute-time"] == t["x-total-time"] and \
        t["x-tokenization-time"] + t["x-queue-time"] + t["x-inference-time"] <= t["x-total-time"]


def busy_for(url, seconds):
    """How many requests of BUSY_BODY (one batch each) keep the engine busy
    for about `seconds`, from one's x-inference-time (4 to 64)."""
    r, t, _ = timed_post(url, BUSY_BODY)
    one = max(t.get("x-inference-time", 0), 1) / 1000
    return min(64, max(4, int(seconds / one) + 1))


def taken(url, base):
    """Requests queued, running or run since the /metrics snapshot `base`
    (one batch each): once it reaches the requests sent, all are ahead of
    the next one."""
    m = metrics(url)
    return (value(m, "roformer_queue_size") + value(m, "roformer_batch_running_jobs") +
            moved(base, m, "roformer_batch_jobs_count"))


def suite_times(url, pid):
    before = metrics(url)
    r, t, wall = timed_post(url, {"inputs": [TEXT, "不推荐"]})
    after = metrics(url)
    report("an idle server's answer: x-compute-time = x-total-time, tokenization + queue + "
           "inference within it, the total within the client's own time",
           r.status_code == 200 and parts_fit(t) and t["x-total-time"] <= wall, (t, wall))
    forward = moved(before, after, "roformer_inference_duration_seconds_sum") * 1000
    report("x-inference-time is its batch's forward passes "
           "(roformer_inference_duration_seconds_sum's growth, within 1 ms)",
           abs(t.get("x-inference-time", -9) - forward) <= 1, (t, forward))
    tok = moved(before, after, "te_request_tokenization_duration_sum") * 1000
    report("x-tokenization-time is what te_request_tokenization_duration counted (within 1 ms)",
           abs(t.get("x-tokenization-time", -9) - tok) <= 1, (t, tok))

    r = requests.post(url + "/v1/embeddings", json={"input": [TEXT, "不推荐", "hello world"]},
                      timeout=60)
    usage = r.json().get("usage", {}) if r.status_code == 200 else {}
    report("x-compute-tokens is the tokens usage counts (/v1/embeddings)",
           usage.get("prompt_tokens", 0) > 6 and
           r.headers.get("x-compute-tokens") == str(usage["prompt_tokens"]), (usage, r.headers))
    # a body near --payload-limit: its tokenizing takes time of its own
    big = {"inputs": [LONG * 8] * 32, "truncate": True}
    r, t, wall = timed_post(url, big)
    report("a body of %d kB: x-tokenization-time at least 1 ms, the parts within the total"
           % (len(json.dumps(big, ensure_ascii=False).encode()) // 1000),
           r.status_code == 200 and parts_fit(t) and t["x-tokenization-time"] >= 1, t)

    # the queue: batches of 32 long texts ahead of a short request; it waits
    # for every one of them (one batch each under --max-batch-requests 32)
    blockers, base = busy_for(url, 2.0), metrics(url)
    done = []

    def blocker(_):
        r = requests.post(url + "/embed", json=BUSY_BODY, timeout=120)
        done.append(time.monotonic())
        return r.status_code
    with concurrent.futures.ThreadPoolExecutor(blockers) as pool:
        futures = [pool.submit(blocker, i) for i in range(blockers)]
        queued = poll_until(30, lambda: taken(url, base) >= blockers)
        sent = time.monotonic()
        r, t, wall = timed_post(url, {"inputs": TEXT})
        statuses = [f.result() for f in futures]
    ahead = (max(done) - sent) * 1000
    report("%d batches queued or running ahead of a request" % blockers,
           queued and statuses == [200] * blockers, statuses)
    report("its x-queue-time covers the wait for them: at least half the %.0f ms from its "
           "sending to the last of their answers, the parts within the total" % ahead,
           r.status_code == 200 and parts_fit(t) and t["x-queue-time"] >= ahead / 2 and ahead >= 100,
           (t, ahead))


# ==== clients that hang up: 499 ====

def suite_gone(url, pid, log):
    gone = 'roformer_requests_dropped_total{reason="client_gone"}'
    body = json.dumps(BUSY_BODY).encode()
    head = ("POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            "Content-Length: %d\r\n\r\n" % len(body)).encode()
    n, base = busy_for(url, 2.0), metrics(url)
    dropped = value(base, gone)
    replies = []

    def blocker(_):
        return requests.post(url + "/embed", json=BUSY_BODY, timeout=120).status_code
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        futures = [pool.submit(blocker, i) for i in range(n)]
        poll_until(30, lambda: taken(url, base) >= n)
        half = socket.create_connection(host_port(url), timeout=30)
        half.sendall(head + body)
        full = socket.create_connection(host_port(url), timeout=30)
        full.sendall(head + body)
        # both queued behind the blockers
        report("the two requests queued while the engine is busy",
               poll_until(30, lambda: taken(url, base) >= n + 2 and
                          value(metrics(url), "roformer_queue_size") >= 2))
        half.shutdown(socket.SHUT_WR)  # it still reads
        full.close()
        try:
            replies.append(half.recv(65536))
        except OSError as e:
            replies.append(repr(e).encode())
        half.close()
        statuses = [f.result() for f in futures]
    report("the engine was busy while the two clients hung up", statuses == [200] * n, statuses)
    report("a client that only shut its sending side gets no answer, its connection closed",
           replies == [b""], replies)
    report("both counted as roformer_requests_dropped_total{reason=\"client_gone\"}",
           poll_until(10, lambda: metrics(url).get(gone, 0) - dropped == 2),
           metrics(url).get(gone, 0) - dropped)
    # "its log line, when written, says 499": libmicrohttpd may close a
    # resumed connection whose client is gone before the server sees it
    # again, and then no line is written
    statuses = [l.split(" ")[3] for l in open(log, encoding="utf-8", errors="replace")
                if " POST /embed " in l]
    report("the log's lines of POST /embed: one 200 per answer (%d), the clients gone's (those "
           "written, at most 2) say 499, no other status" % (n + 1),
           statuses.count("200") == n + 1 and statuses.count("499") <= 2 and
           set(statuses) <= {"200", "499"}, statuses)


# ==== reload: one at a time; file_sha256 ====

def suite_reload(url, pid, path):
    started = time.time()  # the server loaded its files before this
    info = requests.get(url + "/models/file/info", timeout=10).json()
    report("/info of a .gguf model: file_sha256 is the file's sha256",
           info.get("file_sha256") == sha256(path) and info.get("load") == 1, info.get("file_sha256"))
    info = requests.get(url + "/models/dir/info", timeout=10).json()
    report("/info of a HuggingFace directory: file_sha256 is null",
           "file_sha256" in info and info["file_sha256"] is None and info.get("load") == 1,
           info.get("file_sha256", "absent"))
    load = 1
    for round_ in range(3):
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            answers = list(pool.map(lambda _: requests.post(url + "/admin/reload", timeout=120),
                                    range(2)))
        loads = []
        for r in answers:
            models = {m["name"]: m for m in r.json().get("models", [])} if r.status_code == 200 else {}
            loads.append(models.get("file", {}).get("load"))
            ok_dir = "file_sha256" in models.get("dir", {}) and models["dir"]["file_sha256"] is None
        report("round %d: two reloads at once, both 200, one after the other (loads %d and %d)"
               % (round_, load + 1, load + 2),
               [r.status_code for r in answers] == [200, 200] and
               sorted(l or 0 for l in loads) == [load + 1, load + 2],
               "%s, loads %s" % ([r.status_code for r in answers], loads))
        report("round %d: the directory's reload answer has file_sha256 null" % round_, ok_dir)
        load += 2
    info = requests.get(url + "/models/file/info", timeout=10).json()
    report("/info after them: load %d" % load, info.get("load") == load, info.get("load"))
    models = {m["id"]: m for m in requests.get(url + "/v1/models", timeout=10).json()["data"]}
    created = models.get("file", {}).get("created", 0)
    loaded_at = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(created))
    report("/v1/models created: when the file was loaded last (a reload), as /info's loaded_at says",
           int(started) <= created <= time.time() and info.get("loaded_at") == loaded_at,
           "created %s (%s), loaded_at %s, reloads began at %.0f" % (created, loaded_at,
                                                                    info.get("loaded_at"), started))


def suite_hf_sha(url, pid, path):
    info = requests.get(url + "/info", timeout=10).json()
    report("/info of an hf: model: file_sha256 is the sha256 of its pulled GGUF",
           os.path.isfile(path) and info.get("file_sha256") == sha256(path),
           "%s, file %s" % (info.get("file_sha256"), path))


def main():
    suite, url, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard if hard != resource.RLIM_INFINITY
                                                else max(soft, 4096), hard))
    globals()["suite_" + suite](url, pid, *sys.argv[4:])


if __name__ == "__main__":
    main()
