#!/bin/sh
# test_hub.sh — `roformer pull` and `-m hf:OWNER/NAME` against a stand-in hub
# (tests/hub/hub_server.py, 127.0.0.1 only, stops by itself): the pulled model
# gives the local directory's outputs, a complete cache makes no request,
# a cut download resumes with a Range request and ends with the right
# bytes, a bad checksum leaves nothing, and every failure is one line with
# exit status 1 (2 for usage errors). Every wait is bounded.
. tests/check.sh

run() { "$ROFORMER" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
exit_is() { [ "$rc" -eq "$1" ]; }
out_is() { [ "$(cat "$TMP/out")" = "$1" ]; }
out_has() { grep -qF -- "$1" "$TMP/out"; }
err_has() { grep -qF -- "$1" "$TMP/err"; }
one_error_line() { [ "$(wc -l <"$TMP/err")" -eq 1 ] && grep -q '^roformer: error: ' "$TMP/err" && [ ! -s "$TMP/out" ]; }
no_file() { ! ls "$@" >/dev/null 2>&1; }

export ROFORMER_CACHE="$TMP/cache"
unset HF_TOKEN XDG_CACHE_HOME

run pull --help
check "pull --help exits 0" exit_is 0
check "pull --help prints the usage" out_has "usage: roformer pull OWNER/NAME[@REVISION]"
run pull
check "pull without a repository is a usage error" exit_is 2
run pull a/b --dtype f8
check "bad --dtype is a usage error" exit_is 2
run pull a/b --list
check "--list with a repository is a usage error" exit_is 2
run pull noslash
check "a name without OWNER/ exits 1" exit_is 1
check "it says what is expected" err_has "expected OWNER/NAME[@REVISION]"
run pull ../x
check "'..' as an owner exits 1" exit_is 1
check "... in one line" one_error_line
run pull 'a/b@main/../x'
check "'..' in a revision exits 1" exit_is 1
check "... naming the revision" err_has "is not a revision"
run info -m hf:a
check "-m hf: with a bad name exits 1" exit_is 1
run pull --list
check "--list of an empty cache exits 0" exit_is 0
check "... and says so" out_has "0 cached revisions in $TMP/cache"

PY=/usr/bin/python3
if [ -z "$REF" ] || [ ! -x "$PY" ]; then
    check_skip "reference fixtures or /usr/bin/python3 missing: stand-in hub tests not run"
    check_done; exit $?
fi
M="$REF/models"

# ==== the stand-in hub ====
# its repositories: the reference models, and tiny-st, a sentence-transformers
# folder over tiny-word-cls (mean pooling, Normalize, a prompt)
mkdir -p "$TMP/hub/tiny-st/1_Pooling"
for d in "$M"/*/; do ln -s "$(cd "$d" && pwd)" "$TMP/hub/$(basename "$d")"; done
for f in "$M"/tiny-word-cls/*; do ln -s "$(cd "$(dirname "$f")" && pwd)/$(basename "$f")" "$TMP/hub/tiny-st/"; done
printf '%s' '[{"idx":0,"name":"0","path":"","type":"sentence_transformers.models.Transformer"},{"idx":1,"name":"1","path":"1_Pooling","type":"sentence_transformers.models.Pooling"},{"idx":2,"name":"2","path":"2_Normalize","type":"sentence_transformers.models.Normalize"}]' >"$TMP/hub/tiny-st/modules.json"
printf '%s' '{"word_embedding_dimension":32,"pooling_mode_mean_tokens":true}' >"$TMP/hub/tiny-st/1_Pooling/config.json"
printf '%s' '{"max_seq_length":64,"do_lower_case":false}' >"$TMP/hub/tiny-st/sentence_bert_config.json"
printf '%s' '{"prompts":{"query":"query: "},"default_prompt_name":null}' >"$TMP/hub/tiny-st/config_sentence_transformers.json"
"$PY" tests/hub/hub_server.py --root "$TMP/hub" --port-file "$TMP/port" --log "$TMP/log" --timeout 300 &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$TMP"' EXIT
i=0
while [ ! -s "$TMP/port" ] && [ $i -lt 100 ]; do sleep 0.1; i=$((i + 1)); done
if [ ! -s "$TMP/port" ]; then
    check "the stand-in hub listens within 10 s" false
    check_done; exit
fi
export HF_ENDPOINT="http://127.0.0.1:$(cat "$TMP/port")"
: >"$TMP/log"
requests() { wc -l <"$TMP/log"; }
C="$TMP/cache"

# ==== a pull, and the same outputs as the local directory ====
run pull test/tiny-word-mlm
check "pull exits 0" exit_is 0
check "pull prints the cached GGUF's path" out_is "$C/test/tiny-word-mlm/main/model-f32.gguf"
check "pull is silent on stderr without a terminal" test ! -s "$TMP/err"
check "the weights came through the CDN redirect" grep -q "^GET /cdn/test/tiny-word-mlm/main/model.safetensors" "$TMP/log"
check "no .part file is left" no_file "$C"/test/tiny-word-mlm/main/*.part
check "the downloaded weights are the hub's bytes" cmp -s "$C/test/tiny-word-mlm/main/model.safetensors" "$M/tiny-word-mlm/model.safetensors"
check "a local conversion exits 0" "$ROFORMER" convert "$M/tiny-word-mlm" -o "$TMP/local.gguf"
check "the pulled GGUF equals a local conversion" same "$C/test/tiny-word-mlm/main/model-f32.gguf" "$TMP/local.gguf"
n=$(requests)
echo '{"text": "今天天气不错"}' >"$TMP/in"
check "forward -m hf: exits 0" run_ok "$TMP/hub.jsonl" "$ROFORMER" forward -m hf:test/tiny-word-mlm <"$TMP/in"
check "forward -m DIR exits 0" run_ok "$TMP/dir.jsonl" "$ROFORMER" forward -m "$M/tiny-word-mlm" <"$TMP/in"
check "forward -m hf: gives the local directory's outputs" same "$TMP/hub.jsonl" "$TMP/dir.jsonl"
check "... and its output is not empty" grep -q last_hidden_state "$TMP/hub.jsonl"
printf '今天天气很好\t今天天气不错\n' >"$TMP/pair"
check "similarity -m hf: exits 0" run_ok "$TMP/hub.jsonl" "$ROFORMER" similarity -m hf:test/tiny-word-mlm <"$TMP/pair"
check "similarity -m DIR exits 0" run_ok "$TMP/dir.jsonl" "$ROFORMER" similarity -m "$M/tiny-word-mlm" <"$TMP/pair"
check "similarity -m hf: gives the local directory's outputs" same "$TMP/hub.jsonl" "$TMP/dir.jsonl"
run pull test/tiny-word-mlm
check "a second pull exits 0" exit_is 0
check "a cached model makes no request" test "$(requests)" -eq "$n"
HF_ENDPOINT=http://127.0.0.1:1 run info -m hf:test/tiny-word-mlm
check "a cached model works with the hub unreachable" exit_is 0
# the cache's place: $ROFORMER_CACHE, else $XDG_CACHE_HOME/roformer, else
# ~/.cache/roformer
env -u ROFORMER_CACHE XDG_CACHE_HOME="$TMP/xdg" "$ROFORMER" pull test/tiny-char-proj >"$TMP/out" 2>"$TMP/err"
check "without ROFORMER_CACHE: the cache is \$XDG_CACHE_HOME/roformer" \
    sh -c "[ $? -eq 0 ] && [ \"\$(cat '$TMP/out')\" = '$TMP/xdg/roformer/test/tiny-char-proj/main/model-f32.gguf' ] && [ -s '$TMP/xdg/roformer/test/tiny-char-proj/main/model-f32.gguf' ]"
env -u ROFORMER_CACHE -u XDG_CACHE_HOME HOME="$TMP/home" "$ROFORMER" pull test/tiny-char-proj >"$TMP/out" 2>"$TMP/err"
check "without either: the cache is ~/.cache/roformer" \
    sh -c "[ $? -eq 0 ] && [ \"\$(cat '$TMP/out')\" = '$TMP/home/.cache/roformer/test/tiny-char-proj/main/model-f32.gguf' ] && [ -s '$TMP/home/.cache/roformer/test/tiny-char-proj/main/model-f32.gguf' ]"
n=$(requests)
run pull test/tiny-word-mlm --dtype f16
check "pull --dtype f16 of a cached checkpoint exits 0" exit_is 0
check "... into its own file" out_is "$C/test/tiny-word-mlm/main/model-f16.gguf"
check "... converted from the cache with no request" test "$(requests)" -eq "$n"
run info -m "$C/test/tiny-word-mlm/main/model-f16.gguf"
check "... its info exits 0" exit_is 0
check "... and stored as f16" out_has "dtype:               f16"
run pull test/tiny-word-mlm --pooler-activation linear
check "pull --pooler-activation linear exits 0" exit_is 0
check "... into its own file" out_is "$C/test/tiny-word-mlm/main/model-f32-pooler-linear.gguf"
check "... converted from the cache with no request" test "$(requests)" -eq "$n"
run info -m "$C/test/tiny-word-mlm/main/model-f32-pooler-linear.gguf"
check "... its info exits 0" exit_is 0
check "... and pools with linear" out_has "pooler:              linear"
run pull test/roformer_chinese_sim_tiny-word-mlm
check "a RoFormer-Sim repository pulls (exit 0)" exit_is 0
check "a RoFormer-Sim repository pulls with a linear pooler by default" \
    out_is "$C/test/roformer_chinese_sim_tiny-word-mlm/main/model-f32-pooler-linear.gguf"
run info -m hf:test/roformer_chinese_sim_tiny-word-mlm
check "... info -m hf: of it exits 0" exit_is 0
check "... and -m hf: of it pools with linear" out_has "pooler:              linear"
run pull test/roformer_chinese_sim_tiny-word-mlm --pooler-activation tanh
check "... --pooler-activation tanh pulls (exit 0)" exit_is 0
check "... unless told otherwise" out_has "model-f32-pooler-tanh.gguf"
run pull test/tiny-word-mlm --pooler-activation relu
check "a bad --pooler-activation is a usage error" exit_is 2
run pull --list
check "--list exits 0" exit_is 0
check "--list names the repository and revision" out_has "test/tiny-word-mlm@main  $C/test/tiny-word-mlm/main"
check "--list shows the GGUF with its size" grep -Eq '^  model-f32.gguf +[0-9.]+ MB$' "$TMP/out"
check "--list counts the revisions" out_has "2 cached revisions in $C"

run pull test/tiny-char-proj --tokenizer bert
check "pull --tokenizer bert exits 0" exit_is 0
check "... into its own file" out_is "$C/test/tiny-char-proj/main/model-f32-bert.gguf"
run info -m "$C/test/tiny-char-proj/main/model-f32-bert.gguf"
check "... its info exits 0" exit_is 0
check "... with the bert tokenizer" out_has "tokenizer:           bert"

run pull test/tiny-qa --pooler-activation linear
check "--pooler-activation for a model without a pooler exits 1" exit_is 1
check "... one line" one_error_line
check "... and no GGUF" no_file "$C"/test/tiny-qa/main/*.gguf

# ==== a sentence-transformers repository ====
run pull test/tiny-st
check "a sentence-transformers repository pulls" exit_is 0
check "... fetching the Pooling config from its folder" \
    cmp -s "$C/test/tiny-st/main/1_Pooling/config.json" "$TMP/hub/tiny-st/1_Pooling/config.json"
check "... and sentence_bert_config.json" test -f "$C/test/tiny-st/main/sentence_bert_config.json"
check "a local conversion of it exits 0" "$ROFORMER" convert "$TMP/hub/tiny-st" -o "$TMP/st-local.gguf"
check "the pulled GGUF equals a local conversion" same "$C/test/tiny-st/main/model-f32.gguf" "$TMP/st-local.gguf"
run info -m hf:test/tiny-st
check "info -m hf: of it exits 0" exit_is 0
check "... and info shows its settings" \
    out_has "sentence-transformers: pooling mean, normalize true, max_seq_length 64"
check "a plain repository's modules.json is asked for once, and is absent" \
    test "$(grep -c "^GET /test/tiny-word-mlm/resolve/main/modules.json" "$TMP/log")" -eq 1

# ==== two pulls of one repository at once: one downloads, the other waits ====
# each at most 120 s: one waiting on the other's lock for ever is a deadlock
timeout -k 10 120 "$ROFORMER" pull slow/tiny-qa >"$TMP/out1" 2>&1 &
p1=$!
timeout -k 10 120 "$ROFORMER" pull slow/tiny-qa >"$TMP/out2" 2>&1 &
p2=$!
wait $p1; rc1=$?
wait $p2; rc2=$?
check "two pulls at once end within 120 s (exit 124 or 137: hung; got $rc1 and $rc2)" \
    test "$rc1" -ne 124 -a "$rc1" -ne 137 -a "$rc2" -ne 124 -a "$rc2" -ne 137
check "two pulls at once both exit 0" test "$rc1" -eq 0 -a "$rc2" -eq 0
check "... and print the same path" same "$TMP/out1" "$TMP/out2"
check "... the weights downloaded once" test "$(grep -c "^GET /cdn/slow/tiny-qa/" "$TMP/log")" -eq 1

# ==== revisions ====
run pull test/tiny-qa@refs/pr/1
check "a revision with '/' exits 0" exit_is 0
check "... in one folder with %2F" out_is "$C/test/tiny-qa/refs%2Fpr%2F1/model-f32.gguf"
check "... asked for as refs%2Fpr%2F1" grep -q "^GET /test/tiny-qa/resolve/refs%2Fpr%2F1/config.json" "$TMP/log"
run pull test/tiny-qa@v2
check "an unknown revision exits 1" exit_is 1
check "... one line" one_error_line
check "... naming the revision and the 404" err_has "repository test/tiny-qa has no revision 'v2' (404)"
run pull test/no-such-model
check "an unknown repository exits 1" exit_is 1
check "... one line saying so" err_has "hf:test/no-such-model: no such repository on $HF_ENDPOINT (404"
check "... and leaves no files" no_file "$C"/test/no-such-model/main/*

# ==== pytorch_model.bin when there is no model.safetensors ====
run pull nosafetensors/tiny-word-mlm
check "no model.safetensors: pull exits 0" exit_is 0
check "... with pytorch_model.bin" cmp -s "$C/nosafetensors/tiny-word-mlm/main/pytorch_model.bin" "$M/tiny-word-mlm/pytorch_model.bin"
check "... and the same GGUF as model.safetensors gives" cmp -s "$C/nosafetensors/tiny-word-mlm/main/model-f32.gguf" "$TMP/local.gguf"
run pull noweights/tiny-word-mlm
check "no weights at all exits 1" exit_is 1
check "... one line naming both files" err_has "has neither model.safetensors nor pytorch_model.bin"
check "... and no GGUF" no_file "$C"/noweights/tiny-word-mlm/main/*.gguf

# ==== a connection dropped half-way, then resumed ====
size=$(wc -c <"$M/tiny-word-cls/model.safetensors")
run pull drop/tiny-word-cls
check "a dropped connection exits 1" exit_is 1
check "... one line" one_error_line
check "... saying it was interrupted and resumes" err_has "model.safetensors: download interrupted after $((size / 2)) of $size bytes"
check "... and how to go on" err_has "run it again to resume"
check "... no model.safetensors under its final name" no_file "$C/drop/tiny-word-cls/main/model.safetensors"
check "... half of it kept in model.safetensors.part" test "$(wc -c <"$C/drop/tiny-word-cls/main/model.safetensors.part")" -eq $((size / 2))
run pull --list
check "--list shows the partial download" grep -q 'model.safetensors.part .*(partial download)' "$TMP/out"
run pull drop/tiny-word-cls
check "the next pull resumes and exits 0" exit_is 0
check "... with a Range request from where it stopped" grep -q "^GET /cdn/drop/tiny-word-cls/main/model.safetensors range=bytes=$((size / 2))-" "$TMP/log"
check "... ending with the right bytes" cmp -s "$C/drop/tiny-word-cls/main/model.safetensors" "$M/tiny-word-cls/model.safetensors"
check "... and no .part left" no_file "$C/drop/tiny-word-cls/main/model.safetensors.part"

# ==== a checksum that does not match ====
run pull badsum/tiny-qa
check "a bad checksum exits 1" exit_is 1
check "... one line" one_error_line
check "... saying the sha256 does not match" err_has "model.safetensors: sha256 "
check "... and that it was deleted" err_has "does not match the hub's"
check "... nothing of the weights left in the cache" no_file "$C"/badsum/tiny-qa/main/model.safetensors*
check "... and no GGUF" no_file "$C"/badsum/tiny-qa/main/*.gguf

# ==== private repositories and HF_TOKEN ====
run pull private/tiny-qa
check "401 without a token exits 1" exit_is 1
check "... one line" one_error_line
check "... naming HF_TOKEN" err_has "401 Unauthorized: the repository is private or gated; set HF_TOKEN"
HF_TOKEN=wrong run pull private/tiny-qa
check "403 with a wrong token exits 1" exit_is 1
check "... naming HF_TOKEN" err_has "403 Forbidden: HF_TOKEN does not give access"
HF_TOKEN=hf_test_token run pull private/tiny-qa
check "the right token pulls it" exit_is 0
check "the token was sent to the hub" grep -q "^GET /private/tiny-qa/resolve/main/config.json range=- auth=Bearer_hf_test_token" "$TMP/log"
check "... and not to the CDN it redirects to" grep -q "^GET /cdn/private/tiny-qa/main/model.safetensors range=- auth=-" "$TMP/log"

# ==== no network ====
HF_ENDPOINT=http://127.0.0.1:1 run pull test/small-fp16
check "a refused connection exits 1" exit_is 1
check "... one line" one_error_line
check "... saying the hub cannot be reached" err_has "cannot reach http://127.0.0.1:1"
check "... and that local files work offline" err_has "A local checkpoint directory or .gguf file works offline"
HF_ENDPOINT=http://no-such-host.invalid run info -m hf:test/small-fp16
check "a name that does not resolve exits 1 (-m hf:)" exit_is 1
check "... one line" one_error_line
check "... saying so" err_has "Could not resolve host"
check "... and that local files work offline" err_has "works offline"

# ==== a download interrupted under way, then resumed with a progress bar ====
# The hub sends half the weights and then holds the connection, so the pull
# is still running when it is signalled, with exactly half on disk.
timeout -k 10 120 "$ROFORMER" pull stall/tiny-word-cls --progress >"$TMP/out" 2>"$TMP/err" &
pid=$!
part="$C/stall/tiny-word-cls/main/model.safetensors.part"
part_size() { if [ -f "$part" ]; then wc -c <"$part"; else echo 0; fi; }
i=0
while [ "$(part_size)" -lt $((size / 2)) ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done
check "the stalled pull has half the weights on disk within 60 s ($(part_size) of $size bytes)" \
    test "$(part_size)" -eq $((size / 2))
kill -TERM $pid
wait $pid
rc=$?
check "an interrupted pull exits non-zero, and not by its time limit ($rc)" \
    test "$rc" -ne 0 -a "$rc" -ne 124 -a "$rc" -ne 137
check "... leaving the half it had as a partial download only" \
    test "$(part_size)" -eq $((size / 2)) -a ! -e "$C/stall/tiny-word-cls/main/model.safetensors"
run pull stall/tiny-word-cls --progress
check "the next pull resumes and exits 0" exit_is 0
check "... from the bytes it had" grep -q "^GET /cdn/stall/tiny-word-cls/main/model.safetensors range=bytes=$((size / 2))-" "$TMP/log"
check "... ending with the right bytes" cmp -s "$C/stall/tiny-word-cls/main/model.safetensors" "$M/tiny-word-cls/model.safetensors"
check "--progress draws the bar on stderr" grep -q "model.safetensors \[#*\] 100%" "$TMP/err"
check "... and keeps stdout for the path" out_is "$C/stall/tiny-word-cls/main/model-f32.gguf"

# ==== a full disk (a 1 MB tmpfs in a user and mount namespace) ====
if command -v unshare >/dev/null && unshare -rm sh -c "mount -t tmpfs -o size=1m tmpfs '$TMP/cache'" 2>/dev/null; then
    mkdir -p "$TMP/small"
    unshare -rm sh -c "mount -t tmpfs -o size=1m tmpfs '$TMP/small' &&
        ROFORMER_CACHE='$TMP/small' '$ROFORMER' pull test/tiny-word-cls >'$TMP/out' 2>'$TMP/err'; echo \$? >'$TMP/rc';
        ls '$TMP/small/test/tiny-word-cls/main' >'$TMP/ls'"
    rc=$(cat "$TMP/rc")
    check "a full disk exits 1" exit_is 1
    check "... one line" one_error_line
    check "... saying the disk is full" err_has "disk full after"
    check "... and that it resumes once there is space" err_has "free some space and run it again to resume"
    check "... no model.safetensors under its final name" test -z "$(grep -x model.safetensors "$TMP/ls")"
else
    check_skip "no user and mount namespaces (unshare -rm): full-disk case not run"
fi

check_done
