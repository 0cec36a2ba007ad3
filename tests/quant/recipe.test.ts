// The per-tensor recipe against llama.cpp's rules (src/llama-quant.cpp llama_tensor_get_type_impl),
// worked by hand for an 8-layer model with 256-wide rows.
import { describe, expect, it } from 'vitest';
import { GgmlType, ggmlTypeName } from '../../src/engine/gguf/ggml-types.js';
import { fileTypeByName, llamaTensorOrder, planQuantization, useMoreBits, type RecipeTensor } from '../../src/engine/quant/recipe.js';

const F16 = GgmlType.F16;
const F32 = GgmlType.F32;

function model(nLayer: number, nEmbd: number, opts: { tied?: boolean; nFf?: number } = {}): RecipeTensor[] {
  const nFf = opts.nFf ?? 512;
  const t: RecipeTensor[] = [{ name: 'token_embd.weight', dims: [nEmbd, 1000], type: F16 }, { name: 'output_norm.weight', dims: [nEmbd], type: F32 }];
  if (!opts.tied) t.push({ name: 'output.weight', dims: [nEmbd, 1000], type: F16 });
  for (let i = 0; i < nLayer; i++) {
    const p = `blk.${i}.`;
    t.push(
      { name: `${p}attn_norm.weight`, dims: [nEmbd], type: F32 },
      { name: `${p}attn_q.weight`, dims: [nEmbd, nEmbd], type: F16 },
      { name: `${p}attn_k.weight`, dims: [nEmbd, nEmbd / 2], type: F16 },
      { name: `${p}attn_v.weight`, dims: [nEmbd, nEmbd / 2], type: F16 },
      { name: `${p}attn_output.weight`, dims: [nEmbd, nEmbd], type: F16 },
      { name: `${p}ffn_norm.weight`, dims: [nEmbd], type: F32 },
      { name: `${p}ffn_gate.weight`, dims: [nEmbd, nFf], type: F16 },
      { name: `${p}ffn_up.weight`, dims: [nEmbd, nFf], type: F16 },
      { name: `${p}ffn_down.weight`, dims: [nFf, nEmbd], type: F16 },
    );
  }
  return t;
}

const llama8 = { arch: 'llama', nLayer: 8, nHead: 8, nHeadKv: 4, nExpert: 0 };

function plan(typeName: string, tensors: RecipeTensor[], m = llama8): Record<string, string> {
  const ft = fileTypeByName(typeName)!;
  return Object.fromEntries(planQuantization(ft, m, tensors).map((p) => [p.name, ggmlTypeName(p.to)]));
}

describe('use_more_bits', () => {
  it('picks the first and last eighth and every third layer between', () => {
    // n = 8: n/8 = 1, 7n/8 = 7 → layers 0, 7, and i with (i − 1) % 3 == 2: 3, 6.
    expect([...Array(8).keys()].filter((i) => useMoreBits(i, 8))).toEqual([0, 3, 6, 7]);
    // n = 32: n/8 = 4, 7n/8 = 28 → 0..3, 28..31, and 6, 9, …, 27.
    expect([...Array(32).keys()].filter((i) => useMoreBits(i, 32))).toEqual([0, 1, 2, 3, 6, 9, 12, 15, 18, 21, 24, 27, 28, 29, 30, 31]);
  });
});

describe('llama.cpp recipe, 8 layers, 256-wide rows', () => {
  const tensors = model(8, 256);

  it('Q4_K_M: attn_v and ffn_down of layers 0, 3, 6, 7 → Q6_K, the rest Q4_K; output Q6_K; norms untouched', () => {
    const p = plan('Q4_K_M', tensors);
    for (let i = 0; i < 8; i++) {
      const more = [0, 3, 6, 7].includes(i);
      expect(p[`blk.${i}.attn_v.weight`]).toBe(more ? 'Q6_K' : 'Q4_K');
      expect(p[`blk.${i}.ffn_down.weight`]).toBe(more ? 'Q6_K' : 'Q4_K');
      expect(p[`blk.${i}.attn_q.weight`]).toBe('Q4_K');
      expect(p[`blk.${i}.ffn_up.weight`]).toBe('Q4_K');
      expect(p[`blk.${i}.attn_norm.weight`]).toBe('F32');
    }
    expect(p['output.weight']).toBe('Q6_K');
    expect(p['token_embd.weight']).toBe('Q4_K');
    expect(p['output_norm.weight']).toBe('F32');
  });

  it('Q4_K and Q5_K are llama-quantize\'s aliases for the _M mixes', () => {
    expect(plan('Q4_K', tensors)).toEqual(plan('Q4_K_M', tensors));
    expect(fileTypeByName('q5_k')!.ftype).toBe(17);
  });

  it('Q5_K_M: the same layers → Q6_K, the rest Q5_K', () => {
    const p = plan('Q5_K_M', tensors);
    expect(p['blk.3.attn_v.weight']).toBe('Q6_K');
    expect(p['blk.4.attn_v.weight']).toBe('Q5_K');
    expect(p['blk.6.ffn_down.weight']).toBe('Q6_K');
    expect(p['blk.5.ffn_down.weight']).toBe('Q5_K');
    expect(p['blk.5.attn_output.weight']).toBe('Q5_K');
  });

  it('Q2_K: attn_v Q3_K (GQA 2 < 4), ffn_down and attn_output Q3_K, the rest Q2_K', () => {
    const p = plan('Q2_K', tensors);
    expect(p['blk.0.attn_v.weight']).toBe('Q3_K');
    expect(p['blk.0.ffn_down.weight']).toBe('Q3_K');
    expect(p['blk.0.attn_output.weight']).toBe('Q3_K');
    expect(p['blk.0.attn_q.weight']).toBe('Q2_K');
    expect(p['token_embd.weight']).toBe('Q2_K');
    // GQA 8 ≥ 4: attn_v → Q4_K.
    expect(plan('Q2_K', tensors, { ...llama8, nHeadKv: 1 })['blk.0.attn_v.weight']).toBe('Q4_K');
  });

  it('Q3_K_M: attn_v of the first two → Q5_K then Q4_K, ffn_down Q4_K, attn_output Q4_K', () => {
    const p = plan('Q3_K', tensors);
    expect(p['blk.0.attn_v.weight']).toBe('Q5_K');
    expect(p['blk.1.attn_v.weight']).toBe('Q5_K');
    expect(p['blk.2.attn_v.weight']).toBe('Q4_K');
    expect(p['blk.2.ffn_down.weight']).toBe('Q4_K');
    expect(p['blk.2.attn_output.weight']).toBe('Q4_K');
    expect(p['blk.2.attn_q.weight']).toBe('Q3_K');
  });

  it('Q6_K, Q4_0 and Q8_0: one type everywhere, output Q6_K except for Q8_0', () => {
    const q6 = plan('Q6_K', tensors);
    expect(new Set(Object.entries(q6).filter(([n]) => !n.includes('norm')).map(([, t]) => t))).toEqual(new Set(['Q6_K']));
    const q4 = plan('Q4_0', tensors);
    expect(q4['output.weight']).toBe('Q6_K');
    expect(q4['blk.7.ffn_down.weight']).toBe('Q4_0');
    expect(plan('Q8_0', tensors)['output.weight']).toBe('Q8_0');
  });

  it('tied embeddings: token_embd is treated as the output (Q6_K)', () => {
    expect(plan('Q4_K_M', model(8, 256, { tied: true }))['token_embd.weight']).toBe('Q6_K');
  });

  it('keeps llama.cpp\'s tensor order: non-layer tensors first, then by layer, then by name', () => {
    const names = llamaTensorOrder(model(11, 256)).map((t) => t.name);
    expect(names.slice(0, 3)).toEqual(['output.weight', 'output_norm.weight', 'token_embd.weight']);
    expect(names.indexOf('blk.2.attn_k.weight')).toBeLessThan(names.indexOf('blk.10.attn_k.weight'));
    expect(names[3]).toBe('blk.0.attn_k.weight');
  });
});

describe('fallbacks (tensor_type_fallback)', () => {
  it('rows that do not fit 256: Q4_K → Q5_0, Q5_K → Q5_1, Q6_K → Q8_0, Q2_K/Q3_K → Q4_0', () => {
    const t = model(8, 96, { nFf: 160 });
    const p4 = planQuantization(fileTypeByName('Q4_K_M')!, llama8, t);
    const byName = Object.fromEntries(p4.map((p) => [p.name, p]));
    expect(byName['blk.1.attn_q.weight']).toMatchObject({ to: GgmlType.Q5_0, wanted: GgmlType.Q4_K });
    expect(byName['blk.0.attn_v.weight']).toMatchObject({ to: GgmlType.Q8_0, wanted: GgmlType.Q6_K });
    // output: rows of 96 do not fit the base type's 256 → Q8_0 directly (no fallback recorded).
    expect(byName['output.weight']).toMatchObject({ to: GgmlType.Q8_0 });
    expect(byName['output.weight'].wanted).toBeUndefined();
    expect(plan('Q5_K_M', t)['blk.1.attn_q.weight']).toBe('Q5_1');
    expect(plan('Q2_K', t)['blk.1.attn_q.weight']).toBe('Q4_0');
  });

  it('rows that do not fit 32 either → F16', () => {
    const p = plan('Q4_K_M', [{ name: 'blk.0.attn_q.weight', dims: [100, 100], type: F32 }], { ...llama8, nLayer: 1 });
    expect(p['blk.0.attn_q.weight']).toBe('F16');
  });

  it('F16 and F32 file types convert every quantisable tensor and leave 1-D tensors alone', () => {
    const p = plan('F16', model(2, 256));
    expect(p['blk.0.attn_q.weight']).toBe('F16');
    expect(p['output.weight']).toBe('F16');
    expect(p['blk.0.ffn_norm.weight']).toBe('F32');
  });
});
