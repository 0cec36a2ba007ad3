// Pantheon's WebAssembly kernels (AssemblyScript, built by scripts/build-wasm.mjs into
// build/wasm/kernels.wasm and, with relaxed SIMD, kernels-relaxed.wasm). Every export is a pure
// function on pointers into the imported (shared) linear memory; the TypeScript side owns allocation.

export * from './activation';
export * from './attention';
export * from './attn-part';
export * from './deltanet';
export * from './ffn';
export * from './float';
export * from './gemm';
export * from './iquants';
export * from './layout';
export * from './legacy';
export * from './kquants';
export * from './kscales';
export * from './membench';
export * from './norm';
export { layout_q4_K, q4k_dot32_active, q4k_dot32_allow } from './q4k-group';
export { layout_q6_K } from './q6k-group';
export * from './quantize-legacy';
export * from './quantize-q3k';
export * from './quantize-iq2';
export * from './quantize-iq3';
export * from './sample';

/** First byte after the module's static data: where the host's bump allocator may start. */
export function heap_base(): usize {
  return __heap_base;
}

/** 1 when this build uses relaxed SIMD (i32x4.relaxed_dot_i8x16_i7x16_add_s). */
export function relaxed(): i32 {
  return ASC_FEATURE_RELAXED_SIMD ? 1 : 0;
}
