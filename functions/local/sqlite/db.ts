/**
 * The local store: one SQLite database (`{data}/hookagent.db`) through better-sqlite3, in
 * WAL mode. Writes are closures queued with `write()`; every closure queued during one
 * event-loop turn runs in ONE transaction committed at the end of that turn (group
 * commit), so a burst of requests costs one fsync, not one each. Each closure runs in its
 * own savepoint: one that throws fails alone. A promise returned by `write()` resolves
 * only once its transaction is committed AND the WAL is fsync'd: a 202 answered after it
 * is on disk, as with `synchronous=FULL`. The fsync is not made inside SQLite's COMMIT
 * (which would block the event loop for each commit) but right after it, with
 * `fdatasync` on the WAL file in libuv's thread pool: the loop keeps serving, and the
 * commits made while one fsync runs share the next one. (`synchronous=NORMAL` then
 * only tells SQLite not to sync at commit; checkpoints still sync the WAL and the
 * database as they always do.) Options `{ syncInline: true }` keeps SQLite's own
 * `synchronous=FULL` instead.
 *
 * Several processes may open the database (serve and CLI commands): SQLite's locking and
 * a busy timeout make that safe; reads never block (WAL).
 *
 * A connection keeps the files it opened, also once they are no longer at their paths (a
 * store removed, or another moved over it, while serve runs): what it writes then is gone at
 * the next start. So after each WAL fsync the database file at the path is compared with the
 * one open here (one stat per fsync, which covers every write committed meanwhile: 10–15 µs
 * measured, 0.2 µs per write under load), and serve's checkpoint thread compares it and the
 * WAL every 25 ms; once one differs, the store is `lost`: every write and read fails with
 * the reason.
 */
import type Database from 'better-sqlite3';
import { closeSync, fdatasync, fdatasyncSync } from 'node:fs';
import { join } from 'node:path';
import { HookError } from '../../core/errors';
import { startCheckpointer, type Checkpointer } from './checkpointer';
import { openConnection, type ConnectionOptions } from './connection';
import { DAMAGED, damagedStore, sqliteCode, storeUnavailable } from './store-errors';
import { DB_FILE, fileIdentity, type OpenedFiles } from './store-files';
import { runInTransaction, transactionStatements, type TransactionStatements } from './transaction';

export { damagedStore, isDiskFull, storeUnavailable } from './store-errors';
export { DB_FILE, fileIdentity, ownerOnly, type OpenedFiles } from './store-files';

/** Writes held back while an fsync runs before they are committed anyway (bounds latency and memory). */
const MAX_HELD_WRITES = 1_000;

interface Pending {
  run: () => unknown;
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export class StoreDb {
  readonly db: Database.Database;
  /** Transactions committed so far (one per event-loop turn with writes). */
  commits = 0;
  /** The background checkpointer, when this connection has one (serve). */
  checkpointer: Checkpointer | undefined;
  private pending: Pending[] = [];
  private scheduled = false;
  private closed = false;
  /** Committed writes waiting for the WAL fsync that covers them. */
  private unsynced: Array<() => void> = [];
  private unsyncedFailures: Array<(error: unknown) => void> = [];
  private syncing = false;
  /** Set by `close`: resolves once the checkpoint thread has exited. */
  private closing: Promise<void> | undefined;
  /** See `lost`. */
  private lostFile: { file: string; error: HookError } | undefined;
  private lostListeners: Array<(file: string, error: HookError) => void> = [];
  /** A lost store's WAL was copied into the open file and emptied (see `emptyWal`). */
  private walEmptied = false;
  private readonly stmts: TransactionStatements;

  private constructor(db: Database.Database, readonly dataDir: string, private readonly walFd: number | undefined, readonly files: OpenedFiles) {
    this.db = db;
    this.stmts = transactionStatements(db);
  }

  /**
   * Opens (creating when absent) and migrates the store in `dataDir`.
   * `checkpointInBackground` (serve): WAL checkpoints run in a worker thread (checkpointer.ts)
   * instead of inside a commit on the event loop.
   */
  static open(dataDir: string, options: ConnectionOptions & { checkpointInBackground?: boolean } = {}): StoreDb {
    const file = join(dataDir, DB_FILE);
    let db: Database.Database | undefined;
    try {
      const opened = openConnection(dataDir, file, options);
      db = opened.db;
      const { walFd, files } = opened;
      const store = new StoreDb(db, dataDir, walFd, files);
      // The thread copies most pages ahead (PASSIVE, beside the writes); SQLite's own
      // checkpoint then has little left to copy on the event loop, and only a checkpoint
      // that catches up with the writer lets the WAL start over.
      // It also watches the paths: an idle serve notices a lost store without a write.
      if (walFd !== undefined && options.checkpointInBackground) store.checkpointer = startCheckpointer(file, { files, onMoved: (moved) => store.markLost(moved) });
      return store;
    } catch (error) {
      if (db?.open) db.close();
      if (DAMAGED.has(sqliteCode(error) ?? '')) throw damagedStore(dataDir, error);
      if (error instanceof HookError) throw error;
      throw new HookError('store_unavailable', `Cannot open the local store ${file}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
    }
  }

  /**
   * Queues `run` (synchronous, using this database) for the transaction of this
   * event-loop turn; resolves with its result once that transaction is committed and on
   * disk. `durable: false` resolves at the commit, before the fsync: for a write that
   * promises nothing to anyone by itself (a claim, a worker's progress) and is followed
   * by a durable one; the WAL is appended in order, so the fsync of a later write covers
   * every earlier commit. `now: true` commits at once, with whatever else is queued,
   * instead of at the end of the turn or after the fsync in progress: for a write that
   * records something done outside that must not be done again (a chat post). Committed,
   * it is in the WAL through the operating system, so a kill of the process no longer
   * loses it; only a crash of the machine before the next fsync could.
   */
  write<T>(run: () => T, options: { durable?: boolean; now?: boolean } = {}): Promise<T> {
    if (this.closed) return Promise.reject(new HookError('unavailable', 'The local store is closed (hookagent is stopping)', { retryable: true }));
    if (this.lostFile) return Promise.reject(this.lostFile.error);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ run, durable: options.durable ?? true, resolve: resolve as (value: unknown) => void, reject });
      if (options.now) {
        // A turn's flush already scheduled then finds nothing left and returns.
        this.flush();
        return;
      }
      if (this.scheduled) {
        if (this.syncing && this.pending.length >= MAX_HELD_WRITES) setImmediate(() => this.flush());
        return;
      }
      this.scheduled = true;
      // While a WAL fsync runs, writes wait for it and go in together: one transaction
      // (and one fsync) per sync period under load, not one per event-loop turn.
      if (!this.syncing) setImmediate(() => this.flush());
    });
  }

  /** Resolves once every write queued so far is committed (whether it succeeded or not). */
  committed(): Promise<void> {
    return this.write(() => undefined, { durable: false }).then(() => undefined, () => undefined);
  }

  /** A synchronous read of committed data, its failures mapped to `unavailable`. */
  read<T>(what: string, run: () => T): T {
    if (this.closed) throw new HookError('unavailable', 'The local store is closed (hookagent is stopping)', { retryable: true });
    if (this.lostFile) throw this.lostFile.error;
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
    if (this.closed || this.lostFile) {
      const error = this.lostFile?.error ?? new HookError('unavailable', 'The local store is closed (hookagent is stopping)', { retryable: true });
      for (const item of batch) item.reject(error);
      return;
    }
    const result = runInTransaction(this.db, this.stmts, batch.map((item) => item.run));
    if ('failed' in result) {
      for (const item of batch) item.reject(storeUnavailable('The local store', result.failed));
      return;
    }
    const { outcomes } = result;
    this.commits += 1;
    // Without a WAL fsync of our own (below), each commit checks the file itself: it fsyncs inline anyway.
    if (this.walFd === undefined && !this.fileInPlace()) {
      for (const item of batch) item.reject(this.lostFile!.error);
      return;
    }
    const settle = (item: Pending, i: number) => {
      const outcome = outcomes[i]!;
      if (outcome.ok) item.resolve(outcome.value);
      else item.reject(sqliteCode(outcome.error) ? storeUnavailable('The local store', outcome.error) : outcome.error);
    };
    const durable: Array<[Pending, number]> = [];
    batch.forEach((item, i) => {
      if (this.walFd === undefined || !item.durable) settle(item, i);
      else durable.push([item, i]);
    });
    if (durable.length === 0) return;
    this.unsynced.push(() => durable.forEach(([item, i]) => settle(item, i)));
    this.unsyncedFailures.push((error) => durable.forEach(([item]) => item.reject(storeUnavailable('The local store', error))));
    this.sync();
  }

  /** One fdatasync of the WAL at a time; commits made meanwhile wait for the next one. */
  private sync(): void {
    if (this.syncing || this.unsynced.length === 0 || this.walFd === undefined) return;
    this.syncing = true;
    const settled = this.unsynced;
    const failed = this.unsyncedFailures;
    this.unsynced = [];
    this.unsyncedFailures = [];
    fdatasync(this.walFd, (error) => {
      this.syncing = false;
      if (error) failed.forEach((fail) => fail(error));
      // What is on disk now is only kept if it is in the file at the store's path.
      else if (!this.fileInPlace()) failed.forEach((fail) => fail(this.lostFile!.error));
      else settled.forEach((settle) => settle());
      if (this.scheduled) setImmediate(() => this.flush());
      this.sync();
    });
  }

  get isOpen(): boolean {
    return !this.closed;
  }

  /** Set once a file this connection writes is no longer at its path: which one, and the error every access fails with. */
  get lost(): { file: string; error: HookError } | undefined {
    return this.lostFile;
  }

  /** `listener` runs once, when the store is found lost. */
  onLost(listener: (file: string, error: HookError) => void): void {
    this.lostListeners.push(listener);
  }

  /** False (and the store lost) once the database file this connection opened is no longer at its path. */
  fileInPlace(): boolean {
    if (!this.lostFile && fileIdentity(this.files.path) !== this.files.db) this.markLost(this.files.path);
    return !this.lostFile;
  }

  private markLost(file: string): void {
    if (this.lostFile || this.closed) return;
    const error = new HookError('unavailable', `The store file ${file} was removed or replaced while hookagent had it open (what it writes now would be lost); restart serve`, { retryable: true });
    this.lostFile = { file, error };
    // Nothing is written from here on. The WAL left at the path would be replayed onto the file
    // found there at the next start (a record this serve refused showed up as a duplicate): copy
    // it into the database file this connection has open (a store moved aside gets it all) and
    // empty it. serve only answers 503 from now on.
    this.emptyWal();
    for (const listener of this.lostListeners) listener(file, error);
  }

  /**
   * TRUNCATE checkpoint of a lost store, tried until it goes through: SQLite refuses it at
   * once (SQLITE_BUSY, or a busy result) while another connection runs a checkpoint, such as
   * the checkpoint thread's in its last round before it saw the move (it stops checkpointing
   * then). Retried every 10 ms for up to 2 s, and once more at close.
   */
  private emptyWal(attempt = 0): void {
    if (this.walEmptied || !this.db.open) return;
    try {
      const [result] = this.db.pragma('wal_checkpoint(TRUNCATE)') as Array<{ busy: number }>;
      this.walEmptied = result?.busy === 0;
    } catch {
      this.walEmptied = false;
    }
    if (!this.walEmptied && !this.closed && attempt < 200) setTimeout(() => this.emptyWal(attempt + 1), 10).unref();
  }

  /**
   * Commits what is queued, then closes; later writes fail with `unavailable`. Done when it
   * returns, but for the checkpoint thread's own connection: the promise resolves once that
   * thread has exited too (until then it may still touch the files; await it before removing them).
   */
  close(): Promise<void> {
    if (this.closing) return this.closing;
    this.flush();
    this.closed = true;
    if (this.walFd !== undefined) {
      try {
        fdatasyncSync(this.walFd);
        this.unsynced.forEach((settle) => settle());
      } catch (error) {
        this.unsyncedFailures.forEach((fail) => fail(error));
      }
      this.unsynced = [];
      this.unsyncedFailures = [];
    }
    const stopped = this.checkpointer?.stop() ?? Promise.resolve();
    try {
      if (this.lostFile && !this.walEmptied) this.emptyWal(200);
      else this.db.pragma('wal_checkpoint(PASSIVE)');
    } catch {
      // Checkpointing is housekeeping; the WAL is replayed on the next open anyway.
    }
    this.db.close();
    // A sync still running in the thread pool settles promises that are settled already.
    if (this.walFd !== undefined && !this.syncing) closeSync(this.walFd);
    else if (this.walFd !== undefined) setImmediate(() => closeSync(this.walFd as number));
    this.closing = stopped;
    return stopped;
  }
}
