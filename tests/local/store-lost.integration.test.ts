/**
 * The store's files removed or replaced while a connection has them open (hunt 9, local item 4):
 * the connection notices (after a WAL fsync, or in serve's checkpoint thread without any
 * write), refuses everything from then on with the reason, and leaves no WAL at the path to
 * be replayed onto another file. The CLI side: a file not the one a live serve published is
 * reported, and the CLI does not create a store in its place.
 */
import Database from 'better-sqlite3';
import { copyFileSync, existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HookError } from '../../functions/core/errors';
import { systemClock } from '../../functions/core/ports';
import { openLocalRuntime } from '../../functions/local/compose';
import { walBytes } from '../../functions/local/sqlite/checkpointer';
import { DB_FILE, StoreDb } from '../../functions/local/sqlite/db';
import { acquireServeLock, storeReplacedUnderServe } from '../../functions/local/sqlite/serve-lock';
import { eventually } from '../support/serve';

let dir: string;
let file: string;
const opened: StoreDb[] = [];

function open(options: { checkpointInBackground?: boolean } = {}): StoreDb {
  const store = StoreDb.open(dir, options);
  opened.push(store);
  store.db.exec('CREATE TABLE IF NOT EXISTS kept (body TEXT)');
  return store;
}

const insert = (store: StoreDb, body: string) => store.write(() => store.db.prepare('INSERT INTO kept VALUES (?)').run(body));

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'hookagent-store-lost-'));
  file = join(dir, DB_FILE);
});
afterEach(async () => {
  for (const store of opened.splice(0)) await store.close();
  rmSync(dir, { recursive: true, force: true });
});

test('a store file removed while open: the next durable write is refused with the reason, then every read and write', async () => {
  const store = open();
  const seen: string[] = [];
  store.onLost((lostFile) => seen.push(lostFile));
  await insert(store, 'before');
  expect(store.fileInPlace()).toBe(true);
  rmSync(file);
  const refused = await insert(store, 'after').then(() => undefined, (error: unknown) => error);
  expect(refused).toBeInstanceOf(HookError);
  expect((refused as HookError).code).toBe('unavailable');
  expect((refused as HookError).message).toBe(`The store file ${file} was removed or replaced while hookagent had it open (what it writes now would be lost); restart serve`);
  expect(store.lost?.file).toBe(file);
  expect(seen).toEqual([file]);
  await expect(insert(store, 'later')).rejects.toBe(refused);
  expect(() => store.read('the store', () => 1)).toThrow(refused as HookError);
  // The listener ran once, whatever else failed since.
  expect(seen).toEqual([file]);
});

test("a WAL removed under serve's store is noticed too (the checkpoint thread)", async () => {
  const store = open({ checkpointInBackground: true });
  await insert(store, 'before');
  rmSync(`${file}-wal`);
  await eventually(() => store.lost !== undefined, 'the checkpoint thread to report the WAL removed');
  await expect(insert(store, 'after')).rejects.toThrow(`The store file ${file}-wal was removed or replaced`);
});

test("serve's store notices a file moved over it with no write at all (the checkpoint thread), and leaves no WAL at the path to replay", async () => {
  const store = open({ checkpointInBackground: true });
  await insert(store, 'accepted');
  copyFileSync(file, `${file}.copy`);
  renameSync(`${file}.copy`, file);
  await eventually(() => store.lost !== undefined, 'the checkpoint thread to report the file moved over the store');
  expect(store.lost?.file).toBe(file);
  // The WAL at the path was emptied: the next opener of the file now there replays nothing of it.
  expect(walBytes(file)).toBe(0);
  await expect(insert(store, 'after')).rejects.toThrow('was removed or replaced');
});

test('a store moved aside while serve runs keeps what was written: it is checkpointed into the file moved aside', async () => {
  const store = open({ checkpointInBackground: true });
  for (let i = 0; i < 50; i++) await insert(store, `row-${i}`);
  renameSync(file, `${file}.aside`);
  await eventually(() => store.lost !== undefined, 'the store found moved');
  await store.close();
  opened.splice(0);
  // Opened alone, without the WAL it had beside it.
  const moved = new Database(`${file}.aside`, { readonly: true });
  try {
    expect(moved.prepare('SELECT COUNT(*) FROM kept').pluck().get()).toBe(50);
  } finally {
    moved.close();
  }
});

describe('a serve on the data dir whose store file is gone', () => {
  test('the CLI is refused (nothing created); a live lock is needed, and the file serve opened is fine', async () => {
    const serve = await openLocalRuntime(dir, { role: 'serve', clock: systemClock });
    try {
      expect(storeReplacedUnderServe(dir)).toBeUndefined();
      const cli = await openLocalRuntime(dir, { role: 'cli', clock: systemClock });
      await cli.close();
      rmSync(file);
      expect(storeReplacedUnderServe(dir)).toEqual({ file, pid: process.pid });
      const refused = await openLocalRuntime(dir, { role: 'cli', clock: systemClock }).then(() => undefined, (error: unknown) => error);
      expect(refused).toBeInstanceOf(HookError);
      expect((refused as HookError).message).toContain(`The local store ${file} is not the file the running hookagent serve (pid ${process.pid}) has open: it was removed or replaced while serve ran.`);
      expect((refused as HookError).message).toContain('nothing was created in its place: restart serve');
      expect(existsSync(file)).toBe(false);
    } finally {
      await serve.close();
    }
    // serve is gone: a new store may be created.
    expect(storeReplacedUnderServe(dir)).toBeUndefined();
    const cli = await openLocalRuntime(dir, { role: 'cli', clock: systemClock });
    await cli.close();
    expect(existsSync(file)).toBe(true);
  });

  test('a serve.json left by a serve that died (kill -9) refuses nothing: the lock is free', () => {
    writeFileSync(join(dir, 'serve.json'), JSON.stringify({ pid: process.pid, started_at: new Date().toISOString(), store: '1:1' }));
    const lock = acquireServeLock(dir);
    lock.release();
    writeFileSync(join(dir, 'serve.json'), JSON.stringify({ pid: process.pid, started_at: new Date().toISOString(), store: '1:1' }));
    expect(storeReplacedUnderServe(dir)).toBeUndefined();
  });
});
