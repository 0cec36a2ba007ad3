// The reasoning splitter on hand-worked streams: markers whole and split across pieces, a thinking
// opened by the prompt, an unterminated thinking, replies with no reasoning, and Harmony's channels.
// Then the format detection from templates and vocabularies, and the next turn's prompt: the
// reasoning of earlier replies stays out where the template (or the built-in format) says so.

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ReasoningSplitter, reasoningFormat, reasoningSetup, renderChat, type ChatMessage, type ReasoningFormat, type TemplateInfo } from '../../src/engine/chat/index.js';
import { ROOT } from '../helpers.js';

/** Feed `pieces` one by one; return every push's result and the joined parts. */
function run(format: ReasoningFormat, pieces: string[], startsInside = false) {
  const s = new ReasoningSplitter(format, startsInside);
  const steps = pieces.map((p) => s.push(p));
  steps.push(s.flush());
  return {
    steps,
    reasoning: steps.map((x) => x.reasoning).join(''),
    answer: steps.map((x) => x.answer).join(''),
    sawReasoning: s.sawReasoning,
    answering: s.answering,
  };
}

/** Every way of cutting `text` into two pieces, then one character at a time. */
function cuts(text: string): string[][] {
  const out: string[][] = [[text], [...text]];
  for (let i = 1; i < text.length; i++) out.push([text.slice(0, i), text.slice(i)]);
  return out;
}

describe('ReasoningSplitter: <think>', () => {
  it('splits a Qwen3 reply token by token', () => {
    // Qwen3's tokens: <think> and </think> are single tokens, the text around them ordinary pieces.
    const r = run('think', ['<think>', '\n', 'The user', ' says hi', '.', '\n', '</think>', '\n\n', 'Hello', '!']);
    expect(r.reasoning).toBe('The user says hi.');
    expect(r.answer).toBe('Hello!');
    expect(r.sawReasoning).toBe(true);
    // Nothing is shown before it is decided; the answer starts only after the close.
    expect(r.steps.map((x) => [x.reasoning, x.answer])).toEqual([
      ['', ''], ['', ''], ['The user', ''], [' says hi', ''], ['.', ''], ['', ''], ['', ''], ['', ''], ['', 'Hello'], ['', '!'], ['', ''],
    ]);
  });

  it('gives the same split however the markers straddle the pieces', () => {
    const text = '<think>\nStep one.\nStep two.\n</think>\n\nThe answer is 4.';
    for (const pieces of cuts(text)) {
      const r = run('think', pieces);
      expect([r.reasoning, r.answer], JSON.stringify(pieces)).toEqual(['Step one.\nStep two.', 'The answer is 4.']);
    }
  });

  it('holds "</thi" back until the next piece decides it', () => {
    const s = new ReasoningSplitter('think');
    expect(s.push('<think>a </thi')).toEqual({ reasoning: 'a', answer: '' });
    expect(s.push('s is not a tag')).toEqual({ reasoning: ' </this is not a tag', answer: '' });
    expect(s.push('</think>ok')).toEqual({ reasoning: '', answer: 'ok' });
  });

  it('starts inside the thinking when the prompt opened it (DeepSeek-R1 distills)', () => {
    const r = run('think', ['Okay', ', 2+2', ' is 4.', '\n</', 'think>', '\n\n', '**4**'], true);
    expect(r.reasoning).toBe('Okay, 2+2 is 4.');
    expect(r.answer).toBe('**4**');
  });

  it('keeps an unterminated thinking as reasoning (the reply ran out of tokens)', () => {
    const r = run('think', ['<think>', '\nLet me', ' count: 1, 2', ', 3 ', '\n']);
    expect(r.reasoning).toBe('Let me count: 1, 2, 3');
    expect(r.answer).toBe('');
    expect(r.sawReasoning).toBe(true);
    expect(r.answering).toBe(false);
  });

  it('passes a reply with no thinking through as the answer', () => {
    for (const pieces of cuts('Hello <think> is a tag.')) {
      const r = run('think', pieces);
      expect([r.reasoning, r.answer]).toEqual(['', 'Hello <think> is a tag.']);
      expect(r.sawReasoning).toBe(false);
    }
    expect(run('think', ['<', 'b>bold</b>']).answer).toBe('<b>bold</b>');
    expect(run('think', ['<thi']).answer).toBe('<thi');
    expect(run('think', ['\n', '  ']).answer).toBe('');
  });

  it('an empty thinking (Qwen3 with thinking off) leaves only the answer', () => {
    const r = run('think', ['<think>', '\n\n', '</think>', '\n\n', 'Hi.']);
    expect([r.reasoning, r.answer]).toEqual(['', 'Hi.']);
  });

  it('a model without reasoning: everything is the answer, untouched', () => {
    const r = run('none', ['\n', '<think>x</think>', ' y']);
    expect([r.reasoning, r.answer]).toEqual(['', '\n<think>x</think> y']);
    expect(r.answering).toBe(true);
  });
});

describe('ReasoningSplitter: Harmony (gpt-oss)', () => {
  const reply = '<|channel|>analysis<|message|>User asks 2+2. Simple.<|end|><|start|>assistant<|channel|>final<|message|>2 + 2 = 4.';

  it('splits the analysis channel from the final channel, token by token', () => {
    const r = run('harmony', ['<|channel|>', 'analysis', '<|message|>', 'User asks', ' 2+2.', ' Simple.', '<|end|>', '<|start|>', 'assistant', '<|channel|>', 'final', '<|message|>', '2 + 2', ' = 4.']);
    expect(r.reasoning).toBe('User asks 2+2. Simple.');
    expect(r.answer).toBe('2 + 2 = 4.');
    expect(r.steps[3]).toEqual({ reasoning: 'User asks', answer: '' });
    expect(r.steps[12]).toEqual({ reasoning: '', answer: '2 + 2' });
  });

  it('gives the same split however the markers straddle the pieces', () => {
    for (const pieces of cuts(reply)) {
      const r = run('harmony', pieces);
      expect([r.reasoning, r.answer], JSON.stringify(pieces)).toEqual(['User asks 2+2. Simple.', '2 + 2 = 4.']);
    }
  });

  it('a final answer with no analysis, and an analysis cut off before its end', () => {
    const direct = run('harmony', ['<|channel|>final<|message|>', 'Hi', ' there']);
    expect([direct.reasoning, direct.answer, direct.sawReasoning]).toEqual(['', 'Hi there', false]);
    const cut = run('harmony', ['<|channel|>analysis<|message|>', 'Thinking', ' about it']);
    expect([cut.reasoning, cut.answer, cut.answering]).toEqual(['Thinking about it', '', false]);
  });

  it('two messages of one channel are kept apart by a blank line', () => {
    const r = run('harmony', ['<|channel|>analysis<|message|>First.<|end|>', '<|start|>assistant<|channel|>analysis<|message|>', 'Second.<|end|>',
      '<|start|>assistant<|channel|>commentary<|message|>Checking.<|end|><|start|>assistant<|channel|>final<|message|>Done.']);
    expect([r.reasoning, r.answer]).toEqual(['First.\n\nSecond.', 'Checking.\n\nDone.']);
  });

  it('commentary is shown as the answer; text with no header at all is not lost', () => {
    const r = run('harmony', ['<|channel|>commentary<|message|>Let me check.<|end|>']);
    expect(r.answer).toBe('Let me check.');
    expect(run('harmony', ['Just text']).answer).toBe('Just text');
    expect(run('harmony', ['x'.repeat(300)]).answer).toBe('x'.repeat(300));
  });
});

// ---------------------------------------------------------------------------------------------
// Detection and the next turn's prompt

const template = (name: string) => readFileSync(join(ROOT, 'tests', 'chat', 'templates', name), 'utf8');
const QWEN3 = template('Qwen-Qwen3-0.6B.jinja');
const GPT_OSS = template('openai-gpt-oss-120b.jinja');
// DeepSeek-R1-Distill-Qwen's template (tokenizer_config.json, updated 2025-02), the parts a plain
// chat uses: earlier replies keep only the text after "</think>"; the generation prompt opens the thinking.
const R1 = "{% if not add_generation_prompt is defined %}{% set add_generation_prompt = false %}{% endif %}{{ bos_token }}" +
  "{% for message in messages %}{% if message['role'] == 'user' %}{{ '<｜User｜>' + message['content'] }}" +
  "{% elif message['role'] == 'assistant' %}{% set content = message['content'] %}{% if '</think>' in content %}{% set content = content.split('</think>')[-1] %}{% endif %}" +
  "{{ '<｜Assistant｜>' + content + '<｜end▁of▁sentence｜>' }}{% endif %}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<｜Assistant｜><think>\\n' }}{% endif %}";

const info = (template: string | null, vocabMarkers: string[] = [], architecture = 'qwen3'): TemplateInfo => ({
  template, bosToken: '', eosToken: '<|im_end|>', architecture, name: null, vocabMarkers,
});

const turns: ChatMessage[] = [
  { role: 'user', content: 'What is 2+2?' },
  { role: 'assistant', content: '4.', reasoning: 'Adding two and two gives four.' },
  { role: 'user', content: 'And 3+3?' },
];

describe('reasoning format detection', () => {
  it('from the template, else from the vocabulary', () => {
    expect(reasoningFormat(info(QWEN3))).toBe('think');
    expect(reasoningFormat(info(R1, [], 'qwen2'))).toBe('think');
    expect(reasoningFormat(info(GPT_OSS, [], 'gpt-oss'))).toBe('harmony');
    expect(reasoningFormat(info(null, ['<|im_start|>', '<think>', '</think>']))).toBe('think');
    expect(reasoningFormat(info(null, ['<|channel|>']))).toBe('harmony');
    expect(reasoningFormat(info('{{ messages[0].content }}', ['<|im_start|>'], 'qwen2'))).toBe('none');
  });

  it('the output starts inside the thinking only when the prompt opened it', () => {
    const r1 = info(R1, [], 'qwen2');
    expect(reasoningSetup(r1, renderChat(r1, turns).text)).toEqual({ format: 'think', startsInside: true });
    const q = info(QWEN3);
    expect(reasoningSetup(q, renderChat(q, turns).text)).toEqual({ format: 'think', startsInside: false });
    expect(reasoningSetup(q, '<|im_start|>assistant\n<think>\n\n</think>\n\n').startsInside).toBe(false);
  });
});

describe('the next turn leaves earlier reasoning out', () => {
  it("Qwen3's own template: the earlier reply is its answer only", () => {
    const r = renderChat(info(QWEN3), turns);
    expect(r.templateName).toBe('gguf');
    expect(r.text).toBe('<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n<|im_start|>user\nAnd 3+3?<|im_end|>\n<|im_start|>assistant\n');
    // The template keeps the thinking of a reply after the last user message (a continued turn).
    const cont = renderChat(info(QWEN3), turns.slice(0, 2), { addGenerationPrompt: false });
    expect(cont.text).toContain('<think>\nAdding two and two gives four.\n</think>\n\n4.');
  });

  it("gpt-oss's own template: the final channel only, the analysis dropped", () => {
    const r = renderChat(info(GPT_OSS, [], 'gpt-oss'), turns);
    expect(r.templateName).toBe('gguf');
    expect(r.text).toContain('<|start|>assistant<|channel|>final<|message|>4.<|end|><|start|>user<|message|>And 3+3?<|end|><|start|>assistant');
    expect(r.text).not.toContain('Adding two');
    expect(r.text.endsWith('<|start|>assistant')).toBe(true);
  });

  it('DeepSeek-R1 template and the built-in templates: the answer only', () => {
    const r1 = renderChat(info(R1, [], 'qwen2'), turns);
    expect(r1.text).toBe('<｜User｜>What is 2+2?<｜Assistant｜>4.<｜end▁of▁sentence｜><｜User｜>And 3+3?<｜Assistant｜><think>\n');
    const builtin = renderChat(info(null, ['<|im_start|>', '</think>']), turns);
    expect(builtin.templateName).toBe('chatml');
    expect(builtin.text).toBe('<|im_start|>user\nWhat is 2+2?<|im_end|>\n<|im_start|>assistant\n4.<|im_end|>\n<|im_start|>user\nAnd 3+3?<|im_end|>\n<|im_start|>assistant\n');
  });
});
