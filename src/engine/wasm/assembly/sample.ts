// Sampling's passes over the whole vocabulary (src/engine/sample/wasm.ts calls them). The scalar
// references are the TypeScript functions in src/engine/sample (scrubMax, expSumAndTop,
// selectTopK, nucleusMass); tests/sample/wasm.test.ts compares each with its reference.
//
// The normaliser Σ exp(l − max) is computed in f64, two lanes at a time, without a table:
//   exp(l − max) = 2^−x,  x = (max − l)·log2(e) ≥ 0, clamped to 1000 (2^−1000 ≈ 1e-301: nothing next
//   to the max's term of 1);  m = (2^52 + 1023) − x rounds 1023 − k, k = round(x), into its low
//   mantissa bits, so m's bits shifted left by 52 are 2^−k;  g = x − k ∈ [−1/2, 1/2];
//   2^−x = 2^−k · 2^−g,  2^−g ≈ a degree-7 polynomial in g (the minimax one for 2^f on [−1/2, 1/2],
//   relative error, Remez, with the odd coefficients negated): at most
//   4.2e-11 relative, so the sum is within ~1e-10 relative (tests/sample/wasm.test.ts checks each
//   term against Math.exp).

import { madd64 } from './common';

const LOG2E: f64 = 1.4426950408889634;
const DEEPEST: f64 = 1000;
const MAGIC: f64 = 4503599627370496.0 + 1023; // 2^52 + 1023
const P0: f64 = 0.99999999996072331;
const P1: f64 = 0.69314718072779169;
const P2: f64 = 0.24022651205124532;
const P3: f64 = 0.055504103581673375;
const P4: f64 = 0.0096180265071237232;
const P5: f64 = 0.0013333917523737392;
const P6: f64 = 0.00015469490765717271;
const P7: f64 = 0.000015203266638118391;

// The same constants in pairs, loaded from memory where used: V8 rebuilds a v128.const at every use
// inside a loop (3 instructions each), while a load is one (as in attention.ts).
const K: usize = memory.data<f64>([
  LOG2E, LOG2E, DEEPEST, DEEPEST, MAGIC, MAGIC, // 0 16 32
  P0, P0, -P1, -P1, P2, P2, -P3, -P3, P4, P4, -P5, -P5, P6, P6, -P7, -P7, // 48 … 160: 2^−g
], 16);
// @ts-ignore: decorator
@inline function kv(off: usize): v128 {
  return v128.load(K + off);
}


/** acc + 2^−x for 0 ≤ x ≤ DEEPEST, both lanes. */
// @ts-ignore: decorator
@inline function addExp2Neg2(acc: v128, x: v128): v128 {
  const m = f64x2.sub(kv(32), x);
  const g = f64x2.add(f64x2.sub(m, kv(32)), x);
  let p = madd64(kv(160), g, kv(144));
  p = madd64(p, g, kv(128));
  p = madd64(p, g, kv(112));
  p = madd64(p, g, kv(96));
  p = madd64(p, g, kv(80));
  p = madd64(p, g, kv(64));
  p = madd64(p, g, kv(48));
  return madd64(p, i64x2.shl(m, 52), acc);
}

/** 2^−x for one value (the tails), as addExp2Neg2. */
// @ts-ignore: decorator
@inline function exp2Neg(x: f64): f64 {
  const m = MAGIC - x;
  const g = (m - MAGIC) + x;
  const p = (((((((-P7 * g + P6) * g - P5) * g + P4) * g - P3) * g + P2) * g - P1) * g + P0);
  return p * reinterpret<f64>(reinterpret<i64>(m) << 52);
}

/** x = (max − l)·log2e ≥ 0, clamped to DEEPEST, for two lanes (a fused max·log2e − l·log2e could come out below 0 at l = max). */
// @ts-ignore: decorator
@inline function below(max: v128, l: v128): v128 {
  return f64x2.pmin(f64x2.mul(f64x2.sub(max, l), kv(0)), kv(16));
}

/**
 * x[n] f32 in place: NaN → −inf; returns the largest value (−inf when all are −inf or NaN). Scalar
 * reference: scrubMax (sample/passes.ts).
 */
export function sample_scrub_max(x: usize, n: i32): f32 {
  const ninf = f32x4.splat(-Infinity);
  let m0 = ninf, m1 = ninf;
  let i = 0;
  for (; i + 8 <= n; i += 8) {
    const p = x + (<usize>i << 2);
    let a = v128.load(p), b = v128.load(p, 16);
    const na = f32x4.ne(a, a), nb = f32x4.ne(b, b);
    if (v128.any_true(v128.or(na, nb))) {
      a = v128.bitselect(ninf, a, na);
      b = v128.bitselect(ninf, b, nb);
      v128.store(p, a);
      v128.store(p, b, 16);
    }
    m0 = f32x4.pmax(m0, a); // no NaN left: pmax (m < v ? v : m) is one instruction
    m1 = f32x4.pmax(m1, b);
  }
  const m = f32x4.pmax(m0, m1);
  let top = max<f32>(max<f32>(f32x4.extract_lane(m, 0), f32x4.extract_lane(m, 1)), max<f32>(f32x4.extract_lane(m, 2), f32x4.extract_lane(m, 3)));
  for (; i < n; i++) {
    const p = x + (<usize>i << 2);
    const v = load<f32>(p);
    if (v > top) top = v;
    else if (v != v) store<f32>(p, -Infinity);
  }
  return top;
}

/**
 * Σ exp(x[i] − top) over i < n (top: the largest value, finite; no NaN), within 1e-9 relative of
 * the exact sum, and the k largest values' indices in out[0..k) (i32), largest first, lower index
 * first on ties, by insertion into a sorted list: four values are compared with the list's last
 * one at a time, and a value is inserted only when one of them beats it. k is clamped to [0, n].
 * Scalar reference: expSumAndTop (sample/expsum.ts), where k ≤ FUSED_TOP_MAX.
 */
export function sample_expsum_top(out: usize, x: usize, n: i32, top: f32, k: i32): f64 {
  k = min(max(k, 0), n);
  const mx = f64x2.splat(<f64>top);
  let acc0 = f64x2.splat(0), acc1 = acc0; // two chains of additions, not one
  let size = 0;
  let worst: f32 = k > 0 ? -Infinity : Infinity; // what a newcomer must beat once the list is full
  let beat = f32x4.splat(worst);
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const p = x + (<usize>i << 2);
    const v = v128.load(p);
    acc0 = addExp2Neg2(acc0, below(mx, f64x2.promote_low_f32x4(v)));
    acc1 = addExp2Neg2(acc1, below(mx, f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7))));
    if (size < k || v128.any_true(f32x4.gt(v, beat))) {
      for (let j = i; j < i + 4; j++) {
        const vj = load<f32>(x + (<usize>j << 2));
        if (vj > worst || size < k) {
          size = insert(out, x, vj, j, size, k);
          if (size == k) worst = load<f32>(x + (<usize>load<i32>(out + (<usize>(k - 1) << 2)) << 2));
        }
      }
      beat = f32x4.splat(worst);
    }
  }
  const acc = f64x2.add(acc0, acc1);
  let sum = f64x2.extract_lane(acc, 0) + f64x2.extract_lane(acc, 1);
  for (; i < n; i++) {
    const v = load<f32>(x + (<usize>i << 2));
    sum += exp2Neg(min<f64>((<f64>top - <f64>v) * LOG2E, DEEPEST));
    if (v > worst || size < k) {
      size = insert(out, x, v, i, size, k);
      if (size == k) worst = load<f32>(x + (<usize>load<i32>(out + (<usize>(k - 1) << 2)) << 2));
    }
  }
  return sum;
}

/**
 * One thread's slice of a logits row, right after computing it (the pool's output product): x[n]
 * f32 scrubbed in place (NaN → −inf), then at `stats`: f32 max at 0, f64 Σ exp(x[i] − max) at 8
 * (0 when the max is not finite: the sampler then makes its own passes), and from 16 the indices
 * of the k largest (i32, slice-local), largest first, lower index first on ties. Scalar reference:
 * sliceTop (sample/slices.ts); the slices merge in mergeSliceTops.
 */
export function sample_slice_top(stats: usize, x: usize, n: i32, k: i32): void {
  const top = sample_scrub_max(x, n);
  store<f32>(stats, top);
  let sum: f64 = 0;
  if (top > -Infinity && top < Infinity) sum = sample_expsum_top(stats + 16, x, n, top, k);
  store<f64>(stats, sum, 8);
}

/**
 * Insert index i (value v) into the sorted list out[0..size) of at most k entries (equal values stay
 * ahead of it; a full list drops its last entry); returns the new size.
 */
// @ts-ignore: decorator
@inline function insert(out: usize, x: usize, v: f32, i: i32, size: i32, k: i32): i32 {
  let s = size;
  if (size < k) size++;
  else s = k - 1;
  while (s > 0) {
    const prev = load<i32>(out + (<usize>(s - 1) << 2));
    if (!(v > load<f32>(x + (<usize>prev << 2)))) break;
    store<i32>(out + (<usize>s << 2), prev);
    s--;
  }
  store<i32>(out + (<usize>s << 2), i);
  return size;
}

// ---- top-k for larger k: a size-k min-heap (sample/select.ts selectTopK, the scalar reference) ---

// @ts-ignore: decorator
@inline function at(x: usize, i: i32): f32 {
  return load<f32>(x + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function idx(heap: usize, i: i32): i32 {
  return load<i32>(heap + (<usize>i << 2));
}

// @ts-ignore: decorator
@inline function put(heap: usize, i: i32, v: i32): void {
  store<i32>(heap + (<usize>i << 2), v);
}

/** Is entry a worse than entry b (smaller value, or equal value and larger index)? */
// @ts-ignore: decorator
@inline function worse(x: usize, a: i32, b: i32): bool {
  const va = at(x, a), vb = at(x, b);
  return va < vb || (va == vb && a > b);
}

function siftDown(x: usize, heap: usize, size: i32, i: i32): void {
  const e = idx(heap, i);
  while (true) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const r = l + 1;
    const c = r < size && worse(x, idx(heap, r), idx(heap, l)) ? r : l;
    if (!worse(x, idx(heap, c), e)) break;
    put(heap, i, idx(heap, c));
    i = c;
  }
  put(heap, i, e);
}

function siftUp(x: usize, heap: usize, i: i32): void {
  const e = idx(heap, i);
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!worse(x, e, idx(heap, p))) break;
    put(heap, i, idx(heap, p));
    i = p;
  }
  put(heap, i, e);
}

/**
 * The indices of the k largest of x[0..n) (f32, no NaN) into out[0..k) (i32), largest first, lower
 * index first on ties; returns k clamped to [0, n]. Past the first k, four values at a time are
 * compared with the heap's worst and only one that beats it goes into the heap.
 */
export function sample_select_top(out: usize, x: usize, n: i32, k: i32): i32 {
  k = min(max(k, 0), n);
  if (k == 0) return 0;
  let size = 0;
  let i = 0;
  for (; i < n && size < k; i++) {
    put(out, size, i);
    siftUp(x, out, size++);
  }
  let worstKept = at(x, idx(out, 0));
  let beat = f32x4.splat(worstKept);
  for (; i + 4 <= n; i += 4) {
    if (!v128.any_true(f32x4.gt(v128.load(x + (<usize>i << 2)), beat))) continue;
    for (let j = i; j < i + 4; j++) {
      // Equal values never replace: the kept entry has the lower index.
      if (at(x, j) > worstKept) {
        put(out, 0, j);
        siftDown(x, out, size, 0);
        worstKept = at(x, idx(out, 0));
      }
    }
    beat = f32x4.splat(worstKept);
  }
  for (; i < n; i++) {
    if (at(x, i) > worstKept) {
      put(out, 0, i);
      siftDown(x, out, size, 0);
      worstKept = at(x, idx(out, 0));
    }
  }
  // Heap sort in place: repeatedly move the worst entry to the end.
  for (let end = size - 1; end > 0; end--) {
    const w = idx(out, 0);
    put(out, 0, idx(out, end));
    put(out, end, w);
    siftDown(x, out, end, 0);
  }
  return k;
}

// ---- top-p over the whole vocabulary (sample/nucleus.ts, the scalar reference) ---------------------
//
// The per-bin masses decide which tokens survive, so they must be the very numbers nucleusMass
// computes in TypeScript: the same Math.exp and the same order of additions. V8's Math.exp is
// fdlibm's __ieee754_exp (v8 src/base/ieee754.cc, plus exp(1) = E, which x ≤ 0 never meets);
// fdExpNeg2 below is that function for x = −d ≤ 0, two lanes at once, every operation the same IEEE
// operation on the same operands, so each lane is bit for bit Math.exp(x). For x ≤ 0 its branches
// reduce to one formula (k = 0 for |x| ≤ ln2/2 gives hi = x, lo = 0, and the k = 0 return
// 1 − ((x·c)/(c − 2) − x) is the same number as the general 1 − ((lo − (x·c)/(2 − c)) − hi) for x ≠ 0),
// plus two selections: |x| < 2^-28 → 1 + x, and x < −745.13… (and −inf) → 0.

const NUCLEUS_BINS_PER_LOGIT: f64 = 16; // sample/nucleus.ts
const NUCLEUS_DEPTH: f64 = 32;
const NUCLEUS_LAST: i32 = 512; // NUCLEUS_BINS − 1: everything deeper

const KF: usize = memory.data<f64>([
  1.44269504088896338700e+00, 1.44269504088896338700e+00, //   0 invln2
  -0.5, -0.5, //                                                16 halF[1] (x < 0)
  6.93147180369123816490e-01, 6.93147180369123816490e-01, //   32 ln2HI[0]
  1.90821492927058770002e-10, 1.90821492927058770002e-10, //   48 ln2LO[0]
  1.66666666666666019037e-01, 1.66666666666666019037e-01, //   64 P1
  -2.77777777770155933842e-03, -2.77777777770155933842e-03, // 80 P2
  6.61375632143793436117e-05, 6.61375632143793436117e-05, //   96 P3
  -1.65339022054652515390e-06, -1.65339022054652515390e-06, // 112 P4
  4.13813679705723846039e-08, 4.13813679705723846039e-08, //   128 P5
  1.0, 1.0, //                                                 144 one
  2.0, 2.0, //                                                 160
  7.45133219101941108420e+02, 7.45133219101941108420e+02, //   176 −u_threshold
  9.33263618503218878990e-302, 9.33263618503218878990e-302, // 192 twom1000
  -1021.0, -1021.0, //                                         208
  1000.0, 1000.0, //                                           224
  6755399441055744.0 + 1023, 6755399441055744.0 + 1023, //     240 1.5·2^52 + 1023: k + this has k + 1023 in its low bits
], 16);
// |x| above ln2/2 (fdlibm: high word > 0x3FD62E42) and below 2^-28 (high word < 0x3E300000), as
// doubles: positive doubles order as their bits do, so comparing with these is comparing high words.
const KF_HALF_LN2: usize = memory.data<u64>([0x3FD62E42FFFFFFFF, 0x3FD62E42FFFFFFFF], 16);
const KF_TINY: usize = memory.data<u64>([0x3E30000000000000, 0x3E30000000000000], 16);
// @ts-ignore: decorator
@inline function kf(off: usize): v128 {
  return v128.load(KF + off);
}

/** Math.exp(−d) in both lanes, bit for bit, for d ≥ 0 (+inf included, no NaN). */
// @ts-ignore: decorator
@inline function fdExpNeg2(d: v128): v128 {
  const x = f64x2.neg(d);
  const reduce = f64x2.gt(d, v128.load(KF_HALF_LN2));
  const tiny = f64x2.lt(d, v128.load(KF_TINY));
  const under = f64x2.gt(d, kf(176)); // x < u_threshold (−inf too): 0
  // k = (int)(invln2·x − 0.5) where |x| > 0.5 ln2, else 0
  const k = v128.and(f64x2.trunc(f64x2.add(f64x2.mul(kf(0), x), kf(16))), reduce);
  const hi = f64x2.sub(x, f64x2.mul(k, kf(32)));
  const lo = f64x2.mul(k, kf(48));
  const r = f64x2.sub(hi, lo);
  const t = f64x2.mul(r, r);
  let p = f64x2.add(kf(112), f64x2.mul(t, kf(128)));
  p = f64x2.add(kf(96), f64x2.mul(t, p));
  p = f64x2.add(kf(80), f64x2.mul(t, p));
  p = f64x2.add(kf(64), f64x2.mul(t, p));
  const c = f64x2.sub(r, f64x2.mul(t, p));
  const y = f64x2.sub(kf(144), f64x2.sub(f64x2.sub(lo, f64x2.div(f64x2.mul(r, c), f64x2.sub(kf(160), c))), hi));
  // 2^k from its exponent bits; below k = −1021, 2^(k+1000) and then ·2^-1000 (as fdlibm), that
  // product only in those lanes: e·2^-1000 is subnormal, which x86 computes far slower
  const deep = f64x2.lt(k, kf(208));
  const kb = f64x2.add(f64x2.add(k, v128.and(kf(224), deep)), kf(240));
  let e = f64x2.mul(f64x2.mul(y, i64x2.shl(kb, 52)), v128.bitselect(kf(192), kf(144), deep));
  e = v128.bitselect(f64x2.add(kf(144), x), e, tiny);
  return v128.andnot(e, under);
}

/**
 * mass[b] (f64, NUCLEUS_BINS of them) = Σ Math.exp(x[i] − max) over the values in bin b (1/16 logit
 * per bin below the max, the last bin for everything 32 or more below), added in index order, and
 * the total: bit for bit nucleusMass. x: n f32 without NaN, max their largest (finite).
 */
export function sample_nucleus_mass(mass: usize, x: usize, n: i32, max: f32): f64 {
  memory.fill(mass, 0, (NUCLEUS_LAST + 1) << 3);
  const mx = f64x2.splat(<f64>max);
  let total: f64 = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(x + (<usize>i << 2));
    const d0 = f64x2.sub(mx, f64x2.promote_low_f32x4(v));
    const d1 = f64x2.sub(mx, f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)));
    const e0 = fdExpNeg2(d0), e1 = fdExpNeg2(d1);
    total = addMass(mass, total, f64x2.extract_lane(d0, 0), f64x2.extract_lane(e0, 0));
    total = addMass(mass, total, f64x2.extract_lane(d0, 1), f64x2.extract_lane(e0, 1));
    total = addMass(mass, total, f64x2.extract_lane(d1, 0), f64x2.extract_lane(e1, 0));
    total = addMass(mass, total, f64x2.extract_lane(d1, 1), f64x2.extract_lane(e1, 1));
  }
  for (; i < n; i++) {
    const d = <f64>max - <f64>load<f32>(x + (<usize>i << 2));
    total = addMass(mass, total, d, f64x2.extract_lane(fdExpNeg2(f64x2.splat(d)), 0));
  }
  return total;
}

/** The bin of a value d = max − l below the max (nucleus.ts binOf). */
// @ts-ignore: decorator
@inline function binOf(d: f64): i32 {
  return d < NUCLEUS_DEPTH ? <i32>(d * NUCLEUS_BINS_PER_LOGIT) : NUCLEUS_LAST;
}

// @ts-ignore: decorator
@inline function addMass(mass: usize, total: f64, d: f64, e: f64): f64 {
  const p = mass + (<usize>binOf(d) << 3);
  store<f64>(p, load<f64>(p) + e);
  return total + e;
}

/**
 * nucleusCut's pass over the vocabulary: the indices of the values in bins below `boundary` into
 * out (in index order), those in bin `boundary` into scratch; returns how many went to out and
 * stores how many went to scratch at `count` (i32). Four values whose bins are all past the
 * boundary are passed over with one compare.
 */
export function sample_nucleus_split(out: usize, scratch: usize, count: usize, x: usize, n: i32, max: f32, boundary: i32): i32 {
  const mx = f64x2.splat(<f64>max);
  // bin ≤ boundary ⇔ d·16 < boundary + 1 (d·16 is exact), for every boundary below the last bin
  const limit = f64x2.splat(boundary < NUCLEUS_LAST ? <f64>(boundary + 1) / NUCLEUS_BINS_PER_LOGIT : Infinity);
  let size = 0, inBoundary = 0;
  let i = 0;
  for (; i + 4 <= n; i += 4) {
    const v = v128.load(x + (<usize>i << 2));
    const d0 = f64x2.sub(mx, f64x2.promote_low_f32x4(v));
    const d1 = f64x2.sub(mx, f64x2.promote_low_f32x4(i8x16.shuffle(v, v, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4, 5, 6, 7)));
    if (!v128.any_true(v128.or(f64x2.lt(d0, limit), f64x2.lt(d1, limit)))) continue;
    // Without branches (which bin a token falls in is a coin toss near the boundary): every index
    // is written to both lists, and each list's end moves on only when it belongs there.
    for (let j = i; j < i + 4; j++) {
      const b = binOf(<f64>max - <f64>load<f32>(x + (<usize>j << 2)));
      store<i32>(out + (<usize>size << 2), j);
      store<i32>(scratch + (<usize>inBoundary << 2), j);
      size += <i32>(b < boundary);
      inBoundary += <i32>(b == boundary);
    }
  }
  for (; i < n; i++) {
    const b = binOf(<f64>max - <f64>load<f32>(x + (<usize>i << 2)));
    store<i32>(out + (<usize>size << 2), i);
    store<i32>(scratch + (<usize>inBoundary << 2), i);
    size += <i32>(b < boundary);
    inBoundary += <i32>(b == boundary);
  }
  store<i32>(count, inBoundary);
  return size;
}
