/**
 * One `serve` per data dir. The lock is an OS-level lock: `{data}/serve.lock` is a tiny
 * SQLite database that serve opens in exclusive locking mode and writes once, so it holds
 * the file's write lock for as long as the process lives. The kernel drops the lock when
 * the process dies (kill -9 included), so a stale lock is never mistaken for a live one,
 * whatever PID the next serve gets. `{data}/serve.json` only says who holds it, for the
 * message shown to a second serve.
 */
import Database from 'better-sqlite3';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { HookError } from '../../core/errors';

export interface ServeLock {
  release(): void;
}

export function acquireServeLock(dataDir: string): ServeLock {
  const lockFile = join(dataDir, 'serve.lock');
  const infoFile = join(dataDir, 'serve.json');
  let db: Database.Database | undefined;
  try {
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
    db = new Database(lockFile, { timeout: 0 });
    db.pragma('locking_mode = EXCLUSIVE');
    db.exec('BEGIN EXCLUSIVE; CREATE TABLE IF NOT EXISTS holder (pid INTEGER, started_at TEXT); DELETE FROM holder; COMMIT');
    db.prepare('INSERT INTO holder VALUES (?, ?)').run(process.pid, new Date().toISOString());
  } catch (error) {
    db?.close();
    const code = (error as { code?: string }).code ?? '';
    if (code.startsWith('SQLITE_BUSY') || code.startsWith('SQLITE_LOCKED')) {
      let holder = '';
      try {
        const info = JSON.parse(readFileSync(infoFile, 'utf8')) as { pid?: number; started_at?: string };
        holder = ` (pid ${info.pid}, started ${info.started_at})`;
      } catch {
        // The holder's details are only for the message.
      }
      throw new HookError('store_busy', `Another hookagent serve is already running on the data dir ${dataDir}${holder}. Stop it first, or give this one another --config-dir.`);
    }
    throw new HookError('store_unavailable', `Cannot take the serve lock ${lockFile}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
  try {
    writeFileSync(infoFile, JSON.stringify({ pid: process.pid, started_at: new Date().toISOString() }));
  } catch {
    // Informational only.
  }
  const held = db;
  return {
    release: () => {
      if (!held.open) return;
      rmSync(infoFile, { force: true });
      held.close();
    },
  };
}
