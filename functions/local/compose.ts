/**
 * The one place that builds the local runtime: the SQLite store in the data dir and an
 * adapter for every port over it, then the ingest and worker dependencies of `serve` and
 * the stores of the CLI. `serve` opens it as the data dir's single consumer (it takes the
 * serve lock, migrates a dynalite data dir, releases messages left in flight); the CLI
 * opens the same database alongside it.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Config } from '../core/config/types';
import { HookError, describeError } from '../core/errors';
import type { IngestDeps } from '../core/ingest/service';
import { SubscriptionCache } from '../core/ingest/subscription-cache';
import type { Logger } from '../core/log';
import type { Clock } from '../core/ports';
import type { WorkerDeps } from '../core/worker/process';
import { StoreDb } from './sqlite/db';
import { SqliteAtomicAccept } from './sqlite/accept';
import { SqliteCounterStore } from './sqlite/counters';
import { SqliteDeadLetterQueue } from './sqlite/dead-letter-queue';
import { SqliteDebounceStore } from './sqlite/debounce';
import { SqliteDedupStore } from './sqlite/dedup';
import { SqliteEventLog } from './sqlite/event-log';
import { expireOld } from './sqlite/housekeeping';
import { SqliteLeaseStore } from './sqlite/leases';
import { LEGACY_DIR } from './sqlite/legacy-dir';
import { SqlitePayloadStore } from './sqlite/payloads';
import { SqliteQueue } from './sqlite/queue';
import { SqliteAtomicRelease } from './sqlite/release';
import { SqliteRequestLog } from './sqlite/request-log';
import { acquireServeLock, storeReplacedUnderServe, type ServeLock } from './sqlite/serve-lock';
import { SqliteSubscriptionStore } from './sqlite/subscriptions';

export const LOCAL_VISIBILITY_TIMEOUT_MS = 6 * 60_000;
export const LOCAL_MAX_RECEIVE_COUNT = 5;

export interface LocalRuntimeOptions {
  /** `serve` is the data dir's single consumer; `cli` commands open the store beside it. */
  role: 'serve' | 'cli';
  clock: Clock;
  /** Called after every send (the CLI wakes serve's consumer with it). */
  onSend?: () => void;
  visibilityTimeoutMs?: number;
  maxReceiveCount?: number;
  /** Caps the database size in pages (tests of a full disk). */
  maxPageCount?: number;
  logger?: Logger;
}

export interface LocalRuntime {
  dataDir: string;
  store: StoreDb;
  subscriptions: SqliteSubscriptionStore;
  dedup: SqliteDedupStore;
  events: SqliteEventLog;
  payloads: SqlitePayloadStore;
  queue: SqliteQueue;
  leases: SqliteLeaseStore;
  counters: SqliteCounterStore;
  debounce: SqliteDebounceStore;
  /** Releases held records atomically (resume, and ingest's release when a resume raced it). */
  release: SqliteAtomicRelease;
  requests: SqliteRequestLog;
  /** The dead-letter table as `webhook dead-letters` / `redrive` see it. */
  deadLetters: SqliteDeadLetterQueue;
  /** Messages found in flight at start (serve only): they belonged to a process that is gone. */
  recovered: number;
  /** Epoch ms when this runtime opened (claims made before it by a dead serve are abandoned). */
  openedAt: number;
  ingestDeps(config: Pick<Config, 'webhooks'>, logger: Logger): IngestDeps;
  workerDeps(parts: Pick<WorkerDeps, 'agent' | 'skills' | 'targets' | 'config' | 'logger' | 'agentFor'>): WorkerDeps;
  /** Closes the store (see StoreDb.close: resolves once its checkpoint thread is gone too) and releases serve's lock. */
  close(): Promise<void>;
}

/** A CLI command refused because the store file is not the one the running serve opened. */
function storeReplacedError(file: string, pid: number | undefined): HookError {
  return new HookError('store_unavailable', [
    `The local store ${file} is not the file the running hookagent serve${pid ? ` (pid ${pid})` : ''} has open: it was removed or replaced while serve ran.`,
    'serve answers 503 until it is restarted, and nothing was created in its place: restart serve (stop it and start it again), then run this command again.',
  ].join('\n'));
}

export async function openLocalRuntime(dataDir: string, options: LocalRuntimeOptions): Promise<LocalRuntime> {
  let lock: ServeLock | undefined;
  let store: StoreDb | undefined;
  try {
    if (options.role === 'serve') {
      lock = acquireServeLock(dataDir);
      // The migration reads the old store through the DynamoDB SDK: loaded only when there is one.
      if (existsSync(join(dataDir, LEGACY_DIR))) await (await import('./sqlite/migrate-dynalite')).migrateDynalite(dataDir, options.logger);
    } else if (existsSync(join(dataDir, LEGACY_DIR))) {
      throw new HookError('store_migration_needed', `${join(dataDir, LEGACY_DIR)} holds data of the previous local store (dynalite). Run 'hookagent serve' once to migrate it to ${join(dataDir, 'hookagent.db')}, then run this command again.`);
    } else {
      // Opening would create a new, empty store (or use another file) beside a serve that writes to the lost one.
      const replaced = storeReplacedUnderServe(dataDir);
      if (replaced) throw storeReplacedError(replaced.file, replaced.pid);
    }
    store = StoreDb.open(dataDir, { ...(options.maxPageCount ? { maxPageCount: options.maxPageCount } : {}), checkpointInBackground: options.role === 'serve' });
    const opened = store;
    lock?.publishStore(opened.files.db);
    const openedAt = options.clock.now();
    const maxReceiveCount = options.maxReceiveCount ?? LOCAL_MAX_RECEIVE_COUNT;
    const queue = new SqliteQueue(opened, {
      visibilityTimeoutMs: options.visibilityTimeoutMs ?? LOCAL_VISIBILITY_TIMEOUT_MS, maxReceiveCount, clock: options.clock,
      ...(options.onSend ? { onSend: options.onSend } : {}),
    });
    let recovered = 0;
    const leases = new SqliteLeaseStore(opened, options.clock);
    if (options.role === 'serve') {
      recovered = await queue.releaseAll();
      await leases.dropWorkerLeases();
      // What expired while serve was stopped; startHousekeeping (housekeeping.ts) keeps it up while serve runs.
      await expireOld(opened, openedAt, options.logger ? { logger: options.logger } : {});
    }
    const events = new SqliteEventLog(opened);
    const runtime: LocalRuntime = {
      dataDir, store: opened, queue, recovered, openedAt,
      subscriptions: new SqliteSubscriptionStore(opened),
      dedup: new SqliteDedupStore(opened, options.clock),
      events,
      release: new SqliteAtomicRelease(opened, events, queue),
      payloads: new SqlitePayloadStore(opened, dataDir),
      leases,
      counters: new SqliteCounterStore(opened, options.clock),
      debounce: new SqliteDebounceStore(opened, options.clock),
      requests: new SqliteRequestLog(opened, (error) => options.logger?.warn('the request log could not be written', { error: describeError(error) })),
      deadLetters: new SqliteDeadLetterQueue(opened, queue),
      ingestDeps: (config, logger) => ({
        config, queue, logger, clock: options.clock,
        events: runtime.events, payloads: runtime.payloads, dedup: runtime.dedup, leases,
        requests: runtime.requests, debounce: runtime.debounce, release: runtime.release,
        atomic: new SqliteAtomicAccept(opened, runtime.dedup, runtime.events, queue, runtime.debounce),
        // The store's change counter keeps this cheap; a CLI change applies to the next request.
        subscriptions: new SubscriptionCache(runtime.subscriptions, 0, options.clock),
        // serve is the data dir's only ingest: a claim made before it opened belongs to a request that died with its process.
        ...(options.role === 'serve' ? { claimsAbandonedBefore: openedAt } : {}),
      }),
      workerDeps: (parts) => ({
        ...parts, events: runtime.events, payloads: runtime.payloads, subscriptions: runtime.subscriptions,
        clock: options.clock, maxReceiveCount, deadLetters: queue.deadLetterSink(), counters: runtime.counters, leases, debounce: runtime.debounce,
      }),
      close: () => {
        const closed = opened.close();
        lock?.release();
        return closed;
      },
    };
    return runtime;
  } catch (error) {
    await store?.close();
    lock?.release();
    throw error;
  }
}
