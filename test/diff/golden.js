// golden.js - Golden outputs of the differential tier from ONNX Runtime (node).
//
// usage: node golden.js TASKS.json [--optimized]
// TASKS.json: [{model, inputs: [{name, type, shape, file}], outdir}]; for each task writes
// outdir/out_K.bin (raw little-endian data) and outdir/meta.json ([{name, type, dims}]),
// or outdir/error.txt when ONNX Runtime refuses the model. The session runs on the CPU
// with one thread and graph optimizations disabled: ORT's optimized QDQ fusions are not
// always the ONNX semantics (docs/testing.md, "Differential testing"); --optimized gives
// the optimized run as a second opinion.
'use strict';
const ort = require('onnxruntime-node');
ort.env.logLevel = 'error';
const fs = require('fs');
const T = {float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int32: Int32Array,
           int64: BigInt64Array};
(async () => {
  const tasks = JSON.parse(fs.readFileSync(process.argv[2], 'utf8'));
  const level = process.argv.includes('--optimized') ? 'all' : 'disabled';
  for (const t of tasks) {
    fs.mkdirSync(t.outdir, {recursive: true});
    try {
      const s = await ort.InferenceSession.create(t.model, {
        executionProviders: ['cpu'], graphOptimizationLevel: level,
        intraOpNumThreads: 1, interOpNumThreads: 1, logSeverityLevel: 3});
      const feeds = {};
      for (const i of t.inputs) {
        const b = fs.readFileSync(i.file);
        const C = T[i.type];
        feeds[i.name] = new ort.Tensor(i.type, new C(b.buffer.slice(b.byteOffset,
                                                                   b.byteOffset + b.byteLength)),
                                       i.shape);
      }
      const r = await s.run(feeds);
      const meta = s.outputNames.map((n, k) => {
        const d = r[n].data;
        fs.writeFileSync(`${t.outdir}/out_${k}.bin`,
                         Buffer.from(d.buffer, d.byteOffset, d.byteLength));
        return {name: n, type: r[n].type, dims: r[n].dims};
      });
      fs.writeFileSync(`${t.outdir}/meta.json`, JSON.stringify(meta));
    } catch (e) {
      fs.writeFileSync(`${t.outdir}/error.txt`, String(e.message || e).split('\n')[0]);
    }
  }
})().catch(e => { console.error(String(e)); process.exit(1); });
