// The forward pass's steps, each chosen once when the RunState is made (createRunState): in
// TypeScript (ops.ts, kv-cache.ts, attention.ts), or in the WebAssembly kernels whose memory then
// holds the RunState's arrays (the same bits: tests/model/ops-*wasm*.test.ts); the matrix products
// go to the backend either way. profiled() wraps a table with the --profile clock, so forward()
// has one path per step and no profiling branches.

import type { LogitStats } from '../backend/logit-stats.js';
import type { WeightHandle } from '../backend/types.js';
import { ggmlTypeName } from '../gguf/ggml-types.js';
import type { AttnCall } from '../wasm/instance.js';
import { attention, type AttentionMode } from './attention.js';
import type { Model, RunState } from './forward.js';
import { kvStore, kvStoreKernels } from './kv-cache.js';
import { addInto, gatedAct, layernorm, rmsnorm, rope, silu } from './ops.js';
import type { Profile } from './profile.js';

export interface RunOps {
  /** out[n, rows] = x[n, cols] · Wᵀ (+ bias per row): matvec for one token, matmul for a batch. */
  project(out: Float32Array, w: WeightHandle, x: Float32Array, n: number, bias: Float32Array | null): void;
  /** outs[i] = x · W_iᵀ (+ biases[i]) in one backend call (matmulShared); `what` names them in the profile. */
  projectShared(outs: Float32Array[], ws: WeightHandle[], x: Float32Array, n: number, biases: (Float32Array | null)[], what: string): void;
  /**
   * x[n, rows] += input[n, cols] · Wᵀ (+ bias), a projection into the residual stream: added by the
   * backend for one token without a bias (matvecAdd), else into tmp and then added.
   */
  projectAdd(x: Float32Array, w: WeightHandle, input: Float32Array, n: number, bias: Float32Array | null, tmp: Float32Array): void;
  /** out[n, nFf] = silu(x · gateᵀ) ⊙ (x · upᵀ) (the backend's matmulGated). */
  gated(out: Float32Array, gate: WeightHandle, up: WeightHandle, x: Float32Array, n: number): void;
  /** out[rows] = W · x, with sampling's stats of it when `stats` is given (matvecTop). */
  logits(out: Float32Array, w: WeightHandle, x: Float32Array, stats: LogitStats | null): void;
  /** out[outOff…] = norm(x[xOff…]) · w (+ b) over nEmbd values, RMS or layer norm; no w: a copy (olmo2). */
  norm(out: Float32Array, x: Float32Array, w: Float32Array | null, b: Float32Array | null, xOff: number, outOff: number): void;
  /** x[off…] ← rmsnorm · w in place, over nHeads runs of n values each (q/k norm). */
  headNorm(x: Float32Array, off: number, nHeads: number, n: number, w: Float32Array): void;
  /** Rotate nHeads heads of headDimK values at x[off…] by the cos/sin cache at rc[rcOff…]. */
  rope(x: Float32Array, off: number, nHeads: number, rc: Float32Array, rcOff: number): void;
  /** Store token t's keys and values (s.k, s.v) at position p of layer l (split attention: nothing, it stores them). */
  kvStore(l: number, p: number, t: number): void;
  /**
   * Attention of tokens t0 … t0 + n − 1 of the batch (positions pos + t0 …) over the cache, the keys
   * of a position p from max(0, p − window + 1) (window 0: from 0), into s.att.
   */
  attend(l: number, pos: number, t0: number, n: number, mode: AttentionMode, window: number, scale: number, sinks: Float32Array | null): void;
  /** x[0..n) += v[0..n) (the residual). */
  residual(x: Float32Array, v: Float32Array, n: number): void;
  /** out[i] = silu(gate[i]) · up[i] for i < n (in place allowed). */
  swiglu(out: Float32Array, gate: Float32Array, up: Float32Array, n: number): void;
  /** Charge the time since the last op to `op` (forward.ts's inline steps; nothing unless profiled). */
  mark(op: string): void;
  /** The layer the ops that follow belong to (-1: none); the profile keeps a total per layer. */
  layer(l: number): void;
}

/** What the ops read of a RunState (all of it but the ops). */
export type RunArrays = Omit<RunState, 'ops'>;

/**
 * The model's ops over s: in wasm where s.wasm is set (its arrays then live in kernel memory),
 * else in TypeScript; attention over the backend's threads when s.split is set, and in TypeScript
 * for soft-capped scores (gemma2), over the cache wherever it lives.
 */
export function createRunOps(m: Model, s: RunArrays): RunOps {
  const { hp, spec, backend: be } = m;
  const { nEmbd: dim, normEps: eps, nHead, nHeadKv, headDimK, headDimV, nRot } = hp;
  const W = s.wasm;
  const qDim = nHead * headDimK;
  const kvDimK = nHeadKv * headDimK;
  const kvDimV = nHeadKv * headDimV;
  const oDim = nHead * headDimV;
  const d = { nHead, nHeadKv, headDimK, headDimV };

  const residual: RunOps['residual'] = W ? (x, v, n) => W.k.addInto(x.byteOffset, v.byteOffset, n) : (x, v, n) => addInto(x, v, n);

  // out[outOff…] = rmsnorm(x[xOff…]) · w over n values (wasm: w copied into kernel memory by createRunState)
  const rms = W
    ? (out: Float32Array, x: Float32Array, w: Float32Array, n: number, xOff: number, outOff: number) => {
        const wp = W.norms.get(w);
        if (wp === undefined) rmsnorm(out, x, w, eps, n, xOff, outOff);
        else W.k.rmsnorm(out.byteOffset + outOff * 4, x.byteOffset + xOff * 4, wp, eps, n);
      }
    : (out: Float32Array, x: Float32Array, w: Float32Array, n: number, xOff: number, outOff: number) => rmsnorm(out, x, w, eps, n, xOff, outOff);

  const norm: RunOps['norm'] = spec.norm === 'rms'
    ? (out, x, w, b, xOff, outOff) => {
        if (!w) return void out.set(x.subarray(xOff, xOff + dim), outOff);
        rms(out, x, w, dim, xOff, outOff);
        if (b) addInto(out, b, dim, outOff);
      }
    : (out, x, w, b, xOff, outOff) => {
        if (!w) return void out.set(x.subarray(xOff, xOff + dim), outOff);
        layernorm(out, x, w, b, eps, dim, xOff, outOff);
      };

  const ropeOp: RunOps['rope'] = W
    ? (x, off, nHeads, rc, rcOff) => W.k.ropeHeads(x.byteOffset + off * 4, nHeads, headDimK, rc.byteOffset + rcOff * 4, nRot, spec.rope === 'neox')
    : (x, off, nHeads, rc, rcOff) => {
        const c = rc.subarray(rcOff, rcOff + nRot);
        for (let h = 0; h < nHeads; h++) rope(x, off + h * headDimK, c, nRot, spec.rope);
      };

  const store: RunOps['kvStore'] = s.split
    ? () => {}
    : W
      ? (l, p, t) => kvStoreKernels(s.cache, W.k, l, p, s.k.byteOffset + t * kvDimK * 4, s.v.byteOffset + t * kvDimV * 4)
      : (l, p, t) => kvStore(s.cache, l, p, s.k, t * kvDimK, s.v, t * kvDimV);

  // attention in TypeScript, over the cache in kernel memory or here
  const softcap = hp.attnSoftcap;
  const attendTs: RunOps['attend'] = (l, pos, t0, n, mode, window, scale, sinks) => {
    for (let t = t0; t < t0 + n; t++) {
      const p = pos + t;
      const from = window > 0 ? Math.max(0, p - window + 1) : 0;
      attention(s.att, t * oDim, s.q, t * qDim, s.cache, l, from, p, d, scale, mode, s.scratch, sinks, softcap);
    }
  };
  let attend = attendTs;
  if (s.split) {
    const split = s.split;
    // every thread its KV heads: store this batch's keys and values, then attend
    attend = (l, pos, t0, n, mode, window, scale, sinks) =>
      split.run(l, s.att.subarray(t0 * oDim), s.q.subarray(t0 * qDim), s.k.subarray(t0 * kvDimK), s.v.subarray(t0 * kvDimV), pos + t0, n, mode, window, scale, sinks);
  } else if (W && softcap === 0) {
    // one argument block, refilled per call
    const a: AttnCall = { out: 0, q: 0, kc: 0, vc: 0, strideK: kvDimK, strideV: kvDimV, nHead, nHeadKv, hdK: headDimK, hdV: headDimV, scale: 0, scratch: W.scratch, sinks: 0, finite: false };
    attend = (l, pos, t0, n, mode, window, scale, sinks) => {
      a.kc = s.cache.k[l].byteOffset;
      a.vc = s.cache.v[l].byteOffset;
      a.scale = scale;
      a.sinks = sinks ? W.norms.get(sinks)! : 0; // attention sinks [nHead] (gpt-oss) in kernel memory
      if (mode === 'f32') {
        // a prompt batch in one call: the cache rows are widened once per 8 tokens
        a.out = s.att.byteOffset + t0 * oDim * 4;
        a.q = s.q.byteOffset + t0 * qDim * 4;
        W.k.attentionBatchF32(a, pos + t0, n, window);
        return;
      }
      a.finite = s.cache.nonFinite[l] === 0;
      for (let t = t0; t < t0 + n; t++) {
        const p = pos + t;
        a.out = s.att.byteOffset + t * oDim * 4;
        a.q = s.q.byteOffset + t * qDim * 4;
        W.k.attention(mode, a, window > 0 ? Math.max(0, p - window + 1) : 0, p);
      }
    };
  }

  return {
    project(out, w, x, n, bias) {
      const { rows, cols } = w.spec;
      if (n === 1) be.matvec(out.subarray(0, rows), w, x.subarray(0, cols));
      else be.matmul(out.subarray(0, n * rows), w, x.subarray(0, n * cols), n);
      if (bias) for (let t = 0; t < n; t++) addInto(out, bias, rows, t * rows);
    },
    projectShared(outs, ws, x, n, biases) {
      be.matmulShared(outs, ws, x, n, biases);
    },
    projectAdd(x, w, input, n, bias, tmp) {
      if (n === 1 && !bias) return be.matvecAdd(x.subarray(0, w.spec.rows), w, input.subarray(0, w.spec.cols));
      this.project(tmp, w, input, n, bias);
      residual(x, tmp, n * w.spec.rows);
    },
    gated(out, gate, up, x, n) {
      be.matmulGated(out.subarray(0, n * up.spec.rows), gate, up, x.subarray(0, n * up.spec.cols), n);
    },
    logits(out, w, x, stats) {
      if (stats) be.matvecTop(out, w, x, stats);
      else be.matvec(out, w, x);
    },
    norm,
    headNorm(x, off, nHeads, n, w) {
      for (let h = 0; h < nHeads; h++) rms(x, x, w, n, off + h * n, off + h * n);
    },
    rope: ropeOp,
    kvStore: store,
    attend,
    residual,
    swiglu: W ? (out, gate, up, n) => W.k.swiglu(out.byteOffset, gate.byteOffset, up.byteOffset, n) : (out, gate, up, n) => gatedAct(out, gate, up, silu, n),
    mark() {},
    layer() {},
  };
}

// ----------------------------------------------------------------------------------------------
// Profiling

const matLabels = new Map<number, string>();

/** Profile label of a matrix product: "matvec Q4_K" for one token, "matmul Q4_K" for a batch. */
function matLabel(type: number, n: number): string {
  const key = type * 2 + (n === 1 ? 0 : 1);
  let s = matLabels.get(key);
  if (!s) matLabels.set(key, (s = `${n === 1 ? 'matvec' : 'matmul'} ${ggmlTypeName(type)}`));
  return s;
}

/** Profile label of a shared-input product: "matvec q,k,v Q4_K/Q4_K/Q6_K". */
function sharedLabel(ws: WeightHandle[], n: number, what: string): string {
  return `${n === 1 ? 'matvec' : 'matmul'} ${what} ${ws.map((w) => ggmlTypeName(w.spec.type)).join('/')}`;
}

/** o with each op's time charged to P after it (`pantheon run --profile`). */
export function profiled(o: RunOps, P: Profile): RunOps {
  return {
    project(out, w, x, n, bias) {
      o.project(out, w, x, n, bias);
      P.mark(matLabel(w.spec.type, n));
    },
    projectShared(outs, ws, x, n, biases, what) {
      o.projectShared(outs, ws, x, n, biases, what);
      P.mark(sharedLabel(ws, n, what));
    },
    projectAdd(x, w, input, n, bias, tmp) {
      o.projectAdd(x, w, input, n, bias, tmp);
      P.mark(matLabel(w.spec.type, n));
    },
    gated(out, gate, up, x, n) {
      o.gated(out, gate, up, x, n);
      P.mark(sharedLabel([up, gate], n, 'up,gate+act'));
    },
    logits(out, w, x, stats) {
      o.logits(out, w, x, stats);
      P.mark(`${matLabel(w.spec.type, 1)} (output)`);
    },
    norm(out, x, w, b, xOff, outOff) {
      o.norm(out, x, w, b, xOff, outOff);
      P.mark('norm');
    },
    headNorm(x, off, nHeads, n, w) {
      o.headNorm(x, off, nHeads, n, w);
      P.mark('q/k norm');
    },
    rope(x, off, nHeads, rc, rcOff) {
      o.rope(x, off, nHeads, rc, rcOff);
      P.mark('rope');
    },
    kvStore(l, p, t) {
      o.kvStore(l, p, t);
      P.mark('kv store');
    },
    attend(l, pos, t0, n, mode, window, scale, sinks) {
      o.attend(l, pos, t0, n, mode, window, scale, sinks);
      P.mark('attention');
    },
    residual(x, v, n) {
      o.residual(x, v, n);
      P.mark('residual');
    },
    swiglu(out, gate, up, n) {
      o.swiglu(out, gate, up, n);
      P.mark('activation');
    },
    mark: (op) => P.mark(op),
    layer: (l) => {
      P.layer = l;
    },
  };
}
