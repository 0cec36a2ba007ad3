// ggml's quantiser as a command: builds bench/ggml-quantize.c against node-llama-cpp's
// libggml-base.so (the llama.cpp build the goldens come from) and runs it on float32 rows.
// Dev only: needs gcc and bench/node_modules.

import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const LIB_DIR = join(HERE, 'node_modules', '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
const SOURCE = join(HERE, 'ggml-quantize.c');

let binary: string | undefined;
let work: string | undefined;

/** The driver binary, built once per process into a temp dir. */
export function ggmlQuantizeBinary(): string {
  if (binary) return binary;
  if (!existsSync(join(LIB_DIR, 'libggml-base.so'))) throw new Error(`no libggml-base.so in ${LIB_DIR} (npm run bench:install)`);
  work = mkdtempSync(join(tmpdir(), 'ggml-quantize-'));
  const out = join(work, 'ggml-quantize');
  execFileSync('gcc', ['-O2', SOURCE, '-o', out, `-L${LIB_DIR}`, '-l:libggml-base.so', `-Wl,-rpath,${LIB_DIR}`], { stdio: 'inherit' });
  statSync(out);
  return (binary = out);
}

/** ggml_quantize_chunk(type, x, rows × cols, imatrix): the bytes, and the seconds ggml took. */
export function ggmlQuantize(type: number, x: Float32Array, rows: number, cols: number, imatrix?: Float32Array): { bytes: Uint8Array; seconds: number } {
  const bin = ggmlQuantizeBinary();
  const src = join(work!, 'src.f32');
  const im = join(work!, 'im.f32');
  const out = join(work!, 'out.bin');
  writeFileSync(src, new Uint8Array(x.buffer, x.byteOffset, rows * cols * 4));
  if (imatrix) writeFileSync(im, new Uint8Array(imatrix.buffer, imatrix.byteOffset, imatrix.byteLength));
  const r = spawnSync(bin, [String(type), String(rows), String(cols), src, imatrix ? im : '-', out], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`ggml-quantize ${type} failed (${r.status ?? r.signal}): ${r.stderr}`);
  return { bytes: new Uint8Array(readFileSync(out)), seconds: Number.parseFloat(r.stderr) };
}
