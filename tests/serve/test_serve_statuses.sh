# test_serve_statuses.sh — the HTTP status of every refusal `roformer serve`
# promises (docs/serving.md), on one server (tiny-word-cls, an API key, at
# most 4 inputs a request, bodies of at most 1000 bytes), talked to with
# curl: 401 without the key (OpenAI's code invalid_api_key on its routes),
# the public /health without it, 404 for no route, 405 for a wrong method,
# 422 for bad JSON and an empty list on TEI's routes and 400 on OpenAI's,
# 413 for too many inputs (texts or token ids) and for a body over the
# limit. One server, a dozen requests: a few seconds.
. tests/check.sh

require_reference "the serve status codes"
if ! command -v curl >/dev/null; then
    check_skip "curl absent: the serve status codes"
    check_done; exit
fi
. tests/serve/serve_helpers.sh

# ask STATUS WHAT CURL_ARGS...: the response has STATUS; its body is in $TMP/body.
ask() {
    want=$1 what=$2; shift 2
    got=$(curl -s --max-time 30 -o "$TMP/body" -w '%{http_code}' "$@")
    check "$what: $want" [ "$got" = "$want" ]
    [ "$got" = "$want" ] || echo "  got $got: $(head -c 300 "$TMP/body")" >&2
}
body_has() {
    grep -qF -- "$1" "$TMP/body" && return 0
    echo "  body: $(head -c 300 "$TMP/body")" >&2
    return 1
}

if ! start statuses "$REF/models/tiny-word-cls" --api-key k --max-client-batch-size 4 \
        --payload-limit 1000; then
    check "the server starts" false
    check_done; exit
fi
auth="Authorization: Bearer k"
json="Content-Type: application/json"

ask 401 "POST /embed without the key" -H "$json" -d '{"inputs": "x"}' "$URL/embed"
check "... TEI's error_type Unauthorized" body_has '"error_type":"Unauthorized"'
ask 401 "POST /v1/embeddings without the key" -H "$json" -d '{"input": "x"}' "$URL/v1/embeddings"
check "... OpenAI's code invalid_api_key" body_has '"code":"invalid_api_key"'
ask 200 "GET /health without the key (public)" "$URL/health"
ask 200 "POST /embed with the key" -H "$auth" -H "$json" -d '{"inputs": "x"}' "$URL/embed"
ask 404 "GET /no-such-route" -H "$auth" "$URL/no-such-route"
ask 405 "DELETE /embed" -H "$auth" -X DELETE "$URL/embed"
check "... TEI's error_type MethodNotAllowed" body_has '"error_type":"MethodNotAllowed"'
ask 422 "POST /embed with bad JSON" -H "$auth" -H "$json" -d '{"inputs": ' "$URL/embed"
check "... says where" body_has 'invalid JSON at byte'
ask 422 "POST /embed of an empty list" -H "$auth" -H "$json" -d '{"inputs": []}' "$URL/embed"
ask 400 "POST /v1/embeddings with bad JSON (OpenAI's 400)" -H "$auth" -H "$json" -d '{"input": ' \
    "$URL/v1/embeddings"
check "... typed invalid_request_error" body_has '"type":"invalid_request_error"'
ask 413 "POST /embed of 5 texts (over 4)" -H "$auth" -H "$json" \
    -d '{"inputs": ["a", "b", "c", "d", "e"]}' "$URL/embed"
ask 200 "POST /embed of 4 texts" -H "$auth" -H "$json" -d '{"inputs": ["a", "b", "c", "d"]}' \
    "$URL/embed"
ask 413 "POST /v1/embeddings of 5 token-id inputs (over 4)" -H "$auth" -H "$json" \
    -d '{"input": [[101], [102], [103], [104], [105]]}' "$URL/v1/embeddings"
big=$(printf '%01000d' 0)
ask 413 "a body over --payload-limit 1000" -H "$auth" -H "$json" -d "{\"inputs\": \"$big\"}" \
    "$URL/embed"
stop statuses
check_done
