// What the header worker (header-worker.ts) does for one message: a library entry's summary, the
// page's view of an opened model, or a slice of one of its long metadata arrays. All of it parses
// a header, so all of it runs off the main thread; the worker keeps the last opened header so
// slices do not parse it again. Also run in process when the worker entry is missing.

import type { MetaArraySlice, OpenedModel } from '../../shared/contract.js';
import { serializeError, type SerializedError } from '../../shared/errors.js';
import { readGgufHeader, type GgufHeader } from '../../engine/gguf/index.js';
import { SUPPORTED_ARCHITECTURES } from '../../engine/model/arch.js';
import { readEntrySummary, type EntrySummary } from './header-summary.js';
import { metaArraySlice, openedView } from './opened-model.js';

export type HeaderJob =
  | { id: number; kind: 'summary'; path: string }
  | { id: number; kind: 'open'; path: string }
  | { id: number; kind: 'metaArray'; path: string; key: string; offset: number; limit: number; query?: string };

/** What each job kind answers with. */
export interface HeaderResults {
  summary: EntrySummary;
  open: Omit<OpenedModel, 'entry'>;
  metaArray: MetaArraySlice;
}

export type HeaderAnswer =
  | { id: number; ok: true; value: HeaderResults[HeaderJob['kind']] }
  | { id: number; ok: false; error: SerializedError };

/** Runs jobs, keeping the header of the last opened file. */
export class HeaderJobs {
  private last: { path: string; header: GgufHeader } | null = null;

  private async header(path: string): Promise<GgufHeader> {
    if (this.last?.path === path) return this.last.header;
    const header = await readGgufHeader(path);
    this.last = { path, header };
    return header;
  }

  async run(job: HeaderJob): Promise<HeaderAnswer> {
    try {
      switch (job.kind) {
        case 'summary':
          return { id: job.id, ok: true, value: await readEntrySummary(job.path) };
        case 'open':
          this.last = null; // opening reads the file again, as it is now
          return { id: job.id, ok: true, value: openedView(await this.header(job.path), SUPPORTED_ARCHITECTURES) };
        case 'metaArray':
          return { id: job.id, ok: true, value: metaArraySlice(await this.header(job.path), job.key, job.offset, job.limit, job.query) };
      }
    } catch (err) {
      return { id: job.id, ok: false, error: serializeError(err) };
    }
  }
}
