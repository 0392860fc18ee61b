// ort_load.js — finds onnxruntime-node for the ONNX Runtime peer scripts
// (ort_bench.js, ort_forward.js): $ORT_NODE_MODULES, then build/peer/node_modules
// (where scripts/compare.sh installs it), then Node's own module path.
'use strict';
const path = require('path');

module.exports = function loadOrt() {
  const candidates = [process.env.ORT_NODE_MODULES, path.join(__dirname, '..', 'build', 'peer', 'node_modules')];
  for (const dir of candidates) {
    if (!dir) continue;
    try { return require(path.join(dir, 'onnxruntime-node')); } catch (e) { /* next */ }
  }
  return require('onnxruntime-node');
};
