/**
 * Moves a data dir of the previous local store (dynalite: DynamoDB over LevelDB in
 * `{data}/dynamo`) into the SQLite store, once, when `serve` starts: subscriptions, the
 * event log, dedup claims, queued and dead-lettered messages. The old directory is then
 * renamed `dynamo.migrated-{time}` (kept, not deleted). dynalite is no longer a runtime
 * dependency: without it, serve refuses to start and says how to migrate, so no data is
 * silently abandoned.
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { renameSync } from 'node:fs';
import { HookError } from '../../core/errors';
import type { Logger } from '../../core/log';
import { createDynamoClient } from '../../aws/dynamo';
import { tableNamesForStage } from '../../aws/tables';
import { StoreDb } from './db';
import { EVENT_RETENTION_MS } from './event-log';
import { LEGACY_DIR } from './legacy-dir';

export { LEGACY_DIR };
const LEGACY_QUEUE = 'hookagent-local-queue';
const LEGACY_DEAD_LETTERS = 'hookagent-local-dead-letters';

type Row = Record<string, unknown>;

function loadDynalite(dataDir: string): (options: Record<string, unknown>) => Server {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('dynalite') as (options: Record<string, unknown>) => Server;
  } catch {
    const legacy = join(dataDir, LEGACY_DIR);
    throw new HookError('store_migration_needed', [
      `${legacy} holds data of the previous local store (dynalite), which this hookagent no longer bundles.`,
      `To migrate it: install dynalite where hookagent can load it (for example: npm install --no-save dynalite@4 in hookagent's directory, or npm install -g dynalite@4 and set NODE_PATH to the global node_modules) and start hookagent serve again;`,
      `it copies subscriptions, events, queued and dead-lettered messages into ${join(dataDir, 'hookagent.db')} and renames ${legacy} to ${LEGACY_DIR}.migrated-<time>.`,
      `To start with an empty store instead, move ${legacy} away.`,
    ].join('\n'));
  }
}

async function scan(client: DynamoDBClient, table: string): Promise<Row[]> {
  const rows: Row[] = [];
  let start: Record<string, AttributeValue> | undefined;
  try {
    do {
      const page = await client.send(new ScanCommand({ TableName: table, ConsistentRead: true, ...(start ? { ExclusiveStartKey: start } : {}) }));
      for (const item of page.Items ?? []) rows.push(unmarshall(item));
      start = page.LastEvaluatedKey;
    } while (start);
  } catch (error) {
    if (error instanceof Error && error.name === 'ResourceNotFoundException') return [];
    throw error;
  }
  return rows;
}

export async function migrateDynalite(dataDir: string, logger?: Logger): Promise<void> {
  const dynalite = loadDynalite(dataDir);
  const legacy = join(dataDir, LEGACY_DIR);
  const server = dynalite({ path: legacy, createTableMs: 0, deleteTableMs: 0, updateTableMs: 0 });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const client = createDynamoClient({ endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
  let counts: Record<string, number>;
  try {
    const tables = tableNamesForStage('local');
    const [subscriptions, events, dedup, queue, dead] = await Promise.all([
      scan(client, tables.subscriptions), scan(client, tables.events), scan(client, tables.dedup),
      scan(client, LEGACY_QUEUE), scan(client, LEGACY_DEAD_LETTERS),
    ]);
    counts = { subscriptions: subscriptions.length, events: events.length, claims: dedup.length, queued: queue.length, dead_letters: dead.length };
    const store = StoreDb.open(dataDir);
    try {
      const db = store.db;
      const now = Date.now();
      db.transaction(() => {
        const sub = db.prepare('INSERT OR REPLACE INTO subscriptions (name, body) VALUES (?, ?)');
        for (const s of subscriptions) sub.run(String(s.name), JSON.stringify(s));
        const ev = db.prepare('INSERT OR REPLACE INTO events (event_id, subscription, received_at, status, data, expires_at) VALUES (?, ?, ?, ?, ?, ?)');
        const evm = db.prepare('INSERT OR REPLACE INTO event_messages (event_id, subscription, message) VALUES (?, ?, ?)');
        // Messages inline (what the dynalite store wrote), or in items of their own (the events table's layout since).
        const isMessageItem = (item: Record<string, unknown>) => String(item.subscription).endsWith('#message');
        const separate = new Map(events.filter(isMessageItem).map((m) => [`${String(m.event_id)}\u0000${String(m.subscription).slice(0, -'#message'.length)}`, m.message]));
        for (const { message, arrival: _arrival, expires_at, ...rest } of events.filter((item) => !isMessageItem(item))) {
          const received = String(rest.received_at);
          ev.run(String(rest.event_id), String(rest.subscription), received, String(rest.status), JSON.stringify(rest),
            typeof expires_at === 'number' ? expires_at * 1000 : (Date.parse(received) || now) + EVENT_RETENTION_MS);
          // Neither (a message item lost): a message without its payload, as the AWS event log reads one.
          const text = message ?? separate.get(`${String(rest.event_id)}\u0000${String(rest.subscription)}`) ?? JSON.stringify({
            v: 1, event_id: rest.event_id, subscription: rest.subscription, source: rest.source, event: rest.event, delivery_id: rest.delivery_id, received_at: rest.received_at, payload_ref: '',
          });
          evm.run(String(rest.event_id), String(rest.subscription), String(text));
        }
        const claim = db.prepare('INSERT OR REPLACE INTO dedup (key, event_id, claimed_at, committed, expires_at) VALUES (?, ?, ?, ?, ?)');
        for (const d of dedup) {
          const expires = typeof d.expires_at === 'number' ? d.expires_at * 1000 : now + 24 * 3600 * 1000;
          claim.run(String(d.key), String(d.event_id ?? ''), Number(d.claimed_at ?? 0), d.committed === true || d.claimed_at === undefined ? 1 : 0, expires);
        }
        // Everything queued becomes visible now: nothing of the old store is in flight any more.
        const q = db.prepare('INSERT INTO queue (message_id, body, visible_at, receive_count, receipt, sent_at, event_key) VALUES (?, ?, ?, ?, 0, ?, ?)');
        const keyOf = (body: string): string | null => {
          try {
            const m = JSON.parse(body) as { event_id?: unknown; subscription?: unknown };
            return typeof m.event_id === 'string' && typeof m.subscription === 'string' ? `${m.event_id}\u0000${m.subscription}` : null;
          } catch {
            return null;
          }
        };
        for (const m of queue.sort((a, b) => String(a.sent_at).localeCompare(String(b.sent_at)))) {
          q.run(String(m.id ?? randomUUID()), String(m.body), now, Number(m.receive_count ?? 0), Math.floor(Number(m.sent_at ?? now * 1000) / 1000), keyOf(String(m.body)));
        }
        const dl = db.prepare('INSERT INTO dead_letters (message_id, body, receive_count, reason, dead_at) VALUES (?, ?, ?, ?, ?)');
        for (const m of dead) dl.run(String(m.id ?? randomUUID()), String(m.body), Number(m.receive_count ?? 0), 'migrated from the dynalite store', Number(m.dead_at ?? now));
      }).immediate();
    } finally {
      await store.close();
    }
  } catch (error) {
    if (error instanceof HookError) throw error;
    throw new HookError('store_migration_failed', `Migrating ${legacy} to the SQLite store failed (${error instanceof Error ? error.message : String(error)}); ${legacy} is left untouched. Fix the cause and start hookagent serve again, or move ${legacy} away to start empty.`, { cause: error });
  } finally {
    client.destroy();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
  const moved = `${legacy}.migrated-${new Date().toISOString().replace(/[:.]/g, '-')}`;
  renameSync(legacy, moved);
  logger?.info('migrated the dynalite data dir to SQLite', { ...counts, kept_in: moved });
}
