#!/bin/sh
# load_disconnects.sh MODEL [SECONDS] — the overload case of `roformer
# serve` on 127.0.0.1: wrk sends one sentence of
# ../shared/data/chnsenticorp/dev.tsv to POST /embed over 8 connections for
# SECONDS (default 20), first alone, then while other clients keep arriving
# in waves of 64, each sending 32 long reviews and hanging up without
# waiting (a client that timed out). Per run: requests/s, p50 / p99 of the
# requests that stay, and from /metrics the inputs the engine computed and
# the requests dropped because their client had gone. Run from the
# repository root after `make`. Environment: ROFORMER (the CLI, default
# build/roformer; a build without roformer_requests_dropped_total prints
# n/a for it), THREADS (compute threads, default 0 = all cores),
# ROFORMER_DATA (default ../shared/data).
set -e
model=${1:?usage: scripts/load_disconnects.sh MODEL [SECONDS]}
seconds=${2:-20}
bin=${ROFORMER:-build/roformer}
data=${ROFORMER_DATA:-../shared/data}/chnsenticorp/dev.tsv
threads=${THREADS:-0}
py=/usr/bin/python3
command -v wrk >/dev/null || { echo "load_disconnects.sh: wrk is not installed (apt-get install wrk)" >&2; exit 1; }
[ -f "$data" ] || { echo "load_disconnects.sh: no $data" >&2; exit 1; }
tmp=$(mktemp -d)
pid="" leaver=""
trap '[ -n "$leaver" ] && kill $leaver 2>/dev/null; [ -n "$pid" ] && kill -9 $pid 2>/dev/null; rm -rf "$tmp"' EXIT

# the stayers' body: the first review; the leavers': the 32 longest
$py - "$data" "$tmp/embed.lua" "$tmp/leave.json" <<'PYEOF'
import json, sys
rows = [l.split("\t")[1] for l in open(sys.argv[1], encoding="utf-8").read().splitlines()[1:] if "\t" in l]
body = json.dumps({"inputs": rows[0]}, ensure_ascii=False)
lua = body.replace("\\", "\\\\").replace('"', '\\"')
open(sys.argv[2], "w", encoding="utf-8").write(
    'wrk.method = "POST"\nwrk.body = "%s"\nwrk.headers["Content-Type"] = "application/json"\n'
    'function done(summary, latency, requests)\n'
    '    io.write(string.format("RESULT %%d %%d %%d %%d\\n", summary.requests, summary.duration,\n'
    '        latency:percentile(50), latency:percentile(99)))\nend\n' % lua)
json.dump({"inputs": sorted(rows, key=len)[-32:], "truncate": True},
          open(sys.argv[3], "w", encoding="utf-8"), ensure_ascii=False)
PYEOF

"$bin" serve -m "$model" --port 0 --threads "$threads" 2>"$tmp/server.log" &
pid=$!
i=0
while [ $i -lt 600 ]; do
    port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$tmp/server.log")
    [ -n "$port" ] && break
    sleep 0.1; i=$((i + 1))
done
[ -n "$port" ] || { echo "load_disconnects.sh: the server did not start" >&2; cat "$tmp/server.log" >&2; exit 1; }
# metric NAME: one sample of /metrics, or n/a
metric() { curl -s "http://127.0.0.1:$port/metrics" |
           awk -v n="$1" '$1 == n {print $2; f=1} END {if (!f) print "n/a"}'; }
gone='roformer_requests_dropped_total{reason="client_gone"}'

run() {
    inputs0=$(metric roformer_batch_inputs_sum); gone0=$(metric "$gone")
    wrk -t 2 -c 8 -d "${seconds}s" --timeout 30s -s "$tmp/embed.lua" \
        "http://127.0.0.1:$port/embed" >"$tmp/wrk.out" 2>&1
    set -- $(sed -n 's/^RESULT //p' "$tmp/wrk.out")
    printf '%-22s %9.1f %9.2f %9.2f %12s %9s\n' "$label" \
        "$(echo "$1 $2" | awk '{print $1 / ($2 / 1e6)}')" \
        "$(echo "$3" | awk '{print $1 / 1000}')" "$(echo "$4" | awk '{print $1 / 1000}')" \
        "$(echo "$(metric roformer_batch_inputs_sum) $inputs0" | awk '{print $1 - $2}')" \
        "$(echo "$(metric "$gone") $gone0" | awk '$1 == "n/a" {print "n/a"; next} {print $1 - $2}')"
}

echo "model $model; $bin; ${seconds} s per run; compute threads ${threads} (0 = all cores); $(nproc) cores"
printf '%-22s %9s %9s %9s %12s %9s\n' run req/s p50_ms p99_ms inputs_run dropped
label="8 connections alone"; run
# the leavers: waves of 64 clients, each sends and hangs up at once
$py - "$port" "$tmp/leave.json" <<'PYEOF' &
import socket, sys, time
port, body = int(sys.argv[1]), open(sys.argv[2], "rb").read()
request = (b"POST /embed HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
           b"Content-Length: %d\r\n\r\n" % len(body)) + body
while True:
    for _ in range(64):
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(request)
        s.close()
    time.sleep(0.5)
PYEOF
leaver=$!
label="8 + 64 leaving / 0.5 s"; run
kill $leaver; leaver=""
kill -TERM $pid; wait $pid || true; pid=""
