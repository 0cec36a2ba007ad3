#!/usr/bin/env bash
# The GPU benchmark in one command, on a machine with a real GPU (first target: Linux x64, NVIDIA,
# Vulkan driver): installs what it needs, builds the 8B-shaped models, runs Pantheon's WebGPU
# backend beside llama.cpp's Vulkan (and CUDA, with nvidia-smi) builds and prints one table.
#   bench/gpu.sh [--types Q4_K_M,Q8_0] [--runs 3] [--prompt 512] [--gen 128] [--gpu-bandwidth GBPS]
set -euo pipefail
cd "$(dirname "$0")/.."
[ -d node_modules/webgpu ] || npm ci --no-audit --no-fund
[ -d bench/node_modules/node-llama-cpp ] || npm run -s bench:install
[ -f build/wasm/kernels.wasm ] || npm run -s build:wasm
# Dawn (WebGPU) and llama.cpp's Vulkan build both load the Vulkan loader
if ! ldconfig -p 2>/dev/null | grep -q 'libvulkan\.so\.1'; then
  echo "bench/gpu.sh: libvulkan.so.1 is missing; install the Vulkan loader and the GPU's ICD (Debian/Ubuntu: apt-get install libvulkan1, plus the NVIDIA driver)" >&2
  exit 1
fi
exec node bin/run-ts.mjs bench/gpu.ts "$@"
