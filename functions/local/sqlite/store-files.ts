/** The local store's files: their name, who may read them, and which file is at the path now. */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';

export const DB_FILE = 'hookagent.db';

/** `dev:ino` of the file now at `path` (undefined when there is none). */
export function fileIdentity(path: string): string | undefined {
  const stat = statSync(path, { bigint: true, throwIfNoEntry: false });
  return stat ? `${stat.dev}:${stat.ino}` : undefined;
}

/** The files a connection opened: the database's path and `dev:ino`, and the WAL's while it is held open. */
export interface OpenedFiles {
  path: string;
  db: string | undefined;
  wal?: string;
}

/**
 * The store holds every subscription's secret and every payload in clear: its directory is
 * the owner's alone (0700) and so is the database (0600; SQLite gives the WAL and shared-
 * memory files the database's mode). Created so, and tightened when an earlier version left
 * them readable by every local user (0755 / 0644 under the usual umask).
 */
export function ownerOnly(dataDir: string, file: string): void {
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  if (!existsSync(file)) closeSync(openSync(file, 'a', 0o600));
  // Best effort on what exists: a store another user owns (opened read-only by a second account) is left as it is.
  const tighten = (path: string, mode: number) => {
    try {
      if (existsSync(path)) chmodSync(path, mode);
    } catch {
      /* not ours to change */
    }
  };
  tighten(dataDir, 0o700);
  for (const path of [file, `${file}-wal`, `${file}-shm`]) tighten(path, 0o600);
}
