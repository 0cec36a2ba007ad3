// Thread CPU time of one call, for the A/B scripts (gemm-ab, attn-ab, swiglu-ab): robust to a busy
// machine descheduling the process, unlike wall time.

/** Milliseconds of CPU (user + system) that fn() took. */
export function cpuMs(fn: () => void): number {
  const c0 = process.cpuUsage();
  fn();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}
