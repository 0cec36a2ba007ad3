export * from './gbnf.js';
export * from './automaton.js';
export * from './trie.js';
export * from './matcher.js';
export * from './json-schema.js';
export * from './sampling.js';
export * from './structured.js';
