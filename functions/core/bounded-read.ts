/**
 * Reading a file the user names (`--payload <file>`, config.yaml) without trusting its size: devices
 * such as /dev/zero, pipes and growing files have no useful size up front, so the bytes
 * are read in chunks and the read stops one byte past the limit with a clear error.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { HookError } from './errors';

const CHUNK = 64 * 1024;

/** The largest payload file `--payload` takes: the most any endpoint accepts (10 MB, as MAX_PAYLOAD_LIMIT). */
export const PAYLOAD_FILE_LIMIT = 10 * 1024 * 1024;

/**
 * Reads at most `limit` bytes of `path` as UTF-8. More is a HookError `too_large` whose
 * message starts with `what` and ends with `why` (what the limit is); an unreadable file
 * is `file_unreadable` (its `cause` keeps the errno error, ENOENT included).
 */
export function readFileBounded(path: string | 0, limit: number, what: string, why = 'the largest payload a webhook endpoint accepts'): string {
  // 0: standard input, already open (a pipe or socket /dev/stdin cannot always be opened again: ENXIO).
  let fd: number;
  try {
    fd = path === 0 ? 0 : openSync(path, 'r');
  } catch (error) {
    throw new HookError('file_unreadable', `${what}: cannot open '${path}': ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
  }
  const name = path === 0 ? 'standard input' : `'${path}'`;
  try {
    const buffer = Buffer.allocUnsafe(Math.min(limit + 1, CHUNK * 16));
    const chunks: Buffer[] = [];
    let total = 0;
    for (;;) {
      const room = Math.min(buffer.length, limit + 1 - total);
      let read: number;
      try {
        read = readSync(fd, buffer, 0, room, null);
      } catch (error) {
        // A non-blocking pipe with nothing in it yet: wait a moment (this read is synchronous by design).
        if ((error as NodeJS.ErrnoException).code === 'EAGAIN') {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10);
          continue;
        }
        throw new HookError('file_unreadable', `${what}: cannot read ${name}: ${(error as NodeJS.ErrnoException).code ?? String(error)}`, { cause: error });
      }
      if (read === 0) break;
      chunks.push(Buffer.from(buffer.subarray(0, read)));
      total += read;
      if (total > limit) {
        throw new HookError('too_large', `${what}: ${name} is larger than ${formatBytes(limit)}, ${why}`);
      }
    }
    return Buffer.concat(chunks, total).toString('utf8');
  } finally {
    if (path !== 0) closeSync(fd);
  }
}

function formatBytes(bytes: number): string {
  return bytes % (1024 * 1024) === 0 ? `${bytes / (1024 * 1024)} MB` : bytes % 1024 === 0 ? `${bytes / 1024} KB` : `${bytes} bytes`;
}
