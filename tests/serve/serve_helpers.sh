# serve_helpers.sh — what the tests of `roformer serve` share, sourced after
# tests/check.sh: servers started on 127.0.0.1 (port 0) in the background
# and killed at exit, client programs whose output lines are checks, a
# bounded stop, and serve runs that must refuse to start. Every wait is
# bounded: what outlives its deadline is killed and fails its check.
pids=""
trap 'for p in $pids; do kill -9 "$p" 2>/dev/null; done; rm -rf "$TMP"' EXIT

# start NAME MODEL ARGS...: starts a server in the background; sets PID and
# URL (from the address it prints: --host ::1 gives http://[::1]:PORT), or
# returns 1 when it did not start listening within 60 s.
start() {
    name=$1; model=$2; shift 2
    : >"$TMP/$name.log"
    "$ROFORMER" serve -m "$model" --port 0 --threads 2 "$@" 2>"$TMP/$name.log" &
    PID=$!; pids="$pids $PID"
    i=0
    while [ $i -lt 600 ]; do
        URL=$(sed -n 's|.*listening on \(http://[^ ]*:[0-9]*\) .*|\1|p' "$TMP/$name.log")
        [ -n "$URL" ] && return 0
        kill -0 "$PID" 2>/dev/null || break
        sleep 0.1; i=$((i + 1))
    done
    echo "server $name did not start:"; cat "$TMP/$name.log"
    return 1
}

# client_checks NAME COMMAND...: runs a client program (at most 300 s);
# each "ok WHAT" / "FAIL WHAT: detail" line it prints is a check ("SKIP WHAT:
# why" a visible skip), and it must exit 0.
client_checks() {
    what=$1; shift
    timeout 300 "$@" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    while IFS= read -r line; do
        case "$line" in
            "ok "*) check "${line#ok }" true ;;
            "FAIL "*) echo "$line"; check "${line#FAIL }" false ;;
            "SKIP "*) check_skip "${line#SKIP }" ;;
        esac
    done <"$TMP/out"
    check "$what ran to the end" [ $rc -eq 0 ]
    [ $rc -eq 0 ] || tail -n 5 "$TMP/err"
}

# exits_0 NAME SIGNAL: the server $PID, sent SIGNAL, must exit 0 within
# 60 s (its drain waits 30 s at most); past that it is killed and the check
# fails naming it.
exits_0() {
    i=0
    while kill -0 "$PID" 2>/dev/null && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
    if kill -0 "$PID" 2>/dev/null; then
        kill -9 "$PID"; wait "$PID"
        check "$1: exits within 60 s of SIG$2 (killed)" false
        return
    fi
    wait "$PID"
    check "$1: exits 0 after SIG$2" [ $? -eq 0 ]
}

# stop NAME [SIGNAL]: SIGTERM (or SIGNAL), then exits_0.
stop() {
    kill -"${2:-TERM}" "$PID"
    exits_0 "$1" "${2:-TERM}"
}

# exits_with STATUS WHAT COMMAND...: COMMAND (a serve that must not start
# serving) exits STATUS within 60 s; one that does not is killed and fails.
exits_with() {
    want=$1; what=$2; shift 2
    timeout -k 5 60 "$@" >/dev/null 2>"$TMP/err"
    rc=$?
    [ $rc -ne 124 ] && [ $rc -ne 137 ] || echo "$what: still running after 60 s, killed"
    check "$what" [ $rc -eq "$want" ]
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
