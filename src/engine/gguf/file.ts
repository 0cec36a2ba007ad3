// Reading a GGUF header from disk without touching the tensor data. The header is read in growing
// chunks (1 MiB, then doubling, or straight to what the parser asked for), so inspecting a 40 GB
// model costs the same as inspecting a 40 MB one: only the header's own bytes are read.

import { openSync, readSync, closeSync, fstatSync, promises as fsp } from 'node:fs';
import { GgufError } from '../../shared/errors.js';
import { NeedMoreBytes, parseGgufHeader } from './parse.js';
import type { GgufHeader, GgufTensorInfo } from './types.js';

const FIRST_CHUNK = 1 << 20;

function ioError(_path: string, err: unknown): GgufError {
  const e = err as NodeJS.ErrnoException;
  if (e?.code === 'ENOENT') return new GgufError('GGUF_NOT_FOUND', 'no such file; check the path');
  if (e?.code === 'EISDIR') return new GgufError('GGUF_IO', 'is a folder, not a .gguf file');
  if (e?.code === 'EACCES' || e?.code === 'EPERM') return new GgufError('GGUF_IO', 'permission denied; check the file\'s permissions');
  return new GgufError('GGUF_IO', `cannot read the file (${e?.code ?? e?.message ?? String(err)})`);
}

/**
 * Parse the first `n` bytes read into a buffer of `size`; returns the header, or the size of the
 * next, larger read when the header goes on past the buffer.
 */
function tryParse(buf: Uint8Array, n: number, size: number, fileSize: number): GgufHeader | number {
  try {
    return parseGgufHeader(buf.subarray(0, n), n < size ? n : fileSize);
  } catch (err) {
    if (!(err instanceof NeedMoreBytes)) throw err;
    return Math.min(fileSize, Math.max(size * 2, err.atLeast + FIRST_CHUNK));
  }
}

function statSize(isDirectory: boolean, size: number): number {
  if (isDirectory) throw Object.assign(new Error('is a directory'), { code: 'EISDIR' });
  return size;
}

/** Read and parse the header of the GGUF file at `path`. Throws GgufError. */
/** `err` with the file it came from, when it is a GgufError that does not say yet. */
function aboutFile(err: unknown, path: string): unknown {
  if (err instanceof GgufError) err.file ??= path;
  return err;
}

export async function readGgufHeader(path: string): Promise<GgufHeader> {
  return readHeaderAsync(path).catch((err: unknown) => {
    throw aboutFile(err, path);
  });
}

async function readHeaderAsync(path: string): Promise<GgufHeader> {
  let fh: fsp.FileHandle;
  try {
    fh = await fsp.open(path, 'r');
  } catch (err) {
    throw ioError(path, err);
  }
  try {
    let fileSize: number;
    try {
      const st = await fh.stat();
      fileSize = statSize(st.isDirectory(), st.size);
    } catch (err) {
      throw ioError(path, err);
    }
    let size = Math.min(fileSize, FIRST_CHUNK);
    for (;;) {
      const buf = new Uint8Array(size);
      const { bytesRead } = await fh.read(buf, 0, size, 0);
      const r = tryParse(buf, bytesRead, size, fileSize);
      if (typeof r !== 'number') return r;
      size = r;
    }
  } finally {
    await fh.close();
  }
}

/** Synchronous form of readGgufHeader, for worker threads and the CLI. */
export function readGgufHeaderSync(path: string): GgufHeader {
  try {
    return readHeaderSync(path);
  } catch (err) {
    throw aboutFile(err, path);
  }
}

function readHeaderSync(path: string): GgufHeader {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    throw ioError(path, err);
  }
  try {
    let fileSize: number;
    try {
      const st = fstatSync(fd);
      fileSize = statSize(st.isDirectory(), st.size);
    } catch (err) {
      throw ioError(path, err);
    }
    let size = Math.min(fileSize, FIRST_CHUNK);
    for (;;) {
      const buf = new Uint8Array(size);
      const r = tryParse(buf, readSync(fd, buf, 0, size, 0), size, fileSize);
      if (typeof r !== 'number') return r;
      size = r;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Read one tensor's bytes into `into` (or a new array) from an open file descriptor. `into` may be
 * a view on WebAssembly memory, so the bytes go straight to where the kernels read them.
 */
export function readTensorBytesSync(fd: number, header: GgufHeader, tensor: GgufTensorInfo, into?: Uint8Array): Uint8Array {
  const out = into ?? new Uint8Array(tensor.bytes);
  if (out.length < tensor.bytes) throw new RangeError(`buffer of ${out.length} bytes is too small for tensor ${tensor.name} (${tensor.bytes} bytes)`);
  readTensorRange(fd, header, tensor, out.subarray(0, tensor.bytes), 0);
  return out.subarray(0, tensor.bytes);
}

/** dst ← bytes [fromByte, fromByte + dst.length) of the tensor's data, from an open file descriptor. */
export function readTensorRange(fd: number, header: GgufHeader, tensor: GgufTensorInfo, dst: Uint8Array, fromByte: number): void {
  if (fromByte < 0 || fromByte + dst.length > tensor.bytes) throw new RangeError(`read past the end of tensor ${tensor.name}`);
  const start = header.dataOffset + tensor.offset + fromByte;
  let done = 0;
  while (done < dst.length) {
    const n = readSync(fd, dst, done, Math.min(dst.length - done, 1 << 26), start + done);
    if (n <= 0) throw new GgufError('GGUF_TRUNCATED', `file ended while reading tensor "${tensor.name}": it is truncated`, start + done);
    done += n;
  }
}

/** Open `path`, read one named tensor's bytes, close. Convenience for tools and tests. */
export function readTensorBytes(path: string, header: GgufHeader, name: string): Uint8Array {
  const t = header.tensors.find((x) => x.name === name);
  if (!t) throw new GgufError('GGUF_BAD_TENSOR', `no tensor named "${name}"`);
  const fd = openSync(path, 'r');
  try {
    return readTensorBytesSync(fd, header, t);
  } finally {
    closeSync(fd);
  }
}
