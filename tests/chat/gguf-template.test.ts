// Templates from real model files, official Jinja templates (as published in each model's
// tokenizer_config.json), and broken templates that must fall back instead of throwing.
import { describe, expect, it } from 'vitest';
import { readGgufHeaderSync } from '../../src/engine/gguf/index.js';
import { renderChat, templateInfoFromGguf, BUILTIN_TEMPLATES, type ChatMessage, type TemplateInfo } from '../../src/engine/chat/index.js';
import { HAVE_SHARED, sharedModel } from '../helpers.js';

const paris: ChatMessage[] = [
  { role: 'user', content: 'I am going to Paris, what should I see?' },
  { role: 'assistant', content: 'The Eiffel Tower.' },
  { role: 'user', content: 'What is so great about #1?' },
];

describe.skipIf(!HAVE_SHARED)('templates of the shared model files', () => {
  it('phi-3 vocab GGUF: its own template gives the Phi-3 model-card format', () => {
    const i = templateInfoFromGguf(readGgufHeaderSync(sharedModel('llama.cpp-vocab/ggml-vocab-phi-3.gguf')));
    expect(i.bosToken).toBe('<s>');
    expect(i.eosToken).toBe('<|endoftext|>');
    expect(i.architecture).toBe('phi3');
    const r = renderChat(i, paris);
    expect(r.templateName).toBe('gguf');
    expect(r.family).toBe('phi3');
    // Phi-3-mini-4k-instruct model card, "Chat Format" (multi-turn example), with the file's BOS.
    expect(r.text).toBe(
      '<s><|user|>\nI am going to Paris, what should I see?<|end|>\n' +
      '<|assistant|>\nThe Eiffel Tower.<|end|>\n' +
      '<|user|>\nWhat is so great about #1?<|end|>\n' +
      '<|assistant|>\n');
    expect(r.stopStrings).toEqual(['<|end|>', '<|endoftext|>']);
    expect(r.startsWithBos).toBe(true);
    expect(r.notes).toEqual([]);
  });

  it('phi-3 template drops system messages: rendered as the file says, with a note', () => {
    const i = templateInfoFromGguf(readGgufHeaderSync(sharedModel('tiny-random/tiny-phi3-s5.gguf')));
    const r = renderChat(i, [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'Hi' }]);
    expect(r.templateName).toBe('gguf');
    expect(r.text).toBe('<s><|user|>\nHi<|end|>\n<|assistant|>\n');
    expect(r.notes.join(' ')).toMatch(/left out the system message/);
  });

  it('llama-bpe vocab GGUF has no template: Llama 3 format detected from its vocabulary', () => {
    const i = templateInfoFromGguf(readGgufHeaderSync(sharedModel('llama.cpp-vocab/ggml-vocab-llama-bpe.gguf')));
    expect(i.template).toBeNull();
    expect(i.vocabMarkers).toContain('<|start_header_id|>');
    const r = renderChat(i, [{ role: 'system', content: 'You are helpful.' }, { role: 'user', content: 'Hi' }]);
    expect(r.templateName).toBe('llama3');
    expect(r.text).toBe(
      '<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\nYou are helpful.<|eot_id|>' +
      '<|start_header_id|>user<|end_header_id|>\n\nHi<|eot_id|>' +
      '<|start_header_id|>assistant<|end_header_id|>\n\n');
    expect(r.stopStrings).toEqual(['<|eot_id|>']);
  });

  it('stories260K (no template, generic name): plain transcript', () => {
    const i = templateInfoFromGguf(readGgufHeaderSync(sharedModel('stories260K.gguf')));
    const r = renderChat(i, [{ role: 'user', content: 'Tell me a story.' }]);
    expect(r.templateName).toBe('plain');
    expect(r.text).toBe('<s>User: Tell me a story.\nAssistant:');
    expect(r.stopStrings).toEqual(['\nUser:', '</s>']);
  });

  it('tiny-qwen2 (no template, arch qwen2): ChatML from the architecture', () => {
    const i = templateInfoFromGguf(readGgufHeaderSync(sharedModel('tiny-random/tiny-qwen2-s5.gguf')));
    const r = renderChat(i, [{ role: 'user', content: 'Hi' }]);
    expect(r.templateName).toBe('chatml');
    expect(r.notes[0]).toMatch(/detected from the architecture/);
  });
});

// Official templates (the chat_template field of each model's tokenizer_config.json).
const QWEN2_TEMPLATE =
  "{% for message in messages %}{% if loop.first and messages[0]['role'] != 'system' %}{{ '<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n' }}{% endif %}{{'<|im_start|>' + message['role'] + '\n' + message['content'] + '<|im_end|>' + '\n'}}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\n' }}{% endif %}";
const LLAMA3_TEMPLATE =
  "{% set loop_messages = messages %}{% for message in loop_messages %}{% set content = '<|start_header_id|>' + message['role'] + '<|end_header_id|>\n\n'+ message['content'] | trim + '<|eot_id|>' %}{% if loop.index0 == 0 %}{% set content = bos_token + content %}{% endif %}{{ content }}{% endfor %}{% if add_generation_prompt %}{{ '<|start_header_id|>assistant<|end_header_id|>\n\n' }}{% endif %}";
const GEMMA_TEMPLATE =
  "{{ bos_token }}{% if messages[0]['role'] == 'system' %}{{ raise_exception('System role not supported') }}{% endif %}{% for message in messages %}{% if (message['role'] == 'user') != (loop.index0 % 2 == 0) %}{{ raise_exception('Conversation roles must alternate user/assistant/user/assistant/...') }}{% endif %}{% if (message['role'] == 'assistant') %}{% set role = 'model' %}{% else %}{% set role = message['role'] %}{% endif %}{{ '<start_of_turn>' + role + '\n' + message['content'] | trim + '<end_of_turn>\n' }}{% endfor %}{% if add_generation_prompt %}{{'<start_of_turn>model\n'}}{% endif %}";

function info(template: string, bos: string, eos: string): TemplateInfo {
  return { template, bosToken: bos, eosToken: eos, architecture: null, name: null };
}

describe('official Jinja templates agree with the built-ins', () => {
  const withSystem: ChatMessage[] = [{ role: 'system', content: 'Be brief.' }, ...paris];

  it('Qwen2 ChatML', () => {
    const r = renderChat(info(QWEN2_TEMPLATE, '', '<|im_end|>'), withSystem);
    expect(r.templateName).toBe('gguf');
    expect(r.family).toBe('chatml');
    expect(r.text).toBe(BUILTIN_TEMPLATES.chatml.render(withSystem, '', '', true));
    // Without a system message Qwen2's template inserts its default one.
    expect(renderChat(info(QWEN2_TEMPLATE, '', ''), [{ role: 'user', content: 'Hi' }]).text)
      .toBe('<|im_start|>system\nYou are a helpful assistant.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
  });

  it('Llama 3 Instruct', () => {
    const r = renderChat(info(LLAMA3_TEMPLATE, '<|begin_of_text|>', '<|eot_id|>'), withSystem);
    expect(r.family).toBe('llama3');
    expect(r.text).toBe(BUILTIN_TEMPLATES.llama3.render(withSystem, '<|begin_of_text|>', '', true));
  });

  it('Gemma without a system message', () => {
    const r = renderChat(info(GEMMA_TEMPLATE, '<bos>', '<eos>'), paris);
    expect(r.templateName).toBe('gguf');
    expect(r.text).toBe(BUILTIN_TEMPLATES.gemma.render(paris, '<bos>', '', true));
  });
});

describe('a template that fails falls back with a note', () => {
  it('raise_exception (Gemma rejects a system role) → built-in gemma', () => {
    const r = renderChat(info(GEMMA_TEMPLATE, '<bos>', '<eos>'), [{ role: 'system', content: 'S' }, { role: 'user', content: 'Hi' }]);
    expect(r.templateName).toBe('gemma');
    expect(r.text).toBe('<bos><start_of_turn>user\nS\n\nHi<end_of_turn>\n<start_of_turn>model\n');
    expect(r.notes[0]).toMatch(/failed to render \(System role not supported\).*built-in "gemma"/);
  });

  it('a syntax error → family detected from the broken text', () => {
    const r = renderChat(info("{% for message in messages %}<|im_start|>{{ message['role'] }", '', ''), [{ role: 'user', content: 'Hi' }]);
    expect(r.templateName).toBe('chatml');
    expect(r.text).toBe('<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n');
    expect(r.notes).toHaveLength(1);
  });

  it('an unrecognisable broken template → plain', () => {
    const r = renderChat(info('{{ undefined_function() }}', '<s>', '</s>'), [{ role: 'user', content: 'Hi' }]);
    expect(r.templateName).toBe('plain');
    expect(r.text).toBe('<s>User: Hi\nAssistant:');
    expect(r.notes[0]).toMatch(/failed to render/);
  });

  it('a template that renders nothing → fallback', () => {
    const r = renderChat(info('{% if false %}x{% endif %}', '', ''), [{ role: 'user', content: 'Hi' }]);
    expect(r.templateName).toBe('plain');
    expect(r.notes[0]).toMatch(/rendered nothing/);
  });
});
