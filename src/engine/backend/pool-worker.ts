// The worker thread's whole program, as source text. It is started with
// `new Worker(POOL_WORKER_SOURCE, { eval: true })`, so there is no worker file to locate: the same
// code starts under plain Node (tests, the CLI through tsx), in vitest, and inside the Electron
// utility process built by electron-vite (where a separate .ts/.js worker entry would need its own
// bundle input and a path that differs between dev and packaged builds). Everything the worker
// needs arrives in workerData: the compiled WebAssembly.Module (compiled once, by the parent), the
// worker's shared memories (one instance on each; the parent allocates in them and fills weights
// into them directly), the kernel export names, and its control block. The worker only runs
// kernels; it never allocates. A job's export index i on memory m is m · names.length + i.
//
// Control block (Int32Array on a SharedArrayBuffer), one per worker, indices in CTRL:
//   SEQ   job number, bumped by the parent after writing NJOBS/JOBS; the worker Atomics.waits on it
//   DONE  set to SEQ by the worker when the job is finished (the parent waits on it)
//   STATE 1 ready, -1 failed to start
//   NJOBS kernels to run in this job (several matvecs on one input share a wake-up), -1 to exit
//   ERR   WORKER_ERR.KERNEL when the last job threw (kernels do not throw), WORKER_ERR.READ when
//         a READ job could not read its bytes from the file
//   HOT   1 while the parent runs a forward pass: between jobs the worker polls SEQ (up to `spin`
//         µs at a time) instead of sleeping, as the next job comes within tens of µs and a
//         futex wake-up costs as much (more in a VM); 0 between passes, so an idle pool sleeps
//   SLEEP 1 while the worker is (about to be) in Atomics.wait on SEQ, WAIT 1 while the parent is
//         in Atomics.wait on DONE: each side notifies only when the other may sleep (a notify
//         costs about half a µs even with no one waiting). Both are set before the waiter's
//         value check and read after the other's store, all sequentially consistent, so a
//         notify is never missed.
//   JOBS  up to CAP entries (per memory) of JOB ints: an index into the export names (or PIECE / BAND below,
//         negative), then 12 i32 arguments (addresses above 2 GiB read back as negative and are
//         passed to wasm as the same 32 bits). runJobs (below) runs them, on the workers and on
//         the calling thread alike.
//
// Loading: a READ job (args slot, ptr, len, file position low and high 32 bits, fd) reads len
// bytes of the model file with fs.readSync straight into memory `slot` at ptr, so each worker fills
// its own rows of a weight while the calling thread fills its own (pool.ts addWeight).
//
// Rows shared by two neighbouring threads (pool.ts "bands"): a PIECE or BAND job is followed by
// `m` template jobs, each run on a range of rows [c0, c1) (slice-local) as its mode says:
//   PRODUCT   kernel(out, w, rowBytes, r0, r1, …): r0, r1 ← c0, c1
//   ROWS2/3   kernel(p0, p1[, p2], len): the first 2 or 3 pointers + 4·c0, len ← c1 − c0
//             (add_f32, swiglu on one token's outputs)
//   TOKENS3   swiglu per token t < a4 of a batch laid out [t][a5]: pointers + 4·(t·a5 + c0)
//   STATS     sample_slice_top(stats, out, len, want): stats ← a0 + piece index · a4, out + 4·c0
//   PIECE  args c0, c1, piece index: the templates once on [c0, c1)
//   BAND   args word, side, chunk rows, lo, hi: chunks of the rows [lo, hi) claimed one at a time
//          through claims[word] (chunks a..b−1 still free as a | b << 16), side 0 from the low end,
//          1 from the high end; each claimed chunk k runs the templates on its rows with piece
//          index k. Two threads claim the band from its two ends, so each ends with one contiguous
//          range and the faster one takes more rows.

export const CTRL = { SEQ: 0, DONE: 1, STATE: 2, NJOBS: 3, ERR: 4, HOT: 5, SLEEP: 6, WAIT: 7, JOBS: 8, JOB: 13, MAXJOBS: 4, CAP: 64, SIZE: 8 + 64 * 13 } as const;

/** Job kinds besides an export index (negative) and template modes (the fn word's bits 16 and up). */
export const JOBK = { PIECE: -1, BAND: -2, READ: -3, PRODUCT: 0, ROWS2: 1, ROWS3: 2, TOKENS3: 3, STATS: 4, MODE_SHIFT: 16 } as const;

/** CTRL.ERR after a failed job. */
export const WORKER_ERR = { KERNEL: 1, READ: 2 } as const;

/** A READ job's reader: len bytes of file fd at position hi · 2³² + lo into memory `slot` at ptr (all as i32 words). */
export type ReadFn = (slot: number, ptr: number, len: number, lo: number, hi: number, fd: number) => void;

/**
 * Run the nj jobs of c from CTRL.JOBS with the exports fns (CTRL, JOBK above), READ jobs with
 * `read`. Self-contained (its source is also the worker's): it may use no name from outside its body.
 */
export function runJobs(c: Int32Array, nj: number, fns: ((...a: number[]) => unknown)[], claims: Int32Array, read?: ReadFn): void {
  // (no inner functions: a bundler's keepNames would wrap them in a helper the worker lacks)
  const JOBS = 8, JOB = 13, PIECE = -1, READ = -3, SHIFT = 16;
  for (let j = 0; j < nj; j++) {
    const A = JOBS + j * JOB, fn = c[A];
    if (fn >= 0) {
      fns[fn](c[A + 1], c[A + 2], c[A + 3], c[A + 4], c[A + 5], c[A + 6], c[A + 7], c[A + 8], c[A + 9], c[A + 10], c[A + 11], c[A + 12]);
      continue;
    }
    if (fn === READ) {
      if (!read) throw new Error('a READ job needs a reader');
      read(c[A + 1], c[A + 2], c[A + 3], c[A + 4], c[A + 5], c[A + 6]);
      continue;
    }
    const m = c[A + 6], word = c[A + 1], high = c[A + 2] === 1, ch = c[A + 3], lo = c[A + 4], hi = c[A + 5];
    for (let once = true; ; once = false) {
      // the next rows [c0, c1), piece k: a PIECE's once, a BAND's claimed chunk by chunk
      let c0: number, c1: number, k: number;
      if (fn === PIECE) {
        if (!once) break;
        c0 = c[A + 1];
        c1 = c[A + 2];
        k = c[A + 3];
      } else {
        const v = Atomics.load(claims, word), a = v & 0xffff, b = v >>> 16;
        if (a >= b) break;
        k = high ? b - 1 : a;
        if (Atomics.compareExchange(claims, word, v, high ? a | ((b - 1) << 16) : (a + 1) | (b << 16)) !== v) continue;
        c0 = lo + k * ch;
        c1 = Math.min(c0 + ch, hi);
      }
      const len = c1 - c0, o = 4 * c0;
      for (let t = 1; t <= m; t++) {
        const T = A + t * JOB, w = c[T], f = fns[w & 0xffff], mode = w >> SHIFT;
        const a0 = c[T + 1], a1 = c[T + 2], a2 = c[T + 3], a3 = c[T + 4], a4 = c[T + 5], a5 = c[T + 6];
        if (mode === 0) f(a0, a1, a2, c0, c1, a5, c[T + 7], c[T + 8], c[T + 9], c[T + 10], c[T + 11], c[T + 12]);
        else if (mode === 1) f(a0 + o, a1 + o, len);
        else if (mode === 2) f(a0 + o, a1 + o, a2 + o, len);
        else if (mode === 3) for (let i = 0; i < a4; i++) f(a0 + o + 4 * i * a5, a1 + o + 4 * i * a5, a2 + o + 4 * i * a5, len);
        else f(a0 + k * a4, a1 + o, len, a3);
      }
    }
    j += m;
  }
}

export const POOL_WORKER_SOURCE = `
'use strict';
const { workerData } = require('node:worker_threads');
const { readSync } = require('node:fs');
const { module, memories, ctrl, claims: claimBuf, names, spin } = workerData;
const c = new Int32Array(ctrl);
const claims = new Int32Array(claimBuf);
const runJobs = ${runJobs.toString()};
const SEQ = ${CTRL.SEQ}, DONE = ${CTRL.DONE}, STATE = ${CTRL.STATE}, NJOBS = ${CTRL.NJOBS}, ERR = ${CTRL.ERR}, HOT = ${CTRL.HOT}, SLEEP = ${CTRL.SLEEP}, WAIT = ${CTRL.WAIT};
let fns;
try {
  fns = [];
  for (const memory of memories) {
    const ex = new WebAssembly.Instance(module, { env: { memory } }).exports;
    for (const n of names) fns.push(ex[n]);
  }
  Atomics.store(c, STATE, 1);
} catch (e) {
  Atomics.store(c, STATE, -1);
}
Atomics.notify(c, STATE);
// READ jobs (see above): a failure is marked so the parent can say the file could not be read
let readFailed = false;
const read = (slot, ptr, len, lo, hi, fd) => {
  const dst = new Uint8Array(memories[slot].buffer, ptr >>> 0, len >>> 0);
  const pos = hi * 4294967296 + (lo >>> 0);
  for (let done = 0; done < dst.length; ) {
    let got = 0;
    try {
      got = readSync(fd, dst, done, dst.length - done, pos + done);
    } catch (e) {
      got = -1;
    }
    if (got <= 0) {
      readFailed = true;
      throw new Error('read');
    }
    done += got;
  }
};
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
    runJobs(c, nj, fns, claims, read);
    c[ERR] = 0;
  } catch (e) {
    c[ERR] = readFailed ? ${WORKER_ERR.READ} : ${WORKER_ERR.KERNEL};
    readFailed = false;
  }
  Atomics.store(c, DONE, s);
  if (Atomics.load(c, WAIT) === 1) Atomics.notify(c, DONE);
}
`;
