export * from './types.js';
export * from './builtin.js';
export * from './detect.js';
export * from './info.js';
export * from './render.js';
export * from './reasoning.js';
export * from './budget.js';
export * from './context-policy.js';
