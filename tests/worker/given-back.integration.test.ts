/**
 * Hunt 3, D2: a message the worker gives back to the queue because a store failed (S3
 * refusing a write as IAM does, a DynamoDB table that is not there) or because too little
 * time was left is logged with its ids and reason, and the reason is written on its event
 * record: `queued` with the error while it will come again, `failed` with "gave up after
 * N attempts: <reason>" on its last receive, which the dead-letter listing keeps. Real
 * stores: dynalite for DynamoDB, the AWS recorder for S3 (answering AccessDenied).
 */
import { S3Client } from '@aws-sdk/client-s3';
import type { SQSEvent } from 'aws-lambda';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { S3PayloadStore } from '../../functions/aws/s3-payload-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { echoAgent } from '../../functions/core/agent/agent';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { newEventId } from '../../functions/core/ids';
import { jsonLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import type { WorkerDeps } from '../../functions/core/worker/process';
import { queueGaveUpChanges } from '../../functions/core/worker/queue-gave-up';
import { eventRecord } from '../../functions/core/worker/record';
import { toSqsRecord } from '../../functions/local/consumer';
import { createWorkerHandler } from '../../functions/worker/batch';
import { startAwsRecorder, type AwsRecorder } from '../support/aws-recorder';
import { startDynalite, type TestDynamo } from '../support/dynalite';

const BUCKET = 'hookagent-test-payloads';
const MAX_RECEIVES = 3;

let dynamo: TestDynamo;
let recorder: AwsRecorder;
/** What S3 refuses, as IAM would: every PutObject (the worker role of hunt 3, D1). */
let refusePuts = true;

beforeAll(async () => {
  dynamo = await startDynalite();
  recorder = await startAwsRecorder({ parameters: {}, authorize: (call) => !(refusePuts && call.action === 's3:PutObject') });
});
afterAll(async () => Promise.all([recorder.close(), dynamo.close()]));

let counter = 0;
async function setup(overrides: Partial<WorkerDeps> = {}) {
  counter += 1;
  const name = `gb${counter}`;
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  // Direct delivery of a long template: its reply is longer than the record keeps, so it is written to S3.
  await subscriptions.create({ name, events: [], skills: [], deliver: ['log'], agent: 'none', prompt: 'Log {log}', state: 'active', created_at: '', updated_at: '', secret: 'x' });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const logs: Array<Record<string, unknown>> = [];
  const delivery = { timeout_ms: 2000, codehost: {} };
  const s3 = new S3Client({ endpoint: recorder.url, forcePathStyle: true, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, maxAttempts: 1 });
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new S3PayloadStore(s3, BUCKET), agent: echoAgent,
    skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'hookagent-skills-'))), targets: createDeliveryTargets(delivery),
    config: { agent: { provider: 'echo', timeout_ms: 5000, max_steps: 2 }, delivery },
    clock: { now: () => Date.now() }, logger: jsonLogger((line) => logs.push(JSON.parse(line) as Record<string, unknown>), 'debug'), maxReceiveCount: MAX_RECEIVES,
    leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, { now: () => Date.now() }), ...overrides,
  };
  const message: QueueMessage = {
    v: 1, event_id: newEventId(Date.now()), subscription: name, source: 'custom', event: 'alert', delivery_id: `d${counter}`,
    received_at: new Date().toISOString(), payload: { log: 'line\n'.repeat(20_000) },
  };
  // As ingest leaves it: the record queued beside its message.
  await events.putAll([eventRecord(message, 'queued', message.received_at)]);
  return { deps, events, message, logs };
}

const sqs = (message: QueueMessage, receiveCount: number): SQSEvent => ({
  Records: [toSqsRecord({ messageId: `m-${message.delivery_id}`, receiptHandle: `rh-${message.delivery_id}`, body: JSON.stringify(message), receiveCount, sentAt: Date.now() }, 'arn:aws:sqs:local:0:q')],
});
const noWait = { sleep: async () => undefined, changeVisibility: async () => undefined };

beforeEach(() => {
  refusePuts = true;
});

test('S3 refusing the reply write: each failure is logged with the ids; the record says why, then that the worker gave up', async () => {
  const { deps, events, message, logs } = await setup();
  const handler = createWorkerHandler(deps, noWait);
  expect(await handler(sqs(message, 1))).toEqual({ batchItemFailures: [{ itemIdentifier: `m-${message.delivery_id}` }] });
  const ids = { event_id: message.event_id, subscription: message.subscription, message_id: `m-${message.delivery_id}` };
  const reason = 'The payload store is unavailable (AccessDenied)';
  expect(logs).toEqual(expect.arrayContaining([
    expect.objectContaining({ level: 'warn', message: 'a store failed', ...ids, code: 'unavailable', reason, attempt: 1 }),
    expect.objectContaining({ level: 'warn', message: 'given back to the queue: it comes again', ...ids, code: 'unavailable', reason, attempt: 1 }),
  ]));
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'queued', error: { code: 'unavailable', message: reason } });

  logs.length = 0;
  expect((await handler(sqs(message, MAX_RECEIVES))).batchItemFailures).toHaveLength(1);
  expect(logs).toEqual(expect.arrayContaining([
    expect.objectContaining({ level: 'error', message: 'given back on its last receive: the queue moves it to the dead-letter queue', ...ids, reason, attempt: MAX_RECEIVES }),
  ]));
  const record = await events.get(message.event_id, message.subscription);
  expect(record).toMatchObject({ status: 'failed', error: { code: 'unavailable', message: `gave up after ${MAX_RECEIVES} attempts: ${reason}` } });
  // When the dead letters are listed, the record keeps this reason (only the time it was dead-lettered is added).
  expect(queueGaveUpChanges(record!, MAX_RECEIVES, new Date().toISOString())).toEqual({ dead_lettered_at: expect.any(String), updated_at: expect.any(String) });
  // No secret or payload in the lines: the reason and the ids only.
  expect(JSON.stringify(logs)).not.toContain('line\\nline');

  // S3 allows it again: the next receive delivers, and no error is left.
  refusePuts = false;
  const fresh = await setup();
  await createWorkerHandler(fresh.deps, noWait)(sqs(fresh.message, 1));
  expect(await fresh.events.get(fresh.message.event_id, fresh.message.subscription)).toMatchObject({ status: 'delivered' });
  expect((await fresh.events.get(fresh.message.event_id, fresh.message.subscription))?.error).toBeUndefined();
});

test('a DynamoDB table that is not there (the subscription read fails): logged and recorded the same way', async () => {
  const { deps, events, message, logs } = await setup();
  const handler = createWorkerHandler({ ...deps, subscriptions: new DynamoSubscriptionStore(dynamo.client, 'wrong-table') }, noWait);
  expect((await handler(sqs(message, MAX_RECEIVES))).batchItemFailures).toHaveLength(1);
  expect(logs).toEqual(expect.arrayContaining([
    expect.objectContaining({ level: 'warn', message: 'a store failed', event_id: message.event_id, subscription: message.subscription, reason: expect.stringContaining('ResourceNotFoundException') }),
  ]));
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({
    status: 'failed', error: { code: 'unavailable', message: expect.stringMatching(new RegExp(`^gave up after ${MAX_RECEIVES} attempts: .*ResourceNotFoundException`)) },
  });
});

test('given back for lack of time: logged on every receive; on the last one the record says it gave up, and why', async () => {
  const { deps, events, message, logs } = await setup();
  refusePuts = false;
  const handler = createWorkerHandler(deps, { ...noWait, remainingMs: () => 1_000 });
  expect((await handler(sqs(message, 1))).batchItemFailures).toHaveLength(1);
  expect(logs).toEqual([expect.objectContaining({ level: 'warn', event_id: message.event_id, subscription: message.subscription, code: 'not_started', reason: expect.stringContaining('too little time left') })]);
  // Not a failure yet: the record is left as it was.
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'queued' });
  expect((await events.get(message.event_id, message.subscription))?.error).toBeUndefined();

  expect((await handler(sqs(message, MAX_RECEIVES))).batchItemFailures).toHaveLength(1);
  expect(logs.at(-1)).toMatchObject({ level: 'error', event_id: message.event_id, code: 'not_started' });
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({
    status: 'failed', error: { code: 'not_started', message: expect.stringMatching(new RegExp(`^gave up after ${MAX_RECEIVES} attempts: not started: too little time left in this invocation`)) },
  });
});

test('a record a copy of the message finished meanwhile keeps its outcome', async () => {
  const { deps, events, message } = await setup();
  refusePuts = false;
  await createWorkerHandler(deps, noWait)(sqs(message, 1));
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'delivered' });
  // A duplicate copy, late in an invocation, on its last receive.
  await createWorkerHandler(deps, { ...noWait, remainingMs: () => 1_000 })(sqs(message, MAX_RECEIVES));
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'delivered' });
});

test('hunt 3, D13: every worker line carries the queue message id, the malformed message\'s too (to match it with the dead-letter queue)', async () => {
  const { deps, logs } = await setup({ deadLetters: { send: async () => undefined } });
  const event: SQSEvent = { Records: [toSqsRecord({ messageId: 'm-malformed', receiptHandle: 'rh-malformed', body: 'not json', receiveCount: 1, sentAt: Date.now() }, 'arn:aws:sqs:local:0:q')] };
  expect(await createWorkerHandler(deps, noWait)(event)).toEqual({ batchItemFailures: [] });
  expect(logs).toEqual([expect.objectContaining({ level: 'error', message: 'malformed queue message', message_id: 'm-malformed' })]);
});
