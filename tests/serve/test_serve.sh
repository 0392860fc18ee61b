# test_serve.sh — `roformer serve` end to end: real servers on 127.0.0.1
# (port 0: the kernel picks a free one, the server prints it), talked to with
# curl here and with Python's requests / urllib / sockets in
# tests/serve/serve_client.py, which compares every number with the CLI's on the
# same model. Each server is killed at the end whatever happens; every wait
# is bounded.
. tests/check.sh
PY=/usr/bin/python3

require_reference "all serve tests"
if ! command -v curl >/dev/null || ! $PY -c 'import requests' 2>/dev/null; then
    check_skip "curl or $PY with requests absent: all serve tests"
    check_done; exit
fi
M=$REF/models
. tests/serve/serve_helpers.sh

# client SUITE [ARGS...]: runs a suite of serve_client.py; each line is a check.
client() {
    suite=$1; shift
    client_checks "serve_client.py $suite" $PY tests/serve/serve_client.py "$suite" "$URL" "$ROFORMER" "$MODEL" "$@"
}

# ==== Usage (each under a deadline: a serve that should refuse must not serve) ====
timeout 60 "$ROFORMER" serve --help | grep -q 'usage: roformer serve'
check "serve --help" [ $? -eq 0 ]
exits_with 2 "serve without -m is a usage error" "$ROFORMER" serve --port 0
exits_with 2 "serve --port 70000 is a usage error" "$ROFORMER" serve -m "$M/tiny-word-cls" --port 70000
exits_with 2 "serve --log-format xml is a usage error" \
    "$ROFORMER" serve -m "$M/tiny-word-cls" --port 0 --log-format xml
exits_with 1 "serve --host not-an-address fails" \
    "$ROFORMER" serve -m "$M/tiny-word-cls" --port 0 --host not-an-address
check "serve --host not-an-address names the address" grep -q "'not-an-address' is not an IPv4" "$TMP/err"

# ==== A classifier: every TEI / OpenAI route and error ====
MODEL=$M/tiny-word-cls
if start cls "$MODEL" --max-input-length 40; then
    client cls
    client openai
    client tei
    out=$(curl -s --max-time 30 -w ' %{http_code}' -H 'Content-Type: application/json' \
        -d '{"inputs": "今天天气很好"}' "$URL/predict")
    check "curl POST /predict: 200 and labels" sh -c "echo '$out' | grep -q '\"label\":\"negative\".* 200\$'"
    out=$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' "$URL/health")
    check "curl GET /health: 200" [ "$out" = 200 ]
    out=$(curl -s --max-time 30 -w ' %{http_code}' -X DELETE "$URL/embed")
    check "curl DELETE /embed: 405 with TEI's error shape" \
        sh -c "echo '$out' | grep -q '\"error_type\":\"MethodNotAllowed\"}.405\$'"
    curl -s --max-time 30 "$URL/metrics" | grep -q '^roformer_requests_total{route="/predict",status="200"} [1-9]'
    check "curl GET /metrics: Prometheus text" [ $? -eq 0 ]
    stop cls
    check "cls: one text log line per request" \
        grep -q ' POST /predict 200 [0-9.]*ms inputs=1 tokens=8 ' "$TMP/cls.log"
else
    check "cls server starts" false
fi

# ==== The other heads ====
MODEL=$M/tiny-word-mlm
if start mlm "$MODEL"; then client mlm; client hf_mlm; stop mlm; else check "mlm server starts" false; fi
MODEL=$M/tiny-char-proj
if start ner "$MODEL"; then client ner; client hf_ner; stop ner; else check "ner server starts" false; fi
MODEL=$M/tiny-qa
if start qa "$MODEL" --max-input-length 64; then client qa; stop qa; else check "qa server starts" false; fi

# ==== --compute int8 (CPUs with AVX2): /info says so, /embed answers ====
if grep -qw avx2 /proc/cpuinfo 2>/dev/null; then
    if start int8 "$M/tiny-word-mlm" --compute int8; then
        curl -s --max-time 30 "$URL/info" >"$TMP/int8-info"
        check "serve --compute int8: /info model_dtype is int8" $PY -c '
import json, sys
assert json.load(open(sys.argv[1]))["model_dtype"] == "int8"' "$TMP/int8-info"
        curl -s --max-time 30 -w '\n%{http_code}' -H 'Content-Type: application/json' \
            -d '{"inputs": ["今天天气很好", "北京是中国的首都"]}' "$URL/embed" >"$TMP/int8-embed"
        check "serve --compute int8: POST /embed is 200 with two vectors" $PY -c '
import json, sys
body, status = open(sys.argv[1]).read().rsplit("\n", 1)
vecs = json.loads(body)
assert status == "200" and len(vecs) == 2 and all(len(v) == 64 for v in vecs)' "$TMP/int8-embed"
        stop int8
    else
        check "int8 server starts" false
    fi
else
    check_skip "this CPU has no AVX2: serve --compute int8 not run"
fi

# ==== Rerank: a three-label classifier, a one-label one, a model without one ====
MODEL=$M/tiny-word-cls
if start rerank "$MODEL" --max-client-batch-size 4 --max-input-length 24; then
    client rerank; stop rerank
else
    check "rerank server starts" false
fi
# the one-label classifier: tiny-word-cls with only its label-2 row of out_proj
MODEL=$TMP/one-label
mkdir -p "$MODEL" && cp "$M/tiny-word-cls/vocab.txt" "$M/tiny-word-cls/tokenizer_config.json" "$MODEL/" &&
$PY - "$M/tiny-word-cls" "$MODEL" <<'EOF'
import json, struct, sys
src, dst = sys.argv[1:3]
config = json.load(open(src + "/config.json"))
config.update(num_labels=1, id2label={"0": "LABEL_0"}, label2id={"LABEL_0": 0})
json.dump(config, open(dst + "/config.json", "w"))
data = open(src + "/model.safetensors", "rb").read()
(n,) = struct.unpack("<Q", data[:8])
header, body = json.loads(data[8:8 + n]), data[8 + n:]
out, blobs, at = {}, [], 0
for name, t in sorted((k, v) for k, v in header.items() if k != "__metadata__"):
    b, e = t["data_offsets"]
    blob, shape = body[b:e], t["shape"]
    if name.startswith("classifier.out_proj."):  # keep row 2 (float32)
        row = 4 * (shape[1] if len(shape) == 2 else 1)
        blob, shape = blob[2 * row:3 * row], [1] + shape[1:]
    out[name] = {"dtype": t["dtype"], "shape": shape, "data_offsets": [at, at + len(blob)]}
    blobs.append(blob)
    at += len(blob)
head = json.dumps(out).encode()
head += b" " * (-len(head) % 8)
open(dst + "/model.safetensors", "wb").write(struct.pack("<Q", len(head)) + head + b"".join(blobs))
EOF
check "a one-label classifier made from tiny-word-cls" [ $? -eq 0 ]
if start reranker "$MODEL" --auto-truncate --max-input-length 16; then
    export RERANK_SOURCE=$M/tiny-word-cls
    client reranker; stop reranker
else
    check "one-label reranker server starts" false
fi
MODEL=$M/tiny-word-mlm
if start rerank_cosine "$MODEL" --max-input-length 24; then
    client rerank_cosine; stop rerank_cosine
else
    check "rerank_cosine server starts" false
fi
# a sentence-transformers folder (mean pooling) with a "query" prompt and no default
MODEL=$TMP/st-prompts
st_folder "$MODEL" "$M/tiny-word-mlm"
printf '%s' '{"prompts": {"query": "查询："}, "default_prompt_name": null}' \
    >"$MODEL/config_sentence_transformers.json"
if start similarity_prompt "$MODEL"; then
    client similarity_prompt; stop similarity_prompt
else
    check "similarity_prompt server starts" false
fi

# ==== Limits: key, request size, concurrency; JSON log ====
MODEL=$M/tiny-word-cls
if start limits "$MODEL" --api-key secret --max-client-batch-size 4 --payload-limit 1000 \
        --max-concurrent-requests 1 --log-format json; then
    client limits
    out=$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' -d '{"inputs": "x"}' "$URL/embed")
    check "curl without the key: 401" [ "$out" = 401 ]
    out=$(curl -s --max-time 30 -o /dev/null -w '%{http_code}' -H 'Authorization: Bearer secret' \
        -d '{"inputs": "x"}' "$URL/embed")
    check "curl with the key: 200" [ "$out" = 200 ]
    stop limits
    check "limits: JSON log lines with status and route" $PY -c '
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
assert any(l["status"] == 429 and l["path"] == "/embed" for l in lines)
assert any(l["status"] == 200 and l.get("tokens", 0) > 0 for l in lines)' "$TMP/limits.log"
else
    check "limits server starts" false
fi

# ==== CORS, --max-batch-requests, --max-batch-tokens ====
exits_with 2 "serve --cors-allow-origin '' is a usage error" \
    "$ROFORMER" serve -m "$MODEL" --port 0 --cors-allow-origin ''
exits_with 2 "serve --max-batch-requests 0 is a usage error" \
    "$ROFORMER" serve -m "$MODEL" --port 0 --max-batch-requests 0
exits_with 2 "serve --max-batch-tokens 0 is a usage error" \
    "$ROFORMER" serve -m "$MODEL" --port 0 --max-batch-tokens 0
if start cors "$MODEL" --api-key secret --max-batch-requests 2 \
        --cors-allow-origin http://a.example,http://b.example; then
    client cors
    stop cors
else
    check "cors server starts" false
fi

if start batching "$MODEL" --max-batch-tokens 64 --cors-allow-origin '*'; then
    client batching
    client cors_any
    stop batching
else
    check "batching server starts" false
fi

# ==== --host ::1 ====
if $PY -c 'import socket; socket.socket(socket.AF_INET6).bind(("::1", 0))' 2>/dev/null; then
    if start ipv6 "$MODEL" --host ::1; then client ipv6; stop ipv6; else check "ipv6 server starts" false; fi
else
    check_skip "this machine has no IPv6 loopback (::1): serve --host ::1 not run"
fi

# ==== --compute bf16 and --pooling: the CLI's bytes ====
MODEL=$M/tiny-word-mlm
# bf16 needs AVX512_BF16 or AMX-BF16 (x86-64), BF16 (ARM64): docs/compute.md
if grep -qwE 'avx512_bf16|amx_bf16|bf16' /proc/cpuinfo 2>/dev/null; then
    if start bf16 "$MODEL" --compute bf16; then client cli_bytes --compute bf16; stop bf16
    else check "bf16 server starts" false; fi
else
    check_skip "this CPU has no bf16 instructions: serve --compute bf16 not run"
fi
# mean and max: neither is the model's default (its pooler)
for pooling in mean max; do
    if start "pooling_$pooling" "$MODEL" --pooling $pooling; then
        client cli_bytes --pooling $pooling; stop "pooling_$pooling"
    else
        check "pooling_$pooling server starts" false
    fi
done

# ==== Shutdown with requests in flight: SIGTERM, and SIGINT alike ====
MODEL=$M/tiny-word-cls
for sig in TERM INT; do
    if start "shutdown_$sig" "$MODEL"; then
        client shutdown "$PID" $sig
        exits_0 "shutdown_$sig" $sig
    else
        check "shutdown_$sig server starts" false
    fi
done
check_done
