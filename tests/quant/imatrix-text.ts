// The text the imatrix goldens are computed over (bench/record-imatrix-goldens.ts records
// llama-imatrix on it; tests/quant/imatrix.test.ts runs Pantheon on it): 3000 words drawn by a
// seeded generator from common English words, so it tokenizes to enough chunks on every vocabulary.

const WORDS = (
  'the of and to in is was he for it with as his on be at by had are but from or have an they which one you were her all she ' +
  'there would their we him been has when who will more no if out so said what up its about into than them can only other new ' +
  'some could time these two may then do first any my now such like our over man me even most made after also did many before ' +
  'must through back years where much your way well down should because each just those people how too little state good very ' +
  'make world still own see men work long get here between both life being under never day same another know while last might ' +
  'us great old year off come since against go came right used take three'
).split(' ');

/** The golden text: `n` words separated by spaces. */
export function imatrixText(n = 3000): string {
  let a = 0x1234567;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const out: string[] = [];
  for (let i = 0; i < n; i++) out.push(WORDS[Math.floor(next() * WORDS.length)]);
  return out.join(' ');
}

/** The llama-imatrix settings of the goldens: -c 64 --chunks 4. */
export const GOLDEN_CTX = 64;
export const GOLDEN_CHUNKS = 4;
/** The dataset name recorded in the goldens (llama-imatrix records the -f argument as given). */
export const GOLDEN_DATASET = 'imatrix-text.txt';

/** The file types the imatrix quantisation goldens cover (llama-quantize --imatrix of tiny256). */
export const IMATRIX_QUANT_TYPES = ['Q4_0', 'Q4_1', 'Q5_0', 'Q5_1', 'Q2_K', 'Q2_K_S', 'Q3_K_S', 'Q3_K_M', 'Q4_K_S', 'Q4_K_M', 'Q5_K_M', 'Q6_K', 'IQ4_NL', 'IQ4_XS', 'IQ3_S', 'IQ3_M', 'IQ3_XS', 'IQ2_XXS', 'IQ2_XS', 'IQ2_S', 'IQ2_M', 'IQ1_S', 'IQ1_M'];

/** Rows of each tensor the quantisation golden hashes. */
export const GOLDEN_ROWS = 16;
