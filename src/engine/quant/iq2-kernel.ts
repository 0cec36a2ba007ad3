// The IQ2 quantisers' WebAssembly path (wasm/assembly/quantize-iq2.ts): each grid's tables
// (iq2-grid8.ts) copied into this thread's quantiser kernel once, then whole rows quantised there
// with their importances beside them. iq2-quant.ts's TypeScript is the reference; both give the
// same bytes (tests/quant/iq2-kernel.test.ts).

import type { Grid8 } from './iq2-grid8.js';
import { rowKernel, type QuantKernel } from './quant-kernel.js';

type Fn = (...args: number[]) => number;

/** The kernel's export for each grid. */
const FNS = { xxs: 'quantize_row_iq2_xxs', xs: 'quantize_row_iq2_xs', s: 'quantize_row_iq2_s' } as const;
export type Iq2Kind = keyof typeof FNS;

/** One kernel's IQ2 state: its exports, the grids copied in (address of each 4-address descriptor), the importance region. */
interface Iq2State {
  fns: Record<Iq2Kind, Fn>;
  grids: Partial<Record<Iq2Kind, number>>;
  /** f32[n] for a row's importances. */
  qw: number;
  n: number;
}

/** Per kernel; null where its module lacks the IQ2 exports (an older build/wasm). */
const states = new WeakMap<QuantKernel, Iq2State | null>();

/** New views on the kernel's memory after an allocation may have grown it. */
function renewViews(k: QuantKernel): void {
  const buf = k.inst.arena.memory.buffer;
  k.f32 = new Float32Array(buf);
  k.u8 = new Uint8Array(buf);
  k.i8 = new Int8Array(buf);
}

function stateOf(k: QuantKernel): Iq2State | null {
  let s = states.get(k);
  if (s === undefined) {
    try {
      s = { fns: { xxs: k.inst.kernel(FNS.xxs), xs: k.inst.kernel(FNS.xs), s: k.inst.kernel(FNS.s) }, grids: {}, qw: 0, n: 0 };
    } catch {
      s = null;
    }
    states.set(k, s);
  }
  return s;
}

/**
 * The grid's tables in the kernel's memory (quantize-iq2.ts's layout): map, neighbour lists,
 * levels l = (level − 1) / 2, and for each entry's 8 elements the byte offset 32l + 4k of its error term.
 */
function copyGrid(k: QuantKernel, g: Grid8): number {
  const size = g.levels.length / 8;
  const arena = k.inst.arena;
  const desc = arena.alloc(16);
  const map = arena.alloc(4 * g.map.length);
  const nb = arena.alloc(2 * g.neighbours.length);
  const lv = arena.alloc(8 * size);
  const codes = arena.alloc(8 * size);
  renewViews(k);
  const buf = arena.memory.buffer;
  new Uint32Array(buf, desc, 4).set([map, nb, lv, codes]);
  new Int32Array(buf, map, g.map.length).set(g.map);
  new Uint16Array(buf, nb, g.neighbours.length).set(g.neighbours);
  for (let i = 0; i < 8 * size; i++) {
    const l = (g.levels[i] - 1) >> 1;
    k.u8[lv + i] = l;
    k.u8[codes + i] = 32 * l + 4 * (i % 8);
  }
  return desc;
}

/**
 * Quantise x[0..n) (whole blocks of 256) to the IQ2 type `kind` by the kernel into dst at off,
 * qw the row's importances (or null, IQ2_S only); false when there is no kernel: the caller runs its reference.
 */
export function quantizeIq2ByKernel(kind: Iq2Kind, grid: () => Grid8, x: Float32Array, dst: Uint8Array, off: number, n: number, qw: Float32Array | null): boolean {
  if (n % 256 !== 0) return false;
  const k = rowKernel(n);
  const s = k && stateOf(k);
  if (!k || !s) return false;
  if (s.n < n) {
    s.qw = k.inst.arena.alloc(4 * k.row.n);
    s.n = k.row.n;
    renewViews(k);
  }
  const g = (s.grids[kind] ??= copyGrid(k, grid()));
  k.f32.set(x.length === n ? x : x.subarray(0, n), k.row.x >> 2);
  if (qw) k.f32.set(qw.length === n ? qw : qw.subarray(0, n), s.qw >> 2);
  s.fns[kind](k.row.out, k.row.x, n, qw ? s.qw : 0, g, k.addr.aux);
  const bytes = (n / 256) * (kind === 'xxs' ? 66 : kind === 'xs' ? 74 : 82);
  dst.set(k.u8.subarray(k.row.out, k.row.out + bytes), off);
  return true;
}
