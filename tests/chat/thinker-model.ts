// A scripted "thinking" model: a one-layer llama GGUF whose weights make greedy decoding (and any
// sensible sampling) write one fixed Qwen3-style reply, reasoning first:
//   <think>The user says hello. A friendly greeting back fits best.</think>Hello! How can we help you today?<|im_end|>
// with Qwen3's own chat template (tests/chat/templates/Qwen-Qwen3-0.6B.jinja). So the real engine,
// host and harness can be tested on a reply with reasoning without a real reasoning model.
//
// How: every attention and feed-forward matrix is zero, so each layer adds nothing and the last
// hidden state is the current token's embedding. Token t's embedding is the one-hot vector of its
// "state" (its place in the script; every other token shares state 0), and the output matrix maps
// each state to the next token of the script with a logit margin of about 4·√dim ≈ 23. The prompt
// of every chat turn ends "<|im_start|>assistant\n", whose last token is the byte <0x0A>: its
// state starts the script. The file is about 60 KB, written at test time.

import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { GgufType } from '../../src/engine/gguf/types.js';
import { kv, writeGguf, type WriterTensor } from '../../src/engine/gguf/writer.js';
import { ROOT } from '../helpers.js';

export const THINKER_REASONING = 'The user says hello. A friendly greeting back fits best.';
export const THINKER_ANSWER = 'Hello! How can we help you today?';
/** Tokens from <think> to </think>, both included. */
export const THINKER_REASONING_TOKENS = 12;

// llama.cpp llama-vocab.h LLAMA_TOKEN_TYPE_*
const NORMAL = 1;
const UNKNOWN = 2;
const CONTROL = 3;
const USER_DEFINED = 4;
const BYTE = 6;

const SCRIPT = [
  '<think>', 'The', '▁user', '▁says', '▁hello.', '▁A', '▁friendly', '▁greeting', '▁back', '▁fits', '▁best.', '</think>',
  'Hello!', '▁How', '▁can', '▁we', '▁help', '▁you', '▁today?', '<|im_end|>',
];

export function thinkerGguf(): Uint8Array {
  const tokens: string[] = ['<unk>', '<s>', '</s>'];
  const types: number[] = [UNKNOWN, CONTROL, CONTROL];
  for (let b = 0; b < 256; b++) {
    tokens.push(`<0x${b.toString(16).toUpperCase().padStart(2, '0')}>`);
    types.push(BYTE);
  }
  const add = (t: string, type: number) => {
    if (!tokens.includes(t)) {
      tokens.push(t);
      types.push(type);
    }
  };
  add('<|im_start|>', CONTROL);
  add('<|im_end|>', CONTROL);
  add('<think>', USER_DEFINED);
  add('</think>', USER_DEFINED);
  add('▁', NORMAL);
  for (const t of SCRIPT) add(t, NORMAL);
  const id = (t: string) => tokens.indexOf(t);
  const nVocab = tokens.length;
  const dim = 32;

  // States: 0 every other token, 1 the prompt's last token (<0x0A>), 2.. the script's tokens.
  const state = new Array<number>(nVocab).fill(0);
  state[id('<0x0A>')] = 1;
  SCRIPT.forEach((t, i) => (state[id(t)] = i + 2));
  const next = (s: number): number => (s === 0 ? id('<|im_end|>') : s === 1 ? id(SCRIPT[0]) : id(SCRIPT[Math.min(s - 1, SCRIPT.length - 1)]));
  const states = SCRIPT.length + 2;
  if (states > dim) throw new Error('the script needs more states than dimensions');

  const embd = new Float32Array(dim * nVocab); // [dim, nVocab]: row t is token t's vector
  for (let t = 0; t < nVocab; t++) embd[t * dim + state[t]] = 1;
  const out = new Float32Array(dim * nVocab); // [dim, nVocab]: row j scores token j
  for (let s = 0; s < states; s++) out[next(s) * dim + s] = 4;

  const f32 = (name: string, dims: number[], x: Float32Array): WriterTensor => ({ name, dims, type: 0, data: new Uint8Array(x.buffer, x.byteOffset, x.byteLength) });
  const zeros = (name: string, cols: number, rows: number) => f32(name, [cols, rows], new Float32Array(cols * rows));
  const ones = (name: string) => f32(name, [dim], new Float32Array(dim).fill(1));
  const nFf = 32;
  const tensors: WriterTensor[] = [
    f32('token_embd.weight', [dim, nVocab], embd),
    ones('blk.0.attn_norm.weight'),
    zeros('blk.0.attn_q.weight', dim, dim),
    zeros('blk.0.attn_k.weight', dim, dim),
    zeros('blk.0.attn_v.weight', dim, dim),
    zeros('blk.0.attn_output.weight', dim, dim),
    ones('blk.0.ffn_norm.weight'),
    zeros('blk.0.ffn_gate.weight', dim, nFf),
    zeros('blk.0.ffn_up.weight', dim, nFf),
    zeros('blk.0.ffn_down.weight', nFf, dim),
    ones('output_norm.weight'),
    f32('output.weight', [dim, nVocab], out),
  ];
  const template = readFileSync(join(ROOT, 'tests', 'chat', 'templates', 'Qwen-Qwen3-0.6B.jinja'), 'utf8');
  return writeGguf([
    kv.str('general.architecture', 'llama'),
    kv.str('general.name', 'Scripted Thinker'),
    kv.u32('llama.context_length', 2048),
    kv.u32('llama.embedding_length', dim),
    kv.u32('llama.block_count', 1),
    kv.u32('llama.feed_forward_length', nFf),
    kv.u32('llama.attention.head_count', 2),
    kv.u32('llama.attention.head_count_kv', 2),
    kv.f32('llama.attention.layer_norm_rms_epsilon', 1e-6),
    kv.u32('llama.rope.dimension_count', dim / 2),
    kv.str('tokenizer.ggml.model', 'llama'),
    kv.arr('tokenizer.ggml.tokens', GgufType.STRING, tokens),
    kv.arr('tokenizer.ggml.scores', GgufType.FLOAT32, tokens.map((_, i) => -i)),
    kv.arr('tokenizer.ggml.token_type', GgufType.INT32, types),
    kv.u32('tokenizer.ggml.bos_token_id', 1),
    kv.u32('tokenizer.ggml.eos_token_id', id('<|im_end|>')),
    kv.u32('tokenizer.ggml.unknown_token_id', 0),
    kv.bool('tokenizer.ggml.add_bos_token', false),
    kv.str('tokenizer.chat_template', template),
  ], tensors);
}

/** Write the scripted model into `dir`; returns its path. */
export function writeThinkerModel(dir: string): string {
  const path = join(dir, 'scripted-thinker.gguf');
  writeFileSync(path, thinkerGguf());
  return path;
}
