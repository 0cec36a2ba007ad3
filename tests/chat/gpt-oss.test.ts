// gpt-oss's Harmony chat format: OpenAI's own template (openai/gpt-oss-120b chat_template.jinja,
// as llama.cpp ships it in models/templates) renders through @huggingface/jinja, and the built-in
// fallback gives the same text (the template's "Current date" line aside, which the built-in leaves
// out so that a prompt does not change by the day).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES } from '../../src/engine/chat/builtin.js';
import { detectFamily } from '../../src/engine/chat/detect.js';
import { renderChat } from '../../src/engine/chat/render.js';
import type { ChatMessage, TemplateInfo } from '../../src/engine/chat/types.js';
import { ROOT } from '../helpers.js';

const TEMPLATE = readFileSync(join(ROOT, 'tests', 'chat', 'templates', 'openai-gpt-oss-120b.jinja'), 'utf8');
const info: TemplateInfo = { template: TEMPLATE, bosToken: '<|startoftext|>', eosToken: '<|return|>', architecture: 'gpt-oss', name: 'gpt-oss-20b' };

const CONVERSATIONS: ChatMessage[][] = [
  [{ role: 'user', content: 'Hi there' }],
  [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }, { role: 'assistant', content: 'Hello!' }, { role: 'user', content: 'Bye' }],
  [{ role: 'user', content: 'What is 2+2?' }, { role: 'assistant', content: '4' }, { role: 'user', content: 'And 3+3?' }],
];

describe('gpt-oss (Harmony) chat format', () => {
  it('OpenAI\'s template renders through the project\'s Jinja, as the file\'s own template', () => {
    const r = renderChat(info, CONVERSATIONS[1]);
    expect(r.templateName).toBe('gguf');
    expect(r.family).toBe('gpt-oss');
    expect(r.notes).toEqual([]);
    expect(r.stopStrings).toContain('<|return|>');
    expect(r.stopStrings).toContain('<|call|>');
    expect(r.stopStrings).not.toContain('<|end|>');
    expect(r.text).toMatch(/^<\|start\|>system<\|message\|>You are ChatGPT/);
    expect(r.text).toContain('<|start|>developer<|message|># Instructions\n\nBe brief.\n\n<|end|>');
    expect(r.text).toContain('<|start|>assistant<|channel|>final<|message|>Hello!<|end|>');
    expect(r.text.endsWith('<|start|>user<|message|>Bye<|end|><|start|>assistant')).toBe(true);
  });

  it('the built-in fallback renders what the template does, less its date line', () => {
    for (const messages of CONVERSATIONS) {
      for (const addGen of [true, false]) {
        const viaJinja = renderChat(info, messages, { addGenerationPrompt: addGen }).text.replace(/Current date: [^\n]*\n/, '');
        expect(BUILTIN_TEMPLATES['gpt-oss'].render(messages, info.bosToken, info.eosToken, addGen)).toBe(viaJinja);
      }
    }
  });

  it('is detected from the template, the vocabulary, the architecture and the name', () => {
    expect(detectFamily(info)).toEqual({ name: 'gpt-oss', source: 'template' });
    expect(detectFamily({ ...info, template: null, vocabMarkers: ['<|start|>', '<|channel|>', '<|end|>'] })).toEqual({ name: 'gpt-oss', source: 'vocabulary' });
    expect(detectFamily({ ...info, template: null })).toEqual({ name: 'gpt-oss', source: 'architecture' });
    expect(detectFamily({ ...info, template: null, architecture: 'llama' })).toEqual({ name: 'gpt-oss', source: 'name' });
    const fallback = renderChat({ ...info, template: null }, CONVERSATIONS[0]);
    expect(fallback.templateName).toBe('gpt-oss');
  });
});
