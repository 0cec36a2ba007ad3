// Hostile chat templates: a render past the deadline or the size caps falls back to the family's
// built-in template with a one-line notice, in about the deadline, without taking gigabytes.
import { describe, expect, it } from 'vitest';
import { renderChat, TEMPLATE_LIMITS, type ChatMessage, type TemplateInfo } from '../../src/engine/chat/index.js';

const chatmlTemplate =
  "{% for m in messages %}{{ '<|im_start|>' + m.role + '\\n' + m.content + '<|im_end|>\\n' }}{% endfor %}" +
  "{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

function info(template: string): TemplateInfo {
  return { template, bosToken: '', eosToken: '<|im_end|>', architecture: 'qwen2', name: 'hostile', vocabMarkers: ['<|im_start|>', '<|im_end|>'] };
}

const hi: ChatMessage[] = [{ role: 'user', content: 'Hello' }];
const fast = { ...TEMPLATE_LIMITS, deadlineMs: 300 };

function timed<T>(f: () => T): { value: T; ms: number } {
  const t0 = performance.now();
  const value = f();
  return { value, ms: performance.now() - t0 };
}

describe('chat template limits', () => {
  it('a normal template renders as before, with no notice', () => {
    const r = renderChat(info(chatmlTemplate), hi);
    expect(r.templateName).toBe('gguf');
    expect(r.text).toBe('<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n');
    expect(r.notice).toBeUndefined();
  });

  it('range(100000000) is refused at once: the built-in ChatML is used, with a notice', () => {
    const { value: r, ms } = timed(() => renderChat(info('{% for i in range(100000000) %}x{% endfor %}'), hi));
    expect(ms).toBeLessThan(500);
    expect(r.templateName).toBe('chatml');
    expect(r.text).toBe('<|im_start|>user\nHello<|im_end|>\n<|im_start|>assistant\n');
    expect(r.notice).toMatch(/^The file's chat template was too big \(range\(\) of 100000000 items, at most 10000\); using ChatML\.$/);
    expect(r.notes).toContain(r.notice);
  });

  it('nested loops stop at the deadline', () => {
    const nested = '{% for i in range(10000) %}{% for j in range(10000) %}{{ i }}{% endfor %}{% endfor %}';
    const { value: r, ms } = timed(() => renderChat(info(nested), hi, { limits: fast }));
    expect(ms).toBeGreaterThanOrEqual(290);
    expect(ms).toBeLessThan(1500);
    expect(r.templateName).toBe('chatml');
    expect(r.notice).toMatch(/^The file's chat template was too slow \(over 0\.3 s\); using ChatML\.$/);
  });

  it('the default deadline is about 2 s', () => {
    const nested = '{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}';
    const { value: r, ms } = timed(() => renderChat(info(nested), hi));
    expect(r.notice).toContain('too slow');
    expect(ms).toBeGreaterThanOrEqual(1990);
    expect(ms).toBeLessThan(4000);
  });

  it('a template that doubles a string past the text cap stops', () => {
    // 2^30 characters if it ran to the end; the cap (here 1 MB) stops it on the way.
    const doubling = "{% set ns = namespace(s='x') %}{% for i in range(30) %}{% set ns.s = ns.s + ns.s %}{{ ns.s }}{% endfor %}";
    const r = renderChat(info(doubling), hi, { limits: { ...TEMPLATE_LIMITS, maxChars: 1 << 20 } });
    expect(r.templateName).toBe('chatml');
    expect(r.notice).toMatch(/too big \(over 1 MB of text\); using ChatML\.$/);
  });

  it('a render after a stopped one is not limited by it', () => {
    renderChat(info('{% for i in range(10000) %}{% for j in range(10000) %}{% endfor %}{% endfor %}'), hi, { limits: fast });
    const r = renderChat(info('{% for i in range(3) %}{{ i }}{% endfor %}{{ messages[0].content }}'), hi);
    expect(r.templateName).toBe('gguf');
    expect(r.text).toBe('012Hello');
    expect(r.notice).toBeUndefined();
  });
});
