// The worker thread's whole program, as source text. It is started with
// `new Worker(POOL_WORKER_SOURCE, { eval: true })`, so there is no worker file to locate: the same
// code starts under plain Node (tests, the CLI through tsx), in vitest, and inside the Electron
// utility process built by electron-vite (where a separate .ts/.js worker entry would need its own
// bundle input and a path that differs between dev and packaged builds). Everything the worker
// needs arrives in workerData: the compiled WebAssembly.Module (compiled once, by the parent), the
// worker's shared memory (the parent allocates in it and fills weights into it directly), the
// kernel export names, and its control block. The worker only runs kernels; it never allocates.
//
// Control block (Int32Array on a SharedArrayBuffer), one per worker, indices in CTRL:
//   SEQ   job number, bumped by the parent after writing NJOBS/JOBS; the worker Atomics.waits on it
//   DONE  set to SEQ by the worker when the job is finished (the parent waits on it)
//   STATE 1 ready, -1 failed to start
//   NJOBS kernels to run in this job (several matvecs on one input share a wake-up), -1 to exit
//   ERR   1 when the last job threw (message in the parent's log only: kernels do not throw)
//   HOT   1 while the parent runs a forward pass: between jobs the worker polls SEQ (up to `spin`
//         µs at a time) instead of sleeping, as the next job comes within tens of µs and a
//         futex wake-up costs as much (more in a VM); 0 between passes, so an idle pool sleeps
//   SLEEP 1 while the worker is (about to be) in Atomics.wait on SEQ, WAIT 1 while the parent is
//         in Atomics.wait on DONE: each side notifies only when the other may sleep (a notify
//         costs about half a µs even with no one waiting). Both are set before the waiter's
//         value check and read after the other's store, all sequentially consistent, so a
//         notify is never missed.
//   JOBS  up to MAXJOBS entries of JOB ints: an index into the export names, then 12 i32
//         arguments (addresses above 2 GiB read back as negative and are passed to wasm as the
//         same 32 bits)

export const CTRL = { SEQ: 0, DONE: 1, STATE: 2, NJOBS: 3, ERR: 4, HOT: 5, SLEEP: 6, WAIT: 7, JOBS: 8, JOB: 13, MAXJOBS: 4, SIZE: 64 } as const;

export const POOL_WORKER_SOURCE = `
'use strict';
const { workerData } = require('node:worker_threads');
const { module, memory, ctrl, names, spin } = workerData;
const c = new Int32Array(ctrl);
const SEQ = ${CTRL.SEQ}, DONE = ${CTRL.DONE}, STATE = ${CTRL.STATE}, NJOBS = ${CTRL.NJOBS}, ERR = ${CTRL.ERR}, HOT = ${CTRL.HOT}, SLEEP = ${CTRL.SLEEP}, WAIT = ${CTRL.WAIT}, JOBS = ${CTRL.JOBS}, JOB = ${CTRL.JOB};
let fns;
try {
  const ex = new WebAssembly.Instance(module, { env: { memory } }).exports;
  fns = names.map((n) => ex[n]);
  Atomics.store(c, STATE, 1);
} catch (e) {
  Atomics.store(c, STATE, -1);
}
Atomics.notify(c, STATE);
let seen = 0;
let budget = spin;
while (fns) {
  let s = Atomics.load(c, SEQ);
  if (s === seen && budget > 0 && Atomics.load(c, HOT) === 1) {
    // poll while the pass lasts, up to budget µs: a job in time raises the budget, a spin that runs
    // out halves it (the other thread is not getting a core: spinning would only take it longer)
    const until = performance.now() + budget / 1000;
    let hot = true;
    for (let i = 1; s === seen; i++) {
      s = Atomics.load(c, SEQ);
      if ((i & 63) === 0 && ((hot = Atomics.load(c, HOT) === 1) === false || performance.now() > until)) break;
    }
    if (s !== seen) budget = Math.min(spin, budget + (spin >> 3));
    else if (hot) budget = Math.max(budget >> 1, spin >> 5);
  }
  if (s === seen) {
    Atomics.store(c, SLEEP, 1);
    while (s === seen) {
      Atomics.wait(c, SEQ, seen);
      s = Atomics.load(c, SEQ);
    }
    Atomics.store(c, SLEEP, 0);
  }
  seen = s;
  const nj = c[NJOBS];
  if (nj < 0) break;
  try {
    for (let j = 0; j < nj; j++) {
      const A = JOBS + j * JOB + 1;
      fns[c[A - 1]](c[A], c[A + 1], c[A + 2], c[A + 3], c[A + 4], c[A + 5], c[A + 6], c[A + 7], c[A + 8], c[A + 9], c[A + 10], c[A + 11]);
    }
    c[ERR] = 0;
  } catch (e) {
    c[ERR] = 1;
  }
  Atomics.store(c, DONE, s);
  if (Atomics.load(c, WAIT) === 1) Atomics.notify(c, DONE);
}
`;
