export * from './arch.js';
export * from './hparams.js';
export * from './weights.js';
export * from './kv-cache.js';
export * from './forward.js';
export * from './load.js';
