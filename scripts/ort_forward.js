#!/usr/bin/env node
// ort_forward.js — runs ONNX Runtime (npm onnxruntime-node, CPU) on given token ids
// and prints every output of the graph: the ONNX Runtime side of accuracy
// comparisons (scripts/int8_agreement.py), where ort_bench.js only times.
//
//   node scripts/ort_forward.js --model M.onnx [--threads 2] < inputs.jsonl
//
// Each input line: {"input_ids": [[...]], "token_type_ids": [[...]],
// "attention_mask": [[...]]} ([batch][len], right-padded). Each output line:
// {"NAME": {"dims": [...], "data": [...]}, ...} for every graph output, in order.
'use strict';
const readline = require('readline');

const loadOrt = require('./ort_load');

function parseArgs(argv) {
  const a = { model: null, threads: 2 };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--model') { a.model = v; i++; }
    else if (k === '--threads') { a.threads = +v; i++; }
    else throw new Error(`unknown argument '${k}'`);
  }
  if (!a.model) throw new Error('--model is required');
  return a;
}

function tensorFrom2d(ort, rows, name) {
  if (!Array.isArray(rows) || !rows.length || !Array.isArray(rows[0]))
    throw new Error(`${name} must be [batch][len]`);
  const b = rows.length, l = rows[0].length;
  if (rows.some((r) => r.length !== l)) throw new Error(`${name}: rows of different lengths`);
  return new ort.Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)), [b, l]);
}

async function main() {
  const a = parseArgs(process.argv.slice(2));
  const ort = loadOrt();
  const session = await ort.InferenceSession.create(a.model, {
    intraOpNumThreads: a.threads,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
    executionProviders: ['cpu'],
  });
  const lines = readline.createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const c = JSON.parse(line);
    const out = await session.run({
      input_ids: tensorFrom2d(ort, c.input_ids, 'input_ids'),
      token_type_ids: tensorFrom2d(ort, c.token_type_ids, 'token_type_ids'),
      attention_mask: tensorFrom2d(ort, c.attention_mask, 'attention_mask'),
    });
    const result = {};
    for (const name of session.outputNames) result[name] = { dims: out[name].dims, data: Array.from(out[name].data) };
    console.log(JSON.stringify(result));
  }
}

main().catch((e) => { console.error(`ort_forward: ${e.message}`); process.exit(1); });
