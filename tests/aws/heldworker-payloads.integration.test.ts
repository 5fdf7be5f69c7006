/**
 * Payloads over ~200 KB are kept in S3, whose lifecycle rule used to expire every object
 * after 15 days, held events' too. Objects are now written tagged `retention=15-days`, the
 * one tag the rule expires; the payload of a held event is tagged `retention=held` while
 * it is held (written held by ingest or a replay, or held by the worker), and tagged back
 * when it is released, ended or discarded. A payload another subscription's record still
 * holds keeps its tag. Against dynalite and a local S3 (path style, tags kept in memory);
 * the CLI's calls are checked against infra/cli-policy.json, the functions' in
 * tests/deploy/package.integration.test.ts.
 */
import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { load } from 'js-yaml';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { S3PayloadRetention, S3PayloadStore, type PayloadRetention } from '../../functions/aws/s3-payload-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { echoAgent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { jsonLogger } from '../../functions/core/log';
import type { SubscriptionStore } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import { resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { EventStatus, QueueMessage, Subscription } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { eventRecord } from '../../functions/core/worker/record';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { startLocalServer, type LocalServer } from '../support/local-http';
import { policyAllows, type PolicyStatement } from '../support/iam';
import { ManualClock, RecordingQueue } from '../support/recording-queue';

const DAY = 24 * 3600 * 1000;
const BUCKET = 'hookagent-prod-payloadbucket-1x2y3z';

interface StoredObject {
  body: string;
  tags: Record<string, string>;
  /** How many times it was written. */
  writes: number;
}

let dynamo: TestDynamo;
let s3: LocalServer;
let client: S3Client;
const objects = new Map<string, StoredObject>();
/** Each S3 call as the IAM actions it needs and the key it names. */
const calls: string[] = [];
/** When set, S3 answers every call 503. */
let s3Down = false;

const notFound = '<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>';
const tagsOf = (query: string) => Object.fromEntries(new URLSearchParams(query));

beforeAll(async () => {
  dynamo = await startDynalite('prod');
  s3 = await startLocalServer((req, res) => {
    if (s3Down) return void res.writeHead(503, { 'content-type': 'application/xml' }).end('<Error><Code>SlowDown</Code></Error>');
    const url = new URL(req.url, 'http://s3');
    const path = decodeURIComponent(url.pathname).slice(1);
    const key = path.slice(BUCKET.length + 1);
    const object = objects.get(path);
    if (req.method === 'GET') {
      calls.push(`s3:GetObject ${key}`);
      if (!object) return void res.writeHead(404, { 'content-type': 'application/xml' }).end(notFound);
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(object.body);
    }
    if (req.method !== 'PUT') return void res.writeHead(501).end();
    if (url.searchParams.has('tagging')) {
      calls.push(`s3:PutObjectTagging ${key}`);
      if (!object) return void res.writeHead(404, { 'content-type': 'application/xml' }).end(notFound);
      object.tags = Object.fromEntries([...req.body.matchAll(/<Key>(.*?)<\/Key>\s*<Value>(.*?)<\/Value>/g)].map((m) => [m[1], m[2]]));
      return void res.writeHead(200).end();
    }
    const tagging = req.headers['x-amz-tagging'] as string | undefined;
    calls.push(`s3:PutObject ${key}`, ...(tagging ? [`s3:PutObjectTagging ${key}`] : []));
    objects.set(path, { body: req.body, tags: tagsOf(tagging ?? ''), writes: (object?.writes ?? 0) + 1 });
    res.writeHead(200, { etag: '"e"' }).end();
  });
  client = new S3Client({ endpoint: s3.url, forcePathStyle: true, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, maxAttempts: 1 });
});
afterAll(async () => {
  client.destroy();
  await Promise.all([dynamo.close(), s3.close()]);
});
beforeEach(() => {
  calls.length = 0;
  s3Down = false;
});

const store = () => new S3PayloadStore(client, BUCKET);
const retention: PayloadRetention = new S3PayloadRetention(async () => client);
const events = () => new DynamoEventLog(dynamo.client, dynamo.tables.events, { retention });
const subscriptions = () => new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
const object = (eventId: string) => objects.get(`${BUCKET}/payloads/${eventId}.json`);

async function subscription(name: string, state: Subscription['state']): Promise<Subscription> {
  const at = new Date(Date.now() - 60 * DAY).toISOString();
  const s: Subscription = { name, events: [], skills: [], deliver: ['log'], state, created_at: at, updated_at: at, secret: 'whsec_x' };
  await subscriptions().create(s);
  return s;
}

/** An event as ingest stores one with a payload too large for its queue message: the object, then its records. */
async function stored(eventId: string, names: string[], status: EventStatus, receivedAt = Date.now()): Promise<QueueMessage[]> {
  const at = new Date(receivedAt).toISOString();
  const pointer = await store().put(eventId, JSON.stringify({ big: 'x'.repeat(1000), id: eventId }));
  const messages = names.map((name): QueueMessage => ({ v: 1, event_id: eventId, subscription: name, source: 'custom', event: 'build', delivery_id: `d-${eventId}`, received_at: at, payload_ref: pointer }));
  await events().putAll(messages.map((m) => eventRecord(m, status, at)));
  return messages;
}

function lifecycle(): LifecycleDeps {
  return { subscriptions: subscriptions(), events: events(), queue: new RecordingQueue(), clock: new ManualClock(Date.now()) };
}

const cliStatements = (JSON.parse(readFileSync(join(__dirname, '..', '..', 'infra', 'cli-policy.json'), 'utf8').replace(/STAGE/g, 'prod')) as { Statement: PolicyStatement[] }).Statement;
/** The calls infra/cli-policy.json refuses. */
const refusedToCli = () => calls.filter((call) => {
  const [action, key] = call.split(' ') as [string, string];
  return !policyAllows(cliStatements, action, `arn:aws:s3:::${BUCKET}/${key}`);
});

test('the lifecycle rule expires only objects tagged retention=15-days, and every payload is written with that tag', async () => {
  // CloudFormation's short forms (!GetAtt, !Join, ...) read as plain values: only the rules matter here.
  const template = load(readFileSync(join(__dirname, '..', '..', 'infra', 'resources.yml'), 'utf8').replace(/!(GetAtt|Join|Sub|Ref|If|Equals) /g, '')) as {
    Resources: { PayloadBucket: { Properties: { LifecycleConfiguration: { Rules: Array<Record<string, unknown>> } } } };
  };
  const rules = template.Resources.PayloadBucket.Properties.LifecycleConfiguration.Rules;
  const expiring = rules.filter((rule) => rule.ExpirationInDays !== undefined || rule.ExpirationDate !== undefined);
  expect(expiring).toEqual([{ Id: 'expire-payloads', Status: 'Enabled', TagFilters: [{ Key: 'retention', Value: '15-days' }], ExpirationInDays: 15 }]);
  expect(rules).toContainEqual({ Id: 'abort-incomplete-uploads', Status: 'Enabled', AbortIncompleteMultipartUpload: { DaysAfterInitiation: 1 } });

  const pointer = await store().put('evt_pw_put-reply', 'whole reply');
  expect(pointer).toBe(`s3://${BUCKET}/payloads/evt_pw_put-reply.json`);
  expect(object('evt_pw_put-reply')).toEqual({ body: 'whole reply', tags: { retention: '15-days' }, writes: 1 });
  expect(calls).toEqual(['s3:PutObject payloads/evt_pw_put-reply.json', 's3:PutObjectTagging payloads/evt_pw_put-reply.json']);
});

test('held by ingest, its payload is tagged held before the record is written; a resume a month later tags it back, and writes nothing', async () => {
  await subscription('monthly', 'paused');
  await stored('evt_pw_1', ['monthly'], 'held', Date.now() - 30 * DAY);
  expect(object('evt_pw_1')?.tags).toEqual({ retention: 'held' });

  calls.length = 0;
  expect(await resumeSubscription(lifecycle(), 'monthly')).toMatchObject({ kind: 'resumed', released: 1 });

  expect(object('evt_pw_1')).toMatchObject({ tags: { retention: '15-days' }, writes: 1, body: expect.stringContaining('"id":"evt_pw_1"') });
  expect(calls).toEqual(['s3:PutObjectTagging payloads/evt_pw_1.json']);
  expect(refusedToCli()).toEqual([]);
});

test('one payload, two paused subscriptions: the first resume leaves it held for the other, the second lets it expire', async () => {
  await subscription('first', 'paused');
  await subscription('second', 'paused');
  await stored('evt_pw_3', ['first', 'second'], 'held');

  await resumeSubscription(lifecycle(), 'first');
  expect(object('evt_pw_3')?.tags).toEqual({ retention: 'held' });
  await resumeSubscription(lifecycle(), 'second');
  expect(object('evt_pw_3')?.tags).toEqual({ retention: '15-days' });
});

test('discarded (resume --discard-held), the payload is tagged to expire', async () => {
  await subscription('dropped', 'paused');
  await stored('evt_pw_4', ['dropped'], 'held');
  calls.length = 0;

  expect(await resumeSubscription(lifecycle(), 'dropped', { discardHeld: true })).toEqual({ kind: 'discarded', discarded: 1 });

  expect(object('evt_pw_4')?.tags).toEqual({ retention: '15-days' });
  expect(refusedToCli()).toEqual([]);
});

test('when S3 cannot tag the payload held, no record is written held (the request fails and is retried)', async () => {
  await subscription('unlucky', 'paused');
  const pointer = await store().put('evt_pw_5', '{"big":true}');
  const at = new Date().toISOString();
  const message: QueueMessage = { v: 1, event_id: 'evt_pw_5', subscription: 'unlucky', source: 'custom', event: 'build', delivery_id: 'd-5', received_at: at, payload_ref: pointer };
  s3Down = true;

  await expect(events().putAll([eventRecord(message, 'held', at)])).rejects.toMatchObject({ code: 'unavailable', retryable: true });

  expect(await events().get('evt_pw_5', 'unlucky')).toBeUndefined();
  expect(object('evt_pw_5')?.tags).toEqual({ retention: '15-days' });
});

function workerDeps(subs: SubscriptionStore, clock = new ManualClock(Date.now())): WorkerDeps {
  return {
    events: events(), subscriptions: subs, payloads: store(), agent: echoAgent, skills: new SkillLibrary(__dirname), targets: { log: logTarget },
    config: { agent: { provider: 'echo', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock, logger: jsonLogger(() => undefined), maxReceiveCount: 3,
  };
}

test('held by the worker (paused after the event was queued), the payload is tagged held; the worker itself never writes ingest\'s object', async () => {
  await subscription('later', 'paused');
  const [message] = await stored('evt_pw_6', ['later'], 'queued');
  expect(object('evt_pw_6')?.tags).toEqual({ retention: '15-days' });
  calls.length = 0;

  expect(await processMessage(JSON.stringify(message), 1, workerDeps(subscriptions()))).toMatchObject({ kind: 'ack', status: 'held' });

  expect(object('evt_pw_6')).toMatchObject({ tags: { retention: 'held' }, writes: 1 });
  expect(calls).toEqual(['s3:PutObjectTagging payloads/evt_pw_6.json']);
});

test('a held event the worker carries on (resumed between its two reads) gets its payload\'s tag back, and is delivered from it', async () => {
  const paused = await subscription('racing', 'paused');
  const [message] = await stored('evt_pw_7', ['racing'], 'queued');
  let reads = 0;
  const flipping: SubscriptionStore = Object.assign(Object.create(subscriptions()) as SubscriptionStore, {
    get: async () => (++reads === 1 ? paused : { ...paused, state: 'active' as const }),
  });
  calls.length = 0;

  expect(await processMessage(JSON.stringify(message), 1, workerDeps(flipping))).toMatchObject({ kind: 'ack', status: 'delivered' });

  expect(object('evt_pw_7')).toMatchObject({ tags: { retention: '15-days' }, writes: 1 });
  // Held, read (the worker writes `processing` with its next write), tagged back.
  expect(calls).toEqual(['s3:PutObjectTagging payloads/evt_pw_7.json', 's3:GetObject payloads/evt_pw_7.json', 's3:PutObjectTagging payloads/evt_pw_7.json']);
});

test('a hold whose record is gone meanwhile (withdrawn by ingest) tags the payload back: nothing holds it', async () => {
  await subscription('withdrawn', 'paused');
  await stored('evt_pw_8', ['withdrawn'], 'queued');
  await dynamo.client.send(new DeleteItemCommand({ TableName: dynamo.tables.events, Key: { event_id: { S: 'evt_pw_8' }, subscription: { S: 'withdrawn' } } }));

  await expect(events().update('evt_pw_8', 'withdrawn', { status: 'held', updated_at: new Date().toISOString() }, { existing: true })).rejects.toMatchObject({ code: 'event_not_found' });

  expect(object('evt_pw_8')?.tags).toEqual({ retention: '15-days' });
});
