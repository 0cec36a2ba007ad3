export * from './types.js';
export * from './ggml-types.js';
export * from './parse.js';
export * from './file.js';
export * from './writer.js';
export * from './keys.js';
