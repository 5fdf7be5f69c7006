/**
 * The local store: one SQLite database (`{data}/hookagent.db`) through better-sqlite3, in
 * WAL mode with `synchronous=FULL`, so a committed write is on disk. Writes are closures
 * queued with `write()`; every closure queued during one event-loop turn runs in ONE
 * transaction committed at the end of that turn (group commit), so a burst of requests
 * costs one fsync, not one each. Each closure runs in its own savepoint: one that throws
 * fails alone. A promise returned by `write()` resolves only once its transaction is
 * committed: a 202 answered after it is backed by an fsync.
 *
 * Several processes may open the database (serve and CLI commands): SQLite's locking and
 * a busy timeout make that safe; reads never block (WAL).
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { HookError } from '../../core/errors';
import { migrate } from './schema';

export const DB_FILE = 'hookagent.db';
const BUSY_TIMEOUT_MS = 5_000;

interface Pending {
  run: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** Codes of a database file that cannot be read as SQLite (not a transient condition). */
const DAMAGED = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_VTAB']);

function sqliteCode(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

export function isDiskFull(error: unknown): boolean {
  const code = sqliteCode(error) ?? '';
  return code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'SQLITE_IOERR_WRITE' || code === 'SQLITE_IOERR_FSYNC';
}

/** A store failure as the domain sees it: `unavailable`, retryable (ingest answers 503). */
export function storeUnavailable(what: string, error: unknown): HookError {
  if (error instanceof HookError) return error;
  const code = sqliteCode(error) ?? (error instanceof Error ? error.name : 'Error');
  const reason = isDiskFull(error) ? 'the disk is full' : (error instanceof Error ? error.message : String(error));
  return new HookError('unavailable', `${what} is unavailable (${code}: ${reason})`, { retryable: true, cause: error });
}

export function damagedStore(dataDir: string, error: unknown): HookError {
  const file = join(dataDir, DB_FILE);
  return new HookError('store_damaged', [
    `The local store ${file} is damaged (${sqliteCode(error) ?? 'error'}: ${error instanceof Error ? error.message : String(error)}).`,
    `Stop hookagent, move it aside (mv ${file} ${file}.damaged; also ${file}-wal and ${file}-shm if present) and start again with an empty store,`,
    `or try to recover it first with the sqlite3 shell: sqlite3 ${file}.damaged ".recover" | sqlite3 ${file}`,
  ].join('\n'), { cause: error });
}

export class StoreDb {
  readonly db: Database.Database;
  /** Transactions committed so far (one per event-loop turn with writes). */
  commits = 0;
  private pending: Pending[] = [];
  private scheduled = false;
  private closed = false;
  private readonly begin: Database.Statement;
  private readonly commit: Database.Statement;
  private readonly rollback: Database.Statement;

  private constructor(db: Database.Database, readonly dataDir: string) {
    this.db = db;
    this.begin = db.prepare('BEGIN IMMEDIATE');
    this.commit = db.prepare('COMMIT');
    this.rollback = db.prepare('ROLLBACK');
  }

  /** Opens (creating when absent) and migrates the store in `dataDir`. */
  static open(dataDir: string, options: { maxPageCount?: number } = {}): StoreDb {
    mkdirSync(dataDir, { recursive: true });
    const file = join(dataDir, DB_FILE);
    let db: Database.Database | undefined;
    try {
      db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
      db.pragma('journal_mode = WAL');
      db.pragma('synchronous = FULL');
      db.pragma('foreign_keys = OFF');
      if (options.maxPageCount) db.pragma(`max_page_count = ${options.maxPageCount}`);
      migrate(db, file);
      return new StoreDb(db, dataDir);
    } catch (error) {
      db?.close();
      if (DAMAGED.has(sqliteCode(error) ?? '')) throw damagedStore(dataDir, error);
      if (error instanceof HookError) throw error;
      throw new HookError('store_unavailable', `Cannot open the local store ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /**
   * Queues `run` (synchronous, using this database) for the transaction of this
   * event-loop turn; resolves with its result once that transaction is committed.
   */
  write<T>(run: () => T): Promise<T> {
    if (this.closed) return Promise.reject(new HookError('unavailable', 'The local store is closed (hookagent is stopping)', { retryable: true }));
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  /** A synchronous read of committed data, its failures mapped to `unavailable`. */
  read<T>(what: string, run: () => T): T {
    if (this.closed) throw new HookError('unavailable', 'The local store is closed (hookagent is stopping)', { retryable: true });
    try {
      return run();
    } catch (error) {
      throw storeUnavailable(what, error);
    }
  }

  /** Commits whatever is queued now (normally called at the end of the turn). */
  flush(): void {
    this.scheduled = false;
    const batch = this.pending;
    this.pending = [];
    if (batch.length === 0) return;
    if (this.closed) {
      for (const item of batch) item.reject(new HookError('unavailable', 'The local store is closed (hookagent is stopping)', { retryable: true }));
      return;
    }
    try {
      this.begin.run();
    } catch (error) {
      for (const item of batch) item.reject(storeUnavailable('The local store', error));
      return;
    }
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    for (const item of batch) {
      try {
        // Nested in the open transaction, better-sqlite3 runs this in a savepoint.
        outcomes.push({ ok: true, value: this.db.transaction(item.run)() });
      } catch (error) {
        outcomes.push({ ok: false, error });
      }
    }
    try {
      this.commit.run();
    } catch (error) {
      try {
        if (this.db.inTransaction) this.rollback.run();
      } catch {
        // SQLite rolled it back already.
      }
      for (const item of batch) item.reject(storeUnavailable('The local store', error));
      return;
    }
    this.commits += 1;
    batch.forEach((item, i) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(sqliteCode(outcome.error) ? storeUnavailable('The local store', outcome.error) : outcome.error);
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Commits what is queued, then closes; later writes fail with `unavailable`. */
  close(): void {
    if (this.closed) return;
    this.flush();
    this.closed = true;
    try {
      this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Checkpointing is housekeeping; the WAL is replayed on the next open anyway.
    }
    this.db.close();
  }
}
