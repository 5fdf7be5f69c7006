/**
 * WAL checkpoints mostly off serve's event loop. SQLite's automatic checkpoint runs inside
 * the COMMIT that crosses its threshold: it copies the WAL's pages into the database file
 * and fsyncs it, on the thread that answers requests, and every request waiting then
 * waits for it (it showed in serve's p99). Here a worker thread with a connection of its
 * own runs a PASSIVE checkpoint (it never blocks readers or writers) every 25 ms: one with
 * nothing new to copy returns at once, without an fsync. Copying a little at a time keeps
 * the automatic checkpoint's share small, and a PASSIVE checkpoint that happens to catch
 * up between two commits lets SQLite start the WAL over by itself.
 * The automatic one stays on: a PASSIVE checkpoint beside a writer that never pauses
 * never catches up with it, and only a checkpoint that does lets SQLite start the WAL
 * over (without it the WAL grew past 600 MB in a minute of load).
 *
 * The first version checkpointed when the WAL file had grown by 8 MB, polled every 200 ms.
 * But a WAL that starts over keeps its file (up to journal_size_limit), so the size said
 * nothing until the WAL outgrew it again, and at 80 MB/s of WAL under load 200 ms is 16 MB:
 * the automatic checkpoint still found up to ~20 MB to copy, and stalled serve for 20–55 ms
 * about every 2,000 events (measured: 13 commits over 20 ms in 16 s of load).
 *
 * The same loop checks that the database and WAL files at their paths are still the ones
 * serve opened (db.ts, `lost`): off the event loop, so an idle serve notices too.
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { OpenedFiles } from './db';

const POLL_MS = 25;

// Plain CommonJS run by the worker thread; better-sqlite3 is required by absolute path (the
// thread does not resolve modules from hookagent's directory).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.file, { timeout: 5000 });
let checkpoints = 0;
let copied = -1;
let moved = false;
// As db.ts's fileIdentity: dev:ino of the file now at the path.
const identity = (path) => {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  return stat ? stat.dev + ':' + stat.ino : undefined;
};
const watch = () => {
  const { path, db: opened, wal } = workerData.files;
  const changed = identity(path) !== opened ? path : wal !== undefined && identity(path + '-wal') !== wal ? path + '-wal' : undefined;
  if (changed === undefined) return;
  moved = true;
  parentPort.postMessage({ moved: changed });
};
const tick = () => {
  if (workerData.files && !moved) {
    try {
      watch();
    } catch (error) {
      parentPort.postMessage({ error: String(error && error.message || error) });
    }
  }
  // Once a file moved, serve empties the WAL itself (db.ts): a checkpoint running here would
  // make its TRUNCATE fail at once with SQLITE_BUSY (one checkpointer at a time).
  if (moved) return;
  try {
    // [{ busy, log, checkpointed }]: frames in the WAL, and how many of them are in the database file now.
    const [result] = db.pragma('wal_checkpoint(PASSIVE)');
    if (result.log > 0 && result.checkpointed > 0 && result.checkpointed !== copied) {
      checkpoints += 1;
      parentPort.postMessage({ checkpoints });
    }
    copied = result.checkpointed;
  } catch (error) {
    parentPort.postMessage({ error: String(error && error.message || error) });
  }
};
const timer = setInterval(tick, workerData.pollMs);
parentPort.on('message', (message) => {
  if (message !== 'stop') return;
  clearInterval(timer);
  db.close();
  parentPort.close();
});
`;

export interface Checkpointer {
  /** Checkpoints made so far. */
  readonly checkpoints: number;
  /** Resolves at the next checkpoint (tests). */
  next(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Starts the thread; undefined when a worker thread cannot be had (the caller keeps SQLite's
 * automatic checkpoints). With `files`, the first of them found no longer at its path is
 * reported once to `onMoved`, by its path.
 */
export function startCheckpointer(file: string, options: { onError?: (message: string) => void; files?: OpenedFiles; onMoved?: (path: string) => void } = {}): Checkpointer | undefined {
  let worker: Worker;
  try {
    worker = new Worker(WORKER, {
      eval: true,
      workerData: { file, module: require.resolve('better-sqlite3'), pollMs: POLL_MS, files: options.files },
    });
  } catch {
    return undefined;
  }
  worker.unref();
  let checkpoints = 0;
  let waiters: Array<() => void> = [];
  worker.on('message', (message: { checkpoints?: number; error?: string; moved?: string }) => {
    if (message.error) options.onError?.(message.error);
    if (message.moved) options.onMoved?.(message.moved);
    if (message.checkpoints === undefined) return;
    checkpoints = message.checkpoints;
    const ready = waiters;
    waiters = [];
    ready.forEach((resolve) => resolve());
  });
  worker.on('error', (error) => options.onError?.(error.message));
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  return {
    get checkpoints() {
      return checkpoints;
    },
    next: () => new Promise<void>((resolve) => waiters.push(resolve)),
    stop: async () => {
      // Referenced again while it stops: the caller awaits its exit, and an unreferenced thread
      // would let the process end before that (a serve that cannot listen exited 0, silently).
      worker.ref();
      worker.postMessage('stop');
      await exited;
    },
  };
}

/** The WAL's size in bytes (0 when there is none). */
export function walBytes(file: string): number {
  try {
    return statSync(`${file}-wal`).size;
  } catch {
    return 0;
  }
}
