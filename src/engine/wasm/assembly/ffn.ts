// The FFN's elementwise activation in WebAssembly, so a prompt batch's n·n_ff gate values do not
// each pay a call into Math.exp from TypeScript. Same arithmetic as model/ops.ts silu + gatedAct
// (the reference, and tests/model/ops-wasm-act.test.ts compares the two): silu in f64, rounded
// to f32, times up in f32.

/** out[i] = silu(gate[i]) · up[i] for i < n (ggml_swiglu with the gate first); f32 arrays, out may alias gate. */
export function swiglu(out: usize, gate: usize, up: usize, n: i32): void {
  for (let i = 0; i < n; i++) {
    const o = <usize>i << 2;
    const x = <f64>load<f32>(gate + o);
    const s = <f32>(x / (1.0 + Math.exp(-x)));
    store<f32>(out + o, s * load<f32>(up + o));
  }
}
