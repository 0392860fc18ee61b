# test_serve_clients.sh — `roformer serve` against the official client
# libraries people already run, unchanged: npm's `openai` and
# `@huggingface/inference`, installed into build/npm-clients (bounded in
# time, kept for later runs) and driven by tests/serve_clients.cjs against
# real servers on 127.0.0.1 (port 0). Skips visibly without node/npm, or
# when the install fails (no network).
. tests/check.sh
CLIENTS=build/npm-clients

if [ -z "$REF" ]; then
    check_skip "reference fixtures absent (../shared/reference or \$ROFORMER_REFERENCE): npm client tests"
    check_done; exit
fi
if ! command -v node >/dev/null || ! command -v npm >/dev/null; then
    check_skip "node or npm absent: the openai and @huggingface/inference client tests"
    check_done; exit
fi
if [ ! -d "$CLIENTS/node_modules/openai" ] || [ ! -d "$CLIENTS/node_modules/@huggingface/inference" ]; then
    mkdir -p "$CLIENTS"
    if ! timeout 120 npm install --prefix "$CLIENTS" --no-audit --no-fund --loglevel=error \
            'openai@^6' '@huggingface/inference@^4' >"$TMP/npm.log" 2>&1; then
        check_skip "npm install of openai and @huggingface/inference failed (no network?): $(grep . "$TMP/npm.log" | tail -n 1)"
        check_done; exit
    fi
fi
M=$REF/models
pids=""
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# start NAME MODEL ARGS...: a server in the background; sets PID and URL.
start() {
    name=$1; MODEL=$2; shift 2
    "$ROFORMER" serve -m "$MODEL" --port 0 --threads 2 "$@" 2>"$TMP/$name.log" &
    PID=$!; pids="$pids $PID"
    i=0
    while [ $i -lt 600 ]; do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$TMP/$name.log")
        [ -n "$port" ] && { URL="http://127.0.0.1:$port"; return 0; }
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1; i=$((i + 1))
    done
    cat "$TMP/$name.log"
    check "$name server starts" false
    return 1
}

# client SUITE: runs a suite of serve_clients.cjs; each line is a check.
client() {
    timeout 300 node tests/serve_clients.cjs "$1" "$URL" "$ROFORMER" "$MODEL" "$CLIENTS" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    while IFS= read -r line; do
        case "$line" in
            "ok "*) check "${line#ok }" true ;;
            "FAIL "*) echo "$line"; check "${line#FAIL }" false ;;
        esac
    done <"$TMP/out"
    check "serve_clients.cjs $1 ran to the end" [ $rc -eq 0 ]
    [ $rc -eq 0 ] || tail -n 5 "$TMP/err"
}

stop() { kill -TERM "$PID"; wait "$PID"; check "$1: exits 0 after SIGTERM" [ $? -eq 0 ]; }

if start cls "$M/tiny-word-cls"; then client openai; client cls; stop cls; fi
if start mlm "$M/tiny-word-mlm"; then client mlm; stop mlm; fi
if start ner "$M/tiny-char-proj"; then client ner; stop ner; fi
if start qa "$M/tiny-qa"; then client qa; stop qa; fi
check_done
