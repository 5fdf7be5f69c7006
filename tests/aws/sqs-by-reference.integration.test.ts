/**
 * Over DynamoDB and SQS, a message whose event record is stored goes by reference: the SQS
 * body carries everything but the payload, and the worker reads the payload with the
 * record it reads anyway. The deployed ingest Lambda module against dynalite and a local
 * SQS; the worker over the same tables.
 */
import { join } from 'node:path';
import githubExamples from '@octokit/webhooks-examples';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { SqsEventQueue } from '../../functions/aws/sqs-queue';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { SQSClient } from '@aws-sdk/client-sqs';
import { echoAgent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { jsonLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import { releaseRecords } from '../../functions/core/subscriptions/lifecycle';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { eventRecord } from '../../functions/core/worker/record';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import type { LocalServer } from '../support/local-http';
import { sentBodies, startLocalSqs } from '../support/local-sqs';
import { preparedConfigDir } from '../support/prepared-config';
import { githubEvent } from '../support/requests';
import { bodyOf } from '../support/ingest-harness';
import { ManualClock } from '../support/recording-queue';

const SECRET = 'by-reference-secret';
let dynamo: TestDynamo;
let sqs: LocalServer;
let configDir: string;
const saved = { ...process.env };

const sqsBodies = (): string[] => sentBodies(sqs);

beforeAll(async () => {
  dynamo = await startDynalite();
  sqs = await startLocalSqs();
  configDir = preparedConfigDir('webhooks:\n  github: { secret: ${GH_SECRET} }\n', 'hookagent-by-reference-');
  Object.assign(process.env, {
    HOOKAGENT_STAGE: 'test', HOOKAGENT_CONFIG_DIR: configDir, QUEUE_URL: `${sqs.url}/000000000000/hookagent-test-queue`, PAYLOAD_BUCKET: 'bucket',
    AWS_REGION: 'eu-west-1', AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', GH_SECRET: SECRET,
    AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ENDPOINT_URL_SQS: sqs.url, POWERTOOLS_LOG_LEVEL: 'ERROR',
  });
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
    name: 'pr', events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', prompt: 'Review "{pull_request.title}" by {pull_request.user.login}',
    created_at: '2026-11-24T00:00:00Z', updated_at: '2026-11-24T00:00:00Z', secret: 'whsec_x',
  });
});

afterAll(async () => {
  process.env = saved;
  await Promise.all([dynamo.close(), sqs.close()]);
});

function workerDeps(dead: Array<{ body: string; reason: string }>, logs: string[] = []): WorkerDeps {
  return {
    events: new DynamoEventLog(dynamo.client, dynamo.tables.events), subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
    payloads: new FilePayloadStore(join(configDir, 'payloads')), agent: echoAgent, skills: new SkillLibrary(configDir), targets: { log: logTarget },
    config: { agent: { provider: 'echo', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock: new ManualClock(), logger: jsonLogger((l) => logs.push(l)), maxReceiveCount: 3,
    deadLetters: { send: async (body, reason) => void dead.push({ body, reason }) },
  };
}

test('ingest sends the 21 KB pull request by reference, and the worker runs it with the payload read from the record', async () => {
  const example = githubExamples.find((g) => g.name === 'pull_request')?.examples.find((e) => (e as { action?: string }).action === 'opened') as Record<string, unknown>;
  const body = JSON.stringify(example);
  expect(body.length).toBeGreaterThan(15_000);
  const before = sqsBodies().length;
  const { handler } = await import('../../functions/ingest/handler');
  const accepted = await handler(githubEvent('pull_request', body, SECRET));
  expect(accepted.statusCode).toBe(202);
  const eventId = (bodyOf(accepted) as { event_id: string }).event_id;

  const sent = sqsBodies().slice(before);
  expect(sent).toHaveLength(1);
  const pointer = JSON.parse(sent[0] as string) as QueueMessage;
  expect(pointer).toMatchObject({ v: 1, event_id: eventId, subscription: 'pr', source: 'github', event: 'pull_request', action: 'opened', recorded: true });
  expect(pointer.payload).toBeUndefined();
  expect(pointer.payload_ref).toBeUndefined();
  expect(Buffer.byteLength(sent[0] as string)).toBeLessThan(400);

  const dead: Array<{ body: string; reason: string }> = [];
  const deps = workerDeps(dead);
  expect(await processMessage(sent[0] as string, 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  const pr = example.pull_request as { title: string; user: { login: string } };
  const record = await deps.events.get(eventId, 'pr');
  expect(record).toMatchObject({ status: 'delivered', prompt: `Review "${pr.title}" by ${pr.user.login}`, targets: { log: { status: 'delivered' } } });
  // The stored message is still the whole one, payload included: replays and the console read it.
  expect(record?.message.payload).toEqual(example);
  expect(record?.message.recorded).toBeUndefined();
  expect(dead).toEqual([]);
  // A redelivered copy of the pointer is acknowledged without work, like any finished message.
  expect(await processMessage(sent[0] as string, 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
});

test('held records released over SQS go by reference too and run', async () => {
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const message: QueueMessage = {
    v: 1, event_id: 'evt_held_1', subscription: 'pr', source: 'github', event: 'pull_request', action: 'opened', delivery_id: 'd-held-1',
    received_at: '2026-11-24T01:00:00.000Z', payload: { pull_request: { title: 'Held one', user: { login: 'octocat' } } },
  };
  await events.putAll([eventRecord(message, 'held', message.received_at)]);
  const queue = new SqsEventQueue(new SQSClient({ endpoint: sqs.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, maxAttempts: 1 }), `${sqs.url}/000000000000/hookagent-test-queue`);
  const before = sqsBodies().length;
  const released = await releaseRecords({ subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions), events, queue, clock: new ManualClock() }, [eventRecord(message, 'held', message.received_at)]);
  expect(released).toHaveLength(1);
  const sent = sqsBodies().slice(before);
  expect(sent.map((b) => JSON.parse(b) as QueueMessage)).toEqual([expect.objectContaining({ event_id: 'evt_held_1', recorded: true })]);
  expect(sent[0]).not.toContain('Held one');
  const dead: Array<{ body: string; reason: string }> = [];
  expect(await processMessage(sent[0] as string, 1, workerDeps(dead))).toEqual({ kind: 'ack', status: 'delivered' });
  expect(await events.get('evt_held_1', 'pr')).toMatchObject({ status: 'delivered', prompt: 'Review "Held one" by octocat' });
});

test('a message sent by reference whose record is gone is dead-lettered, not run and not recreated; without a sink it is retried', async () => {
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const message: QueueMessage = {
    v: 1, event_id: 'evt_gone_1', subscription: 'pr', source: 'github', event: 'pull_request', delivery_id: 'd-gone-1',
    received_at: '2026-11-24T02:00:00.000Z', payload: { pull_request: { title: 'Gone', user: { login: 'octocat' } } },
  };
  await events.putAll([eventRecord(message, 'queued', message.received_at)]);
  const pointer = JSON.stringify({ ...message, payload: undefined, recorded: true });
  await events.deleteAll([{ event_id: 'evt_gone_1', subscription: 'pr' }]);
  const dead: Array<{ body: string; reason: string }> = [];
  const logs: string[] = [];
  expect(await processMessage(pointer, 1, workerDeps(dead, logs))).toEqual({ kind: 'ack', status: 'failed' });
  expect(dead).toEqual([{ body: pointer, reason: 'the event record of this message was deleted' }]);
  expect(await events.get('evt_gone_1', 'pr')).toBeUndefined();
  expect(logs.map((l) => JSON.parse(l) as Record<string, unknown>)).toContainEqual(expect.objectContaining({ event_id: 'evt_gone_1', subscription: 'pr' }));
  const withoutSink = { ...workerDeps([]), deadLetters: undefined };
  delete withoutSink.deadLetters;
  expect(await processMessage(pointer, 1, withoutSink)).toEqual({ kind: 'retry', reason: 'the event record of this message was deleted' });
});

test('a pointer body without its flag, or with it but no ids, is a malformed message', async () => {
  const dead: Array<{ body: string; reason: string }> = [];
  const noFlag = JSON.stringify({ v: 1, event_id: 'evt_x', subscription: 'pr', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '2026-11-24T00:00:00Z' });
  const noIds = JSON.stringify({ v: 1, subscription: 'pr', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '2026-11-24T00:00:00Z', recorded: true });
  const wrongFlag = JSON.stringify({ v: 1, event_id: 'evt_x', subscription: 'pr', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '2026-11-24T00:00:00Z', recorded: 'yes' });
  for (const body of [noFlag, noIds, wrongFlag]) expect(await processMessage(body, 1, workerDeps(dead))).toEqual({ kind: 'ack', status: 'malformed' });
  expect(dead.map((d) => d.reason)).toEqual(['malformed queue message', 'malformed queue message', 'malformed queue message']);
});
