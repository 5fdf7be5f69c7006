/** How SQLite's failures read to the domain: a full disk, a damaged file, a store unavailable for a moment. */
import { join } from 'node:path';
import { HookError } from '../../core/errors';
import { DB_FILE } from './store-files';

/** Codes of a database file that cannot be read as SQLite (not a transient condition). */
export const DAMAGED = new Set(['SQLITE_CORRUPT', 'SQLITE_NOTADB', 'SQLITE_CORRUPT_INDEX', 'SQLITE_CORRUPT_SEQUENCE', 'SQLITE_CORRUPT_VTAB']);

export function sqliteCode(error: unknown): string | undefined {
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
