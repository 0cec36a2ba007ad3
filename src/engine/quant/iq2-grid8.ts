// The quantisers' view of the 8-element i-quant grids (ggml-quants.c iq2xs_init_impl): every grid
// entry as 8 levels l ∈ {0, 1, 2} (stored as 2l + 1, as ggml's kgrid_q2xs), a map from the 16-bit
// index Σ l_k << 2k of any point to its grid entry, and for each point off the grid the list of grid
// entries at its `nwant` smallest squared distances. IQ2_XXS (256 entries), IQ2_XS (512), IQ2_S
// (1024) and IQ1_S/IQ1_M (2048) share the construction; built at first use, as ggml_quantize_init.

import { IQ1S_GRID_I8, IQ2S_GRID, IQ2XS_GRID, IQ2XXS_GRID } from './iq-grids.js';

/** A grid's levels, map and neighbour lists (iq2_entry_t). */
export interface Grid8 {
  /** [size × 8] levels 2l + 1 of each entry (kgrid_q2xs). */
  levels: Uint8Array;
  /** [43692] for the point with levels l (Σ l_k << 2k): its grid index, or -(offset + 1) into neighbours. */
  map: Int32Array;
  /** At each offset: n, then n grid indices, nearest first (ties by index). */
  neighbours: Uint16Array;
  /** [size × 8] 3k + l for level l at position k of each entry: offsets into a per-group table of the 24 error terms. */
  codes: Uint8Array;
}

/** codes of Grid8 from its levels (2l + 1). */
export function levelCodes(levels: Uint8Array): Uint8Array {
  const codes = new Uint8Array(levels.length);
  for (let i = 0; i < levels.length; i++) codes[i] = 3 * (i % 8) + ((levels[i] - 1) >> 1);
  return codes;
}

/** ggml's kmap_size: indices of points whose 8 levels are at most 2 (and a few above). */
const KMAP_SIZE = 43692;

/**
 * iq2xs_init_impl for a grid given as levels (2l + 1 per element). The neighbour lists are ggml's:
 * for each off-grid point in index order, the grid entries whose distance is among the nwant
 * smallest distinct ones, sorted by (distance, index) as its qsort with iq2_compare_func orders them.
 */
export function grid8Neighbours(levels: Uint8Array, nwant: number): Grid8 {
  const size = levels.length / 8;
  const map = new Int32Array(KMAP_SIZE).fill(-1);
  for (let j = 0; j < size; j++) {
    let index = 0;
    for (let k = 0; k < 8; k++) index |= ((levels[8 * j + k] - 1) >> 1) << (2 * k);
    map[index] = j;
  }
  // d2(point, j) = lo[(index & 255) · size + j] + hi[(index >> 8) · size + j]: the first and last 4 levels
  const lo = new Uint16Array(256 * size);
  const hi = new Uint16Array(256 * size);
  for (let b = 0; b < 256; b++) {
    for (let j = 0; j < size; j++) {
      let dl = 0;
      let dh = 0;
      for (let k = 0; k < 4; k++) {
        const p = 2 * ((b >> (2 * k)) & 3) + 1;
        dl += (levels[8 * j + k] - p) ** 2;
        dh += (levels[8 * j + 4 + k] - p) ** 2;
      }
      lo[b * size + j] = dl;
      hi[b * size + j] = dh;
    }
  }
  const lists: number[] = [];
  const d2 = new Uint16Array(size);
  const wanted: number[] = [];
  for (let i = 0; i < KMAP_SIZE; i++) {
    if (map[i] >= 0) continue;
    const l0 = (i & 255) * size;
    const h0 = (i >> 8) * size;
    for (let j = 0; j < size; j++) d2[j] = lo[l0 + j] + hi[h0 + j];
    // the nwant smallest distinct distances
    wanted.length = 0;
    let floor = -1;
    while (wanted.length < nwant) {
      let min = Infinity;
      for (let j = 0; j < size; j++) if (d2[j] > floor && d2[j] < min) min = d2[j];
      if (min === Infinity) break;
      wanted.push(min);
      floor = min;
    }
    map[i] = -(lists.length + 1);
    const at = lists.length;
    lists.push(0);
    for (const w of wanted) for (let j = 0; j < size; j++) if (d2[j] === w) lists.push(j);
    lists[at] = lists.length - at - 1;
  }
  return { map, levels, neighbours: Uint16Array.from(lists), codes: levelCodes(levels) };
}

/** Levels 2l + 1 from a dequantisation grid whose 3 byte values stand for l = 0, 1, 2 in order. */
function levelsOf(grid: ArrayLike<number>, values: readonly number[]): Uint8Array {
  const out = new Uint8Array(grid.length);
  for (let i = 0; i < grid.length; i++) {
    const l = values.indexOf(grid[i]);
    if (l < 0) throw new Error(`grid value ${grid[i]} is not one of ${values.join(', ')}`);
    out[i] = 2 * l + 1;
  }
  return out;
}

const cache = new Map<string, Grid8>();
const cached = (key: string, make: () => Grid8): Grid8 => {
  let g = cache.get(key);
  if (!g) cache.set(key, (g = make()));
  return g;
};

// nwant as iq2xs_init_impl: 2 for IQ2_XXS and IQ2_XS, 1 for IQ2_S, 3 for IQ1_S and IQ1_M.
export const iq2xxsGrid = () => cached('iq2xxs', () => grid8Neighbours(levelsOf(IQ2XXS_GRID, [8, 25, 43]), 2));
export const iq2xsGrid = () => cached('iq2xs', () => grid8Neighbours(levelsOf(IQ2XS_GRID, [8, 25, 43]), 2));
export const iq2sGrid = () => cached('iq2s', () => grid8Neighbours(levelsOf(IQ2S_GRID, [8, 25, 43]), 1));
export const iq1sGrid = () => cached('iq1s', () => grid8Neighbours(levelsOf(IQ1S_GRID_I8, [-1, 0, 1]), 3));
