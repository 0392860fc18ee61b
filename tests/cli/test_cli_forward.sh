#!/bin/sh
# test_cli_forward.sh — `roformer forward` on the reference models: every
# case of cases.jsonl through the CLI (batched ids, output_positions for the
# MLM logits_at, --hidden-states) checked against expected.safetensors with
# numpy; flat input and text input; --head choices; bad lines answered in
# place with {"error", "line"} and exit status 1.
. tests/check.sh
PY=/usr/bin/python3

if [ -z "$REF" ]; then
    check_skip "no reference fixtures (../shared/reference or \$ROFORMER_REFERENCE)"
    check_done; exit
fi
require_python "numpy" "reading expected.safetensors"
M=$REF/models

# compare.py MODEL_DIR OUT.jsonl [--flat] [case ids...]: every output of
# each case (all cases when none given) within the reference tolerances;
# --flat: the outputs have no batch dimension (one flat input sequence).
cat > "$TMP/compare.py" <<'PYEOF'
import json, struct, sys
import numpy as np

def read_safetensors(path):
    with open(path, 'rb') as f:
        n = struct.unpack('<Q', f.read(8))[0]
        header = json.loads(f.read(n))
        data = f.read()
    out = {}
    for name, t in header.items():
        if name == '__metadata__':
            continue
        a, b = t['data_offsets']
        dt = {'F32': np.float32, 'I64': np.int64}[t['dtype']]
        out[name] = np.frombuffer(data[a:b], dtype=dt).reshape(t['shape'])
    return out

model_dir, out_path = sys.argv[1], sys.argv[2]
flat = len(sys.argv) > 3 and sys.argv[3] == '--flat'
only = set(sys.argv[4 if flat else 3:])
cfg = json.load(open(model_dir + '/config.json'))
mlm = 'MaskedLM' in cfg['architectures'][0]
expected = read_safetensors(model_dir + '/expected.safetensors')
cases = [json.loads(l) for l in open(model_dir + '/cases.jsonl')]
cases = [c for c in cases if not only or c['id'] in only]
lines = open(out_path).read().splitlines()
if len(lines) != len(cases):
    sys.exit('%d output lines for %d cases' % (len(lines), len(cases)))
worst = 0.0
for c, line in zip(cases, lines):
    got = json.loads(line)
    for what in c['outputs']:
        if what == 'logits_at_positions':
            continue
        if what.startswith('hidden_states.'):
            value = np.array(got['hidden_states'], dtype=np.float64)[int(what.split('.')[1])]
        else:
            value = np.array(got[what], dtype=np.float64)
        if flat:
            value = value[None]
        want = expected[c['id'] + '.' + what]
        if value.shape != want.shape:
            sys.exit('%s.%s: shape %s, expected %s' % (c['id'], what, value.shape, want.shape))
        d = float(np.max(np.abs(value - want)))
        tol = 5e-4 if mlm and what.startswith('logits') else 1e-4
        if not d <= tol:
            sys.exit('%s.%s: max |diff| %g > %g' % (c['id'], what, d, tol))
        worst = max(worst, d)
print('%s: %d cases, max |diff| %.3g' % (model_dir.rsplit('/', 1)[-1], len(cases), worst))
PYEOF

# cases.py MODEL_DIR [flat]: the cases as forward input lines (ids, and the
# MLM positions of logits_at); "flat" writes one-sequence cases as flat lists.
cat > "$TMP/cases.py" <<'PYEOF'
import json, struct, sys
model_dir = sys.argv[1]
flat = len(sys.argv) > 2
with open(model_dir + '/expected.safetensors', 'rb') as f:
    n = struct.unpack('<Q', f.read(8))[0]
    header = json.loads(f.read(n))
    data = f.read()
for line in open(model_dir + '/cases.jsonl'):
    c = json.loads(line)
    if flat and len(c['input_ids']) != 1:
        continue
    out = {k: (c[k][0] if flat else c[k]) for k in ('input_ids', 'token_type_ids', 'attention_mask')}
    t = header.get(c['id'] + '.logits_at_positions')
    if t:
        a, b = t['data_offsets']
        out['output_positions'] = list(struct.unpack('<%dq' % ((b - a) // 8), data[a:b]))
    print(json.dumps(out))
PYEOF

for dir in "$M"/*/; do
    dir=${dir%/}
    name=$(basename "$dir")
    [ -f "$dir/expected.safetensors" ] || continue
    $PY "$TMP/cases.py" "$dir" > "$TMP/$name.in"
    check "$name: forward --hidden-states exits 0" \
        "$ROFORMER" forward -m "$dir" --hidden-states < "$TMP/$name.in" > "$TMP/$name.out"
    check "$name: every case matches expected.safetensors" \
        $PY "$TMP/compare.py" "$dir" "$TMP/$name.out"
done

# flat input lists give outputs without the batch dimension
$PY "$TMP/cases.py" "$M/tiny-qa" flat > "$TMP/flat.in"
check "flat input: exit 0" run_ok "$TMP/flat.out" "$ROFORMER" forward -m "$M/tiny-qa" < "$TMP/flat.in"
check "flat input: 2-D last_hidden_state, 1-D start_logits, a line per input" $PY -c '
import json, sys
lines = open(sys.argv[1]).readlines()
assert len(lines) == len(open(sys.argv[2]).readlines()) > 0, len(lines)
for line in lines:
    o = json.loads(line)
    assert len(o["start_logits"]) == len(o["last_hidden_state"]) and not isinstance(o["start_logits"][0], list)
    assert isinstance(o["last_hidden_state"][0][0], float)
' "$TMP/flat.out" "$TMP/flat.in"

# text input goes through the model's tokenizer: the same numbers as its
# ids, as a JSON object and as a plain text line
$PY -c '
import json, sys
c = json.loads(open(sys.argv[1]).readline())
print(json.dumps({"text": c["text"]}))
' "$M/tiny-word-cls/cases.jsonl" > "$TMP/text.in"
check "text input: exit 0" run_ok "$TMP/text.out" "$ROFORMER" forward -m "$M/tiny-word-cls" < "$TMP/text.in"
check "text input: tokenized and run like the reference case" \
    $PY "$TMP/compare.py" "$M/tiny-word-cls" "$TMP/text.out" --flat c00
$PY -c 'import json, sys; print(json.loads(open(sys.argv[1]).readline())["text"])' \
    "$M/tiny-word-cls/cases.jsonl" > "$TMP/plain.in"
check "plain text line: exit 0" run_ok "$TMP/plain.out" "$ROFORMER" forward -m "$M/tiny-word-cls" < "$TMP/plain.in"
check "plain text line: the same" \
    $PY "$TMP/compare.py" "$M/tiny-word-cls" "$TMP/plain.out" --flat c00

# a text pair truncated with --max-length (tiny-qa q00: 300 tokens, longest_first)
$PY -c '
import json, sys
c = [json.loads(l) for l in open(sys.argv[1])][0]
assert c["id"] == "q00" and c["max_length"] == 300
print(json.dumps({"text": c["text"], "text_pair": c["text_pair"]}))
' "$M/tiny-qa/cases.jsonl" > "$TMP/pair.in"
check "text pair with --max-length 300: exit 0" \
    run_ok "$TMP/pair.out" "$ROFORMER" forward -m "$M/tiny-qa" --max-length 300 < "$TMP/pair.in"
check "text pair with --max-length 300: like the reference case" \
    $PY "$TMP/compare.py" "$M/tiny-qa" "$TMP/pair.out" --flat q00

# --head none: the encoder only; a head the model lacks is refused
echo '{"input_ids": [101, 102]}' > "$TMP/ids.in"
check "--head none: exit 0" run_ok "$TMP/none.out" "$ROFORMER" forward -m "$M/tiny-word-cls" --head none < "$TMP/ids.in"
check "--head none prints only last_hidden_state" \
    $PY -c 'import json, sys; assert list(json.load(open(sys.argv[1]))) == ["last_hidden_state"]' "$TMP/none.out"
echo '{"input_ids": [101, 102]}' | "$ROFORMER" forward -m "$M/tiny-word-cls" --head qa > /dev/null 2> "$TMP/qa.err"
check "--head qa on a classification model exits 1" [ $? -eq 1 ]
check "  with a message" grep -q "head" "$TMP/qa.err"
"$ROFORMER" forward -m "$M/tiny-word-cls" --head bogus < /dev/null 2> /dev/null
check "--head bogus is a usage error (2)" [ $? -eq 2 ]

# bad lines get an error object in place; the others still run; exit 1
good=$(head -n 1 "$TMP/tiny-word-cls.in")
printf '%s\n%s\n%s\n%s\n%s\n%s\n%s\n%s\n' "$good" '{"input_ids": [101,' '{"input_ids": [101, 99999, 102]}' \
    '{"input_ids": [[101, 102], [101]]}' '{"text": 5}' '{"input_ids": [101, 1.5]}' \
    '{"input_ids": [101, 102], "output_positions": [0]}' "$good" > "$TMP/bad.in"
"$ROFORMER" forward -m "$M/tiny-word-cls" < "$TMP/bad.in" > "$TMP/bad.out" 2> "$TMP/bad.err"
check "bad lines: exit status 1" [ $? -eq 1 ]
check "bad lines: one output line per input line, errors in place with their line numbers" $PY -c '
import json, sys
out = [json.loads(l) for l in open(sys.argv[1])]
assert len(out) == 8, len(out)
assert "last_hidden_state" in out[0] and out[0] == out[7]
for i in range(1, 7):
    assert out[i]["line"] == i + 1 and out[i]["error"], out[i]
assert "vocabulary" in out[2]["error"], out[2]
' "$TMP/bad.out"

# longer than max_position_embeddings (1024 for tiny-char-proj): an error line
$PY -c 'import json; print(json.dumps({"input_ids": [101] + [200] * 1100 + [102]}))' \
    | "$ROFORMER" forward -m "$M/tiny-char-proj" > "$TMP/long.out"
check "too long input: exit 1" [ $? -eq 1 ]
check "too long input: error names max_position_embeddings" grep -q max_position_embeddings "$TMP/long.out"

check_done
