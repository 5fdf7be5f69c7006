/**
 * One `serve` per data dir. The lock is an OS-level lock: `{data}/serve.lock` is a tiny
 * SQLite database that serve opens in exclusive locking mode and writes once, so it holds
 * the file's write lock for as long as the process lives. The kernel drops the lock when
 * the process dies (kill -9 included), so a stale lock is never mistaken for a live one,
 * whatever PID the next serve gets. `{data}/serve.json` only says who holds it, for the
 * message shown to a second serve, and which file serve opened as its store (`dev:ino`): a
 * CLI command or `status` that finds another file at that path (or none) while the lock is
 * held knows the store was removed or replaced under serve, and must not create a new one.
 */
import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HookError } from '../../core/errors';
import { DB_FILE, fileIdentity } from './db';

export interface ServeLock {
  /** Records in serve.json the `dev:ino` of the store file serve opened. */
  publishStore(identity: string | undefined): void;
  release(): void;
}

interface ServeInfo {
  pid?: number;
  started_at?: string;
  store?: string;
}

function lockedByAnother(error: unknown): boolean {
  const code = (error as { code?: string }).code ?? '';
  return code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED');
}

const infoFileOf = (dataDir: string) => join(dataDir, 'serve.json');

function readInfo(dataDir: string): ServeInfo | undefined {
  try {
    return JSON.parse(readFileSync(infoFileOf(dataDir), 'utf8')) as ServeInfo;
  } catch {
    return undefined;
  }
}

export function acquireServeLock(dataDir: string): ServeLock {
  const lockFile = join(dataDir, 'serve.lock');
  const infoFile = infoFileOf(dataDir);
  let db: Database.Database | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = new Database(lockFile, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER, started_at TEXT); DELETE FROM holder; COMMIT');
    db.prepare('INSERT INTO holder VALUES (?, ?)').run(process.pid, new Date().toISOString());
  } catch (error) {
    db?.close();
    if (lockedByAnother(error)) {
      // The holder's details are only for the message.
      const info = readInfo(dataDir);
      const holder = info ? ` (pid ${info.pid}, started ${info.started_at})` : '';
      throw new HookError('store_busy', `Another hookagent serve is already running on the data dir ${dataDir}${holder}. Stop it first, or give this one another --config-dir.`);
    }
    throw new HookError('store_unavailable', `Cannot take the serve lock ${lockFile}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  const info: ServeInfo = { pid: process.pid, started_at: new Date().toISOString() };
  const write = () => {
    try {
      writeFileSync(infoFile, JSON.stringify(info));
    } catch {
      // Informational only (without it, a replaced store is only noticed by serve itself).
    }
  };
  write();
  const held = db;
  return {
    publishStore: (identity) => {
      info.store = identity;
      write();
    },
    release: () => {
      if (!held.open) return;
      rmSync(infoFile, { force: true });
      held.close();
    },
  };
}

/** True while a live serve holds the data dir's lock (a read of serve.lock meets its exclusive lock). */
export function serveLockHeld(dataDir: string): boolean {
  let db: Database.Database | undefined;
  try {
    db = new Database(join(dataDir, 'serve.lock'), { readonly: true, fileMustExist: true, timeout: 0 });
    db.prepare('SELECT COUNT(*) FROM holder').get();
    return false;
  } catch (error) {
    return lockedByAnother(error);
  } finally {
    db?.close();
  }
}

/**
 * The store file a running serve opened is no longer at its path (removed, or another file
 * moved over it): that path and serve's pid; undefined otherwise. Cheap when all is well (a
 * read of serve.json and a stat); the lock is only probed when the files differ, since a dead
 * serve leaves its serve.json behind.
 */
export function storeReplacedUnderServe(dataDir: string): { file: string; pid: number | undefined } | undefined {
  const info = readInfo(dataDir);
  if (info?.store === undefined) return undefined;
  const file = join(dataDir, DB_FILE);
  if (fileIdentity(file) === info.store || !serveLockHeld(dataDir)) return undefined;
  return { file, pid: info.pid };
}
