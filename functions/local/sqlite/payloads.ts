/**
 * PayloadStore in the SQLite store: large payloads are written in the same group-committed
 * transaction as the rest of the request, so a 202 covers them too. Pointers are
 * `sqlite:{key}`; a payload is dropped once it is 14 days old and no record needs it any
 * more (housekeeping.ts: its event's records are gone, and no waiting replay reads it).
 * Pointers of the previous file store (`file://{data}/payloads/{key}.json`, in messages
 * migrated from a dynalite data dir) are still read.
 */
import { readFileSync } from 'node:fs';
import { basename, join, resolve } from 'node:path';
import { HookError } from '../../core/errors';
import type { PayloadStore } from '../../core/ports';
import type { StoreDb } from './db';

const PREFIX = 'sqlite:';

/** The key a pointer names (`sqlite:{key}`, or a migrated `file://…/{key}.json`), if it is one of this store's. */
export function payloadKeyOf(pointer: string): string | undefined {
  if (pointer.startsWith(PREFIX)) return pointer.slice(PREFIX.length);
  if (pointer.startsWith('file://')) return basename(pointer, '.json');
  return undefined;
}

export class SqlitePayloadStore implements PayloadStore {
  private readonly insert;
  private readonly select;

  constructor(private readonly store: StoreDb, private readonly dataDir?: string) {
    this.insert = store.db.prepare('INSERT OR REPLACE INTO payloads (key, body, created_at) VALUES (?, ?, ?)');
    this.select = store.db.prepare('SELECT body FROM payloads WHERE key = ?').pluck();
  }

  async put(key: string, body: string): Promise<string> {
    if (!/^[A-Za-z0-9_-]+$/.test(key)) throw new HookError('payload_key_invalid', `Invalid payload key: ${key}`);
    // Followed by the event's durable writes, whose fsync covers it.
    await this.store.write(() => this.insert.run(key, body, Date.now()), { durable: false });
    return `${PREFIX}${key}`;
  }

  async get(pointer: string): Promise<string> {
    if (pointer.startsWith('file://') && this.dataDir) return this.legacy(pointer, this.dataDir);
    if (!pointer.startsWith(PREFIX)) throw new HookError('payload_pointer_invalid', `Not a payload pointer: ${pointer}`);
    const body = this.store.read('The payload store', () => this.select.get(pointer.slice(PREFIX.length)) as string | undefined);
    if (body === undefined) throw new HookError('payload_missing', `The stored payload ${pointer} no longer exists`);
    return body;
  }

  private legacy(pointer: string, dataDir: string): string {
    const path = resolve(pointer.slice('file://'.length));
    const directory = resolve(join(dataDir, 'payloads'));
    if (!path.startsWith(`${directory}/`)) throw new HookError('payload_pointer_invalid', 'Payload pointer outside the payload directory');
    const key = basename(path, '.json');
    const stored = this.store.read('The payload store', () => this.select.get(key) as string | undefined);
    if (stored !== undefined) return stored;
    try {
      return readFileSync(path, 'utf8');
    } catch {
      throw new HookError('payload_missing', `The stored payload ${pointer} no longer exists`);
    }
  }
}
