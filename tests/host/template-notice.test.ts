// A model file whose chat template passes a limit: the engine host's 'prompt' event carries the
// one-line notice the chat shows, and the reply still streams (on the built-in template).
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { GenerationEvent, SamplingSettings } from '../../src/shared/contract.js';
import { readGgufHeaderSync, readTensorBytes, writeGguf } from '../../src/engine/gguf/index.js';
import { kv } from '../../src/engine/gguf/writer.js';
import { loadSessionModel } from '../../src/engine/host/engine.js';
import { ROOT } from '../helpers.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const SAMPLING: SamplingSettings = {
  temperature: 0, topK: 40, topP: 0.95, minP: 0.05, repeatPenalty: 1, presencePenalty: 0, frequencyPenalty: 0,
  penaltyLastN: 64, seed: 7, maxTokens: 3, stop: [],
};

/** The demo model with `template` as its tokenizer.chat_template. */
function withTemplate(template: string): string {
  const h = readGgufHeaderSync(DEMO);
  const kvs = [...h.metadata.values()].map((e) => ({ key: e.key, type: e.type, value: e.value }));
  kvs.push(kv.str('tokenizer.chat_template', template));
  const tensors = h.tensors.map((t) => ({ name: t.name, dims: [...t.dims], type: t.type, data: readTensorBytes(DEMO, h, t.name) }));
  const f = join(mkdtempSync(join(tmpdir(), 'pn-notice-')), 'hostile.gguf');
  writeFileSync(f, writeGguf(kvs, tensors));
  return f;
}

describe('template notice through the engine', () => {
  it('the prompt event says the template was too big; the reply streams on the built-in one', async () => {
    const model = await loadSessionModel({ path: withTemplate('{% for i in range(100000000) %}x{% endfor %}'), contextSize: 128, threads: 1, signal: new AbortController().signal, onProgress: () => {} });
    try {
      const events: GenerationEvent[] = [];
      for await (const e of model.chat([{ role: 'user', content: 'Once upon a time' }], SAMPLING, new AbortController().signal)) events.push(e);
      const prompt = events.find((e) => e.kind === 'prompt');
      expect(prompt).toMatchObject({ kind: 'prompt', notice: expect.stringMatching(/^The file's chat template was too big \(range\(\) of 100000000 items, at most 10000\); using /) });
      expect(prompt && prompt.kind === 'prompt' && prompt.templateName).not.toBe('gguf');
      expect(events.at(-1)?.kind).toBe('done');
    } finally {
      model.dispose();
    }
  });
});
