# test_serve_cache.sh — `roformer serve --cache-mb`: for each head, a server
# without a cache beside one with, driven by tests/serve/serve_cache_client.py:
# the same bytes off and on (first and second time) on every route, hits
# and misses counted, duplicates in a request run once (with and without a
# cache), eviction within a tiny cache, a reload dropping the model's
# entries; and the flag's usage errors. Servers on 127.0.0.1, port 0, killed
# at exit; every wait bounded.
. tests/check.sh
PY=/usr/bin/python3

require_reference "the serve cache tests"
if ! $PY -c 'import requests' 2>/dev/null; then
    check_skip "$PY with requests absent: the serve cache tests"
    check_done; exit
fi
M=$REF/models
. tests/serve/serve_helpers.sh

# client SUITE ARGS...: one run of serve_cache_client.py; each line a check.
client() {
    suite=$1; shift
    client_checks "serve_cache_client.py $suite" $PY tests/serve/serve_cache_client.py "$suite" "$@"
}

# ==== Usage ====
timeout 60 "$ROFORMER" serve --help | grep -q -- '--cache-mb N'
check "serve --help lists --cache-mb" [ $? -eq 0 ]
for bad in -1 abc 1.5 2000000 ''; do
    exits_with 2 "serve --cache-mb '$bad' is a usage error" \
        "$ROFORMER" serve -m "$M/tiny-word-cls" --port 0 --cache-mb "$bad"
    check "serve --cache-mb '$bad': one line naming the flag and the value" \
        sh -c "[ \$(grep -c '^roformer serve: ' '$TMP/err') -eq 1 ] &&
               head -n 1 '$TMP/err' | grep -q -- \"--cache-mb .*'$bad'\""
done

# ==== Off against on, every head ====
for spec in cls:tiny-word-cls mlm:tiny-word-mlm ner:tiny-char-proj qa:tiny-qa; do
    head=${spec%%:*}; MODEL=$M/${spec#*:}
    if start "$head-off" "$MODEL" --max-input-length 64; then
        OFF=$URL; OFF_PID=$PID
        if start "$head-on" "$MODEL" --max-input-length 64 --cache-mb 16; then
            client same "$OFF" "$URL" "$head"
            [ "$head" = cls ] && client counters "$OFF" "$URL"
            [ "$head" = cls ] && client dedupe "$OFF"
            stop "$head-on"
        else
            check "$head: server with a cache starts" false
        fi
        PID=$OFF_PID; stop "$head-off"
    else
        check "$head: server without a cache starts" false
    fi
done

# ==== Eviction within 1 MiB ====
TITLES=../shared/data/thucnews_titles/dev.txt
if [ ! -f "$TITLES" ]; then
    check_skip "$TITLES absent: eviction"
elif start evict "$M/tiny-word-cls" --cache-mb 1 --max-input-length 64 --auto-truncate; then
    client evict "$URL" 1 "$TITLES"
    stop evict
else
    check "evict: server starts" false
fi

# ==== Reload: a model file (its sha256 in the keys) and a directory ====
GGUF=models/sentiment-zh-small.gguf
for MODEL in "$GGUF" "$M/tiny-word-cls"; do
    if [ ! -f "$MODEL" ] && [ ! -d "$MODEL" ]; then
        check_skip "$MODEL absent: reload"
        continue
    fi
    if start reload "$MODEL" --cache-mb 8; then
        client reload "$URL"
        stop reload
    else
        check "reload: server of $MODEL starts" false
    fi
done

check_done
