// A chat as a file: Markdown to read (the thinking folded, each reply's model and stats as
// metadata) and JSON to import again ('chats:import' takes it back).

import { CHAT_EXPORT_FORMAT, type Chat, type StoredMessage } from '../../shared/contract.js';

export function chatToJson(chat: Chat): string {
  return `${JSON.stringify({ format: CHAT_EXPORT_FORMAT, version: 1, exportedAt: new Date().toISOString(), chat }, null, 2)}\n`;
}

/** A YAML-safe one-line string. */
const yaml = (s: string): string => JSON.stringify(s);

function statsLine(m: StoredMessage): string | null {
  const s = m.stats;
  if (!s) return null;
  const parts = [
    m.modelName ? `model ${m.modelName}` : null,
    `${s.promptTokens} prompt tokens`,
    `${s.generatedTokens} generated`,
    `${s.tokensPerS.toFixed(1)} tok/s`,
    `first token ${Math.round(s.ttftMs)} ms`,
    `ended: ${s.stopReason}`,
  ].filter((x): x is string => x !== null);
  return parts.join(' · ');
}

export function chatToMarkdown(chat: Chat): string {
  const models = [...new Set(chat.messages.map((m) => m.modelName).filter((x): x is string => !!x))];
  const out = [
    '---',
    `title: ${yaml(chat.title)}`,
    `created: ${new Date(chat.createdAt).toISOString()}`,
    `updated: ${new Date(chat.updatedAt).toISOString()}`,
    ...(models.length ? [`models: [${models.map(yaml).join(', ')}]`] : []),
    `exported-by: Pantheon`,
    '---',
    '',
    `# ${chat.title}`,
    '',
  ];
  if (chat.systemPrompt) out.push('## System', '', chat.systemPrompt, '');
  for (const m of chat.messages) {
    out.push(`## ${m.role === 'user' ? 'User' : m.role === 'assistant' ? 'Assistant' : 'System'}`, '');
    if (m.reasoning?.text) {
      out.push(`<details><summary>Thinking (${m.reasoning.tokens} tokens, ${(m.reasoning.ms / 1000).toFixed(1)} s)</summary>`, '', m.reasoning.text, '', '</details>', '');
    }
    out.push(m.content, '');
    const stats = statsLine(m);
    if (stats) out.push(`<!-- ${stats.replace(/--/g, '- -')} -->`, `*${stats}*`, '');
  }
  return out.join('\n');
}

/** A file name from the chat's title: letters, digits, dashes. */
export function exportFileName(chat: Chat, ext: 'md' | 'json'): string {
  const base = chat.title.normalize('NFKD').replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'chat';
  return `${base}.${ext}`;
}

/** Hand `text` to the browser (Electron: its save dialog) as a download named `name`. */
export function download(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
