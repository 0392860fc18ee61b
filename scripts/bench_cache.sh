#!/bin/sh
# bench_cache.sh MODEL [ROUNDS] — `roformer serve --cache-mb` against no
# cache on a re-ingestion: a corpus of CHUNKS titles of
# ../shared/data/thucnews_titles/dev.txt is sent once to POST /embed
# (BATCH chunks a request, CONNECTIONS clients at once), then sent again
# with every tenth chunk replaced by a title not seen before, so 90% of the
# chunks repeat. The second pass is measured: requests/s and p50 / p99
# latency, and the tokens the server computed (x-compute-tokens).
#
# Each round starts a fresh server without a cache and one with
# (--cache-mb 256), one after the other (their order alternating from round
# to round), and drives both with the same client; the medians of the
# rounds are printed last. Run from the repository root after `make`.
# Environment: ROFORMER (default build/roformer), THREADS (compute threads,
# default 2), CHUNKS (default 2000), BATCH (default 16), CONNECTIONS
# (default 4), ROFORMER_DATA (default ../shared/data).
set -e
model=${1:?usage: scripts/bench_cache.sh MODEL [ROUNDS]}
rounds=${2:-3}
bin=${ROFORMER:-build/roformer}
data=${ROFORMER_DATA:-../shared/data}/thucnews_titles/dev.txt
py=/usr/bin/python3
[ -f "$data" ] || { echo "bench_cache.sh: no $data" >&2; exit 1; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# start ARGS...: a server on a free port of 127.0.0.1; sets pid and url.
start() {
    : >"$tmp/log"
    "$bin" serve -m "$model" --port 0 --threads "${THREADS:-2}" "$@" 2>"$tmp/log" &
    pid=$!
    i=0
    url=""
    while [ -z "$url" ] && [ $i -lt 600 ]; do
        sleep 0.1; i=$((i + 1))
        url=$(sed -n 's|.*listening on \(http://[^ ]*:[0-9]*\) .*|\1|p' "$tmp/log")
    done
    [ -n "$url" ] || { cat "$tmp/log" >&2; exit 1; }
}

stop() {
    kill -TERM "$pid"
    wait "$pid" || true
    pid=""
}

# ingest URL MODE ROUND: both passes; the second's numbers on one line.
ingest() {
    timeout 1200 $py - "$1" "$2" "$3" "$data" "${CHUNKS:-2000}" "${BATCH:-16}" \
        "${CONNECTIONS:-4}" <<'PYEOF'
import http.client, json, sys, threading, time, urllib.parse
url, mode, rnd, data = sys.argv[1:5]
chunks, batch, conns = (int(x) for x in sys.argv[5:8])
titles = list(dict.fromkeys(l.split("\t")[0] for l in open(data, encoding="utf-8")
                            .read().splitlines() if l.strip()))
old = titles[:chunks]
fresh = iter(titles[chunks:])
new = [next(fresh) if i % 10 == 9 else t for i, t in enumerate(old)]
host = urllib.parse.urlparse(url)

def run(corpus):
    bodies = [json.dumps({"inputs": corpus[k:k + batch]}, ensure_ascii=False).encode()
              for k in range(0, len(corpus), batch)]
    lat, computed, lock = [], [0], threading.Lock()
    def client(c):
        h = http.client.HTTPConnection(host.hostname, host.port, timeout=120)
        for b in bodies[c::conns]:
            t0 = time.perf_counter()
            h.request("POST", "/embed", b, {"Content-Type": "application/json"})
            r = h.getresponse()
            r.read()
            assert r.status == 200, r.status
            with lock:
                lat.append(time.perf_counter() - t0)
                computed[0] += int(r.getheader("x-compute-tokens"))
        h.close()
    t0 = time.perf_counter()
    ts = [threading.Thread(target=client, args=(c,)) for c in range(conns)]
    for t in ts: t.start()
    for t in ts: t.join()
    wall = time.perf_counter() - t0
    lat.sort()
    return len(bodies) / wall, lat[len(lat) // 2] * 1e3, lat[int(len(lat) * 0.99)] * 1e3, computed[0]

run(old)
rps, p50, p99, tokens = run(new)
print("%s %s %.1f %.2f %.2f %d" % (rnd, mode, rps, p50, p99, tokens), flush=True)
PYEOF
}

echo "# $(date -u +%Y-%m-%dT%H:%MZ) $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')," \
    "cpu family $(grep -m1 'cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' '), $(nproc) cores," \
    "load $(cut -d' ' -f1 /proc/loadavg)"
echo "# model $model, threads ${THREADS:-2}, chunks ${CHUNKS:-2000} (90% repeated), batch ${BATCH:-16}, connections ${CONNECTIONS:-4}"
echo "# round mode req/s p50_ms p99_ms tokens_computed"
r=1
while [ $r -le "$rounds" ]; do
    if [ $((r % 2)) -eq 1 ]; then order="off on"; else order="on off"; fi
    for mode in $order; do
        if [ "$mode" = on ]; then start --cache-mb 256; else start; fi
        ingest "$url" "$mode" "$r" | tee -a "$tmp/runs"
        stop
    done
    r=$((r + 1))
done
$py - "$tmp/runs" <<'PYEOF'
import statistics, sys
runs = [l.split() for l in open(sys.argv[1])]
med = {}
for mode in ("off", "on"):
    rows = [r for r in runs if r[1] == mode]
    med[mode] = [statistics.median(float(r[k]) for r in rows) for k in (2, 3, 4, 5)]
    print("median %s: %.1f req/s, p50 %.2f ms, p99 %.2f ms, %d tokens computed" % (mode, *med[mode]))
print("cache on / off: %.2fx req/s, p99 %.2fx" % (med["on"][0] / med["off"][0],
                                                   med["on"][2] / med["off"][2]))
PYEOF
