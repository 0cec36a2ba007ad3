// The GPU thread's whole program, as source text (started with `new Worker(GPU_WORKER_SOURCE,
// { eval: true })`, as pool-worker.ts is, so there is no worker file to locate under tsx, vitest or
// electron-vite). WebGPU is asynchronous (mapAsync, createComputePipelineAsync) while the forward
// pass is synchronous, so the device lives on this thread and the engine's thread blocks on a
// shared word (device.ts GpuDevice.call) while this thread runs one message: a list of commands.
// The worker is a plain executor; every decision (kernels, buffers, splits) is made by the caller.
//
// Control block (Int32Array on a SharedArrayBuffer), indices in GPU_CTRL:
//   DONE   the number of the last message finished (the caller waits for it to reach its own)
//   ERR    1 when that message failed (text in the message area), else 0
//   LOST   1 once the device is lost (text in the message area)
//   MSGLEN bytes of UTF-8 text at MSG
//   REQ    the number of the last message posted (the worker waits for it to change)
// Commands, in order, per message (ids are the caller's numbers):
//   { op: 'io', sab }                        the shared data area (replaces the last)
//   { op: 'buffer', id, size, usage }        createBuffer
//   { op: 'free', id }                       destroy a buffer
//   { op: 'write', id, offset, from, len }   queue.writeBuffer(buffer id, offset, io[from, from + len))
//   { op: 'pipeline', id, code }             a compute pipeline from WGSL (entry point 'main')
//   { op: 'run', passes: [{ pipe, binds: [[buffer id, offset, size] …], wg: [x, y, z] }],
//     reads: [{ id, offset, len, to }],      one command buffer: the programs' passes, then these
//     programs?: [id …], wait?: false }      passes, in order, then each read copied into
//                                            io[to, to + len); wait false (with no reads): submit
//                                            and go on (the queue keeps later writes after it)
//   { op: 'program', id, passes }            passes kept with their bind groups made once, for
//                                            'run' to replay (the whole-token step, model/gpu-step.ts)
//   { op: 'forget', id }                     drop a program
//   { op: 'init', fallback: 'never' | 'allow' | 'only' }   acquire the adapter (device.ts)
//   { op: 'probe', groups, reserve, limit }  how many groups of buffer sizes, in order, can be
//                                            allocated after the reserve's (each inside
//                                            pushErrorScope('out-of-memory')), as an i32 at io[0];
//                                            all freed again. limit > 0: tests, a GPU of that size
//   { op: 'lose' }                           tests: the next 'run' acts as if the device were lost
//   { op: 'gc' }                             a full garbage collection on this thread (tests: the
//                                            device must survive one, docs/webgpu.md)

export const GPU_CTRL = { DONE: 0, ERR: 1, LOST: 2, MSGLEN: 3, REQ: 4, MSG: 16 } as const;
/** Bytes of the control block: 16 ints, then up to 4 KiB of message text. */
export const GPU_CTRL_BYTES = 64 + 4096;

export const GPU_WORKER_SOURCE = String.raw`
const { workerData, receiveMessageOnPort } = require('node:worker_threads');
const ctrl = new Int32Array(workerData.ctrl);
const ctrlU8 = new Uint8Array(workerData.ctrl);
let io = null, ioU8 = null, device = null;
// The object create() returned must stay reachable while its device is used: dawn.node frees the
// native instance when it is garbage collected, and the next mapAsync polls freed memory (glibc
// aborts: "Owner died", futex errors, tpp.c; docs/webgpu.md "The crash").
let instance = null;
const buffers = new Map(), pipes = new Map(), programs = new Map();
let readback = null, readbackSize = 0, seq = 0;

function setText(s) {
  const b = new TextEncoder().encode(String(s)).subarray(0, 4096);
  ctrlU8.set(b, 64);
  ctrl[3] = b.length;
}

function finish(err) {
  if (err) { setText(err && err.message ? err.message : err); ctrl[1] = 1; } else ctrl[1] = 0;
  Atomics.store(ctrl, 0, ++seq);
  Atomics.notify(ctrl, 0);
}

async function tryAdapter(gpu, opts) {
  const a = await gpu.requestAdapter(opts);
  if (!a) return null;
  const d = await a.requestDevice({ requiredLimits: {
    maxStorageBufferBindingSize: a.limits.maxStorageBufferBindingSize,
    maxBufferSize: a.limits.maxBufferSize,
    maxStorageBuffersPerShaderStage: a.limits.maxStorageBuffersPerShaderStage,
    maxComputeWorkgroupsPerDimension: a.limits.maxComputeWorkgroupsPerDimension,
  } });
  // the feature test: a compute shader with storage buffers must give exact results
  const code = '@group(0) @binding(0) var<storage, read_write> v: array<u32>;\n' +
    '@compute @workgroup_size(64) fn main(@builtin(global_invocation_id) g: vec3u) { v[g.x] = v[g.x] * 3u + g.x; }';
  const pipe = await d.createComputePipelineAsync({ layout: 'auto', compute: { module: d.createShaderModule({ code }), entryPoint: 'main' } });
  const buf = d.createBuffer({ size: 256, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_SRC | GPUBufferUsage.COPY_DST });
  const rb = d.createBuffer({ size: 256, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  const init = new Uint32Array(64).map((_, i) => i * 7);
  d.queue.writeBuffer(buf, 0, init);
  const e = d.createCommandEncoder();
  const p = e.beginComputePass();
  p.setPipeline(pipe);
  p.setBindGroup(0, d.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries: [{ binding: 0, resource: { buffer: buf } }] }));
  p.dispatchWorkgroups(1);
  p.end();
  e.copyBufferToBuffer(buf, 0, rb, 0, 256);
  d.queue.submit([e.finish()]);
  await rb.mapAsync(GPUMapMode.READ);
  const got = new Uint32Array(rb.getMappedRange().slice(0));
  rb.unmap(); rb.destroy(); buf.destroy();
  for (let i = 0; i < 64; i++) if (got[i] !== i * 7 * 3 + i) { d.destroy(); return null; }
  return { gpu, a, d };
}

async function init(fallback) {
  const { create, globals } = await import(workerData.webgpuUrl);
  Object.assign(globalThis, globals);
  let got = null, soft = false;
  if (fallback !== 'only') {
    try { got = await tryAdapter(create([]), { powerPreference: 'high-performance' }); } catch { got = null; }
    // a software adapter through the default backend (SwiftShader, lavapipe) is not "a real GPU"
    if (got && (got.a.info.isFallbackAdapter || /llvmpipe|swiftshader|lavapipe|softpipe/i.test(got.a.info.device + ' ' + got.a.info.description))) {
      got.d.destroy(); got = null;
    }
  }
  if (!got && fallback !== 'never') {
    try { got = await tryAdapter(create(['backend=opengles']), { featureLevel: 'compatibility' }); soft = true; } catch { got = null; }
  }
  if (!got) return null;
  device = got.d;
  instance = got.gpu;
  const i = got.a.info;
  device.lost.then((info) => { if (info.reason !== 'destroyed') lost(info.message || info.reason); });
  device.addEventListener('uncapturederror', (ev) => { lastError = ev.error.message; });
  const l = device.limits;
  return {
    vendor: i.vendor, architecture: i.architecture, device: i.device, description: i.description, software: soft,
    features: [...device.features],
    limits: { maxStorageBufferBindingSize: l.maxStorageBufferBindingSize, maxBufferSize: l.maxBufferSize,
      maxComputeWorkgroupsPerDimension: l.maxComputeWorkgroupsPerDimension, minUniformBufferOffsetAlignment: l.minUniformBufferOffsetAlignment,
      minStorageBufferOffsetAlignment: l.minStorageBufferOffsetAlignment, maxStorageBuffersPerShaderStage: l.maxStorageBuffersPerShaderStage },
  };
}
// GPU offload's auto (offload-plan.ts): WebGPU has no free-memory query, so allocate and see
async function probe(groups, reserve, limit) {
  const made = [];
  let total = 0;
  const fits = async (size) => {
    if (limit > 0 && total + size > limit) return false;
    device.pushErrorScope('out-of-memory');
    device.pushErrorScope('validation');
    const b = device.createBuffer({ size, usage: GPUBufferUsage.STORAGE | GPUBufferUsage.COPY_DST });
    const bad = await device.popErrorScope();
    const oom = await device.popErrorScope();
    if (bad || oom) { b.destroy(); return false; }
    made.push(b);
    total += size;
    return true;
  };
  let n = 0;
  try {
    for (const size of reserve) if (!(await fits(size))) return 0;
    for (const g of groups) {
      let ok = true;
      for (const size of g) if (!(await fits(size))) { ok = false; break; }
      if (!ok) break;
      n++;
    }
  } finally {
    for (const b of made) b.destroy();
  }
  return n;
}
let lastError = null;
// a lost device: LOST set, its reason in the message area (the caller then fails with GPU_LOST)
function lost(why) { ctrl[2] = 1; setText('the GPU device was lost: ' + why); }
let loseAtNextRun = false;

async function run(c) {
  if (loseAtNextRun) { loseAtNextRun = false; return lost('simulated by a test'); }
  const e = device.createCommandEncoder();
  const pass = e.beginComputePass();
  for (const id of c.programs ?? []) {
    for (const p of programs.get(id)) {
      pass.setPipeline(p.pipe);
      pass.setBindGroup(0, p.group);
      pass.dispatchWorkgroups(p.wg[0], p.wg[1], p.wg[2]);
    }
  }
  for (const p of c.passes) {
    const pipe = pipes.get(p.pipe);
    pass.setPipeline(pipe);
    pass.setBindGroup(0, bindGroup(pipe, p.binds));
    pass.dispatchWorkgroups(p.wg[0], p.wg[1], p.wg[2]);
  }
  pass.end();
  let total = 0;
  for (const r of c.reads) total += r.len;
  if (total > readbackSize) {
    if (readback) readback.destroy();
    readbackSize = Math.max(total, 2 * readbackSize);
    readback = device.createBuffer({ size: readbackSize, usage: GPUBufferUsage.MAP_READ | GPUBufferUsage.COPY_DST });
  }
  let at = 0;
  for (const r of c.reads) { e.copyBufferToBuffer(buffers.get(r.id), r.offset, readback, at, r.len); at += r.len; }
  device.queue.submit([e.finish()]);
  if (total > 0) {
    await readback.mapAsync(GPUMapMode.READ, 0, total);
    const m = new Uint8Array(readback.getMappedRange(0, total));
    at = 0;
    for (const r of c.reads) { ioU8.set(m.subarray(at, at + r.len), r.to); at += r.len; }
    readback.unmap();
  } else if (c.wait !== false) {
    await device.queue.onSubmittedWorkDone();
  }
}

function bindGroup(pipe, binds) {
  const entries = binds.map((b, k) => ({ binding: k, resource: { buffer: buffers.get(b[0]), offset: b[1], size: b[2] } }));
  return device.createBindGroup({ layout: pipe.getBindGroupLayout(0), entries });
}

async function handle(cmds) {
  for (const c of cmds) {
    if (process.env.PANTHEON_GPU_TRACE) require('node:fs').writeSync(2, 'gpu ' + c.op + ' ' + (c.id ?? '') + ' ' + (c.size ?? c.len ?? '') + '\n');
    switch (c.op) {
      case 'io': io = c.sab; ioU8 = new Uint8Array(io); break;
      case 'probe': new Int32Array(io, 0, 1)[0] = await probe(c.groups, c.reserve, c.limit); break;
      case 'init': {
        const info = await init(c.fallback);
        const b = new TextEncoder().encode(JSON.stringify(info));
        ioU8.set(b, 0);
        new Int32Array(io, io.byteLength - 4, 1)[0] = b.length;
        break;
      }
      case 'buffer': buffers.set(c.id, device.createBuffer({ size: c.size, usage: c.usage })); break;
      case 'free': { const b = buffers.get(c.id); if (b) { b.destroy(); buffers.delete(c.id); } break; }
      case 'write': device.queue.writeBuffer(buffers.get(c.id), c.offset, ioU8.slice(c.from, c.from + c.len)); break; // (dawn.node takes no SharedArrayBuffer)
      case 'pipeline': {
        const module = device.createShaderModule({ code: c.code });
        const pipe = device.createComputePipeline({ layout: 'auto', compute: { module, entryPoint: 'main' } });
        pipes.set(c.id, pipe);
        break;
      }
      case 'run': await run(c); break;
      case 'program': {
        programs.set(c.id, c.passes.map((p) => { const pipe = pipes.get(p.pipe); return { pipe, group: bindGroup(pipe, p.binds), wg: p.wg }; }));
        break;
      }
      case 'forget': programs.delete(c.id); break;
      case 'lose': loseAtNextRun = true; break;
      case 'gc': {
        require('node:v8').setFlagsFromString('--expose-gc');
        require('node:vm').runInNewContext('gc')();
        break;
      }
      case 'dispose':
        for (const b of buffers.values()) b.destroy();
        buffers.clear();
        programs.clear();
        if (readback) readback.destroy();
        if (device) device.destroy();
        device = null;
        instance = null;
        break;
    }
    if (lastError) { const m = lastError; lastError = null; throw new Error(m); }
  }
}

// Commands are taken with receiveMessageOnPort after a blocking Atomics.wait on REQ: the engine
// thread posts and blocks, so no 'message' event could be delivered here anyway.
const port = workerData.port;
(async () => {
  let req = 0;
  for (;;) {
    Atomics.wait(ctrl, 4, req);
    req = Atomics.load(ctrl, 4);
    let m;
    while ((m = receiveMessageOnPort(port))) {
      try { await handle(m.message); finish(null); } catch (err) { finish(err); }
      if (!device && m.message.some((c) => c.op === 'dispose')) return;
    }
  }
})();
`;
