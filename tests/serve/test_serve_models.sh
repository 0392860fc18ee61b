# test_serve_models.sh — `roformer serve` of several models, their reload
# and --replicas, against real servers on 127.0.0.1 (port 0), checked by
# tests/serve/serve_models_client.py: a two-model server against two one-model
# servers, unknown names, a reload under a client loop (SIGHUP and POST
# /admin/reload, a broken file), replicas against one replica. Every server
# is killed at the end whatever happens; every wait is bounded.
. tests/check.sh
PY=/usr/bin/python3

require_reference "serve tests of several models"
if ! command -v curl >/dev/null || ! $PY -c 'import requests' 2>/dev/null; then
    check_skip "curl or $PY with requests absent: serve tests of several models"
    check_done; exit
fi
M=$REF/models
. tests/serve/serve_helpers.sh

# client SUITE ARGS...: runs a suite of serve_models_client.py.
client() {
    client_checks "serve_models_client.py $1" $PY tests/serve/serve_models_client.py "$@"
}

# Two models of the same hidden size, as files (their checksums are checked).
for m in mlm cls; do
    timeout 120 "$ROFORMER" convert "$M/tiny-word-$m" -o "$TMP/$m.gguf" >/dev/null 2>"$TMP/err"
    check "convert tiny-word-$m" [ $? -eq 0 -a -s "$TMP/$m.gguf" ]
done
A=$TMP/mlm.gguf B=$TMP/cls.gguf

# ==== Usage ====
exits_with 2 "two models of one name is a usage error" \
    "$ROFORMER" serve -m "a=$A" -m "a=$B" --port 0
grep -q "two models are named 'a'" "$TMP/err"
check "... and says which name" [ $? -eq 0 ]
exits_with 2 "two paths with one last part need names" \
    "$ROFORMER" serve -m "$A" -m "$TMP/../$(basename "$TMP")/mlm.gguf" --port 0
exits_with 1 "a model that does not load stops the start" \
    "$ROFORMER" serve -m "a=$A" -m "b=$TMP/absent.gguf" --port 0
exits_with 1 "an hf: model that cannot be pulled stops the start" \
    env ROFORMER_CACHE="$TMP/cache" HF_ENDPOINT=http://127.0.0.1:1 \
    "$ROFORMER" serve -m "a=$A" -m b=hf:test/x --port 0
check "... saying so in one line" [ "$(grep -c 'hf:test/x.*cannot reach' "$TMP/err")" -eq 1 ]
exits_with 2 "--replicas 0 is a usage error" "$ROFORMER" serve -m "$A" --replicas 0 --port 0

# ==== Two models, two one-model servers ====
if start one_a "$A" && URL_A=$URL && PID_A=$PID &&
        start one_b "$B" && URL_B=$URL && PID_B=$PID &&
        start two "a=$A" -m "b=$B"; then
    client two "$URL" "$URL_A" "$URL_B" "$A" "$B"
    stop two
    PID=$PID_A; stop one_a
    PID=$PID_B; stop one_b
else
    check "the two-model and one-model servers start" false
fi

# Two names on one file share one mapping of it.
if start shared "a=$A" -m "b=$A" -m "c=$B"; then
    check "two names on one file: one mapping of it" [ "$(grep -c "$A" /proc/$PID/maps)" -eq 1 ]
    stop shared
else
    check "shared server starts" false
fi

# ==== Reload ====
cp "$A" "$TMP/live.gguf"
if start reload "a=$TMP/live.gguf" --threads 1; then
    client reload "$URL" "$ROFORMER" "$TMP/live.gguf" "$A" "$B" "$PID" "$TMP/reload.log"
    stop reload
else
    check "reload server starts" false
fi
if start keyed "$A" --api-key secret; then
    status=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$URL/admin/reload")
    check "POST /admin/reload without the key is 401" [ "$status" = 401 ]
    status=$(curl -s -o /dev/null -w '%{http_code}' -X POST -H 'Authorization: Bearer secret' \
        "$URL/admin/reload")
    check "POST /admin/reload with the key is 200" [ "$status" = 200 ]
    status=$(curl -s -o /dev/null -w '%{http_code}' "$URL/admin/reload")
    check "GET /admin/reload is 405" [ "$status" = 405 ]
    stop keyed
else
    check "keyed server starts" false
fi

# ==== Replicas ====
if start rep1 "$B" --replicas 1 && URL_1=$URL && PID_1=$PID &&
        start rep2 "$B" --replicas 2; then
    client replicas "$URL_1" "$URL"
    stop rep2
    PID=$PID_1; stop rep1
else
    check "the replica servers start" false
fi
if start rep_limits "$B" --replicas 2 --max-concurrent-requests 2; then
    client replica_limits "$URL"
    stop rep_limits
else
    check "rep_limits server starts" false
fi
check_done
