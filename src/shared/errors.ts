// Errors that cross process boundaries. Each failure is its own class with a stable `code`; across
// IPC an error travels as { name, code, message } and is rebuilt as the same class on the other side.

export interface SerializedError {
  name: string;
  code: string;
  message: string;
}

export class PantheonError extends Error {
  constructor(readonly code: string, message: string) {
    super(message);
    this.name = new.target.name;
  }
  toJSON(): SerializedError {
    return { name: this.name, code: this.code, message: this.message };
  }
}

/** A GGUF file that cannot be read: truncated, corrupt, hostile, or a version we do not read. */
export class GgufError extends PantheonError {
  /** The file it is about, when the reader knows it (the CLI names it before the message). */
  file?: string;
  constructor(code: GgufErrorCode, message: string, readonly offset?: number) {
    super(code, offset === undefined ? message : `${message} (at byte ${offset})`);
  }
}

export type GgufErrorCode =
  | 'GGUF_NOT_FOUND'
  | 'GGUF_IO'
  | 'GGUF_BAD_MAGIC'
  | 'GGUF_BIG_ENDIAN'
  | 'GGUF_VERSION'
  | 'GGUF_TRUNCATED'
  | 'GGUF_BAD_VALUE'
  | 'GGUF_DUPLICATE'
  | 'GGUF_BAD_TENSOR'
  | 'GGUF_TOO_LARGE';

/** A model file that parses but cannot be run (unsupported architecture, missing tensor, type). */
export class ModelError extends PantheonError {}

/** The engine process or worker pool failed (crashed, killed, out of memory). */
export class EngineError extends PantheonError {}

/** A request that was cancelled by the user. */
export class CancelledError extends PantheonError {
  constructor(message = 'Cancelled.') {
    super('CANCELLED', message);
  }
}

/** The prompt does not fit in the context window. */
export class ContextFullError extends PantheonError {
  constructor(readonly used: number, readonly size: number) {
    super('CONTEXT_FULL', `The conversation needs ${used} tokens but the context holds ${size}. Start a new chat or load the model with a larger context.`);
  }
}

/** Bad arguments from a caller (CLI usage, IPC payload). */
export class UsageError extends PantheonError {
  constructor(message: string) {
    super('USAGE', message);
  }
}

const registry: Record<string, new (code: string, message: string) => PantheonError> = {
  PantheonError,
  ModelError,
  EngineError,
};

/** Serialise any thrown value for a process boundary. */
export function serializeError(err: unknown): SerializedError {
  if (err instanceof PantheonError) return err.toJSON();
  if (err instanceof Error) return { name: 'PantheonError', code: 'INTERNAL', message: err.message };
  return { name: 'PantheonError', code: 'INTERNAL', message: String(err) };
}

/** Rebuild an error serialised by `serializeError` as the same class. */
export function deserializeError(e: SerializedError): PantheonError {
  let err: PantheonError;
  switch (e.name) {
    case 'GgufError':
      err = new GgufError(e.code as GgufErrorCode, e.message);
      break;
    case 'CancelledError':
      err = new CancelledError(e.message);
      break;
    case 'UsageError':
      err = new UsageError(e.message);
      break;
    case 'ContextFullError':
      err = new ContextFullError(0, 0);
      break;
    default: {
      const Ctor = registry[e.name] ?? PantheonError;
      err = new Ctor(e.code, e.message);
    }
  }
  // The message was already complete on the sending side; keep it exactly.
  err.message = e.message;
  return err;
}
