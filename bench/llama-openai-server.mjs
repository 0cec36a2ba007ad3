// A small OpenAI-compatible server over llama.cpp (node-llama-cpp 3.21.1, CPU), dev-only: a second,
// independent server to test Pantheon's remote-model client against, so it is not only tested
// against `pantheon serve`'s own quirks. GET /v1/models and POST /v1/chat/completions (stream or
// not, with usage); the model's chat template is node-llama-cpp's (the file's Jinja template when
// it has one). One request at a time.
//
//   node bench/llama-openai-server.mjs MODEL.gguf [--port 0] [--api-key KEY]
//   → prints "listening on http://127.0.0.1:PORT/v1"

import { createServer } from 'node:http';
import { basename } from 'node:path';
import { LlamaChatSession } from 'node-llama-cpp';
import { getReference } from './llama.mjs';

const args = process.argv.slice(2);
const opt = (name, fallback) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const modelPath = args.find((a, i) => !a.startsWith('--') && !(i > 0 && args[i - 1].startsWith('--')));
if (!modelPath) {
  console.error('usage: node bench/llama-openai-server.mjs MODEL.gguf [--port N] [--api-key KEY]');
  process.exit(2);
}
const apiKey = opt('api-key', null);
const id = basename(modelPath).replace(/\.gguf$/i, '');

const llama = await getReference();
const model = await llama.loadModel({ modelPath, gpuLayers: 0 });
const context = await model.createContext({ contextSize: 1024, threads: { ideal: 1, min: 1 } });
let queue = Promise.resolve();

function send(res, status, body) {
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}
const fail = (res, status, message, type = 'invalid_request_error') => send(res, status, { error: { message, type, param: null, code: null } });

async function chat(req, res, body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  const last = messages.at(-1);
  if (!last || last.role !== 'user') return fail(res, 400, 'the last message must be the user\'s');
  const history = messages.slice(0, -1).map((m) => (m.role === 'assistant' ? { type: 'model', response: [String(m.content)] } : { type: m.role === 'system' ? 'system' : 'user', text: String(m.content) }));
  const sequence = context.getSequence();
  const session = new LlamaChatSession({ contextSequence: sequence });
  const abort = new globalThis.AbortController();
  res.on('close', () => abort.abort());
  try {
    session.setChatHistory([...history, { type: 'model', response: [] }].slice(0, -1));
    const created = Math.floor(Date.now() / 1000);
    const chunk = (delta, finish) => ({ id: 'chatcmpl-llama', object: 'chat.completion.chunk', created, model: id, choices: [{ index: 0, delta, finish_reason: finish }] });
    if (body.stream) res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const before = sequence.contextTokens.length;
    const r = await session.promptWithMeta(String(last.content), {
      maxTokens: body.max_tokens ?? undefined,
      temperature: body.temperature ?? 0.8,
      topP: body.top_p ?? undefined,
      seed: body.seed ?? undefined,
      signal: abort.signal,
      stopOnAbortSignal: true,
      onTextChunk: (text) => { if (body.stream && text) res.write(`data: ${JSON.stringify(chunk({ content: text }, null))}\n\n`); },
    });
    const completion = model.tokenize(r.responseText).length;
    const usage = { prompt_tokens: Math.max(0, sequence.contextTokens.length - completion - before), completion_tokens: completion };
    usage.total_tokens = usage.prompt_tokens + completion;
    const finish = r.stopReason === 'maxTokens' ? 'length' : 'stop';
    if (body.stream) {
      res.write(`data: ${JSON.stringify(chunk({}, finish))}\n\n`);
      if (body.stream_options?.include_usage) res.write(`data: ${JSON.stringify({ ...chunk({}, null), choices: [], usage })}\n\n`);
      res.end('data: [DONE]\n\n');
    } else {
      send(res, 200, { id: 'chatcmpl-llama', object: 'chat.completion', created, model: id, choices: [{ index: 0, message: { role: 'assistant', content: r.responseText }, finish_reason: finish }], usage });
    }
  } finally {
    session.dispose({ disposeSequence: true });
  }
}

const server = createServer((req, res) => {
  if (apiKey && req.headers.authorization !== `Bearer ${apiKey}`) return fail(res, 401, 'Incorrect API key provided.', 'authentication_error');
  if (req.method === 'GET' && req.url === '/v1/models') return send(res, 200, { object: 'list', data: [{ id, object: 'model', created: 0, owned_by: 'llama.cpp' }] });
  if (req.method !== 'POST' || req.url !== '/v1/chat/completions') return fail(res, 404, `no route ${req.method} ${req.url}`);
  let raw = '';
  req.on('data', (d) => { raw += d; });
  req.on('end', () => {
    let body;
    try {
      body = JSON.parse(raw);
    } catch {
      return fail(res, 400, 'the body is not JSON');
    }
    if (body.model !== id) return fail(res, 404, `The model \`${body.model}\` does not exist.`);
    queue = queue.then(() => chat(req, res, body)).catch((err) => { if (!res.headersSent) fail(res, 500, String(err?.message ?? err), 'server_error'); else res.end(); });
  });
});
server.listen(Number(opt('port', '0')), '127.0.0.1', () => {
  console.log(`listening on http://127.0.0.1:${server.address().port}/v1`);
});
