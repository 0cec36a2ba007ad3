// The WebGPU adapter Pantheon would use here, as one JSON line: { name, software, vendor, …, limits }.
// Exits 1 with one line on stderr when there is no real GPU (llvmpipe is not taken: it is the CPU,
// unless --allow-software).
//   node bin/run-ts.mjs bench/gpu-adapter.ts [--allow-software]
import { adapterName, GpuDevice } from '../src/engine/backend/webgpu/device.js';

const dev = GpuDevice.open(process.argv.includes('--allow-software') ? 'allow' : 'never');
if (!dev) {
  console.error('no GPU through WebGPU here (Dawn found no Vulkan, Metal or Direct3D 12 adapter that is not a software one); install the GPU driver and its Vulkan ICD (e.g. NVIDIA: the driver package with libvulkan1)');
  process.exit(1);
}
console.log(JSON.stringify({ name: adapterName(dev.info), ...dev.info }));
dev.dispose();
