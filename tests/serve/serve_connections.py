"""serve_connections.py SUITE URL PID — how `roformer serve` treats its
connections, against a running server on 127.0.0.1 (PID: its process, whose
/proc/PID/status gives its threads and memory). Prints one line per check:
"ok WHAT" or "FAIL WHAT: detail"; tests/serve/test_serve_connections.sh starts the
servers and counts the lines.

Suites:
  disconnects    while the engine runs 8 requests of 32 long texts, 64
                 clients send as many and hang up, once their jobs are queued
                 or at once; 6 times after a first: none of their inputs is
                 computed (the batches' inputs in /metrics grow by the
                 busy requests' only), all are counted dropped, the next client is
                 answered at its usual latency, the memory stays flat after
                 the first burst.
  queue_timeout  a burst of slow requests on a server with --queue-timeout 1:
                 some are 503 with Retry-After, counted in /metrics.
  no_timeout     the same burst with no --queue-timeout: every one is 200.
  model_timeout  the burst to /models/b/ on a server of models a and b with
                 --queue-timeout 1: its 503s are counted for b, none for a.
  half_open      10,000 connections from 127.0.0.2 that send half a request:
                 /health and /embed from 127.0.0.1 are answered within a
                 second, the server holds at most its per-client limit of them
                 and closes those past --request-timeout; its memory is bounded.
  threads        1,000 open connections: the server's thread count does not
                 change.

Every wait polls with a deadline; no check passes because a sleep was long
enough."""
import concurrent.futures
import json
import os
import resource
import selectors
import socket
import sys
import time
import urllib.parse

import requests

from serve_client import metrics, report

LONG = "今天天气很好，我们去公园散步吧。" * 40  # far over any tiny model's input length
# a request that keeps the engine busy: 32 long texts, cut to the limit, each
# its own (equal inputs of a batch run once)
BUSY_BODY = {"inputs": ["%d %s" % (i, LONG) for i in range(32)], "truncate": True}
HALF = (b"POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
        b"Content-Length: 100\r\n\r\n{\"inputs\": \"")


# SERVE_RSS_CHECKS=0: a sanitizer's build, whose allocator keeps what is
# freed; its memory checks say SKIP
RSS_CHECKS = os.environ.get("SERVE_RSS_CHECKS", "1") != "0"


def report_rss(what, ok_fn, detail_fn):
    """A check of the server's memory: SKIP where RSS_CHECKS is off."""
    if not RSS_CHECKS:
        print("SKIP %s: a sanitizer's allocator keeps what is freed" % what, flush=True)
        return True
    ok = ok_fn()
    return report(what, ok, "" if ok else detail_fn())


def metric(url, name):
    """The value of one sample of /metrics ('name{labels}' as printed); NaN,
    which fails every comparison, when it is absent."""
    return metrics(url).get(name, float("nan"))


def proc_status(pid, field):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return None


def open_fds(pid):
    return len(os.listdir("/proc/%d/fd" % pid))


def poll_until(deadline_s, fn):
    """Polls fn() every 50 ms until it is true or the deadline passes;
    returns its last value. Not serve_client.wait_for's 5 ms: these
    conditions ask the server's /metrics, which a tighter loop would load."""
    end = time.monotonic() + deadline_s
    while True:
        v = fn()
        if v or time.monotonic() > end:
            return v
        time.sleep(0.05)


def embed_latency(url, n=10):
    """The median seconds of n one-sentence /embed requests."""
    times = []
    for _ in range(n):
        t = time.monotonic()
        r = requests.post(url + "/embed", json={"inputs": "今天天气很好"}, timeout=30)
        times.append(time.monotonic() - t)
        assert r.status_code == 200, r.status_code
    return sorted(times)[n // 2]


def host_port(url):
    u = urllib.parse.urlparse(url)
    return u.hostname, u.port


def raw_request(body):
    data = json.dumps(body, ensure_ascii=False).encode()
    return (b"POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n" % len(data)) + data


def hang_up_burst(url, request, queued_first):
    """64 clients send `request` and hang up without reading an answer: at
    once, or (queued_first) once their 64 jobs wait in the queue."""
    socks = [socket.create_connection(host_port(url), timeout=10) for _ in range(64)]
    for s in socks:
        s.sendall(request)
        if not queued_first:
            s.close()
    if queued_first:
        poll_until(20, lambda: metric(url, "roformer_queue_size") >= 64)
        for s in socks:
            s.close()


def blockers_for(url, seconds=4.0):
    """How many requests of 32 long texts keep the engine busy for about
    `seconds` (at least 8): the hang-up bursts must be sent, queued and hung
    up before the batches ahead of them are done, however slow this machine
    or build (a sanitizer's) is. The fastest of three requests sets the
    count: one slowed by a neighbour for a moment would give too few, and
    the engine, back at speed, would reach a burst before it hung up."""
    body = BUSY_BODY
    one = None
    for _ in range(3):
        t = time.monotonic()
        requests.post(url + "/embed", json=body, timeout=60)
        took = time.monotonic() - t
        one = took if one is None else min(one, took)
    one = max(one, 1e-3)
    return min(256, max(8, int(seconds / one) + 1))


def while_busy(url, fn, blockers):
    """Runs fn() while the engine is busy with `blockers` requests of 32 long
    texts each (one batch each, under --max-batch-requests 32), so that what
    fn sends queues behind them; returns the blockers' statuses, and whether
    all but one had been answered when fn returned (the engine then about
    to reach what fn sent: its outcome says nothing of the server)."""
    body = BUSY_BODY
    with concurrent.futures.ThreadPoolExecutor(blockers) as pool:
        futures = [pool.submit(lambda: requests.post(url + "/embed", json=body, timeout=120))
                   for _ in range(blockers)]
        poll_until(10, lambda: metric(url, "roformer_batch_running_jobs") >= 1)
        fn()
        # fewer than two unanswered: the engine may be at fn's requests
        drained = sum(1 for f in futures if not f.done()) < 2
        return [f.result().status_code for f in futures], drained


def idle(url):
    """Waits until the server has nothing queued or running."""
    return poll_until(60, lambda: metric(url, "roformer_queue_size") == 0
                      and metric(url, "roformer_batch_running_jobs") == 0)


def disconnects(url, pid):
    inputs = "roformer_batch_inputs_sum"
    gone = 'roformer_requests_dropped_total{reason="client_gone"}'
    request = raw_request(BUSY_BODY)
    before = embed_latency(url)
    blockers = blockers_for(url)
    # a first burst, so that the memory the allocator keeps is in VmRSS
    while_busy(url, lambda: hang_up_burst(url, request, True), blockers)
    poll_until(30, lambda: metric(url, gone) >= 64)
    idle(url)
    # the memory held when idle after it (the batcher gives back what was
    # freed once its queue has been empty a moment; were a second too short,
    # the check below would only be easier)
    time.sleep(1)
    rss0 = proc_status(pid, "VmRSS")
    for burst, queued_first in enumerate([True, True, False] * 2):
        when = "once queued" if queued_first else "at once"
        # a machine that speeds up after blockers_for (a neighbour gone)
        # can answer every blocker before the burst hangs up: then the
        # burst runs again behind twice as many
        for attempt in range(3):
            computed, dropped = metric(url, inputs), metric(url, gone)
            statuses, drained = while_busy(
                url, lambda: hang_up_burst(url, request, queued_first), blockers)
            if not drained:
                break
            idle(url)
            blockers = min(256, 2 * blockers)
        report("burst %d: the engine still busy when the burst had hung up" % burst, not drained,
               "%d blockers, 3 tries" % blockers)
        counted = poll_until(30, lambda: metric(url, gone) - dropped >= 64)
        n = metric(url, gone) - dropped
        report("burst %d: 64 clients that hang up %s are counted in "
               "roformer_requests_dropped_total{reason=\"client_gone\"}" % (burst, when),
               counted and n == 64, "%s counted" % n)
        ran = metric(url, inputs) - computed
        report("burst %d: none of their inputs computed (roformer_batch_inputs_sum grows by the "
               "32 inputs of each request answered)" % burst,
               ran == blockers * 32 and statuses == [200] * blockers,
               "grew by %s for %d answered; %s" % (ran, blockers, sorted(set(statuses))))
    after = embed_latency(url)
    report("the next client after the bursts at its usual latency (within 3x + 20 ms)",
           after <= 3 * before + 0.020, "%.1f ms before, %.1f ms after" % (before * 1e3, after * 1e3))
    # idle, the server gives what the bursts freed back to the system
    # (batcher.c); a leak of what each dropped request holds (its body and
    # encodings, over 100 kB a request: 40 MB over the six bursts) would
    # stay, while what the allocator keeps idle varies by up to 20 MB under load
    report_rss("memory flat over the bursts after the first, once idle (VmRSS grows under 32 MB)",
               lambda: poll_until(10, lambda: proc_status(pid, "VmRSS") - rss0 < 32 * 1024),
               lambda: "%d kB -> %d kB" % (rss0, proc_status(pid, "VmRSS")))


def burst(url, n=48):
    """n concurrent requests of 32 long texts each; their (status, Retry-After)."""
    body = BUSY_BODY

    def one(_):
        r = requests.post(url + "/embed", json=body, timeout=120)
        return r.status_code, r.headers.get("Retry-After")
    with concurrent.futures.ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))


def queue_timeout(url, pid):
    late = 'roformer_requests_dropped_total{reason="queue_timeout"}'
    computed = metric(url, "roformer_batch_inputs_sum")
    got = burst(url)
    refused = [r for r in got if r[0] == 503]
    report("--queue-timeout 1: some of a burst are 503", len(refused) > 0, str(got))
    report("--queue-timeout 1: every other is 200", all(r[0] in (200, 503) for r in got), str(got))
    report("--queue-timeout 1: each 503 has Retry-After", all(r[1] == "1" for r in refused),
           str(refused))
    report("--queue-timeout 1: /metrics counts each 503 as queue_timeout",
           metric(url, late) == len(refused), "%s counted, %d 503s" % (metric(url, late), len(refused)))
    ran = metric(url, "roformer_batch_inputs_sum") - computed
    report("--queue-timeout 1: the 503s did not run", ran == 32 * (len(got) - len(refused)),
           "%s inputs ran for %d answers" % (ran, len(got) - len(refused)))


def model_timeout(url, pid):
    late = 'roformer_requests_dropped_total{model="%s",reason="queue_timeout"}'
    got = burst(url + "/models/b")
    refused = [r for r in got if r[0] == 503]
    report("two models, --queue-timeout 1: some of a burst to b are 503", len(refused) > 0,
           str(got))
    report("two models: /metrics counts each 503 as b's queue_timeout",
           metric(url, late % "b") == len(refused),
           "%s counted, %d 503s" % (metric(url, late % "b"), len(refused)))
    report("two models: none counted for a", metric(url, late % "a") == 0,
           "%s counted" % metric(url, late % "a"))


def no_timeout(url, pid):
    got = burst(url)
    report("no --queue-timeout: every request of the burst is 200", all(r[0] == 200 for r in got),
           str(got))
    report("no --queue-timeout: nothing counted as queue_timeout",
           metric(url, 'roformer_requests_dropped_total{reason="queue_timeout"}') == 0)


def open_half(url, n, source):
    """n connections from `source` that send half a request (the others
    refused or closed by the server are counted out); returns the sockets."""
    sel = selectors.DefaultSelector()
    socks = []
    for _ in range(n):
        s = socket.socket()
        s.setblocking(False)
        s.bind((source, 0))
        s.connect_ex(host_port(url))
        socks.append(s)
        sel.register(s, selectors.EVENT_WRITE)
    pending, end = len(socks), time.monotonic() + 20
    while pending and time.monotonic() < end:
        for key, _ in sel.select(timeout=0.5):
            sel.unregister(key.fileobj)
            pending -= 1
            try:
                key.fileobj.send(HALF)
            except OSError:
                pass
    sel.close()
    return socks


def answered_within(url, seconds):
    """GET /health and POST /embed from 127.0.0.1: their seconds, or None."""
    t = time.monotonic()
    try:
        h = requests.get(url + "/health", timeout=seconds)
        e = requests.post(url + "/embed", json={"inputs": "今天天气很好"}, timeout=seconds)
    except requests.RequestException:
        return None
    took = time.monotonic() - t
    return took if h.status_code == 200 and e.status_code == 200 else None


def half_open(url, pid):
    limit = int(sys.argv[4])
    fds0, rss0 = open_fds(pid), proc_status(pid, "VmRSS")
    t = time.monotonic()
    socks = open_half(url, 10000, "127.0.0.2")
    opened = time.monotonic() - t
    try:
        took = answered_within(url, 5)
        report("10,000 half-sent connections from one client: /health and /embed from another "
               "answered within a second", took is not None and took < 1.0,
               "took %s s (the connections opened in %.1f s)" % (took, opened))
        held = open_fds(pid) - fds0
        report("the server holds at most --max-connections-per-client of them", held <= limit + 8,
               "%d sockets held, limit %d" % (held, limit))
        rss = proc_status(pid, "VmRSS")
        report_rss("memory bounded while they are open (VmRSS grows under 64 MB)",
                   lambda: rss - rss0 < 64 * 1024, lambda: "%d kB -> %d kB" % (rss0, rss))
        closed = poll_until(15, lambda: open_fds(pid) - fds0 <= 8)
        report("the half-sent requests are closed after --request-timeout", closed,
               "%d sockets still held" % (open_fds(pid) - fds0))
    finally:
        for s in socks:
            s.close()


def threads(url, pid):
    before = proc_status(pid, "Threads")
    socks = [socket.create_connection(host_port(url), timeout=10) for _ in range(1000)]
    try:
        for s in socks[:500]:
            s.sendall(HALF)
        took = answered_within(url, 5)
        report("1,000 open connections: a request is still answered", took is not None)
        now = proc_status(pid, "Threads")
        report("1,000 open connections: the server's thread count stays at %d" % before,
               now == before, "%d threads with them open" % now)
    finally:
        for s in socks:
            s.close()


def main():
    suite, url, pid = sys.argv[1], sys.argv[2], int(sys.argv[3])
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 12000) if hard != resource.RLIM_INFINITY
                                                else 12000, hard))
    {"disconnects": disconnects, "queue_timeout": queue_timeout, "no_timeout": no_timeout,
     "model_timeout": model_timeout,
     "half_open": half_open, "threads": threads}[suite](url, pid)


if __name__ == "__main__":
    main()
