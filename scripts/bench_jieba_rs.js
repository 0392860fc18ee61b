// bench_jieba_rs.js DICT FILE RUNS — jieba-rs (npm @node-rs/jieba, which
// bundles jieba-rs 0.10.3) `cut(line, false)` over every line of FILE, one
// thread. Prints "load_ms X" and "cut_mbs MEDIAN MIN MAX WORDS" (MB = 10^6
// bytes of UTF-8), wall time. Run by scripts/bench_tokenizer.sh.
const fs = require('fs');
const { Jieba } = require('@node-rs/jieba');
const [dictPath, file, runsArg] = process.argv.slice(2);
const runs = parseInt(runsArg || '7', 10);
const now = () => Number(process.hrtime.bigint()) / 1e9;
let t0 = now();
const jieba = Jieba.withDict(fs.readFileSync(dictPath));
console.log('load_ms', ((now() - t0) * 1e3).toFixed(1));
const lines = fs.readFileSync(file, 'utf8').split('\n');
const bytes = lines.reduce((a, l) => a + Buffer.byteLength(l), 0);
const secs = [];
let words = 0;
for (let r = -1; r < runs; r++) { // run -1 warms up
  t0 = now();
  words = 0;
  for (const l of lines) words += jieba.cut(l, false).length;
  if (r >= 0) secs.push(now() - t0);
}
secs.sort((a, b) => a - b);
const mbs = (s) => (bytes / s / 1e6).toFixed(2);
console.log('cut_mbs', mbs(secs[Math.floor(runs / 2)]), mbs(secs[runs - 1]), mbs(secs[0]), words);
