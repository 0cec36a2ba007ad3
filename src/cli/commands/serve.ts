// `pantheon serve MODEL`: an OpenAI-compatible HTTP server over the model (engine/server), until
// Ctrl+C. Prints "listening on http://HOST:PORT/v1" when ready, then one stderr line per request.

import { UsageError } from '../../shared/errors.js';
import { OpenAiServer } from '../../engine/server/server.js';
import { optNumber, optString, parseArgs } from '../args.js';
import type { Command } from '../command.js';
import { MODEL_OPTIONS, loadModel } from './run.js';

export const serveCommand: Command = {
  name: 'serve',
  usage: 'serve MODEL [--host 127.0.0.1] [--port 8080] [--ctx N] [--threads N] [--backend scalar|wasm|pool|webgpu] [--gpu-layers N|auto|all] [--api-key KEY] [--parallel N] [--cors ORIGIN]',
  summary: 'serve the model over an OpenAI-compatible HTTP API (/v1/models, /v1/chat/completions, /v1/completions) until Ctrl+C',
  async run(argv, io) {
    const args = parseArgs(argv, ['host', 'port', 'api-key', 'parallel', 'cors', ...MODEL_OPTIONS], []);
    if (args.positionals.length !== 1) throw new UsageError('serve takes one MODEL file');
    const host = optString(args, 'host') ?? '127.0.0.1';
    const port = optNumber(args, 'port', 8080, { int: true, min: 0, max: 65535 });
    const apiKey = optString(args, 'api-key');
    if (apiKey === '') throw new UsageError('--api-key needs a non-empty key');
    // --parallel N: N requests at once, each with its own KV cache of --ctx positions, their
    // decode steps batched (decode-batch.ts)
    const parallel = optNumber(args, 'parallel', 1, { int: true, min: 1, max: 64 });
    const cors = optString(args, 'cors');
    if (cors === '') throw new UsageError('--cors needs an origin (e.g. http://localhost:3000, or * for any)');

    const model = await loadModel(args.positionals[0], args, io);
    let server: OpenAiServer;
    try {
      server = await OpenAiServer.start(model, {
        host,
        port,
        apiKey,
        parallel,
        cors,
        onRequest: (e) => io.err(`${e.method} ${e.path} ${e.status}${e.reason ? ` ${e.promptTokens}+${e.completionTokens} tokens (${e.reason}), ${e.tokensPerS.toFixed(1)} tok/s` : ''}`),
      });
    } catch (err) {
      model.dispose();
      const code = (err as NodeJS.ErrnoException).code;
      if (code === 'EADDRINUSE') throw new UsageError(`port ${port} on ${host} is in use; pick another with --port`);
      throw err;
    }
    io.err(`${model.summary.name ?? server.id} (${model.summary.architecture}, ${model.summary.quantization}), context ${model.contextSize}${parallel > 1 ? ` × ${parallel} sequences` : ''}, ${model.backendName}`);
    if (server.interleaved) io.err(`--parallel ${parallel}: the sequences take their steps in turn, not as one batch (${server.interleaved})`);
    io.out(`listening on ${server.url}`);
    // Until Ctrl+C (or SIGTERM): then stop accepting, cancel what runs, and exit 0.
    await new Promise<void>((resolve) => {
      const stop = () => {
        process.off('SIGINT', stop);
        process.off('SIGTERM', stop);
        resolve();
      };
      process.on('SIGINT', stop);
      process.on('SIGTERM', stop);
    });
    io.err('stopping');
    await server.close();
    model.dispose();
    return 0;
  },
};
