// Start a TypeScript worker-thread entry from source (tests, the dev harness): register tsx in
// this thread, then import workerData.entry. The built app starts the bundled .js entry directly.
import { register } from 'tsx/esm/api';
import { workerData } from 'node:worker_threads';

register();
await import(workerData.entry);
