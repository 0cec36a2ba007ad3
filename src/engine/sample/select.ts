// Partial selection: the k largest of n values without sorting all n (a size-k min-heap, O(n log k)
// worst case and close to one compare per element in practice). Ties go to the lower index, so
// selection is deterministic and the first result is the argmax with the lowest id.

/** Is entry a worse than entry b (smaller value, or equal value and larger index)? */
function worse(values: Float32Array, a: number, b: number): boolean {
  const va = values[a], vb = values[b];
  return va < vb || (va === vb && a > b);
}

function siftDown(values: Float32Array, heap: Int32Array, size: number, i: number): void {
  const x = heap[i];
  while (true) {
    const l = 2 * i + 1;
    if (l >= size) break;
    const r = l + 1;
    const c = r < size && worse(values, heap[r], heap[l]) ? r : l;
    if (!worse(values, heap[c], x)) break;
    heap[i] = heap[c];
    i = c;
  }
  heap[i] = x;
}

function siftUp(values: Float32Array, heap: Int32Array, i: number): void {
  const x = heap[i];
  while (i > 0) {
    const p = (i - 1) >> 1;
    if (!worse(values, x, heap[p])) break;
    heap[i] = heap[p];
    i = p;
  }
  heap[i] = x;
}

/**
 * Write the indices of the k largest of values[0..n) into out[0..k), largest first (ties: lower
 * index first). NaN must have been replaced beforehand. Returns k (clamped to n).
 */
export function selectTopK(out: Int32Array, values: Float32Array, n: number, k: number): number {
  k = Math.max(0, Math.min(k, n));
  if (k === 0) return 0;
  // out doubles as the heap; the root is the worst entry kept so far.
  let size = 0;
  let i = 0;
  for (; i < n && size < k; i++) {
    out[size] = i;
    siftUp(values, out, size++);
  }
  let worstKept = values[out[0]];
  for (; i < n; i++) {
    // Equal values never replace: the kept entry has the lower index.
    if (values[i] > worstKept) {
      out[0] = i;
      siftDown(values, out, size, 0);
      worstKept = values[out[0]];
    }
  }
  // Heap sort in place: repeatedly move the worst entry to the end.
  for (let end = size - 1; end > 0; end--) {
    const worst = out[0];
    out[0] = out[end];
    out[end] = worst;
    siftDown(values, out, end, 0);
  }
  return k;
}

/** Scalar reference: the same result by sorting every index (for tests). */
export function selectTopKReference(values: Float32Array, n: number, k: number): number[] {
  const idx = Array.from({ length: n }, (_, i) => i);
  idx.sort((a, b) => (values[b] - values[a]) || (a - b));
  return idx.slice(0, Math.max(0, Math.min(k, n)));
}
