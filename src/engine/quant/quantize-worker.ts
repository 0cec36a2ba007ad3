// A quantize-pool worker: quantises the rows it is sent, or reads from the model file, and sends
// the bytes back (see quantize-pool.ts). It runs the same quantisers as the calling thread, so the bytes are the same.

import { parentPort } from 'node:worker_threads';
import { quantizeRows } from './index.js';
import { quantizeFileRows, type QuantizeJob, type QuantizeReply } from './quantize-pool.js';

const port = parentPort;
if (port) {
  port.on('message', (job: QuantizeJob) => {
    let reply: QuantizeReply;
    try {
      const data = job.src
        ? quantizeFileRows(job.type, job.src, 0, job.rows, job.cols, job.imatrix)
        : quantizeRows(job.type, job.x!, job.rows, job.cols, job.imatrix);
      reply = { id: job.id, kind: 'done', data };
      port.postMessage(reply, [data.buffer as ArrayBuffer]);
    } catch (e) {
      reply = { id: job.id, kind: 'error', message: e instanceof Error ? e.message : String(e) };
      port.postMessage(reply);
    }
  });
}
