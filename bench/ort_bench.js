// ort_bench.js: time one ONNX model in ONNX Runtime (npm onnxruntime-node, CPU EP,
// one intra-op thread, one inter-op thread, sequential execution).
//
// usage: node ort_bench.js SPEC.json
//   SPEC = {model, inputs: [{name, type, shape, file}], warmup, iters, minMs, outdir?}
//   Each input file holds the raw little-endian tensor bytes.  The session is created
//   once, run `warmup` times, then timed over at least `iters` runs and at least `minMs`
//   milliseconds.  If `outdir` is set, the outputs of the last run are written there as
//   out_<k>.bin plus meta.json ([{name, type, dims}]).
// Prints one JSON line: {ok, model, msPerRun, runs, loadMs} or {ok: false, error}.
'use strict';
const fs = require('fs');
const ort = require('onnxruntime-node');

const ARRAYS = {
  float32: Float32Array, float64: Float64Array, int8: Int8Array, uint8: Uint8Array,
  int16: Int16Array, uint16: Uint16Array, int32: Int32Array, uint32: Uint32Array,
  int64: BigInt64Array, uint64: BigUint64Array, bool: Uint8Array,
};

function loadInput(spec) {
  const bytes = fs.readFileSync(spec.file);
  const Ctor = ARRAYS[spec.type];
  if (!Ctor) throw new Error(`unsupported input type ${spec.type}`);
  const copy = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength);
  return new ort.Tensor(spec.type, new Ctor(copy), spec.shape);
}

async function main() {
  const spec = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const t0 = process.hrtime.bigint();
  const session = await ort.InferenceSession.create(spec.model, {
    executionProviders: ['cpu'],
    intraOpNumThreads: 1,
    interOpNumThreads: 1,
    executionMode: 'sequential',
    graphOptimizationLevel: 'all',
  });
  const loadMs = Number(process.hrtime.bigint() - t0) / 1e6;
  const feeds = {};
  for (const inp of spec.inputs) feeds[inp.name] = loadInput(inp);

  const warmup = spec.warmup ?? 5;
  const iters = spec.iters ?? 20;
  const minMs = spec.minMs ?? 500;
  let result;
  for (let i = 0; i < warmup; i++) result = await session.run(feeds);

  let runs = 0;
  const start = process.hrtime.bigint();
  let elapsedMs = 0;
  while (runs < iters || elapsedMs < minMs) {
    result = await session.run(feeds);
    runs++;
    elapsedMs = Number(process.hrtime.bigint() - start) / 1e6;
  }

  if (spec.outdir) {
    fs.mkdirSync(spec.outdir, {recursive: true});
    const meta = session.outputNames.map((name, k) => {
      const t = result[name];
      const d = t.data;
      fs.writeFileSync(`${spec.outdir}/out_${k}.bin`,
                       Buffer.from(d.buffer, d.byteOffset, d.byteLength));
      return {name, type: t.type, dims: t.dims};
    });
    fs.writeFileSync(`${spec.outdir}/meta.json`, JSON.stringify(meta));
  }
  console.log(JSON.stringify({ok: true, model: spec.model, msPerRun: elapsedMs / runs, runs, loadMs}));
}

main().catch((e) => {
  console.log(JSON.stringify({ok: false, error: String(e && e.message || e).split('\n')[0].slice(0, 300)}));
  process.exitCode = 1;
});
