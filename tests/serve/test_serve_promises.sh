# test_serve_promises.sh — promises of docs/serving.md that the other serve
# tests leave alone, each against a real server on 127.0.0.1 (port 0),
# checked by tests/serve/serve_promises_client.py: start-up refusals and the
# limits of names and models, the drain's 503 on open connections, the
# body of a --queue-timeout 503, --max-connections under a low open-file
# limit, refusals counted for the first model, unknown fields ignored,
# te_request_failure by error, the x-* times against what they measure,
# 499 for clients gone, reloads one at a time, file_sha256. Every server is
# killed at the end whatever happens; every wait is bounded.
. tests/check.sh
PY=/usr/bin/python3

require_reference "the serve promise tests"
require_python "requests" "the serve promise tests"
M=$REF/models
MODEL=$M/tiny-word-cls
. tests/serve/serve_helpers.sh

# client SUITE [ARGS...]: runs a suite of serve_promises_client.py against $URL, $PID.
client() {
    suite=$1; shift
    client_checks "serve_promises_client.py $suite" $PY tests/serve/serve_promises_client.py \
        "$suite" "$URL" "$PID" "$@"
}

# refused WHAT TEXT ARGS...: `serve ARGS` exits 2 and its first line of
# stderr says TEXT.
refused() {
    what=$1; text=$2; shift 2
    exits_with 2 "$what: exit 2" "$ROFORMER" serve --port 0 --threads 1 "$@"
    head -n 1 "$TMP/err" | grep -qF -- "$text"
    check "$what: one line saying '$text'" [ $? -eq 0 ]
}

# ==== Start-up refusals ====
refused "--max-input-length over the model's maximum (1536)" \
    "--max-input-length 1537 is over the model's maximum of 1536" -m "$MODEL" --max-input-length 1537
refused "a --pooling the model lacks" "--pooling pooler: the model has no pooler" \
    -m "$MODEL" --pooling pooler
refused "a --pooling one of two models lacks" "--pooling pooler: the model has no pooler" \
    -m "a=$M/tiny-word-mlm" -m "b=$MODEL" --pooling pooler
refused "an empty --api-key" "--api-key is empty" -m "$MODEL" --api-key ''
names=""
for i in $(seq 17); do names="$names -m m$i=$MODEL"; done
# shellcheck disable=SC2086  # one word per -m and name
refused "17 models" "is given more than 16 times" $names
# numbers out of range: docs/serving.md's Flags give --threads 0 to 256 and
# --max-input-length 2 to 1048576; every other count is from 1
refused "--threads 257" "--threads wants an integer from 0 to 256" -m "$MODEL" --threads 257
refused "--max-input-length 1" "--max-input-length wants an integer from 2 to 1048576" \
    -m "$MODEL" --max-input-length 1
refused "--max-input-length 1048577" "--max-input-length wants an integer from 2 to 1048576" \
    -m "$MODEL" --max-input-length 1048577
for flag in --max-concurrent-requests --max-client-batch-size --payload-limit --max-connections \
        --request-timeout; do
    refused "$flag 0" "$flag wants an integer from 1" -m "$MODEL" "$flag" 0
done
# a value whose part before '=' is no name is a path whole
n64=$(printf '%064d' 0 | tr 0 n)
exits_with 1 "-m NAME=PATH with a NAME of 65 characters is read as a path: exit 1" \
    "$ROFORMER" serve --port 0 -m "${n64}n=$MODEL"
grep -qF "${n64}n=$MODEL: cannot open" "$TMP/err"
check "... saying the path cannot be opened" [ $? -eq 0 ]
exits_with 1 "-m NAME=PATH with a '+' in NAME is read as a path: exit 1" \
    "$ROFORMER" serve --port 0 -m "a+b=$MODEL"
grep -qF "a+b=$MODEL: cannot open" "$TMP/err"
check "... saying the path cannot be opened" [ $? -eq 0 ]

# the limits met exactly: 16 models, a name of 64 characters of every kind
# allowed, --max-input-length at the model's maximum
names=""
for i in $(seq 2 16); do names="$names -m m$i=$MODEL"; done
# shellcheck disable=SC2086
if start sixteen "${n64%?????}.A_9-=$MODEL" $names --max-input-length 1536; then
    out=$(curl -s --max-time 30 "$URL/v1/models")
    check "16 models served, the first named by 64 characters" $PY -c '
import json, sys
ids = [m["id"] for m in json.loads(sys.argv[1])["data"]]
assert len(ids) == 16 and ids[0] == sys.argv[2] and len(ids[0]) == 64, ids' "$out" "${n64%?????}.A_9-"
    out=$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' -H 'Content-Type: application/json' \
        -d '{"inputs": "今天天气很好"}' "$URL/models/${n64%?????}.A_9-/embed")
    check "... answering under /models/NAME/ for that name" [ "$out" = 200 ]
    out=$(curl -s --max-time 30 "$URL/models/m16/info")
    check "... with --max-input-length 1536, the model's maximum; /info's models names all 16" \
        $PY -c '
import json, sys
info = json.loads(sys.argv[1])
assert info["max_input_length"] == 1536 and info["model_id"] == "m16", info
assert info["models"] == [sys.argv[2]] + ["m%d" % i for i in range(2, 17)], info["models"]' \
        "$out" "${n64%?????}.A_9-"
    stop sixteen
else
    check "the server of 16 models starts" false
fi

# ==== The drain, the queue's timeout ====
if start drain "$MODEL"; then client drain; exits_0 drain TERM
else check "drain server starts" false; fi
if start late "$MODEL" --max-input-length 64 --max-batch-requests 32 --queue-timeout 1; then
    client queue_timeout; stop late
else check "queue-timeout server starts" false; fi

# ==== --max-connections with a soft open-file limit below it ====
# (dash's and bash's ulimit take -S and -H)
soft=$(ulimit -Sn); hard=$(ulimit -Hn)
if [ "$hard" = unlimited ] || [ "$hard" -ge 1000 ]; then
    ulimit -Sn 64
    start cap "$MODEL" --max-connections 300 --max-connections-per-client 1000
    started=$?
    ulimit -Sn "$soft"
    if [ $started -eq 0 ]; then client cap 300; stop cap
    else check "cap server starts" false; fi
else
    check_skip "the hard open-file limit ($hard) is under 1000: --max-connections 300 not run"
fi

# ==== Several models: refusals count for the first ====
if start first "a=$MODEL" -m "b=$MODEL" --api-key secret --max-concurrent-requests 1; then
    client first_model; stop first
else check "two-model server starts" false; fi

# ==== Unknown fields, on every POST route of four heads; a model named
# by a prefix and by "model"; bad requests beside good ones; the docs'
# curl examples (cls, tiny-word-cls, is the first model) ====
if start fields "cls=$MODEL" -m "mlm=$M/tiny-word-mlm" -m "ner=$M/tiny-char-proj" \
        -m "qa=$M/tiny-qa" --max-input-length 64; then
    client unknown_fields; client prefix_wins; client bad_neighbours
    client examples README.md docs/serving.md; stop fields
else check "four-model server starts" false; fi

# ==== te_request_failure, te_request_tokenization_duration ====
if start te "$MODEL" --max-concurrent-requests 1 --max-input-length 64 --request-timeout 3; then
    client te_failures; client idle 3; stop te
else check "te server starts" false; fi

# ==== x-* times ====
# (batches of 32 x 512 tokens keep the engine busy longer than their
# tokenizing keeps the HTTP threads)
if start times "$MODEL" --threads 1 --max-batch-requests 32 --max-input-length 512 \
        --log-format json; then
    client times; stop times
    check "--log-format json: a line per request with its time, status, inputs, tokens, queue and inference ms" $PY -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
ran = [l for l in lines if l["path"] == "/embed" and l["status"] == 200]
assert ran and all(isinstance(l.get(k), (int, float)) for l in ran
                   for k in ("ms", "inputs", "tokens", "queue_ms", "inference_ms")), lines[:3]
assert all(l["queue_ms"] + l["inference_ms"] <= l["ms"] for l in ran), ran
assert max(l["queue_ms"] for l in ran) >= 100, ran' "$TMP/times.log"
else check "times server starts" false; fi

# ==== Clients gone: 499 ====
if start gone "$MODEL" --threads 1 --max-batch-requests 32 --max-input-length 512; then
    client gone "$TMP/gone.log"; stop gone
else check "gone server starts" false; fi

# ==== Reload one at a time; file_sha256 of a file and of a directory ====
timeout 120 "$ROFORMER" convert "$MODEL" -o "$TMP/cls.gguf" >/dev/null 2>"$TMP/err"
check "convert tiny-word-cls" [ $? -eq 0 ] && [ -s "$TMP/cls.gguf" ]
if start reload "file=$TMP/cls.gguf" -m "dir=$MODEL"; then
    client reload "$TMP/cls.gguf"; stop reload
else check "reload server starts" false; fi

# ==== An hf: model from a stand-in hub (tests/hub/hub_server.py) ====
mkdir -p "$TMP/hub" && ln -s "$(cd "$MODEL" && pwd)" "$TMP/hub/tiny-word-cls"
# (it stops by itself after --timeout seconds)
$PY tests/hub/hub_server.py --root "$TMP/hub" --port-file "$TMP/port" --log "$TMP/hub.log" \
    --timeout 240 &
pids="$pids $!"
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ -s "$TMP/port" ]; then
    HF_ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")" ROFORMER_CACHE="$TMP/cache"
    export HF_ENDPOINT ROFORMER_CACHE
    if start hf hf:test/tiny-word-cls; then
        client hf_sha "$TMP/cache/test/tiny-word-cls/main/model-f32.gguf"; stop hf
    else check "hf: server starts" false; fi
else
    check "the stand-in hub listens within 10 s" false
fi
check_done
