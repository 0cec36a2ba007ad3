// Log-probabilities of one step for the API's `logprobs` / `top_logprobs` and `pantheon run
// --top-logprobs`: the natural-log softmax of the raw logits (before penalties, truncation and
// temperature, as OpenAI and llama-server report them), the chosen token's and the K best.

export interface TokenLogprob {
  id: number;
  logprob: number;
}

export interface StepLogprobs {
  /** The chosen token and its log-probability. */
  id: number;
  logprob: number;
  /** The K most likely tokens, best first (lower id first on ties). */
  top: TokenLogprob[];
}

/** The most top log-probabilities a request may ask for (OpenAI's limit). */
export const MAX_TOP_LOGPROBS = 20;

/**
 * ln softmax(logits) at `chosen` and at the k largest logits (k ≤ MAX_TOP_LOGPROBS). NaN counts as
 * -inf. One pass for the max and the k best (a small sorted list), one for Σ exp(l - max), in double.
 */
export function stepLogprobs(logits: Float32Array, chosen: number, k: number): StepLogprobs {
  const n = logits.length;
  k = Math.max(0, Math.min(k, n));
  // best ids and their logits, sorted descending; a candidate enters when it beats the last
  const ids: number[] = [];
  const vals: number[] = [];
  let max = -Infinity;
  for (let i = 0; i < n; i++) {
    const l = logits[i];
    if (!(l > -Infinity)) continue; // -inf and NaN
    if (l > max) max = l;
    if (k === 0 || (ids.length === k && l <= vals[k - 1])) continue;
    let j = ids.length < k ? ids.length : k - 1;
    while (j > 0 && vals[j - 1] < l) j--;
    ids.splice(j, 0, i);
    vals.splice(j, 0, l);
    if (ids.length > k) {
      ids.pop();
      vals.pop();
    }
  }
  let sum = 0;
  for (let i = 0; i < n; i++) {
    const l = logits[i];
    if (l > -Infinity) sum += Math.exp(l - max);
  }
  const norm = max + Math.log(sum);
  const lp = (l: number) => (l > -Infinity ? l - norm : -Infinity);
  return { id: chosen, logprob: lp(logits[chosen]), top: ids.map((id, i) => ({ id, logprob: vals[i] - norm })) };
}
