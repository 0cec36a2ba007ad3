export * from './params.js';
export * from './rng.js';
export * from './select.js';
export * from './sampler.js';
export * from './stop.js';
export * from './nucleus.js';
export * from './expsum.js';
