# test_serve_connections.sh — `roformer serve`'s connections against real
# servers on 127.0.0.1 (tests/serve/serve_connections.py talks to them): clients
# that hang up are not computed, --queue-timeout answers 503, 10,000
# half-sent connections from one client shut nobody else out, and 1,000
# open connections add no thread. Each server is killed at the end whatever
# happens; every wait is bounded.
. tests/check.sh
PY=/usr/bin/python3

require_reference "the connection tests of serve"
require_python "requests" "the connection tests of serve"
M=$REF/models
. tests/serve/serve_helpers.sh
# the server and the clients hold over 10,000 sockets
ulimit -n 12000 2>/dev/null || ulimit -n "$(ulimit -Hn)"

# The sanitizers' allocator keeps what is freed (ASan's quarantine) and
# adds its shadow memory: the server's RSS says nothing there, so the
# suites skip their memory checks, visibly.
case "$(dirname "$ROFORMER")" in *asan*) export SERVE_RSS_CHECKS=0 ;; esac

# conn SUITE [ARGS...]: runs a suite of serve_connections.py against $URL, $PID.
conn() {
    suite=$1; shift
    client_checks "serve_connections.py $suite" $PY tests/serve/serve_connections.py "$suite" "$URL" "$PID" "$@"
}

exits_with 2 "serve --max-connections-per-client 0 is a usage error" \
    "$ROFORMER" serve -m "$M/tiny-word-cls" --port 0 --max-connections-per-client 0
exits_with 2 "serve --queue-timeout -1 is a usage error" \
    "$ROFORMER" serve -m "$M/tiny-word-cls" --port 0 --queue-timeout -1

MODEL=$M/tiny-word-cls
if start gone "$MODEL" --max-batch-requests 32; then conn disconnects; stop gone
else check "disconnects server starts" false; fi

# one request per batch, so that the burst queues behind the batches before it
if start late "$MODEL" --max-input-length 64 --max-batch-requests 32 --queue-timeout 1; then
    conn queue_timeout; stop late
else check "queue-timeout server starts" false; fi
# the dropped requests are counted per model
if start late_two "a=$MODEL" -m "b=$MODEL" --max-input-length 64 --max-batch-requests 32 \
        --queue-timeout 1; then
    conn model_timeout; stop late_two
else check "two-model queue-timeout server starts" false; fi
if start patient "$MODEL" --max-input-length 64 --max-batch-requests 32; then
    conn no_timeout; stop patient
else check "no-queue-timeout server starts" false; fi

if start half "$MODEL" --max-input-length 64 --max-connections-per-client 256 --request-timeout 3; then
    conn half_open 256; stop half
else check "half-open server starts" false; fi

if start threads "$MODEL" --max-connections 2000 --max-connections-per-client 2000; then
    conn threads; stop threads
else check "threads server starts" false; fi
check_done
