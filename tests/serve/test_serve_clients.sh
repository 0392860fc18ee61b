# test_serve_clients.sh — `roformer serve` against the official client
# libraries people already run, unchanged: npm's `openai` and
# `@huggingface/inference`, installed into build/npm-clients (at most 180 s,
# kept for later runs) and driven by tests/serve/serve_clients.cjs against real
# servers on 127.0.0.1 (port 0), one of them serving two models. Skips visibly without node or npm; an
# install that fails (no registry included) is a failure, not a skip. Every
# wait is bounded.
. tests/check.sh
CLIENTS=build/npm-clients

require_reference "npm client tests"
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    check_skip "node or npm absent: the openai and @huggingface/inference client tests"
    check_done; exit
fi
if [ ! -f "$CLIENTS/node_modules/openai/package.json" ] ||
        [ ! -f "$CLIENTS/node_modules/@huggingface/inference/package.json" ]; then
    mkdir -p "$CLIENTS"
    timeout -k 10 180 npm install --prefix "$CLIENTS" --no-audit --no-fund --loglevel=error \
        'openai@^6' '@huggingface/inference@^4' >"$TMP/npm.log" 2>&1
    rc=$?
    [ $rc -eq 0 ] || grep . "$TMP/npm.log" | tail -n 5
    check "npm install of openai and @huggingface/inference (exit $rc)" [ $rc -eq 0 ]
    [ $rc -eq 0 ] || { check_done; exit; }
fi
M=$REF/models
. tests/serve/serve_helpers.sh

# client SUITE: runs a suite of serve_clients.cjs; each line is a check.
client() {
    client_checks "serve_clients.cjs $1" node tests/serve/serve_clients.cjs "$1" "$URL" "$ROFORMER" "$MODEL" "$CLIENTS"
}

MODEL=$M/tiny-word-cls
if start cls "$MODEL"; then client openai; client cls; stop cls; else check "cls server starts" false; fi
MODEL=$M/tiny-word-mlm
if start mlm "$MODEL"; then client mlm; stop mlm; else check "mlm server starts" false; fi
MODEL=$M/tiny-char-proj
if start ner "$MODEL"; then client ner; stop ner; else check "ner server starts" false; fi
MODEL=$M/tiny-qa
if start qa "$MODEL"; then client qa; stop qa; else check "qa server starts" false; fi
MODEL=$M/tiny-word-mlm
if start models "a=$MODEL" -m "b=$M/tiny-word-cls"; then
    client_checks "serve_clients.cjs models" node tests/serve/serve_clients.cjs models "$URL" "$ROFORMER" "$MODEL" \
        "$CLIENTS" "$M/tiny-word-cls"
    stop models
else
    check "two-model server starts" false
fi
check_done
