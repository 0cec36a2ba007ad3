// Each built-in template against the family's published prompt format, written out by hand.
import { describe, expect, it } from 'vitest';
import { BUILTIN_TEMPLATES, renderChat, type ChatMessage, type TemplateInfo } from '../../src/engine/chat/index.js';

const convo: ChatMessage[] = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hi' },
  { role: 'assistant', content: 'Hello!' },
  { role: 'user', content: 'Name a color.' },
];

function info(partial: Partial<TemplateInfo>): TemplateInfo {
  return { template: null, bosToken: '', eosToken: '', architecture: null, name: null, ...partial };
}

describe('built-in templates', () => {
  it('chatml (Qwen/ChatML format): no BOS, im_start/im_end turns', () => {
    const r = renderChat(info({ architecture: 'qwen2', bosToken: '<|endoftext|>', eosToken: '<|im_end|>' }), convo);
    expect(r.templateName).toBe('chatml');
    expect(r.text).toBe(
      '<|im_start|>system\nBe brief.<|im_end|>\n' +
      '<|im_start|>user\nHi<|im_end|>\n' +
      '<|im_start|>assistant\nHello!<|im_end|>\n' +
      '<|im_start|>user\nName a color.<|im_end|>\n' +
      '<|im_start|>assistant\n');
    expect(r.stopStrings).toEqual(['<|im_end|>']);
    expect(r.startsWithBos).toBe(false);
  });

  it('llama2 (Meta chat_completion format): <<SYS>> in the first [INST], </s><s> between exchanges', () => {
    const r = renderChat(info({ name: 'Llama-2-7b-chat', bosToken: '<s>', eosToken: '</s>' }), convo);
    expect(r.templateName).toBe('llama2');
    expect(r.text).toBe(
      '<s>[INST] <<SYS>>\nBe brief.\n<</SYS>>\n\nHi [/INST] Hello! </s>' +
      '<s>[INST] Name a color. [/INST]');
    expect(r.stopStrings).toEqual(['</s>']);
    expect(r.startsWithBos).toBe(true);
  });

  it('llama3 (Meta Llama 3 prompt format): header-framed turns ended by <|eot_id|>', () => {
    const r = renderChat(info({ name: 'Meta-Llama-3-8B-Instruct', bosToken: '<|begin_of_text|>', eosToken: '<|end_of_text|>' }), convo);
    expect(r.templateName).toBe('llama3');
    expect(r.text).toBe(
      '<|begin_of_text|>' +
      '<|start_header_id|>system<|end_header_id|>\n\nBe brief.<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\nHello!<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nName a color.<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\n');
    expect(r.stopStrings).toEqual(['<|eot_id|>', '<|end_of_text|>']);
  });

  it('phi3 (Phi-3 model card chat format)', () => {
    const r = renderChat(info({ architecture: 'phi3', bosToken: '<s>', eosToken: '<|endoftext|>' }), convo);
    expect(r.templateName).toBe('phi3');
    expect(r.text).toBe(
      '<s><|system|>\nBe brief.<|end|>\n' +
      '<|user|>\nHi<|end|>\n' +
      '<|assistant|>\nHello!<|end|>\n' +
      '<|user|>\nName a color.<|end|>\n' +
      '<|assistant|>\n');
    expect(r.stopStrings).toEqual(['<|end|>', '<|endoftext|>']);
  });

  it('gemma (Gemma model card format): "model" role, system text opens the first user turn', () => {
    const r = renderChat(info({ architecture: 'gemma2', bosToken: '<bos>', eosToken: '<eos>' }), convo);
    expect(r.templateName).toBe('gemma');
    expect(r.text).toBe(
      '<bos><start_of_turn>user\nBe brief.\n\nHi<end_of_turn>\n' +
      '<start_of_turn>model\nHello!<end_of_turn>\n' +
      '<start_of_turn>user\nName a color.<end_of_turn>\n' +
      '<start_of_turn>model\n');
    expect(r.stopStrings).toEqual(['<end_of_turn>', '<eos>']);
  });

  it('mistral v1 / v3 / v3-tekken / v7 (mistralai cookbook chat_templates.md spacing)', () => {
    const msgs: ChatMessage[] = [
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello!' },
      { role: 'user', content: 'Bye' },
    ];
    const r = (name: keyof typeof BUILTIN_TEMPLATES): string => BUILTIN_TEMPLATES[name].render(msgs, '<s>', '</s>', true);
    expect(r('mistral-v1')).toBe('<s> [INST] Hi [/INST] Hello!</s> [INST] Bye [/INST]');
    expect(r('mistral-v3')).toBe('<s>[INST] Hi[/INST] Hello!</s>[INST] Bye[/INST]');
    expect(r('mistral-v3-tekken')).toBe('<s>[INST]Hi[/INST]Hello!</s>[INST]Bye[/INST]');
    expect(BUILTIN_TEMPLATES['mistral-v7'].render([{ role: 'system', content: 'S' }, ...msgs], '<s>', '</s>', true))
      .toBe('<s>[SYSTEM_PROMPT] S[/SYSTEM_PROMPT][INST] Hi[/INST] Hello!</s>[INST] Bye[/INST]');
    // v1–v3 have no system slot: the system text opens the first [INST], then a blank line.
    expect(BUILTIN_TEMPLATES['mistral-v3'].render([{ role: 'system', content: 'S' }, msgs[0]], '<s>', '</s>', true))
      .toBe('<s>[INST] S\n\nHi[/INST]');
    expect(renderChat(info({ name: 'Mistral-7B-Instruct-v0.3' }), msgs).templateName).toBe('mistral-v3');
  });

  it('plain User:/Assistant: transcript for models without a format', () => {
    const r = renderChat(info({ architecture: 'llama', name: 'llama', bosToken: '<s>', eosToken: '</s>' }), convo);
    expect(r.templateName).toBe('plain');
    expect(r.text).toBe('<s>System: Be brief.\nUser: Hi\nAssistant: Hello!\nUser: Name a color.\nAssistant:');
    expect(r.stopStrings).toEqual(['\nUser:', '</s>']);
    expect(r.notes[0]).toMatch(/no chat template/);
  });

  it('addGenerationPrompt: false leaves the assistant turn unopened', () => {
    const msgs: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    const i = info({ architecture: 'qwen3' });
    expect(renderChat(i, msgs, { addGenerationPrompt: false }).text).toBe('<|im_start|>user\nHi<|im_end|>\n');
    expect(renderChat(info({}), msgs, { addGenerationPrompt: false }).text).toBe('User: Hi\n');
  });

  it('rejects a message with an unknown role', () => {
    expect(() => renderChat(info({}), [{ role: 'function' as 'user', content: 'x' }])).toThrow(/role "function"/);
  });
});

describe('family detection', () => {
  it('trusts template text, then vocabulary markers, then architecture, then name', () => {
    expect(renderChat(info({ vocabMarkers: ['<|im_start|>', '<|im_end|>'], architecture: 'llama', name: 'Llama-3' }), []).family).toBe('chatml');
    expect(renderChat(info({ architecture: 'gemma3', name: 'qwen-ish' }), []).family).toBe('gemma');
    expect(renderChat(info({ architecture: 'llama', name: 'LLaMA v2' }), []).family).toBe('llama2');
    expect(renderChat(info({ architecture: 'phi2', name: 'phi-2' }), []).family).toBe('plain');
  });
});
