/** A data dir of the previous local store (dynalite in `{data}/dynamo`) is migrated to SQLite by serve, never silently abandoned. */
import { CreateTableCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { systemClock } from '../../functions/core/ports';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { openLocalRuntime } from '../../functions/local/compose';
import { startDynalite } from '../support/dynalite';

test('serve migrates subscriptions, events, queued messages and dead letters, and keeps the old directory renamed', async () => {
  const data = join(mkdtempSync(join(tmpdir(), 'hookagent-migrate-')), 'data');
  const old = await startDynalite('local', join(data, 'dynamo'));
  const message: QueueMessage = { v: 1, event_id: 'evt_old', subscription: 'legacy', source: 'custom', event: 'e', delivery_id: 'd1', received_at: '2026-11-20T10:00:00.000Z', payload: { n: 1 } };
  const record: EventRecord = { event_id: 'evt_old', subscription: 'legacy', status: 'queued', source: 'custom', event: 'e', delivery_id: 'd1', received_at: message.received_at, updated_at: message.received_at, message };
  try {
    await new DynamoSubscriptionStore(old.client, old.tables.subscriptions).create({ name: 'legacy', events: ['e'], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 's' });
    // The layout the dynalite store wrote (message inline), and today's (message in an item of its own).
    const { message: inline, ...fields } = { ...record, event_id: 'evt_inline', message: { ...message, event_id: 'evt_inline', payload: { n: 2 } } };
    await old.client.send(new PutItemCommand({ TableName: old.tables.events, Item: marshall({ ...fields, message: JSON.stringify(inline), arrival: `${record.received_at}#evt_inline` }) }));
    await new DynamoEventLog(old.client, old.tables.events).putAll([record]);
    // A record whose message is nowhere (its message item lost): migrated, readable, without a payload.
    await old.client.send(new PutItemCommand({ TableName: old.tables.events, Item: marshall({ ...fields, event_id: 'evt_lost', arrival: `${record.received_at}#evt_lost` }) }));
    for (const table of ['hookagent-local-queue', 'hookagent-local-dead-letters']) {
      await old.client.send(new CreateTableCommand({ TableName: table, BillingMode: 'PAY_PER_REQUEST', AttributeDefinitions: [{ AttributeName: 'id', AttributeType: 'S' }], KeySchema: [{ AttributeName: 'id', KeyType: 'HASH' }] }));
    }
    await old.client.send(new PutItemCommand({ TableName: 'hookagent-local-queue', Item: marshall({ id: 'm1', body: JSON.stringify(message), visible_at: Date.now() + 60_000, receive_count: 1, sent_at: String(Date.now() * 1000).padStart(18, '0') }) }));
    await old.client.send(new PutItemCommand({ TableName: 'hookagent-local-dead-letters', Item: marshall({ id: 'm0', body: '{"bad":true}', receive_count: 5, dead_at: 1 }) }));
  } finally {
    await old.close();
  }

  await expect(openLocalRuntime(data, { role: 'cli', clock: systemClock })).rejects.toMatchObject({ code: 'store_migration_needed', message: expect.stringContaining("Run 'hookagent serve' once") });

  const runtime = await openLocalRuntime(data, { role: 'serve', clock: systemClock });
  try {
    expect((await runtime.subscriptions.list()).map((s) => s.name)).toEqual(['legacy']);
    expect(await runtime.events.get('evt_old', 'legacy')).toMatchObject({ status: 'queued', message: { payload: { n: 1 } } });
    expect(await runtime.events.get('evt_inline', 'legacy')).toMatchObject({ status: 'queued', message: { event_id: 'evt_inline', payload: { n: 2 } } });
    expect(await runtime.events.get('evt_lost', 'legacy')).toMatchObject({ status: 'queued', message: { event_id: 'evt_lost', subscription: 'legacy', payload_ref: '' } });
    expect((await runtime.events.listBySubscription('legacy', 10)).map((r) => r.event_id).sort()).toEqual(['evt_inline', 'evt_lost', 'evt_old']);
    const [received] = await runtime.queue.receive(10);
    expect(JSON.parse(received!.body)).toMatchObject({ event_id: 'evt_old' });
    expect(received!.receiveCount).toBe(2);
    expect((await runtime.queue.deadLetters()).map((d) => d.body)).toEqual(['{"bad":true}']);
  } finally {
    await runtime.close();
  }
  expect(existsSync(join(data, 'dynamo'))).toBe(false);
  expect(readdirSync(data).some((name) => name.startsWith('dynamo.migrated-'))).toBe(true);
}, 60_000);
