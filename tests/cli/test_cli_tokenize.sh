#!/bin/sh
# test_cli_tokenize.sh — `roformer tokenize` end to end on the reference
# tokenizer cases: the WoBERT model read straight from its HF directory
# (tiny-word-mlm, jieba), and tiny-char-proj converted with
# --tokenizer bert (HF BertTokenizer). Every case's input_ids,
# token_type_ids and attention_mask must equal HF's (with --max-length for
# the cases that have one), tokens must be the vocab entries of the ids,
# and bad lines must give {"error", "line"} in place while the rest go on.
. tests/check.sh

run() { "$ROFORMER" "$@" >"$TMP/out" 2>"$TMP/err"; rc=$?; }
exit_is() { [ "$rc" -eq "$1" ]; }
err_has() { grep -qF -- "$1" "$TMP/err"; }
out_is() { [ "$(cat "$TMP/out")" = "$1" ]; }

run tokenize --help
check "tokenize --help exits 0" exit_is 0
run tokenize
check "tokenize without -m is a usage error" exit_is 2
check "the usage error says what is missing" err_has "roformer tokenize: missing -m MODEL"
run tokenize -m x --max-length 0
check "--max-length 0 is a usage error" exit_is 2
run tokenize -m "$TMP/missing.gguf" </dev/null
check "a missing model exits 1" exit_is 1

PY=/usr/bin/python3
if [ -z "$REF" ]; then
    check_skip "../shared/reference (or \$ROFORMER_REFERENCE) not found"
    check_done; exit $?
fi
if [ ! -x "$PY" ]; then
    check_skip "$PY not found (needed to compare JSON)"
    check_done; exit $?
fi
DICT=${ROFORMER_JIEBA_DICT:-/usr/lib/python3/dist-packages/jieba/dict.txt}

# Runs every case of $2 through model $1, one CLI call per distinct
# max_length, and compares with the expected fields.
compare_cases() {
    model=$1 cases=$2
    $PY - "$ROFORMER" "$model" "$cases" <<'PYEOF'
import json, subprocess, sys
roformer, model, path = sys.argv[1:4]
cases = [json.loads(l) for l in open(path, encoding="utf-8")]
groups = {}
for c in cases:
    groups.setdefault(c.get("max_length"), []).append(c)
bad = 0
for ml, group in groups.items():
    lines = "".join(json.dumps({k: c[k] for k in ("text", "text_pair") if k in c}) + "\n" for c in group)
    cmd = [roformer, "tokenize", "-m", model] + (["--max-length", str(ml)] if ml else [])
    out = subprocess.run(cmd, input=lines.encode(), capture_output=True)
    got = out.stdout.decode("utf-8").splitlines()
    if out.returncode != 0 or len(got) != len(group):
        print("max_length %s: exit %d, %d lines for %d cases: %s" % (ml, out.returncode, len(got), len(group), out.stderr.decode()[:300]))
        bad += len(group)
        continue
    for c, line in zip(group, got):
        g = json.loads(line)
        ok = all(g.get(k) == c[k] for k in ("input_ids", "token_type_ids", "attention_mask"))
        ok = ok and len(g["tokens"]) == len(g["input_ids"]) and g["tokens"][0] == "[CLS]"
        if ok and ml is None and "text_pair" not in c:
            ok = g["tokens"][1:-1] == c["tokens"]
        if not ok:
            bad += 1
            if bad <= 3:
                print("case %s differs: %s" % (c["id"], line[:300]))
print("%d/%d cases exact" % (len(cases) - bad, len(cases)))
sys.exit(1 if bad else 0)
PYEOF
}

if [ -f "$DICT" ]; then
    check "tiny-word-mlm (HF directory, jieba): every reference case exact" \
        compare_cases "$REF/models/tiny-word-mlm" "$REF/tokenizer/cases.jsonl"
else
    check_skip "jieba dict.txt not found ($DICT)"
fi

"$ROFORMER" convert "$REF/models/tiny-char-proj" -o "$TMP/char.gguf" --tokenizer bert >/dev/null 2>"$TMP/err"
check "tiny-char-proj converts with --tokenizer bert" sh -c "[ $? -eq 0 ] && [ -s '$TMP/char.gguf' ]"
check "tiny-char-proj (bert mode): every reference case exact" \
    compare_cases "$TMP/char.gguf" "$REF/tokenizer/cases_bert_char.jsonl"

# Bad lines in the middle: error objects in place, the others tokenized
# (a, c, d, e are lines 42, 44, 45, 46 of the char vocab: ids 41, 43, 44, 45).
printf '%s\n' 'a' '{"text": "b"' '{"text": 5}' '{"text_pair": "x"}' 'c' >"$TMP/in"
printf '\377\376\n{"text": "d", "text_pair": "\\u0000e"}\n' >>"$TMP/in"
"$ROFORMER" tokenize -m "$TMP/char.gguf" <"$TMP/in" >"$TMP/out" 2>"$TMP/err"; rc=$?
check "bad lines: exit status 1" exit_is 1
check "bad lines: one output line per input line" test "$(wc -l <"$TMP/out")" -eq 7
check "bad lines: the failure count on stderr" err_has "4 of 7 lines could not be tokenized"
expected='{"tokens":["[CLS]","a","[SEP]"],"input_ids":[2,41,3],"token_type_ids":[0,0,0],"attention_mask":[1,1,1]}
{"error":"bad JSON object (near byte 11)","line":2}
{"error":"\"text\" is not a string","line":3}
{"error":"missing \"text\"","line":4}
{"tokens":["[CLS]","c","[SEP]"],"input_ids":[2,43,3],"token_type_ids":[0,0,0],"attention_mask":[1,1,1]}
{"error":"invalid UTF-8 at byte 0 of the text","line":6}
{"tokens":["[CLS]","d","[SEP]","e","[SEP]"],"input_ids":[2,44,3,45,3],"token_type_ids":[0,0,0,1,1],"attention_mask":[1,1,1,1,1]}'
check "bad lines: errors in place, exact results around them" out_is "$expected"
check_done
