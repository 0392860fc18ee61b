#!/bin/sh
# scm_lengths.sh MODEL [DATA] — CAIL2019-SCM (`roformer scm`, embed mode)
# at the lengths of Su's RoFormer table: --max-length 512, 1024 and 1536,
# and --window 512 --stride 128 (each distinct document embedded once).
# Per setting: wall seconds, encoder tokens/s (tokens over the encoder's
# seconds, from --timings), accuracy (meaningful only for a trained
# model), and how many distinct documents are longer than the setting
# keeps (truncated), or cut into windows. DATA defaults to
# ../shared/data/cail2019_scm/stage1_train.jsonl.
model=${1:?usage: scm_lengths.sh MODEL [DATA]}
data=${2:-../shared/data/cail2019_scm/stage1_train.jsonl}
roformer=${ROFORMER:-build/roformer}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# token counts of the distinct documents, untruncated
/usr/bin/python3 -c '
import json, sys
seen = {}
for line in open(sys.argv[1], encoding="utf-8"):
    t = json.loads(line)
    for f in "ABC":
        seen.setdefault(t[f], None)
for d in seen:
    print(json.dumps({"text": d}, ensure_ascii=False))
' "$data" >"$tmp/docs.jsonl"
"$roformer" tokenize -m "$model" <"$tmp/docs.jsonl" |
    /usr/bin/python3 -c 'import json, sys
for l in sys.stdin: print(len(json.loads(l)["input_ids"]))' >"$tmp/lengths"
echo "$(wc -l <"$tmp/docs.jsonl") distinct documents, tokens: $(sort -n "$tmp/lengths" | awk '{ a[NR] = $1 } END { printf "median %d, max %d", a[int((NR + 1) / 2)], a[NR] }')"
echo "setting                     wall s  encoder tokens/s  accuracy  documents truncated (or cut)"
for setting in "--max-length 512" "--max-length 1024" "--max-length 1536" "--window 512 --stride 128"; do
    keep=$(echo "$setting" | awk '{ print $2 }')
    t0=$(date +%s.%N)
    "$roformer" scm -m "$model" $setting --threads 2 --timings "$data" >"$tmp/out" 2>"$tmp/err" || { cat "$tmp/err"; exit 1; }
    t1=$(date +%s.%N)
    /usr/bin/python3 - "$setting" "$t0" "$t1" "$keep" "$tmp/err" "$tmp/lengths" <<'PY'
import re, sys
setting, t0, t1, keep, err, lengths = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5], sys.argv[6]
text = open(err).read()
m = re.search(r"(\d+) tokens, \d+ batches; [\d.]+ s: encoder ([\d.]+) s", text)
acc = re.search(r"accuracy[^0-9]*([\d.]+%?)", text)
over = sum(1 for l in open(lengths) if int(l) > keep)
print("%-26s  %6.1f  %16.1f  %8s  %d" % (setting, t1 - t0, int(m.group(1)) / float(m.group(2)),
      acc.group(1) if acc else "-", over))
PY
done
