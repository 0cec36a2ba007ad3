// The real engine host under Node (child_process.fork): it dies with its parent, also when its own
// thread is stuck, and the supervisor's heartbeat notices a host that is alive but not answering.
// A stuck host is made with the test hook {kind: 'testHang'} (PANTHEON_TEST_HOOKS=1).

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { EngineSupervisor } from '../../src/main/services/engine-supervisor.js';
import { nodeEngineTransport } from '../../src/main/services/node-engine-transport.js';
import { ROOT } from '../helpers.js';

const DEMO = join(ROOT, 'resources', 'models', 'stories260K.gguf');
const dir = mkdtempSync(join(tmpdir(), 'pantheon-orphan-'));
/** Every host started here: a failed test leaves none running. */
const hosts: number[] = [];
afterAll(() => {
  for (const pid of hosts) if (alive(pid)) process.kill(pid, 'SIGKILL');
  rmSync(dir, { recursive: true, force: true });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A parent process that starts a host through the Node transport (hung at once if `hang`). */
async function parentWithHost(hang: boolean): Promise<{ kill(): void; hostPid: number }> {
  const parent = join(dir, `parent-${hang ? 'hang' : 'ok'}.mts`);
  const transport = pathToFileURL(join(ROOT, 'src', 'main', 'services', 'node-engine-transport.ts')).href;
  writeFileSync(parent, [
    `import { nodeEngineTransport } from ${JSON.stringify(transport)};`,
    `const proc = nodeEngineTransport({ log: () => {}, env: { PANTHEON_TEST_HOOKS: '1' } }).spawn({`,
    `  message: (m) => { if (m.kind === 'ready') { ${hang ? "proc.send({ kind: 'testHang' });" : ''} console.log('host ' + proc.pid); } },`,
    `  exit: () => {},`,
    `});`,
    `setInterval(() => {}, 1000);`,
  ].join('\n'));
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'run-ts.mjs'), parent], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] });
  const hostPid = await new Promise<number>((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error(`no host pid within 20 s: ${out}`)), 20_000);
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /host (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    });
  });
  return { hostPid, kill: () => child.kill('SIGKILL') };
}

describe('engine host under Node: lifetime', () => {
  it('exits when its parent is killed with SIGKILL', async () => {
    const p = await parentWithHost(false);
    expect(alive(p.hostPid)).toBe(true);
    p.kill();
    await expect.poll(() => alive(p.hostPid), { timeout: 10_000, interval: 100 }).toBe(false);
  }, 40_000);

  it('exits when its parent is killed while its own thread is stuck', async () => {
    const p = await parentWithHost(true);
    await new Promise((r) => setTimeout(r, 300));
    expect(alive(p.hostPid)).toBe(true);
    p.kill();
    await expect.poll(() => alive(p.hostPid), { timeout: 10_000, interval: 100 }).toBe(false);
  }, 40_000);

  it('is ended by the heartbeat when it stops answering, and told as a crash with Reload', async () => {
    const transport = nodeEngineTransport({ log: () => {}, env: { PANTHEON_TEST_HOOKS: '1' } });
    let hostSend: ((m: unknown) => void) | null = null;
    const sup = new EngineSupervisor({
      spawn(events) {
        const proc = transport.spawn(events);
        hostSend = (m) => proc.send(m as never);
        return proc;
      },
    }, () => {}, { intervalMs: 100, timeoutMs: 5000 }); // (a load on a loaded CI machine can take seconds: not a hang)
    await sup.load({ modelId: 'demo', modelName: 'llama', path: DEMO, contextSize: 64, threads: 1 });
    // Answering: stays ready over several heartbeats.
    await new Promise((r) => setTimeout(r, 2000));
    expect(sup.current.status).toBe('ready');
    const pid = sup.pid!;
    hosts.push(pid);
    hostSend!({ kind: 'testHang' });
    await expect.poll(() => sup.current.status, { timeout: 20_000, interval: 100 }).toBe('crashed');
    expect(sup.current).toMatchObject({ message: 'The engine stopped responding while running llama (no answer for 5 s); press Reload to start it again.' });
    expect(alive(pid)).toBe(false);
    await sup.reload();
    expect(sup.current.status).toBe('ready');
    await sup.dispose();
  }, 60_000);
});
