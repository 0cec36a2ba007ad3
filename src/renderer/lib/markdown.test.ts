import { describe, expect, it } from 'vitest';
import { escapeHtml, renderMarkdown } from './markdown.js';

describe('renderMarkdown', () => {
  it('escapes raw HTML instead of interpreting it', () => {
    const html = renderMarkdown('hello <script>alert(1)</script> <img src=x onerror=alert(1)>');
    expect(html).not.toContain('<script');
    expect(html).not.toContain('<img');
    expect(html).toContain('&lt;script&gt;');
  });

  it('escapes a raw HTML block', () => {
    const html = renderMarkdown('<div onclick="x()">hi</div>\n\ntext');
    expect(html).not.toMatch(/<div/);
    expect(html).toContain('&lt;div onclick=&quot;x()&quot;&gt;');
  });

  it('drops javascript: links but keeps their text', () => {
    const html = renderMarkdown('[click](javascript:alert(1)) and [site](https://example.org)');
    expect(html).not.toContain('javascript:');
    expect(html).toContain('click');
    expect(html).toContain('<a href="https://example.org" target="_blank" rel="noopener noreferrer">site</a>');
  });

  it('renders images as their alt text (nothing remote is loaded)', () => {
    expect(renderMarkdown('![a cat](https://example.org/cat.png)')).not.toContain('<img');
  });

  it('highlights a fenced code block of a known language and escapes an unknown one', () => {
    const py = renderMarkdown('```python\ndef f(x):\n    return x < 1\n```');
    expect(py).toContain('class="hljs language-python"');
    expect(py).toContain('<span class="hljs-keyword">def</span>');
    expect(py).toContain('&lt;');
    const other = renderMarkdown('```brainfuck\n<>+-\n```');
    expect(other).toContain('<code class="hljs">&lt;&gt;+-</code>');
  });

  it('renders emphasis, lists and inline code', () => {
    const html = renderMarkdown('**bold** and `a<b`\n\n- one\n- two');
    expect(html).toContain('<strong>bold</strong>');
    expect(html).toContain('<code>a&lt;b</code>');
    expect(html).toContain('<li>one</li>');
  });

  it('escapeHtml escapes the five characters', () => {
    expect(escapeHtml(`<a href="x">'&'</a>`)).toBe('&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;');
  });
});
