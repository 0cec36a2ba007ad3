// The real engine host, forked under plain Node and driven through the supervisor as the dev harness
// drives it: load stories260K (with progress), count tokens, generate, cancel, kill the process
// mid-reply and see the crashed state, load again. What the host streams is compared with the
// engine run in this process (the host must carry the engine's output unchanged), and the crash
// reasons with what Node reports for the signal.

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EngineState, GenerateRequest, GenerationEvent, SamplingSettings } from '../../src/shared/contract.js';
import { GgufError, ModelError } from '../../src/shared/errors.js';
import { EngineSupervisor } from '../../src/main/services/engine-supervisor.js';
import { nodeEngineTransport } from '../../src/main/services/node-engine-transport.js';
import { GgufType, kv, writeGguf } from '../../src/engine/gguf/index.js';
import { renderChat } from '../../src/engine/chat/index.js';
import { LoadedModel, Session } from '../../src/engine/session.js';
import { ROOT } from '../helpers.js';

import { validate } from '../grammar/validate.js';
const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');

const GREEDY: SamplingSettings = {
  temperature: 0, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0,
  penaltyLastN: 64, seed: 7, maxTokens: 12, stop: [],
};
const MESSAGES: GenerateRequest['messages'] = [{ role: 'user', content: 'Once upon a time' }];

/** Run a generation to its end; `onToken` may act mid-stream (cancel, kill). */
function collect(sup: EngineSupervisor, request: GenerateRequest, onToken?: (n: number, cancel: () => void) => void): Promise<GenerationEvent[]> {
  return new Promise((resolve) => {
    const events: GenerationEvent[] = [];
    let tokens = 0;
    const handle = sup.generate(request, (e) => {
      events.push(e);
      if (e.kind === 'token') onToken?.(++tokens, () => handle.cancel());
      if (e.kind === 'done' || e.kind === 'error') resolve(events);
    });
  });
}

describe('engine host under Node (child_process.fork)', () => {
  const logs: string[] = [];
  const sup = new EngineSupervisor(nodeEngineTransport({ log: (l) => logs.push(l) }), (l) => logs.push(l));
  const states: EngineState[] = [];
  sup.onState((s) => states.push(s));
  const params = { modelId: 'demo', modelName: 'stories260K', path: DEMO, contextSize: 256, threads: 1 };
  let tmp: string;

  // The same model run in this process: what the host must reproduce.
  let reference: { prompt: number[]; tokens: number[]; texts: string[] };

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'pantheon-host-'));
    const model = await LoadedModel.load(DEMO, { contextSize: 256 });
    const session = new Session(model);
    const out = { prompt: [] as number[], tokens: [] as number[], texts: [] as string[] };
    const rendered = renderChat(model.templateInfo, MESSAGES);
    const ids = model.tokenizer.encode(rendered.text, { addSpecial: !rendered.startsWithBos, parseSpecial: true });
    for await (const e of session.generate(ids, GREEDY, undefined, { stopStrings: rendered.stopStrings, promptText: rendered.text })) {
      if (e.kind === 'prompt') out.prompt = e.tokens;
      if (e.kind === 'token') {
        out.tokens.push(e.id);
        out.texts.push(e.text);
      }
    }
    model.dispose();
    reference = out;
  });

  afterAll(async () => {
    await sup.dispose();
    rmSync(tmp, { recursive: true, force: true });
  });

  it('loads the model with byte progress and reports ready', async () => {
    const s = await sup.load(params);
    expect(s).toMatchObject({ status: 'ready', modelId: 'demo', modelName: 'stories260K', contextSize: 256, threads: 1 });
    const progress = states.filter((x) => x.status === 'loading' && x.totalBytes > 0) as Extract<EngineState, { status: 'loading' }>[];
    expect(progress.length).toBeGreaterThan(0);
    const last = progress.at(-1)!;
    expect(last.loadedBytes).toBe(last.totalBytes);
    // Progress never goes backwards.
    for (let i = 1; i < progress.length; i++) expect(progress[i].loadedBytes).toBeGreaterThanOrEqual(progress[i - 1].loadedBytes);
    expect(sup.pid).toBeGreaterThan(0);
  });

  it('counts a conversation\'s tokens as the engine\'s prompt does', async () => {
    const r = await sup.countTokens(MESSAGES);
    expect(r).toEqual({ tokens: reference.prompt.length, contextSize: 256 });
  });

  it('streams the same greedy reply as the engine in-process, with stats', async () => {
    states.length = 0;
    const events = await collect(sup, { messages: MESSAGES, sampling: GREEDY });
    expect(events[0]).toMatchObject({ kind: 'prompt', tokens: reference.prompt });
    const tokens = events.filter((e) => e.kind === 'token');
    expect(tokens.map((t) => t.id)).toEqual(reference.tokens);
    expect(tokens.map((t) => t.text)).toEqual(reference.texts);
    const done = events.at(-1)!;
    expect(done.kind).toBe('done');
    if (done.kind !== 'done') return;
    expect(done.stats.generatedTokens).toBe(reference.tokens.length);
    expect(done.stats.promptTokens).toBe(reference.prompt.length);
    expect(done.contextSize).toBe(256);
    // busy while generating, ready after.
    expect(states.map((s) => s.status)).toEqual(['busy', 'ready']);
  });

  it('stops a reply on cancel', async () => {
    const events = await collect(sup, { messages: MESSAGES, sampling: { ...GREEDY, maxTokens: -1 } }, (n, cancel) => {
      if (n === 2) cancel();
    });
    const done = events.at(-1)!;
    expect(done).toMatchObject({ kind: 'done', stats: { stopReason: 'cancelled' } });
    // Tokens already on their way when the cancel crossed the process boundary still arrive (at
    // the wasm backend's speed, a few); that the host itself stops within one token of reading the
    // cancel is checked in-process (host-channels.test.ts).
    if (done.kind === 'done') expect(done.contextUsed).toBeLessThan(256);
    // The host reports idle just before the stream's last event.
    expect(sup.current.status).toBe('ready');
  });

  it('structured output crosses the process: the reply follows the JSON schema; a bad one is one error', async () => {
    const schema = { type: 'object', properties: { mood: { enum: ['happy', 'sad'] }, n: { type: 'integer', minimum: 1, maximum: 3 } }, required: ['mood', 'n'] };
    const events = await collect(sup, { messages: MESSAGES, sampling: { ...GREEDY, maxTokens: 100 }, structured: { kind: 'json-schema', schema: JSON.stringify(schema) } });
    const text = events.flatMap((e) => (e.kind === 'token' ? [e.text] : [])).join('');
    expect(validate(JSON.parse(text), schema), text).toBeNull();
    const bad = await collect(sup, { messages: MESSAGES, sampling: GREEDY, structured: { kind: 'json-schema', schema: '{"type":' } });
    expect(bad.at(-1)).toMatchObject({ kind: 'error', error: { name: 'UsageError' } });
  });

  it('rejects a malformed generate request with a one-line error', async () => {
    const bad = { messages: [{ role: 'wizard', content: 'hi' }], sampling: GREEDY } as unknown as GenerateRequest;
    const events = await collect(sup, bad);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ kind: 'error', error: { name: 'UsageError' } });
    if (events[0].kind === 'error') expect(events[0].error.message).toMatch(/messages\[0\]\.role must be one of/);
  });

  it('reports a crash in one sentence when the process is killed mid-reply, and keeps the stream informed', async () => {
    const pid = sup.pid!;
    const events = await collect(sup, { messages: MESSAGES, sampling: { ...GREEDY, maxTokens: -1 } }, (n) => {
      if (n === 1) process.kill(pid, 'SIGKILL');
    });
    const last = events.at(-1)!;
    expect(last).toMatchObject({ kind: 'error', error: { name: 'EngineError', code: 'ENGINE_CRASHED' } });
    const s = sup.current;
    expect(s.status).toBe('crashed');
    if (s.status !== 'crashed') return;
    expect(s.reason).toBe('killed');
    expect(s.modelId).toBe('demo');
    expect(s.message).toMatch(/^The engine process was killed while running stories260K \(signal SIGKILL\); press Reload to start it again\.$/);
    await expect(sup.countTokens(MESSAGES)).rejects.toThrow(/press Reload/);
  });

  it('loads again after the crash (Reload) and generates the same reply', async () => {
    const s = await sup.reload();
    expect(s.status).toBe('ready');
    const events = await collect(sup, { messages: MESSAGES, sampling: GREEDY });
    expect(events.filter((e) => e.kind === 'token').map((e) => (e as { id: number }).id)).toEqual(reference.tokens);
  });

  it('cancels a load: the state goes back to idle', async () => {
    const loading = sup.load(params);
    const cancelled = await sup.cancelLoad();
    expect(cancelled.status).toBe('idle');
    expect((await loading).status).toBe('idle');
    expect(await sup.waitForExit(3000)).toBe(true);
  });

  it('fails a load of an unsupported architecture with the engine\'s message, state error', async () => {
    const file = join(tmp, 'mamba.gguf');
    writeFileSync(file, writeGguf([
      kv.str('general.architecture', 'mamba'),
      kv.u32('mamba.block_count', 1),
      kv.u32('mamba.embedding_length', 8),
      kv.u32('mamba.context_length', 64),
      kv.u32('mamba.attention.head_count', 1),
      kv.str('tokenizer.ggml.model', 'llama'),
      kv.arr('tokenizer.ggml.tokens', GgufType.STRING, ['<unk>', '<s>', '</s>', 'a']),
      kv.arr('tokenizer.ggml.scores', GgufType.FLOAT32, [0, 0, 0, 0]),
      kv.arr('tokenizer.ggml.token_type', GgufType.INT32, [2, 3, 3, 1]),
    ], []));
    const err = await sup.load({ ...params, modelId: 'mamba', path: file }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ModelError);
    expect((err as Error).message).toMatch(/mamba/);
    expect(sup.current).toMatchObject({ status: 'error', modelId: 'mamba', error: { name: 'ModelError' } });
  });

  it('fails a load of a missing file as a GgufError', async () => {
    const err = await sup.load({ ...params, path: join(tmp, 'gone.gguf') }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GgufError);
  });

  it('unloads: the process exits and the state is idle', async () => {
    await sup.load(params);
    const pid = sup.pid!;
    const s = await sup.unload();
    expect(s.status).toBe('idle');
    expect(sup.pid).toBeUndefined();
    expect(() => process.kill(pid, 0)).toThrow();
    const events = await collect(sup, { messages: MESSAGES, sampling: GREEDY });
    expect(events[0]).toMatchObject({ kind: 'error', error: { code: 'ENGINE_NOT_READY' } });
  });
});
