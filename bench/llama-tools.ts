// llama.cpp's tools that node-llama-cpp does not ship, built here against its libraries (the
// llama.cpp build the goldens come from): ggml's quantiser as a command (bench/ggml-quantize.c,
// ggml_quantize_chunk) and llama-imatrix (tools/imatrix/imatrix.cpp from the llama.cpp source at
// LLAMA_CPP_SRC, default /tmp/llama.cpp, the same release). Dev only: needs gcc/g++ and bench/node_modules.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const LIB_DIR = join(HERE, 'node_modules', '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
const SOURCE = join(HERE, 'ggml-quantize.c');

let binary: string | undefined;
let work: string | undefined;

function workDir(): string {
  return (work ??= mkdtempSync(join(tmpdir(), 'llama-tools-')));
}

/** The driver binary, built once per process into a temp dir. */
export function ggmlQuantizeBinary(): string {
  if (binary) return binary;
  if (!existsSync(join(LIB_DIR, 'libggml-base.so'))) throw new Error(`no libggml-base.so in ${LIB_DIR} (npm run bench:install)`);
  const out = join(workDir(), 'ggml-quantize');
  execFileSync('gcc', ['-O2', SOURCE, '-o', out, `-L${LIB_DIR}`, '-l:libggml-base.so', `-Wl,-rpath,${LIB_DIR}`], { stdio: 'inherit' });
  statSync(out);
  return (binary = out);
}

/** ggml_quantize_chunk(type, x, rows × cols, imatrix): the bytes, and the seconds ggml took (wall, and its thread's CPU time). */
export function ggmlQuantize(type: number, x: Float32Array, rows: number, cols: number, imatrix?: Float32Array): { bytes: Uint8Array; seconds: number; cpuSeconds: number } {
  const bin = ggmlQuantizeBinary();
  const src = join(work!, 'src.f32');
  const im = join(work!, 'im.f32');
  const out = join(work!, 'out.bin');
  writeFileSync(src, new Uint8Array(x.buffer, x.byteOffset, rows * cols * 4));
  if (imatrix) writeFileSync(im, new Uint8Array(imatrix.buffer, imatrix.byteOffset, imatrix.byteLength));
  const r = spawnSync(bin, [String(type), String(rows), String(cols), src, imatrix ? im : '-', out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ggml-quantize ${type} failed (${r.status ?? r.signal}): ${r.stderr}`);
  const [wall, cpu] = r.stderr.trim().split(/ s ?/).map(Number.parseFloat);
  return { bytes: new Uint8Array(readFileSync(out)), seconds: wall, cpuSeconds: cpu };
}

const tools = new Map<string, string>();

/**
 * llama.cpp's tool `name` (imatrix, quantize), built once per process (10-30 s) from
 * tools/<name>/*.cpp and linked against node-llama-cpp's libraries, which it loads its CPU
 * backend from (symlinked beside the binary, where ggml looks).
 */
export function llamaToolBinary(name: 'imatrix' | 'quantize'): string {
  const have = tools.get(name);
  if (have) return have;
  const src = process.env.LLAMA_CPP_SRC ?? '/tmp/llama.cpp';
  const dirSrc = join(src, 'tools', name);
  if (!existsSync(dirSrc)) throw new Error(`no llama.cpp source at ${src} (set LLAMA_CPP_SRC)`);
  const dir = workDir();
  const out = join(dir, `llama-${name}`);
  const sources = readdirSync(dirSrc).filter((f) => f.endsWith('.cpp')).map((f) => join(dirSrc, f));
  execFileSync('g++', [
    '-O1', '-std=c++17', ...sources, `-I${dirSrc}`, `-I${join(src, 'common')}`, `-I${join(src, 'include')}`,
    `-I${join(src, 'ggml', 'include')}`, `-I${join(src, 'vendor')}`, '-o', out, `-L${LIB_DIR}`, '-l:libllama-common.so', '-l:libllama.v0.4.0.so',
    '-l:libggml.v0.4.0.so', '-l:libggml-base.so', `-Wl,-rpath,${LIB_DIR}`,
  ], { stdio: 'inherit' });
  for (const f of readdirSync(LIB_DIR)) if (f.endsWith('.so') && !existsSync(join(dir, f))) symlinkSync(join(LIB_DIR, f), join(dir, f));
  tools.set(name, out);
  return out;
}

/** Run llama-<name> with these arguments (imatrix: -m MODEL -f TEXT -o OUT -c 64 …; quantize: [--imatrix F] IN OUT TYPE N). */
export function llamaTool(name: 'imatrix' | 'quantize', args: string[]): void {
  const r = spawnSync(llamaToolBinary(name), args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`llama-${name} ${args.join(' ')} failed (${r.status ?? r.signal}): ${r.stderr.split('\n').slice(-5).join(' | ')}`);
}
