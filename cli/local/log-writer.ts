/**
 * serve's log output: lines written in one event-loop turn go to stderr in one write. A
 * write to a pipe is a synchronous system call per line otherwise, and under load serve
 * logs a few lines per event. What is pending is written synchronously at exit, so a
 * process that stops (or fails) still prints its last lines; a `kill -9` can lose at most
 * the lines of the turn it interrupts.
 *
 * A log that cannot be written never stops the service: `serve >> serve.log 2>&1` on a disk
 * that fills up made stderr's write throw ENOSPC, uncaught, and serve exited 1 with work in
 * flight. Lines that cannot be written are dropped and counted; the first write that works
 * again is preceded by `onLost(count)`'s line, so the log says what it is missing.
 */
import { fstatSync, writeSync } from 'node:fs';
import { isatty } from 'node:tty';

const FLUSH_BYTES = 64 * 1024;

/**
 * The descriptor to write with `writeSync` when `stream` is how Node writes a file or a
 * device (a synchronous stream whose write throws, and then stays stuck mid-write for good);
 * undefined for a pipe or a terminal, whose failures (EPIPE, EIO) arrive as 'error' events.
 */
function fileDescriptorOf(stream: NodeJS.WritableStream): number | undefined {
  const fd = (stream as { fd?: unknown }).fd;
  if (typeof fd !== 'number') return undefined;
  try {
    const stat = fstatSync(fd);
    return stat.isFile() || (stat.isCharacterDevice() && !isatty(fd)) ? fd : undefined;
  } catch {
    return undefined;
  }
}

function writeAll(fd: number, text: string): void {
  const bytes = Buffer.from(text);
  for (let offset = 0; offset < bytes.length;) offset += writeSync(fd, bytes, offset, bytes.length - offset);
}

export interface LogWriterOptions {
  /** A line saying that `count` lines were lost (written before the next ones, once writing works again). */
  onLost?: (count: number) => string;
}

export function turnBufferedWriter(stream: NodeJS.WritableStream = process.stderr, options: LogWriterOptions = {}): (line: string) => void {
  let pending: string[] = [];
  let size = 0;
  let scheduled = false;
  let lost = 0;
  const fd = fileDescriptorOf(stream);
  // A pipe whose reader is gone, a terminal that closed: the lines are lost, the service goes on.
  if (fd === undefined) stream.on('error', () => undefined);
  const emit = (text: string): boolean => {
    try {
      // Synchronous for files, terminals and (on Linux) pipes, as a line-by-line write was.
      if (fd !== undefined) writeAll(fd, text);
      else stream.write(text);
      return true;
    } catch {
      return false;
    }
  };
  const flush = () => {
    scheduled = false;
    if (pending.length === 0) return;
    const lines = pending;
    pending = [];
    size = 0;
    const note = lost > 0 && options.onLost ? options.onLost(lost) : '';
    if (emit(note + lines.join(''))) lost = 0;
    else lost += lines.length;
  };
  process.on('exit', flush);
  return (line: string) => {
    pending.push(line);
    size += line.length;
    if (size >= FLUSH_BYTES) flush();
    else if (!scheduled) {
      scheduled = true;
      setImmediate(flush);
    }
  };
}
