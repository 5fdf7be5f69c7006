/**
 * WAL checkpoints mostly off serve's event loop. SQLite's automatic checkpoint runs inside
 * the COMMIT that crosses its threshold: it copies the WAL's pages into the database file
 * and fsyncs it, on the thread that answers requests, and every request waiting then
 * waits for it (it showed in serve's p99). Here a worker thread with a connection of its
 * own runs a PASSIVE checkpoint (it never blocks readers or writers) each time the WAL has
 * grown by a threshold, so that the automatic checkpoint finds little left to copy.
 * The automatic one stays on: a PASSIVE checkpoint beside a writer that never pauses
 * never catches up with it, and only a checkpoint that does lets SQLite start the WAL
 * over (without it the WAL grew past 600 MB in a minute of load).
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** Checkpoint each time the WAL has grown by this much (SQLite's own checkpoint runs at 128 MB). */
export const CHECKPOINT_WAL_BYTES = 8 * 1024 * 1024;
const POLL_MS = 200;

// Plain CommonJS run by the worker thread; better-sqlite3 is required by absolute path (the
// thread does not resolve modules from hookagent's directory).
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
const { statSync } = require('node:fs');
const Database = require(workerData.module);
const db = new Database(workerData.file, { timeout: 5000 });
let checkpoints = 0;
const walBytes = () => { try { return statSync(workerData.file + '-wal').size; } catch { return 0; } };
let last = 0;
const tick = () => {
  const size = walBytes();
  // A WAL that SQLite started over keeps its file size: what counts is growth since the last checkpoint.
  if (size < last) last = 0;
  if (size - last < workerData.threshold) return;
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
    checkpoints += 1;
    last = size;
    parentPort.postMessage({ checkpoints });
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

/** Starts the thread; undefined when a worker thread cannot be had (the caller keeps SQLite's automatic checkpoints). */
export function startCheckpointer(file: string, options: { thresholdBytes?: number; onError?: (message: string) => void } = {}): Checkpointer | undefined {
  let worker: Worker;
  try {
    worker = new Worker(WORKER, {
      eval: true,
      workerData: { file, module: require.resolve('better-sqlite3'), threshold: options.thresholdBytes ?? CHECKPOINT_WAL_BYTES, pollMs: POLL_MS },
    });
  } catch {
    return undefined;
  }
  worker.unref();
  let checkpoints = 0;
  let waiters: Array<() => void> = [];
  worker.on('message', (message: { checkpoints?: number; error?: string }) => {
    if (message.error) options.onError?.(message.error);
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
