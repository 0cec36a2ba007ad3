// The header worker's thread: one job per message (header-jobs.ts), so a slow or huge header
// never blocks Electron main (header-reader.ts runs it).

import { parentPort } from 'node:worker_threads';
import { HeaderJobs, type HeaderJob } from './header-jobs.js';

const jobs = new HeaderJobs();
parentPort?.on('message', (job: HeaderJob) => {
  void jobs.run(job).then((answer) => parentPort!.postMessage(answer));
});
