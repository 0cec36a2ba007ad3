#!/usr/bin/env node
// Run a TypeScript file (a benchmark or script) with tsx: node bin/run-ts.mjs FILE.ts [args...]
import { register } from 'tsx/esm/api';
import { pathToFileURL } from 'node:url';
import { resolve } from 'node:path';

register();
const [file, ...rest] = process.argv.slice(2);
process.argv = [process.argv[0], resolve(file), ...rest];
await import(pathToFileURL(resolve(file)).href);
