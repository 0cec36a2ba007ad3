// Compile the AssemblyScript kernels to WebAssembly (build/wasm/). A build output, never committed.
import { existsSync } from 'node:fs';
const entry = 'src/engine/wasm/assembly/index.ts';
if (!existsSync(entry)) {
  console.log('build:wasm: no AssemblyScript kernels yet');
  process.exit(0);
}
const asc = await import('assemblyscript/asc');
const { error, stderr } = await asc.main([entry, '--outFile', 'build/wasm/kernels.wasm', '-O3', '--enable', 'simd', '--runtime', 'stub', '--initialMemory', '1', '--importMemory', '--maximumMemory', '65536'], {});
if (error) {
  console.error(stderr.toString());
  process.exit(1);
}
