# serve_helpers.sh — what the tests of `roformer serve` share, sourced after
# tests/check.sh: servers started on 127.0.0.1 (port 0) in the background
# and killed at exit, client programs whose output lines are checks, and a
# bounded stop. Every wait is bounded.
pids=""
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# start NAME MODEL ARGS...: starts a server in the background; sets PID and
# URL, or returns 1 when it did not start listening within 60 s.
start() {
    name=$1; model=$2; shift 2
    : >"$TMP/$name.log"
    "$ROFORMER" serve -m "$model" --port 0 --threads 2 "$@" 2>"$TMP/$name.log" &
    PID=$!; pids="$pids $PID"
    i=0
    while [ $i -lt 600 ]; do
        port=$(sed -n 's|.*listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$TMP/$name.log")
        [ -n "$port" ] && { URL="http://127.0.0.1:$port"; return 0; }
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1; i=$((i + 1))
    done
    echo "server $name did not start:"; cat "$TMP/$name.log"
    return 1
}

# client_checks NAME COMMAND...: runs a client program (at most 300 s);
# each "ok WHAT" / "FAIL WHAT: detail" line it prints is a check, and it
# must exit 0.
client_checks() {
    what=$1; shift
    timeout 300 "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    while IFS= read -r line; do
        case "$line" in
            "ok "*) check "${line#ok }" true ;;
            "FAIL "*) echo "$line"; check "${line#FAIL }" false ;;
        esac
    done <"$TMP/out"
    check "$what ran to the end" [ $rc -eq 0 ]
    [ $rc -eq 0 ] || tail -n 5 "$TMP/err"
}

# stop NAME: SIGTERM, then the server must exit 0 within 30 s.
stop() {
    kill -TERM "$PID"
    i=0
    while kill -0 "$PID" 2>/dev/null && [ $i -lt 300 ]; do sleep 0.1; i=$((i + 1)); done
    wait "$PID"
    check "$1: exits 0 after SIGTERM" [ $? -eq 0 ]
}

# st_folder DIR MODEL [normalize]: a sentence-transformers folder over the
# files of the reference model MODEL (hidden size 64): mean pooling, and a
# Normalize module after it when asked.
st_folder() {
    mkdir -p "$1/1_Pooling"
    for f in config.json vocab.txt tokenizer_config.json special_tokens_map.json model.safetensors; do
        [ -f "$2/$f" ] && ln -s "$(cd "$2" && pwd)/$f" "$1/$f"
    done
    modules='[{"idx": 0, "name": "0", "path": "", "type": "sentence_transformers.models.Transformer"},
 {"idx": 1, "name": "1", "path": "1_Pooling", "type": "sentence_transformers.models.Pooling"}'
    [ "$3" = normalize ] && modules="$modules"',
 {"idx": 2, "name": "2", "path": "2_Normalize", "type": "sentence_transformers.models.Normalize"}'
    printf '%s]' "$modules" >"$1/modules.json"
    printf '%s' '{"word_embedding_dimension": 64, "pooling_mode_mean_tokens": true}' \
        >"$1/1_Pooling/config.json"
}
