// Scripted "thinking" models: one-layer llama GGUFs whose weights make greedy decoding (and any
// sensible sampling) write one fixed reply, reasoning first, with a real model family's own chat
// template, so the real engine, host and harness can be tested on replies with reasoning without a
// real reasoning model:
//   thinker  (Qwen3's template) <think>The user says hello. …</think>Hello! How can we help you today?<|im_end|>
//   harmony  (gpt-oss's template) <|channel|>analysis<|message|>User greets. …<|end|><|start|>assistant
//            <|channel|>final<|message|>Hi! What can I do for you?<|return|>
//
// How: every attention and feed-forward matrix is zero, so each layer adds nothing and the last
// hidden state is the current token's embedding. Token t's embedding is the one-hot vector of its
// "state" (its place in the script; every other token shares state 0, which ends the reply), and
// the output matrix maps each state to the next token of the script with a logit margin of about
// 4·√dim = 32. The state of the prompt's last token starts the script. llama.cpp loads the files
// and writes the same tokens greedily. Each is about 250 KB, written at test time.

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
export const NORMAL = 1;
const UNKNOWN = 2;
export const CONTROL = 3;
export const USER_DEFINED = 4;
const BYTE = 6;

export interface Script {
  name: string;
  template: string;
  /** Special tokens of the vocabulary, with their token type. */
  specials: [string, number][];
  /** The reply, token by token: each text one token (a text may not repeat: one state per token). */
  reply: string[];
  /** The prompt's last token (its state starts the reply) and the end-of-generation token. */
  trigger: string;
  eos: string;
}

export function scriptedGguf(sc: Script): Uint8Array {
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
  for (const [t, type] of sc.specials) add(t, type);
  add('▁', NORMAL);
  for (const t of sc.reply) add(t, NORMAL);
  if (new Set(sc.reply).size !== sc.reply.length) throw new Error('a scripted reply may not repeat a token');
  const id = (t: string) => tokens.indexOf(t);
  const nVocab = tokens.length;
  const dim = 64;

  // States: 0 every other token, 1 the prompt's last token, 2.. the reply's tokens.
  const state = new Array<number>(nVocab).fill(0);
  state[id(sc.trigger)] = 1;
  sc.reply.forEach((t, i) => (state[id(t)] = i + 2));
  const next = (s: number): number => (s === 0 ? id(sc.eos) : id(sc.reply[Math.min(s - 1, sc.reply.length - 1)]));
  const states = sc.reply.length + 2;
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
  return writeGguf([
    kv.str('general.architecture', 'llama'),
    kv.str('general.name', sc.name),
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
    kv.u32('tokenizer.ggml.eos_token_id', id(sc.eos)),
    kv.u32('tokenizer.ggml.unknown_token_id', 0),
    kv.bool('tokenizer.ggml.add_bos_token', false),
    kv.str('tokenizer.chat_template', sc.template),
  ], tensors);
}

export const template = (name: string) => readFileSync(join(ROOT, 'tests', 'chat', 'templates', name), 'utf8');

/** The Qwen3-style thinker: every prompt ends "<|im_start|>assistant\n", last token the byte <0x0A>. */
export function thinkerGguf(): Uint8Array {
  return scriptedGguf({
    name: 'Scripted Thinker',
    template: template('Qwen-Qwen3-0.6B.jinja'),
    specials: [['<|im_start|>', CONTROL], ['<|im_end|>', CONTROL], ['<think>', USER_DEFINED], ['</think>', USER_DEFINED]],
    reply: [
      '<think>', 'The', '▁user', '▁says', '▁hello.', '▁A', '▁friendly', '▁greeting', '▁back', '▁fits', '▁best.', '</think>',
      'Hello!', '▁How', '▁can', '▁we', '▁help', '▁you', '▁today?', '<|im_end|>',
    ],
    trigger: '<0x0A>',
    eos: '<|im_end|>',
  });
}

export const HARMONY_REASONING = 'User greets. Reply briefly.';
export const HARMONY_ANSWER = 'Hi! What can I do for you?';
/** From the first <|message|> to the one that opens the final channel, both included. */
export const HARMONY_REASONING_TOKENS = 13;

/**
 * The gpt-oss-style (Harmony) scripted model, with gpt-oss's own template: every prompt ends
 * "<|start|>assistant", whose last token is the byte "t" (no vocabulary piece spells "assistant"
 * for the tokenizer). The reply opens the analysis channel with the special tokens and the final
 * channel with ordinary pieces of the same text ("<|chan" "nel|>"), as a token may appear only once.
 */
export function harmonyGguf(): Uint8Array {
  return scriptedGguf({
    name: 'Scripted Harmony',
    template: template('openai-gpt-oss-120b.jinja'),
    // o200k_harmony's markers are control tokens; <|return|> and <|call|> make <|end|> a plain marker.
    specials: ['<|start|>', '<|end|>', '<|message|>', '<|channel|>', '<|return|>', '<|call|>', '<|constrain|>'].map((t): [string, number] => [t, CONTROL]),
    reply: [
      '<|channel|>', 'analysis', '<|message|>', 'User', '▁greets.', '▁Reply', '▁briefly.', '<|end|>',
      '<|start|>', 'assistant', '<|chan', 'nel|>', 'final', '<|mess', 'age|>',
      'Hi!', '▁What', '▁can', '▁I', '▁do', '▁for', '▁you?', '<|return|>',
    ],
    trigger: '<0x74>',
    eos: '<|return|>',
  });
}

/** Write the scripted thinker (or, with `harmony`, the Harmony one) into `dir`; returns its path. */
export function writeThinkerModel(dir: string, harmony = false): string {
  const path = join(dir, harmony ? 'scripted-harmony.gguf' : 'scripted-thinker.gguf');
  writeFileSync(path, harmony ? harmonyGguf() : thinkerGguf());
  return path;
}
