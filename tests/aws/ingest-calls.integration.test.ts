/**
 * Ingest's three calls per accepted event on AWS (issue 16), over dynalite (with the
 * TransactWriteItems of tests/support/dynalite-transactions.ts): the claim and the records
 * in one transaction, the queue send, the commit with the request log's entry; the
 * fallbacks when the transaction finds the delivery id claimed (duplicate, in progress,
 * resumed); and what a failure or a crash between two calls leaves: nothing answered 2xx
 * is lost, and a retry never delivers twice.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { createDynamoClient } from '../../functions/aws/dynamo';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest, DEDUP_TTL_SECONDS } from '../../functions/core/ingest/service';
import { jsonLogger } from '../../functions/core/log';
import { messageJson } from '../../functions/core/message-json';
import type { EventQueue, RequestLog } from '../../functions/core/ports';
import type { QueueMessage } from '../../functions/core/types';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock, RecordingQueue } from '../support/recording-queue';
import { apiEvent } from '../support/requests';
import { signHub } from '../../functions/core/auth/signatures';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const SECRET = 'gh-calls-secret';
const LEASE_MS = 60_000;

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
    name: 'pr', events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x',
  });
});
afterAll(async () => {
  await dynamo.close();
});

interface Options {
  queue?: EventQueue;
  /** Replaces the request log (e.g. one whose commit never comes back: a crash). */
  requests?: (real: DynamoRequestLog) => RequestLog;
  dedupClient?: ReturnType<typeof createDynamoClient>;
}

/** An ingest "container" over the shared tables, wired as functions/aws/compose-ingest.ts does. */
async function container(clock: ManualClock, options: Options = {}) {
  const parsed = parseConfig('webhooks: { github: { secret: ${S} } }');
  if (!parsed.ok) throw new Error(parsed.error.message);
  const resolved = await resolveConfig(parsed.value, { get: async () => SECRET }, ['webhooks']);
  if (!resolved.ok) throw new Error(resolved.error.message);
  const logs: string[] = [];
  const queue = options.queue ?? new RecordingQueue();
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const dedup = new DynamoDedupStore(options.dedupClient ?? dynamo.client, dynamo.tables.dedup, clock, dynamo.tables.events);
  const realRequests = new DynamoRequestLog(dynamo.client, dynamo.tables.requests, clock, dynamo.tables.dedup);
  const ingest = createIngest({
    config: resolved.value, queue, dedup, events, clock, logger: jsonLogger((line) => logs.push(line)),
    payloads: new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'hookagent-calls-')), 'payloads')),
    requests: options.requests ? options.requests(realRequests) : realRequests,
    subscriptions: new SubscriptionCache(new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions), 0, clock),
    claimLeaseMs: LEASE_MS,
  });
  const handler = apiGatewayHandler(async () => ingest, jsonLogger(() => {}));
  return { handler, queue, events, dedup, requests: realRequests, logs };
}

// Whitespace and an escaped character: the queued text must be this body, not a re-serialisation.
const BODY = '{ "action": "opened", "number": 7,\n  "pull_request": { "number": 7, "title": "caf\\u00e9" }, "repository": { "full_name": "o/r" } }';
const post = (delivery: string, body = BODY) => apiEvent({
  path: '/webhooks/github', body,
  headers: { 'x-github-event': 'pull_request', 'x-github-delivery': delivery, 'x-hub-signature-256': signHub(body, SECRET) },
});
const answer = (result: { statusCode?: number; body?: string }) => [result.statusCode, JSON.parse(result.body ?? '{}').status as string];

test('accepted: claim and record in one transaction, queued, then committed with the request log entry', async () => {
  const clock = new ManualClock(Date.now());
  const c = await container(clock);
  const result = await c.handler(post('calls-accepted'));
  expect(answer(result)).toEqual([202, 'accepted']);
  const eventId = JSON.parse(result.body ?? '{}').event_id as string;
  const [record] = await c.events.getEvent(eventId);
  expect(record).toMatchObject({ status: 'queued', subscription: 'pr', delivery_id: 'calls-accepted' });
  expect(record?.message.payload).toEqual(JSON.parse(BODY));
  // The transaction wrote the message as an item of its own: the record the worker updates stays small.
  const item = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.events, Key: { event_id: { S: eventId }, subscription: { S: 'pr' } } }));
  expect(item.Item?.message).toBeUndefined();
  expect(await c.dedup.inspect('github#calls-accepted')).toMatchObject({ eventId, committed: true });
  const [entry] = await c.requests.list({ limit: 10, outcome: 'accepted', endpoint: 'github', since: clock.now() - 1000 });
  expect(entry).toMatchObject({ delivery_id: 'calls-accepted', event_id: eventId });
  // The queued message carries the body as sent (its text), and parses to the same payload.
  const [message] = (c.queue as RecordingQueue).sent;
  expect(message?.payload).toEqual(JSON.parse(BODY));
});

test('the message text embeds the body as received (no re-serialisation), and reads back as the same message', async () => {
  const clock = new ManualClock(Date.now());
  const sent: string[] = [];
  const queue: EventQueue = { send: async (messages) => void sent.push(...messages.map(messageJson)) };
  const c = await container(clock, { queue });
  const result = await c.handler(post('calls-text'));
  expect(answer(result)).toEqual([202, 'accepted']);
  expect(sent).toHaveLength(1);
  expect(sent[0]).toContain(`"payload":${BODY}}`);
  const parsed = JSON.parse(sent[0] as string) as QueueMessage;
  const [record] = await c.events.getEvent(parsed.event_id);
  expect(record?.message).toEqual(parsed);
});

test('fallbacks: a redelivery answers duplicate, a live claim in_progress, a dead request resumed', async () => {
  const clock = new ManualClock(Date.now());
  const c = await container(clock);
  // Duplicate: the transaction is cancelled by the committed claim; nothing new is written.
  const first = await c.handler(post('calls-dup'));
  const again = await c.handler(post('calls-dup'));
  expect(answer(again)).toEqual([200, 'duplicate']);
  const eventId = JSON.parse(first.body ?? '{}').event_id as string;
  expect((c.queue as RecordingQueue).sent.filter((m) => m.delivery_id === 'calls-dup')).toHaveLength(1);
  expect(await c.dedup.inspect('github#calls-dup')).toMatchObject({ eventId, committed: true });

  // In progress: another request holds a live claim.
  await c.dedup.claim('github#calls-live', { eventId: 'evt_other_live', ttlSeconds: DEDUP_TTL_SECONDS, staleBefore: 0 });
  expect(answer(await c.handler(post('calls-live')))).toEqual([503, 'error']);
  expect(await c.events.getEvent('evt_other_live')).toEqual([]);

  // Resumed: a request claimed and recorded (one transaction), then died before queueing.
  const dead = await container(clock, { queue: { send: () => new Promise<void>(() => {}) } });
  void dead.handler(post('calls-dead'));
  await new Promise((resolve) => setTimeout(resolve, 300));
  const pending = await c.dedup.inspect('github#calls-dead');
  expect(pending).toMatchObject({ committed: false });
  const [stranded] = await c.events.getEvent(pending!.eventId);
  expect(stranded?.status).toBe('queued');
  expect(answer(await c.handler(post('calls-dead')))).toEqual([503, 'error']); // within the lease: in_progress
  clock.advance(LEASE_MS + 1);
  const resumed = await c.handler(post('calls-dead'));
  expect(answer(resumed)).toEqual([202, 'accepted']);
  expect(JSON.parse(resumed.body ?? '{}').event_id).toBe(pending!.eventId);
  expect((c.queue as RecordingQueue).sent.filter((m) => m.event_id === pending!.eventId)).toHaveLength(1);
  expect(await c.dedup.inspect('github#calls-dead')).toMatchObject({ eventId: pending!.eventId, committed: true });
  expect(await c.events.getEvent(pending!.eventId)).toHaveLength(1);
});

describe('a store failing between calls: nothing answered 2xx is lost', () => {
  test('the queue refuses after the transaction: 503, the claim released and the record deleted; the retry is accepted', async () => {
    const clock = new ManualClock(Date.now());
    const queue = new RecordingQueue();
    const c = await container(clock, { queue });
    queue.refuseNext();
    expect(answer(await c.handler(post('calls-refused')))).toEqual([503, 'error']);
    const released = await c.dedup.inspect('github#calls-refused');
    expect(released).toMatchObject({ committed: false, claimedAt: 0 });
    expect(await c.events.getEvent(released!.eventId)).toEqual([]);
    const retry = await c.handler(post('calls-refused'));
    expect(answer(retry)).toEqual([202, 'accepted']);
    expect(queue.sent.filter((m) => m.delivery_id === 'calls-refused')).toHaveLength(1);
  });

  test('the commit and request log write fails after the send: still 202 (queued); a later redelivery re-queues the same event, never a new one', async () => {
    const clock = new ManualClock(Date.now());
    const queue = new RecordingQueue();
    const failing = (real: DynamoRequestLog): RequestLog => ({
      record: (entry) => real.record(entry), list: (q) => real.list(q),
      recordAndCommit: async () => {
        throw new Error('DynamoDB unavailable (test)');
      },
    });
    const c = await container(clock, { queue, requests: failing });
    const result = await c.handler(post('calls-uncommitted'));
    expect(answer(result)).toEqual([202, 'accepted']);
    expect(c.logs.some((l) => l.includes('nor the delivery id marked done'))).toBe(true);
    const eventId = JSON.parse(result.body ?? '{}').event_id as string;
    clock.advance(LEASE_MS + 1);
    const healthy = await container(clock, { queue });
    const redelivered = await healthy.handler(post('calls-uncommitted'));
    expect(answer(redelivered)).toEqual([202, 'accepted']);
    expect(JSON.parse(redelivered.body ?? '{}').event_id).toBe(eventId);
    // Two copies of one event: the worker's lease and finished record make it run once.
    expect(new Set(queue.sent.filter((m) => m.delivery_id === 'calls-uncommitted').map((m) => m.event_id))).toEqual(new Set([eventId]));
    expect(await healthy.handler(post('calls-uncommitted'))).toMatchObject({ statusCode: 200 });
  });

  test('a crash after the send, before the commit: the retry after the lease re-queues the same event', async () => {
    const clock = new ManualClock(Date.now());
    const queue = new RecordingQueue();
    const crashed = (real: DynamoRequestLog): RequestLog => ({ record: (e) => real.record(e), list: (q) => real.list(q), recordAndCommit: () => new Promise<void>(() => {}) });
    const c = await container(clock, { queue, requests: crashed });
    void c.handler(post('calls-crash'));
    await new Promise((resolve) => setTimeout(resolve, 300));
    const [sent] = queue.sent.filter((m) => m.delivery_id === 'calls-crash');
    expect(sent).toBeDefined();
    const healthy = await container(clock, { queue });
    expect(answer(await healthy.handler(post('calls-crash')))).toEqual([503, 'error']);
    clock.advance(LEASE_MS + 1);
    const retry = await healthy.handler(post('calls-crash'));
    expect(answer(retry)).toEqual([202, 'accepted']);
    expect(JSON.parse(retry.body ?? '{}').event_id).toBe(sent!.event_id);
    expect(await healthy.events.getEvent(sent!.event_id)).toHaveLength(1);
  });

  test('the transaction cannot reach the store: 503 and nothing written, the retry is accepted', async () => {
    const clock = new ManualClock(Date.now());
    const down = createDynamoClient({ endpoint: 'http://127.0.0.1:1' });
    const c = await container(clock, { dedupClient: down });
    expect(answer(await c.handler(post('calls-down')))).toEqual([503, 'error']);
    down.destroy();
    const healthy = await container(clock);
    expect(await healthy.dedup.inspect('github#calls-down')).toBeUndefined();
    expect(answer(await healthy.handler(post('calls-down')))).toEqual([202, 'accepted']);
  });
});
