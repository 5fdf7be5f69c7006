/**
 * Opening the store's SQLite connection (db.ts): pragmas, schema, and the WAL file held
 * open for the group commit's own fsync.
 */
import Database from 'better-sqlite3';
import { fdatasyncSync, fstatSync, openSync } from 'node:fs';
import { migrate } from './schema';
import { fileIdentity, ownerOnly, type OpenedFiles } from './store-files';

const BUSY_TIMEOUT_MS = 5_000;

export interface ConnectionOptions {
  maxPageCount?: number;
  /** Keep SQLite's own `synchronous=FULL` (an fsync inside each COMMIT). */
  syncInline?: boolean;
}

export interface Connection {
  db: Database.Database;
  /** The WAL, open for our own fdatasync; undefined: SQLite syncs at each commit itself. */
  walFd: number | undefined;
  files: OpenedFiles;
}

/** Opens (creating when absent) and migrates the database `file` in `dataDir`; the caller maps errors. */
export function openConnection(dataDir: string, file: string, options: ConnectionOptions): Connection {
  let db: Database.Database | undefined;
  try {
    // Inside: a data dir this user may not write is reported as the store that cannot be opened.
    ownerOnly(dataDir, file);
    db = new Database(file, { timeout: BUSY_TIMEOUT_MS });
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    db.pragma('foreign_keys = OFF');
    // Savepoint (statement) journals in memory: each write runs in a savepoint of its own,
    // and SQLite spills a transaction's statement journal to a temporary file past 64 KB,
    // which under load was 4–6 extra pwrite calls per event (strace, two runs).
    db.pragma('temp_store = MEMORY');
    if (options.maxPageCount) db.pragma(`max_page_count = ${options.maxPageCount}`);
    migrate(db, file);
    const files: OpenedFiles = { path: file, db: fileIdentity(file) };
    const walFd = options.syncInline ? undefined : openWal(file, files);
    if (walFd !== undefined) {
      db.pragma('synchronous = NORMAL');
      // Checkpoint rarely (about 128 MB of WAL): queue rows added and deleted in between
      // never reach the database file, and each such checkpoint stalls the event loop for
      // a moment; the WAL is cut back to 64 MB at most afterwards.
      db.pragma('wal_autocheckpoint = 32000');
      db.pragma('journal_size_limit = 67108864');
    }
    return { db, walFd, files };
  } catch (error) {
    db?.close();
    throw error;
  }
}

/** The WAL exists from here on while this connection is open; its inode never changes meanwhile. */
function openWal(file: string, files: OpenedFiles): number | undefined {
  try {
    const walFd = openSync(`${file}-wal`, 'r+');
    fdatasyncSync(walFd);
    const wal = fstatSync(walFd, { bigint: true });
    files.wal = `${wal.dev}:${wal.ino}`;
    return walFd;
  } catch {
    // No WAL file to hold on to: SQLite syncs at each commit itself (synchronous=FULL).
    return undefined;
  }
}
