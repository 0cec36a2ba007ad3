// `pantheon inspect FILE [--json]`: a readable summary of a GGUF file, read from its header only.

import { UsageError } from '../../shared/errors.js';
import { readGgufHeader } from '../../engine/gguf/file.js';
import { ggmlTypeName } from '../../engine/gguf/ggml-types.js';
import { arrayLengthOf, getNumber, getString, hyperparameters, quantMix, summarize } from '../../engine/gguf/keys.js';
import { arrayAt, arrayHead, arrayLength, GGUF_TYPE_NAMES, GgufType, isGgufArray, type GgufArray, type GgufHeader, type GgufKv, type GgufValue } from '../../engine/gguf/types.js';
import { memoryModel, modelInfo, type MemoryModel } from '../../engine/model/load.js';
import { DEFAULT_CONTEXT } from '../../engine/session.js';
import { parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { formatBytes, formatCount, table } from '../format.js';
import { toJsonValue } from '../json.js';

export function inspectJson(h: GgufHeader): object {
  const metadata: Record<string, unknown> = {};
  for (const [k, kv] of h.metadata) metadata[k] = toJsonValue(kv.value);
  return {
    version: h.version,
    alignment: h.alignment,
    dataOffset: h.dataOffset,
    fileSize: h.fileSize,
    metadata,
    tensors: h.tensors.map((t) => ({ name: t.name, type: ggmlTypeName(t.type), typeId: t.type, dims: t.dims, offset: t.offset, bytes: t.bytes })),
  };
}

function scalarText(v: GgufValue): string {
  if (typeof v === 'string') return JSON.stringify(v.length > 200 ? `${v.slice(0, 200)}…` : v) + (v.length > 200 ? ` (${v.length} chars)` : '');
  if (isGgufArray(v)) return arrayText(v);
  return String(v);
}

function arrayText(a: GgufArray): string {
  const n = arrayLength(a);
  const shown = arrayHead(a, 6).map(scalarText).join(', ');
  const more = n > 6 ? `, … (${n} items)` : '';
  return `[${shown}${more}] ${GGUF_TYPE_NAMES[a.itemType]}[${n}]`;
}

export function kvLine(kv: GgufKv): string {
  const type = kv.type === GgufType.ARRAY ? 'ARRAY' : GGUF_TYPE_NAMES[kv.type];
  return `${kv.key} (${type}) = ${scalarText(kv.value)}`;
}

/** What running it takes (the same estimate the app and the loader use), or why it cannot run. */
function memoryLines(h: GgufHeader): string[] {
  let mm: MemoryModel;
  let nCtxTrain: number;
  try {
    const { hp } = modelInfo(h);
    mm = memoryModel(h, hp);
    nCtxTrain = hp.nCtxTrain;
  } catch (err) {
    return ['', `Runs in Pantheon    no: ${(err as Error).message}`];
  }
  const at = (ctx: number) => `  at ${String(ctx).padEnd(8)} ${formatBytes(mm.weights + mm.fixed + mm.perPosition * ctx)} (weights ${formatBytes(mm.weights)} + KV cache${mm.fixed > 0 ? ' and recurrent state' : ''} ${formatBytes(mm.fixed + mm.perPosition * ctx)})`;
  const contexts = [...new Set([Math.min(nCtxTrain || DEFAULT_CONTEXT, DEFAULT_CONTEXT), ...(nCtxTrain > DEFAULT_CONTEXT ? [nCtxTrain] : [])])];
  return ['', 'Memory to run (context size → bytes)', ...contexts.map(at)];
}

export function inspectText(path: string, h: GgufHeader): string {
  const s = summarize(h);
  const lines: string[] = [];
  lines.push(`${path}`);
  lines.push(`  GGUF version     ${s.version}`);
  lines.push(`  architecture     ${s.architecture ?? '(none)'}`);
  lines.push(`  name             ${s.name ?? '(none)'}`);
  lines.push(`  parameters       ${formatCount(s.parameters)} (${s.parameters})`);
  if (s.activeParameters !== null) lines.push(`  active per token ${formatCount(s.activeParameters)} (${s.activeParameters}; experts used / experts of the expert tensors)`);
  lines.push(`  file size        ${formatBytes(s.fileSize)} (${s.fileSize} bytes)`);
  lines.push(`  quantisation     ${s.quantization}`);
  lines.push(`  tensors          ${s.tensorCount}, data at byte ${h.dataOffset}, alignment ${h.alignment}`);
  for (const w of h.warnings) lines.push(`  warning          ${w}`);
  if (h.tensors.length) {
    lines.push('', 'Quantisation mix');
    lines.push(table(['type', 'tensors', 'bytes', 'share'], quantMix(h).map((r) => [r.type, String(r.tensors), formatBytes(r.bytes), `${(r.share * 100).toFixed(1)}%`]), [1, 2, 3]).replace(/^/gm, '  '));
  }
  if (s.architecture) {
    try {
      const hp = hyperparameters(h);
      lines.push('', 'Hyperparameters');
      const rows: [string, string][] = [
        ['n_embd', String(hp.nEmbd)], ['n_layer', String(hp.nLayer)], ['n_head', String(hp.nHead)],
        ['n_head_kv', String(hp.nHeadKv)], ['n_ff', String(hp.nFf)], ['n_ctx_train', String(hp.nCtxTrain)],
        ['rope_freq_base', String(hp.ropeFreqBase)], ['rms_eps', String(hp.rmsEps)], ['n_vocab', String(hp.nVocab)],
      ];
      if (hp.slidingWindow !== undefined) rows.push(['sliding_window', String(hp.slidingWindow)]);
      for (const [k, v] of rows) lines.push(`  ${k.padEnd(16)} ${v}`);
    } catch {
      lines.push('', 'Hyperparameters  (incomplete: this file has no model hyperparameters)');
    }
    lines.push(...memoryLines(h));
  }
  const nTokens = arrayLengthOf(h, 'tokenizer.ggml.tokens');
  if (nTokens !== null) {
    lines.push('', 'Tokenizer');
    lines.push(`  model            ${getString(h, 'tokenizer.ggml.model') ?? '(none)'}`);
    const pre = getString(h, 'tokenizer.ggml.pre');
    if (pre) lines.push(`  pre-tokenizer    ${pre}`);
    lines.push(`  tokens           ${nTokens}`);
    const nMerges = arrayLengthOf(h, 'tokenizer.ggml.merges');
    if (nMerges !== null) lines.push(`  merges           ${nMerges}`);
    for (const [label, key] of [['bos', 'bos_token_id'], ['eos', 'eos_token_id'], ['eot', 'eot_token_id']] as const) {
      const id = getNumber(h, `tokenizer.ggml.${key}`);
      const tokens = h.metadata.get('tokenizer.ggml.tokens')?.value;
      const text = id !== undefined && isGgufArray(tokens) ? arrayAt(tokens, id) : undefined;
      if (id !== undefined) lines.push(`  ${label.padEnd(16)} ${id}${typeof text === 'string' ? ` ${JSON.stringify(text)}` : ''}`);
    }
    lines.push(`  chat template    ${getString(h, 'tokenizer.chat_template') ? 'yes' : 'no'}`);
  }
  lines.push('', `Metadata (${h.metadata.size} keys)`);
  for (const kv of h.metadata.values()) lines.push(`  ${kvLine(kv)}`);
  return lines.join('\n');
}

export const inspectCommand: Command = {
  name: 'inspect',
  usage: 'inspect FILE [--json]',
  summary: 'summarise a GGUF file: architecture, size, quantisation, hyperparameters, every metadata key',
  async run(argv, io) {
    const args = parseArgs(argv, [], ['json']);
    if (args.positionals.length !== 1) throw new UsageError('inspect takes one FILE');
    const path = args.positionals[0];
    const h = await readGgufHeader(path);
    io.out(args.options.has('json') ? JSON.stringify(inspectJson(h)) : inspectText(path, h));
    return 0;
  },
};
