#!/usr/bin/env node
// ort_bench.js — times ONNX Runtime (npm onnxruntime-node, CPU, fp32) on a RoFormer
// ONNX graph from scripts/export_onnx.py: the peer the engine is compared with.
//
//   node scripts/ort_bench.js --model M.onnx [--threads 2] [--runs 5] [--warmup 1]
//        [--shape BxL]... [--lengths FILE] [--check M.onnx.check.json]
//
// --shape BxL     a batch of B sequences of L tokens (repeatable)
// --lengths FILE  one batch whose sequences have the lengths in FILE (one integer
//                 a line), right-padded to the longest with attention_mask 0, as a
//                 padded-batch runtime is fed
// --check FILE    first runs the small batch in FILE and compares with the PyTorch
//                 output stored there (max |diff| must be under 1e-4)
// Token ids are random (fixed seed) in the WoBERT vocab range: the cost does not
// depend on their values. Prints one JSON object per shape: batch, seq_len,
// real_tokens, runs, ms_median, ms_min, ms_max, tokens_per_second (real tokens
// over the median time), threads.
'use strict';
const fs = require('fs');

const loadOrt = require('./ort_load');

function parseArgs(argv) {
  const a = { threads: 2, runs: 5, warmup: 1, shapes: [], lengths: null, check: null, model: null };
  for (let i = 0; i < argv.length; i++) {
    const k = argv[i], v = argv[i + 1];
    if (k === '--model') { a.model = v; i++; }
    else if (k === '--threads') { a.threads = +v; i++; }
    else if (k === '--runs') { a.runs = +v; i++; }
    else if (k === '--warmup') { a.warmup = +v; i++; }
    else if (k === '--shape') {
      const m = /^(\d+)x(\d+)$/.exec(v || '');
      if (!m) throw new Error(`bad --shape '${v}', expected BxL`);
      a.shapes.push(Array(+m[1]).fill(+m[2])); i++;
    } else if (k === '--lengths') { a.lengths = v; i++; }
    else if (k === '--check') { a.check = v; i++; }
    else throw new Error(`unknown argument '${k}'`);
  }
  if (!a.model) throw new Error('--model is required');
  if (a.lengths) {
    const lens = fs.readFileSync(a.lengths, 'utf8').split(/\s+/).filter(Boolean).map(Number);
    if (!lens.length || lens.some((n) => !(n >= 1))) throw new Error(`${a.lengths}: expected positive integers`);
    a.shapes.push(lens);
  }
  return a;
}

// xorshift32: the same ids every run
function makeBatch(ort, lengths, seed) {
  const b = lengths.length, l = Math.max(...lengths);
  const ids = new BigInt64Array(b * l), types = new BigInt64Array(b * l), mask = new BigInt64Array(b * l);
  let s = seed >>> 0 || 1;
  for (let i = 0; i < b; i++) {
    for (let j = 0; j < lengths[i]; j++) {
      s ^= s << 13; s >>>= 0; s ^= s >>> 17; s ^= s << 5; s >>>= 0;
      ids[i * l + j] = BigInt(j === 0 ? 101 : j === lengths[i] - 1 ? 102 : 1000 + (s % 49000));
      mask[i * l + j] = 1n;
    }
  }
  return {
    input_ids: new ort.Tensor('int64', ids, [b, l]),
    token_type_ids: new ort.Tensor('int64', types, [b, l]),
    attention_mask: new ort.Tensor('int64', mask, [b, l]),
  };
}

function tensorFrom2d(ort, rows) {
  const b = rows.length, l = rows[0].length;
  return new ort.Tensor('int64', BigInt64Array.from(rows.flat().map(BigInt)), [b, l]);
}

async function check(ort, session, file) {
  const c = JSON.parse(fs.readFileSync(file, 'utf8'));
  const out = await session.run({
    input_ids: tensorFrom2d(ort, c.input_ids),
    token_type_ids: tensorFrom2d(ort, c.token_type_ids),
    attention_mask: tensorFrom2d(ort, c.attention_mask),
  });
  const got = out.last_hidden_state.data;
  let diff = 0;
  for (let i = 0; i < got.length; i++) diff = Math.max(diff, Math.abs(got[i] - c.last_hidden_state[i]));
  if (got.length !== c.last_hidden_state.length || !(diff <= 1e-4))
    throw new Error(`ONNX Runtime differs from PyTorch: max |diff| ${diff}`);
  return diff;
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
  if (a.check) {
    const diff = await check(ort, session, a.check);
    console.error(`ort_bench: ONNX Runtime vs PyTorch max |diff| ${diff.toExponential(2)}`);
  }
  for (const lengths of a.shapes) {
    const feeds = makeBatch(ort, lengths, 12345);
    for (let i = 0; i < a.warmup; i++) await session.run(feeds);
    const ms = [];
    for (let i = 0; i < a.runs; i++) {
      const t0 = process.hrtime.bigint();
      await session.run(feeds);
      ms.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
    ms.sort((x, y) => x - y);
    const median = ms.length % 2 ? ms[(ms.length - 1) / 2] : (ms[ms.length / 2 - 1] + ms[ms.length / 2]) / 2;
    const real = lengths.reduce((x, y) => x + y, 0);
    console.log(JSON.stringify({
      engine: 'onnxruntime', batch: lengths.length, seq_len: Math.max(...lengths), real_tokens: real,
      runs: a.runs, ms_median: median, ms_min: ms[0], ms_max: ms[ms.length - 1],
      tokens_per_second: real / (median / 1000), threads: a.threads, ms: ms,
    }));
  }
}

main().catch((e) => { console.error(`ort_bench: ${e.message}`); process.exit(1); });
