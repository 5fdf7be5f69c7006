/**
 * Hunt 12 (observability D3): DESIGN §3 "Structured JSON logs with event id and subscription
 * on every line". Lines about one queue message name its event and subscription (and the
 * queue's message id), also where the batch handler or serve's local consumer logs them:
 * a retry whose pacing fails (SQS ChangeMessageVisibility refused: throttled, an expired
 * receipt handle, IAM), a batch whose handler threw, a delete of a handled message that failed.
 */
import type { SQSEvent } from 'aws-lambda';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { HookError } from '../../functions/core/errors';
import { newEventId } from '../../functions/core/ids';
import { jsonLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import type { WorkerDeps } from '../../functions/core/worker/process';
import { eventRecord } from '../../functions/core/worker/record';
import { QueueConsumer, toSqsRecord } from '../../functions/local/consumer';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { createWorkerHandler } from '../../functions/worker/batch';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { tempStore, type TestStore } from '../support/local-store';

let dynamo: TestDynamo;
const stores: TestStore[] = [];
beforeAll(async () => { dynamo = await startDynalite(); });
afterAll(async () => {
  stores.forEach((s) => s.close());
  await dynamo.close();
});

type Line = Record<string, unknown>;
const collect = (lines: Line[]) => jsonLogger((line) => lines.push(JSON.parse(line) as Line), 'debug');

const messageOf = (subscription: string): QueueMessage => {
  const eventId = newEventId(Date.now());
  return { v: 1, event_id: eventId, subscription, source: 'custom', event: 'alert', delivery_id: eventId, received_at: new Date().toISOString(), payload: { name: 'DiskFull' } };
};

function until(check: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const tick = () => (check() ? resolve() : setImmediate(tick));
    tick();
  });
}

test('"could not pace the retry" names the event and the subscription', async () => {
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({ name: 'alerts', events: [], skills: [], deliver: ['log'], prompt: 'Alert {name}', state: 'active', created_at: '', updated_at: '', secret: 'x' });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const logs: Line[] = [];
  const delivery = { timeout_ms: 2000, codehost: {} };
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-obs-pace-'));
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(dir, 'payloads')),
    // The model provider is overloaded: a retryable failure, paced by the retry schedule.
    agent: { run: async () => { throw new HookError('provider_unavailable', 'The model provider answered 503: overloaded', { retryable: true }); } },
    skills: new SkillLibrary(dir), targets: createDeliveryTargets(delivery),
    config: { agent: { provider: 'echo', timeout_ms: 5000, max_steps: 2 }, delivery },
    clock: systemClock, logger: collect(logs), maxReceiveCount: 5,
    leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, systemClock),
  };
  const message = messageOf('alerts');
  await events.putAll([eventRecord(message, 'queued', message.received_at)]);
  // As on Lambda: the body only, no message handed over in-process.
  const sqs: SQSEvent = { Records: [toSqsRecord({ messageId: 'm-1', receiptHandle: 'rh-1', body: JSON.stringify(message), receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:local:0:q')] };
  const handler = createWorkerHandler(deps, {
    sleep: async () => undefined,
    changeVisibility: async () => { throw new Error('ThrottlingException: Rate exceeded'); },
  });
  expect((await handler(sqs)).batchItemFailures).toEqual([{ itemIdentifier: 'm-1' }]);
  expect(logs.find((l) => l.message === 'could not pace the retry')).toMatchObject({ message_id: 'm-1', event_id: message.event_id, subscription: 'alerts', error: expect.stringContaining('ThrottlingException') });
  // And every other line about the message.
  expect(logs.length).toBeGreaterThan(1);
  for (const line of logs) expect(line).toMatchObject({ event_id: message.event_id, subscription: 'alerts' });
});

test('serve\'s local consumer: a batch whose handler threw, and a delete that failed, name each message\'s event and subscription', async () => {
  const t = tempStore();
  stores.push(t);
  // Failed messages come back 20 ms later.
  const queue = new SqliteQueue(t.store, { visibilityTimeoutMs: 20, maxReceiveCount: 5, clock: systemClock });
  const logs: Line[] = [];
  const sent = [messageOf('alerts'), messageOf('reviews')];
  let calls = 0;
  // The first batch's handler throws; later ones succeed, and deleting their messages fails (a full disk, a lock).
  const consumer = new QueueConsumer(queue, async () => {
    calls += 1;
    if (calls === 1) throw new Error('boom');
    queue.delete = async () => { throw new Error('SQLITE_FULL: database or disk is full'); };
    return { batchItemFailures: [] };
  }, { batchSize: 10, concurrency: 1, idleCheckMs: 50, logger: collect(logs) });
  consumer.start();
  await queue.sendBodies(sent.map((m) => JSON.stringify(m)));
  const linesOf = (message: string) => logs.filter((l) => l.message === message);
  const named = (message: string) => new Set(linesOf(message).map((l) => `${String(l.event_id)} ${String(l.subscription)}`));
  const expected = new Set(sent.map((m) => `${m.event_id} ${m.subscription}`));
  // Both messages come back together, in one batch: its deletes fail side by side.
  await until(() => linesOf('local queue delete failed').length >= 2);
  await consumer.stop(1000);
  expect(named('worker batch failed')).toEqual(expected);
  expect(named('local queue delete failed')).toEqual(expected);
  for (const line of [...linesOf('worker batch failed'), ...linesOf('local queue delete failed')]) expect(line.message_id).toEqual(expect.any(String));
  expect(linesOf('worker batch failed')[0]).toMatchObject({ error: expect.stringContaining('boom'), messages: expect.any(Number) });
  expect(linesOf('local queue delete failed')[0]).toMatchObject({ error: expect.stringContaining('SQLITE_FULL') });
});
