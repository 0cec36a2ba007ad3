// llama.cpp's OpenAI-compatible server from bench/ (bench/llama-openai-server.mjs, dev-only, over
// node-llama-cpp) as a child process, for the remote-model tests; HAVE_BENCH says whether it can run.

import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../helpers.js';

export const HAVE_BENCH = existsSync(join(ROOT, 'bench', 'node_modules', 'node-llama-cpp'));

/** Start the server on `model` (and an API key, if given); `url` resolves to its base URL. */
export function startLlamaServer(model: string, apiKey?: string): { child: ChildProcess; url: Promise<string> } {
  const args = [join(ROOT, 'bench', 'llama-openai-server.mjs'), model, ...(apiKey ? ['--api-key', apiKey] : [])];
  const child = spawn(process.execPath, args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  const url = new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (\S+)/.exec(out);
      if (m) resolve(m[1]);
    });
    child.on('exit', (code) => reject(new Error(`the llama.cpp server exited (${code})`)));
  });
  return { child, url };
}
