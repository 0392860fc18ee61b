#!/bin/sh
# load_serve.sh MODEL [SECONDS] — load test of `roformer serve` with wrk on
# 127.0.0.1: single sentences of ../shared/data/chnsenticorp/dev.tsv sent to
# POST /embed by 1, 8, 32 and 128 connections for SECONDS each (default
# 60), then 128 connections against a second server whose
# --max-concurrent-requests is 64 (429s expected there, never 5xx).
# Per run: requests/s, p50 / p99 latency, responses by status (from the
# server's /metrics), socket errors, and the server's RSS before and after.
# Then the two comparisons with the CLI on the same sentences and threads:
#   sentences/s at 32 connections vs one `roformer embed` run over all of
#   them (default batch size), from its --timings (model loading excluded);
#   p99 at 1 connection vs the CLI's time per sentence with --batch-size 1.
# The CLI runs before and after the server's runs, and the mean is used, so
# that a change in the machine's load shows (their spread is printed).
# Last, the same p99 against the engine's own p99 on one sentence at a time
# (the library, through tools/python). Run from the repository root after
# `make`. Environment: ROFORMER (the CLI,
# default build/roformer), THREADS (compute threads, default 0 = all cores),
# SERVE_ARGS (more serve options, e.g. "--replicas 2"),
# SENTENCES (use only the first N sentences, default all 1200: a base-size
# model embeds them in minutes on a few cores), ROFORMER_DATA (default
# ../shared/data), CONNECTIONS (the connection counts, default "1 8 32 128"),
# SERVER_ONLY=1 (only those runs: no limited server, no CLI or engine
# comparison; for runs of two builds interleaved).
set -e
model=${1:?usage: scripts/load_serve.sh MODEL [SECONDS]}
seconds=${2:-60}
bin=${ROFORMER:-build/roformer}
data=${ROFORMER_DATA:-../shared/data}/chnsenticorp/dev.tsv
threads=${THREADS:-0}
py=/usr/bin/python3
command -v wrk >/dev/null || { echo "load_serve.sh: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
[ -f "$data" ] || { echo "load_serve.sh: no $data" >&2; exit 1; }
tmp=$(mktemp -d)
pid=""
trap '[ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# the sentences, one per line, and the same as request bodies in a Lua table
tail -n +2 "$data" | cut -f2 | grep -v '^$' | head -n "${SENTENCES:-1000000}" >"$tmp/sentences.txt"
$py - "$tmp/sentences.txt" "$tmp/bodies.lua" <<'PYEOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8").read().splitlines()
def lua(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
with open(sys.argv[2], "w", encoding="utf-8") as f:
    f.write("return {\n" + ",\n".join(lua(json.dumps({"inputs": l}, ensure_ascii=False))
                                      for l in lines) + "\n}\n")
PYEOF
n=$(wc -l <"$tmp/sentences.txt")
# each wrk thread starts at its own place in the sentences
cat >"$tmp/embed.lua" <<LUAEOF
local bodies = dofile("$tmp/bodies.lua")
local counter, i = 0, 0
function setup(thread) counter = counter + 1; thread:set("id", counter) end
function init(args) i = (id or 1) * 97 end
function request()
    i = i % #bodies + 1
    return wrk.format("POST", "/embed", {["Content-Type"] = "application/json"}, bodies[i])
end
function done(summary, latency, requests)
    local e = summary.errors
    io.write(string.format("RESULT %d %d %d %d %d\n", summary.requests, summary.duration,
        latency:percentile(50), latency:percentile(99), e.connect + e.read + e.write + e.timeout))
end
LUAEOF

start() {
    : >"$tmp/server.log"
    # SERVE_ARGS unquoted: a list of options
    "$bin" serve -m "$model" --port 0 --threads "$threads" ${SERVE_ARGS-} "$@" 2>"$tmp/server.log" &
    pid=$!
    i=0
    while [ $i -lt 600 ]; do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/server.log")
        [ -n "$port" ] && return 0
        sleep 0.1; i=$((i + 1))
    done
    echo "load_serve.sh: the server did not start" >&2; cat "$tmp/server.log" >&2; exit 1
}
stop() { kill -TERM $pid; wait $pid || true; pid=""; }
rss_mb() { awk '/^VmRSS/ {printf "%.1f", $2 / 1024}' /proc/$pid/status; }
# count STATUS: /embed responses with that status so far
count() { curl -s "http://127.0.0.1:$port/metrics" |
          awk -v s="$1" '$1 == "roformer_requests_total{route=\"/embed\",status=\"" s "\"}" {print $2; f=1} END {if (!f) print 0}'; }

# run CONNS LABEL: one wrk run and its table row
run() {
    c=$1
    t=$c; [ "$t" -gt 2 ] && t=2
    rss0=$(rss_mb)
    ok0=$(count 200); r429_0=$(count 429); e500_0=$(count 500); e503_0=$(count 503)
    wrk -t "$t" -c "$c" -d "${seconds}s" --timeout 30s -s "$tmp/embed.lua" \
        "http://127.0.0.1:$port" >"$tmp/wrk.out" 2>&1
    set -- $(sed -n 's/^RESULT //p' "$tmp/wrk.out")
    ok=$(( $(count 200) - ok0 )); r429=$(( $(count 429) - r429_0 ))
    e5xx=$(( $(count 500) - e500_0 + $(count 503) - e503_0 ))
    printf '%-16s %9.1f %9.2f %9.2f %8d %6d %5d %8d %8s %8s\n' "$label" \
        "$(echo "$1 $2" | awk '{print $1 / ($2 / 1e6)}')" \
        "$(echo "$3" | awk '{print $1 / 1000}')" "$(echo "$4" | awk '{print $1 / 1000}')" \
        "$ok" "$r429" "$e5xx" "$5" "$rss0" "$(rss_mb)"
    eval "p99_$c=$(echo "$4" | awk '{print $1 / 1000}')"
    eval "rps_$c=$(echo "$ok $2" | awk '{print $1 / ($2 / 1e6)}')"
}

# the CLI on the same sentences: one batch run, and one sentence at a time
cli_time() { "$bin" embed -m "$model" --threads "$threads" --no-progress --timings "$@" \
                 <"$tmp/sentences.txt" 2>&1 >/dev/null |
             sed -n 's/.*batches; \([0-9.]*\) s:.*/\1/p'; }
[ "${SERVER_ONLY:-0}" = 1 ] || { batch_a=$(cli_time); single_a=$(cli_time --batch-size 1); }

echo "model $model; $n sentences of $data; ${seconds} s per run;" \
     "compute threads ${threads} (0 = all cores); $(nproc) cores"
printf '%-16s %9s %9s %9s %8s %6s %5s %8s %8s %8s\n' connections req/s p50_ms p99_ms 200s 429s 5xx \
    sock_err rss0_MB rss1_MB
start
for c in ${CONNECTIONS:-1 8 32 128}; do label=$c; run $c; done
stop
[ "${SERVER_ONLY:-0}" = 1 ] && exit 0
start --max-concurrent-requests 64
label="128 (limit 64)"; run 128
stop

batch_b=$(cli_time); single_b=$(cli_time --batch-size 1)
batch_s=$(echo "$batch_a $batch_b" | awk '{print ($1 + $2) / 2}')
single_s=$(echo "$single_a $single_b" | awk '{print ($1 + $2) / 2}')
echo "roformer embed, one run over the $n sentences (default batch size):" \
     "$(echo "$n $batch_s" | awk '{printf "%.1f", $1 / $2}') sentences/s" \
     "(before / after the server: $batch_a s / $batch_b s)"
echo "server at 32 connections: $(echo "$rps_32" | awk '{printf "%.1f", $1}') sentences/s =" \
     "$(echo "$rps_32 $n $batch_s" | awk '{printf "%.2f", $1 / ($2 / $3)}') x the CLI (target >= 0.9)"
echo "roformer embed --batch-size 1: $(echo "$single_s $n" | awk '{printf "%.2f", $1 / $2 * 1000}') ms per sentence" \
     "(before / after: $single_a s / $single_b s for all)"
echo "server p99 at 1 connection: $p99_1 ms =" \
     "$(echo "$p99_1 $single_s $n" | awk '{printf "%.2f", $1 / ($2 / $3 * 1000)}') x the CLI's time per sentence (target <= 1.2)"
# The p99 above compares a tail with a mean: the longest 1% of these reviews
# take several times the mean on their own. So time the engine itself on
# each sentence alone (the library through the Python package, same model
# and threads, no server) and compare the same percentile.
$py - "$model" "$threads" "$tmp/sentences.txt" "$p99_1" <<'PYEOF'
import os, sys, time
sys.path.insert(0, os.path.join(os.getcwd(), "tools", "python"))
import roformer
model, threads, path, server_p99 = sys.argv[1], int(sys.argv[2]), sys.argv[3], float(sys.argv[4])
sentences = open(path, encoding="utf-8").read().splitlines()
times = []
with roformer.Model(model, threads=threads or None) as m:
    m.encode(sentences[:20])
    for s in sentences:
        t0 = time.perf_counter()
        m.encode([s])
        times.append((time.perf_counter() - t0) * 1000)
times.sort()
p50, p99 = times[len(times) // 2], times[int(len(times) * 0.99)]
print(f"the engine on one sentence at a time (no server): p50 {p50:.2f} ms, p99 {p99:.2f} ms")
print(f"server p99 at 1 connection: {server_p99:.3f} ms = {server_p99 / p99:.2f} x the engine's own p99 per sentence (target <= 1.2)")
PYEOF
