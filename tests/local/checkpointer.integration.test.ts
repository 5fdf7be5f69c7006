/** WAL checkpoints in a worker thread: the database file gets the WAL's pages while serve's connection keeps writing. */
import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startCheckpointer, walBytes } from '../../functions/local/sqlite/checkpointer';
import { DB_FILE, StoreDb } from '../../functions/local/sqlite/db';
import { tempStore, type TestStore } from '../support/local-store';

let t: TestStore;
beforeEach(() => {
  t = tempStore();
});
afterEach(() => t.close());

test('the thread checkpoints a WAL another connection writes, also after the WAL started over in the same file', async () => {
  const file = join(t.dir, DB_FILE);
  t.store.db.pragma('wal_autocheckpoint = 0');
  t.store.db.exec('CREATE TABLE blobs (body TEXT)');
  const checkpointer = startCheckpointer(file);
  expect(checkpointer).toBeDefined();
  try {
    const before = statSync(file).size;
    const insert = t.store.db.prepare('INSERT INTO blobs VALUES (?)');
    const done = checkpointer!.next();
    for (let i = 0; i < 20; i++) await t.store.write(() => insert.run('x'.repeat(50_000)));
    expect(walBytes(file)).toBeGreaterThan(256 * 1024);
    await done;
    expect(checkpointer!.checkpoints).toBeGreaterThanOrEqual(1);
    // The pages are in the database file now, not only in the WAL.
    expect(statSync(file).size).toBeGreaterThan(before + 500_000);
    // Writes go on meanwhile.
    await t.store.write(() => insert.run('after'));
    expect(t.store.db.prepare('SELECT COUNT(*) FROM blobs').pluck().get()).toBe(21);
    // Once everything is copied, the next write starts the WAL over at its beginning: the
    // file keeps its size, and what is written next is still checkpointed.
    while ((t.store.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>)[0]!.checkpointed === 0) await checkpointer!.next();
    const size = walBytes(file);
    const again = checkpointer!.next();
    for (let i = 0; i < 5; i++) await t.store.write(() => insert.run('y'.repeat(50_000)));
    expect(walBytes(file)).toBe(size);
    await again;
    const [state] = t.store.db.pragma('wal_checkpoint(PASSIVE)') as Array<{ log: number; checkpointed: number }>;
    expect(state!.log).toBeLessThan(200);
  } finally {
    await checkpointer!.stop();
  }
});

test("serve's store has the background checkpointer; SQLite's own checkpoint stays on, so the WAL starts over", async () => {
  const served = StoreDb.open(join(t.dir, 'served'), { checkpointInBackground: true });
  try {
    expect(served.checkpointer).toBeDefined();
    expect(served.db.pragma('wal_autocheckpoint', { simple: true })).toBe(32000);
  } finally {
    // Resolves once the checkpoint thread has exited: nothing touches the files after it.
    await served.close();
  }
  const cli = StoreDb.open(join(t.dir, 'served'));
  try {
    expect(cli.checkpointer).toBeUndefined();
  } finally {
    cli.close();
  }
});

test('closing the store resolves once the checkpoint thread has exited: nothing touches the files after it', async () => {
  const threads = () => readdirSync('/proc/self/task').length;
  const dir = join(t.dir, 'closing');
  const before = threads();
  const served = StoreDb.open(dir, { checkpointInBackground: true });
  expect(served.checkpointer).toBeDefined();
  expect(threads()).toBeGreaterThan(before);
  await served.close();
  expect(threads()).toBe(before);
  // Removing the directory now cannot race the thread (a CI run once failed with ENOTEMPTY).
  rmSync(dir, { recursive: true });
  expect(existsSync(dir)).toBe(false);
  // A second close is the same, finished one.
  await expect(served.close()).resolves.toBeUndefined();
});
