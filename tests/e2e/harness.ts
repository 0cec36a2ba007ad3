// Start the dev harness (src/harness/main.ts, as `npm run dev:web` does after its build) on a free
// port with a temp user-data folder, and stop it again.

import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../helpers.js';

export interface RunningHarness {
  url: string;
  userData: string;
  /** Everything the harness printed, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

export async function startHarness(env: Record<string, string> = {}): Promise<RunningHarness> {
  const userData = await mkdtemp(join(tmpdir(), 'pantheon-e2e-data-'));
  const child: ChildProcess = spawn(process.execPath, [join(ROOT, 'bin', 'run-ts.mjs'), join(ROOT, 'src', 'harness', 'main.ts')], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', PANTHEON_USER_DATA: userData, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the harness did not start within 30 s:\n${out}`)), 30_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /Pantheon dev harness: (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]);
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`the harness exited with code ${code}:\n${out}`));
    });
  });
  return {
    url,
    userData,
    output: () => out,
    async stop() {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once('exit', r));
        child.kill('SIGTERM');
        const t = setTimeout(() => child.kill('SIGKILL'), 5000);
        await exited;
        clearTimeout(t);
      }
      await rm(userData, { recursive: true, force: true });
    },
  };
}
