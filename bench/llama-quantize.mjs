// Quantise a GGUF with llama.cpp's own quantiser (node-llama-cpp's libllama, the reference
// binaries), with a made-up importance matrix for the named tensors (bench/native/llama-quantize-imatrix.c):
//
//   node bench/llama-quantize.mjs IN.gguf OUT.gguf FTYPE [NAME:COLS ...]
//
// Compiles the C program into bench/models/native/ on first use (needs gcc and /tmp/llama.cpp's headers).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const HERE = dirname(fileURLToPath(import.meta.url));
const LIB = join(HERE, 'node_modules', '@node-llama-cpp', 'linux-x64', 'bins', 'linux-x64');
const SRC = join(HERE, 'native', 'llama-quantize-imatrix.c');
const LLAMA = process.env.LLAMA_CPP_SRC ?? '/tmp/llama.cpp';

export function llamaQuantizeBinary() {
  const dir = join(HERE, 'models', 'native');
  const bin = join(dir, 'llama-quantize-imatrix');
  if (!existsSync(bin)) {
    mkdirSync(dir, { recursive: true });
    execFileSync('gcc', ['-O1', '-o', bin, SRC, `-I${LLAMA}/include`, `-I${LLAMA}/ggml/include`, `-L${LIB}`, '-l:libllama.v0.4.0.so', '-l:libggml.v0.4.0.so', `-Wl,-rpath,${LIB}`], { stdio: 'inherit' });
  }
  return bin;
}

/** Runs llama.cpp's quantiser: src → dst in file type `ftype` (llama_ftype number), imatrix for `specs` ("name:cols"). */
export function llamaQuantize(src, dst, ftype, specs) {
  execFileSync(llamaQuantizeBinary(), [src, dst, String(ftype), ...specs], { stdio: ['ignore', 'ignore', 'inherit'] });
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [src, dst, ftype, ...specs] = process.argv.slice(2);
  llamaQuantize(src, dst, Number(ftype), specs);
  console.log(dst);
}
