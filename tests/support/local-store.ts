/** A fresh SQLite local store in a temporary directory, for tests of the local adapters. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { StoreDb } from '../../functions/local/sqlite/db';

export interface TestStore {
  dir: string;
  store: StoreDb;
  /** Opens the same database again, as another process would. */
  reopen(): StoreDb;
  close(): void;
}

export function tempStore(options: { maxPageCount?: number } = {}): TestStore {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-store-'));
  const opened: StoreDb[] = [StoreDb.open(dir, options)];
  return {
    dir,
    store: opened[0]!,
    reopen: () => {
      const again = StoreDb.open(dir);
      opened.push(again);
      return again;
    },
    close: () => {
      for (const s of opened) s.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
