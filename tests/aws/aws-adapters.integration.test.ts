/**
 * The AWS adapters: DynamoDB ones against dynalite; SQS, S3 and SSM against local servers
 * that speak those services' wire protocols, so the requests themselves are checked.
 */
import { createHash } from 'node:crypto';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';
import { SSMClient } from '@aws-sdk/client-ssm';
import { DeleteItemCommand, GetItemCommand, PutItemCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { S3PayloadStore } from '../../functions/aws/s3-payload-store';
import { SqsEventQueue, chunkEntries } from '../../functions/aws/sqs-queue';
import { SsmSecretSource } from '../../functions/aws/ssm-secrets';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { HookError } from '../../functions/core/errors';
import type { DedupStore } from '../../functions/core/ports';
import { MemoryDedupStore } from '../support/memory';
import type { EventRecord, QueueMessage, Subscription } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { ManualClock } from '../support/recording-queue';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => {
  await dynamo.close();
});

const subscription = (name: string): Subscription => ({
  name, events: ['push'], skills: [], deliver: ['log'], state: 'active',
  created_at: '2026-11-22T00:00:00Z', updated_at: '2026-11-22T00:00:00Z', secret: 'whsec_x',
});

describe('DynamoSubscriptionStore', () => {
  test('create is conditional: of two racing creates of one name exactly one succeeds', async () => {
    const store = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
    const results = await Promise.allSettled([store.create(subscription('race')), store.create(subscription('race'))]);
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    const rejected = results.find((r) => r.status === 'rejected') as PromiseRejectedResult;
    expect(rejected.reason).toBeInstanceOf(HookError);
    expect((rejected.reason as HookError).code).toBe('subscription_exists');
  });

  test('get, list, put and delete; unknown names are errors', async () => {
    const store = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
    await store.create({ ...subscription('crud'), description: 'd', prompt: 'Review {pull_request.title}' });
    expect(await store.get('crud')).toMatchObject({ name: 'crud', prompt: 'Review {pull_request.title}' });
    await store.put({ ...subscription('crud'), state: 'paused' });
    expect((await store.get('crud'))?.state).toBe('paused');
    expect((await store.list()).map((s) => s.name)).toContain('crud');
    await store.delete('crud');
    expect(await store.get('crud')).toBeUndefined();
    await expect(store.delete('crud')).rejects.toMatchObject({ code: 'subscription_not_found', message: "No subscription named 'crud'" });
    await expect(store.put(subscription('ghost'))).rejects.toMatchObject({ code: 'subscription_not_found' });
  });
});

describe.each([
  ['DynamoDedupStore', (clock: ManualClock): DedupStore => new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, clock)],
  ['MemoryDedupStore', (clock: ManualClock): DedupStore => new MemoryDedupStore(clock)],
])('%s', (_name, open) => {
  const LEASE = 60_000;
  let clock: ManualClock;
  let dedup: DedupStore;
  let n = 0;
  beforeEach(() => {
    clock = new ManualClock(Date.parse('2026-11-23T10:00:00Z') + 1_000_000 * n++);
    dedup = open(clock);
  });
  const claim = (key: string, eventId = 'evt_new') => dedup.claim(key, { eventId, ttlSeconds: 3600, staleBefore: clock.now() - LEASE });

  test('a key is claimed once: pending answers in_progress, committed answers duplicate, until the TTL ends', async () => {
    const key = `github#once-${n}`;
    expect(await claim(key, 'evt_1')).toEqual({ kind: 'new' });
    expect(await claim(key)).toEqual({ kind: 'in_progress' });
    await dedup.commit(key);
    expect(await claim(key)).toEqual({ kind: 'duplicate', eventId: 'evt_1' });
    expect(await claim(`gitlab#once-${n}`)).toEqual({ kind: 'new' });
    clock.advance(3600_000);
    expect(await claim(key, 'evt_2')).toEqual({ kind: 'new' });
  });

  test('a pending claim older than the lease is taken over with its event id, once', async () => {
    const key = `github#stale-${n}`;
    expect(await claim(key, 'evt_dead')).toEqual({ kind: 'new' });
    clock.advance(LEASE - 1);
    expect(await claim(key)).toEqual({ kind: 'in_progress' });
    clock.advance(2);
    expect(await claim(key)).toEqual({ kind: 'resumed', eventId: 'evt_dead' });
    expect(await claim(key)).toEqual({ kind: 'in_progress' });
    // Claims made before a given instant (serve's start) are abandoned whatever their age.
    expect(await dedup.claim(key, { eventId: 'x', ttlSeconds: 3600, staleBefore: clock.now() + 1 })).toEqual({ kind: 'resumed', eventId: 'evt_dead' });
  });

  test('release gives a pending claim up at once; it cannot undo a commit; absent keys are ignored', async () => {
    const key = `github#release-${n}`;
    expect(await claim(key, 'evt_r')).toEqual({ kind: 'new' });
    await dedup.release(key);
    expect(await claim(key)).toEqual({ kind: 'resumed', eventId: 'evt_r' });
    await dedup.commit(key);
    await dedup.release(key);
    expect(await claim(key)).toEqual({ kind: 'duplicate', eventId: 'evt_r' });
    await dedup.commit(`github#absent-${n}`);
    await dedup.release(`github#absent-${n}`);
    expect(await claim(`github#absent-${n}`)).toEqual({ kind: 'new' });
  });
});

describe('DynamoEventLog', () => {
  const record = (eventId: string, sub: string, status: EventRecord['status'], at: string): EventRecord => {
    const message: QueueMessage = { v: 1, event_id: eventId, subscription: sub, source: 'custom', event: 'e', delivery_id: eventId, received_at: at, payload: { deep: { a: [1, { b: null }] } } };
    return { event_id: eventId, subscription: sub, status, source: 'custom', event: 'e', delivery_id: eventId, received_at: at, updated_at: at, message };
  };

  test('records by event, by subscription (newest first, limited) and by status (arrival order)', async () => {
    const log = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    await log.putAll([
      record('evt_1', 'a', 'held', '2026-11-22T10:00:00.000Z'),
      record('evt_1', 'b', 'queued', '2026-11-22T10:00:00.000Z'),
      record('evt_2', 'a', 'delivered', '2026-11-22T10:01:00.000Z'),
      record('evt_3', 'a', 'held', '2026-11-22T10:02:00.000Z'),
    ]);
    expect((await log.getEvent('evt_1')).map((r) => r.subscription)).toEqual(['a', 'b']);
    expect((await log.get('evt_1', 'a'))?.message.payload).toEqual({ deep: { a: [1, { b: null }] } });
    expect((await log.listBySubscription('a', 2)).map((r) => r.event_id)).toEqual(['evt_3', 'evt_2']);
    expect((await log.listByStatus('a', 'held')).map((r) => r.event_id)).toEqual(['evt_1', 'evt_3']);
    await log.deleteAll([{ event_id: 'evt_1', subscription: 'a' }]);
    expect(await log.get('evt_1', 'a')).toBeUndefined();
  });

  test('update writes only the changed attributes (UpdateItem, nothing returned): removes undefined ones, keeps the message, ignores absent records', async () => {
    const log = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    await log.putAll([{ ...record('evt_upd', 'a', 'queued', '2026-11-22T12:00:00.000Z'), error: { code: 'x', message: 'y' } }]);
    const sent: Array<{ name: string; input: Record<string, unknown> }> = [];
    const original = dynamo.client.send.bind(dynamo.client) as (command: unknown) => Promise<unknown>;
    const spy = jest.spyOn(dynamo.client, 'send').mockImplementation(((command: { constructor: { name: string }; input: Record<string, unknown> }) => {
      sent.push({ name: command.constructor.name, input: command.input });
      return original(command);
    }) as never);
    try {
      await log.update('evt_upd', 'a', { status: 'delivered', reply: 'hi', error: undefined, targets: { log: { status: 'delivered' } } as unknown as EventRecord['targets'] });
      await log.update('evt_absent', 'a', { status: 'failed' });
    } finally {
      spy.mockRestore();
    }
    expect(sent.map((c) => c.name)).toEqual(['UpdateItemCommand', 'UpdateItemCommand']);
    expect(sent[0]!.input).toMatchObject({ ReturnValues: 'NONE', ConditionExpression: 'attribute_exists(#pk)' });
    expect(JSON.stringify(sent[0]!.input)).not.toContain('deep');
    const got = await log.get('evt_upd', 'a');
    expect(got).toMatchObject({ status: 'delivered', reply: 'hi', targets: { log: { status: 'delivered' } } });
    expect(got).not.toHaveProperty('error');
    expect(got?.message.payload).toEqual({ deep: { a: [1, { b: null }] } });
    expect((await log.listByStatus('a', 'delivered')).map((r) => r.event_id)).toContain('evt_upd');
    expect(await log.get('evt_absent', 'a')).toBeUndefined();
  });

  test('the message is an item of its own, outside the index: a transition is billed for the small record only', async () => {
    const log = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    const big = { ...record('evt_split', 'a', 'queued', '2026-11-22T13:00:00.000Z') };
    big.message = { ...big.message, payload: { text: 'p'.repeat(20_000) } };
    await log.putAll([big]);
    const raw = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.events, Key: { event_id: { S: 'evt_split' }, subscription: { S: 'a' } } }));
    expect(raw.Item?.message).toBeUndefined();
    const stored = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.events, Key: { event_id: { S: 'evt_split' }, subscription: { S: 'a#message' } } }));
    expect(JSON.parse(stored.Item!.message!.S!)).toEqual(big.message);
    expect(stored.Item!.arrival).toBeUndefined();
    // What DynamoDB bills for a status change of this record (dynalite counts like DynamoDB: by item size).
    const update = await dynamo.client.send(new UpdateItemCommand({
      TableName: dynamo.tables.events, Key: { event_id: { S: 'evt_split' }, subscription: { S: 'a' } },
      UpdateExpression: 'SET #s = :s', ExpressionAttributeNames: { '#s': 'status' }, ExpressionAttributeValues: { ':s': { S: 'processing' } }, ReturnConsumedCapacity: 'TOTAL',
    }));
    expect(update.ConsumedCapacity?.CapacityUnits).toBe(1);
    // Read back whole, by every path; the index lists records only.
    expect((await log.get('evt_split', 'a'))?.message).toEqual(big.message);
    expect((await log.get('evt_split', 'a', big.message))?.status).toBe('processing');
    expect((await log.getEvent('evt_split')).map((r) => [r.subscription, r.message.payload])).toEqual([['a', { text: 'p'.repeat(20_000) }]]);
    expect((await log.listByStatus('a', 'processing')).map((r) => [r.event_id, r.message.payload])).toEqual([['evt_split', { text: 'p'.repeat(20_000) }]]);
    await log.deleteAll([{ event_id: 'evt_split', subscription: 'a' }]);
    const gone = await dynamo.client.send(new GetItemCommand({ TableName: dynamo.tables.events, Key: { event_id: { S: 'evt_split' }, subscription: { S: 'a#message' } } }));
    expect(gone.Item).toBeUndefined();
  });

  test('records written with the message inline (before the split) read as they were', async () => {
    const log = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    const old = record('evt_old', 'legacy', 'delivered', '2026-11-22T14:00:00.000Z');
    const { message, ...rest } = old;
    await dynamo.client.send(new PutItemCommand({
      TableName: dynamo.tables.events,
      Item: marshall({ ...rest, message: JSON.stringify(message), arrival: `${old.received_at}#evt_old`, expires_at: 2_000_000_000 }),
    }));
    expect((await log.get('evt_old', 'legacy'))?.message).toEqual(message);
    expect((await log.getEvent('evt_old'))[0]?.message).toEqual(message);
    expect((await log.listBySubscription('legacy', 10))[0]?.message).toEqual(message);
    await log.update('evt_old', 'legacy', { status: 'failed' });
    expect(await log.get('evt_old', 'legacy')).toMatchObject({ status: 'failed', message });
  });

  test('subscriptions whose names share a prefix are told apart; a record whose message item is gone reads without a payload', async () => {
    const log = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    await log.putAll([record('evt_pre', 'ci', 'queued', '2026-11-22T15:00:00.000Z'), record('evt_pre', 'ci-deploy', 'queued', '2026-11-22T15:00:00.000Z')]);
    expect((await log.get('evt_pre', 'ci'))?.message.subscription).toBe('ci');
    expect((await log.get('evt_pre', 'ci-deploy'))?.message.subscription).toBe('ci-deploy');
    await dynamo.client.send(new DeleteItemCommand({ TableName: dynamo.tables.events, Key: { event_id: { S: 'evt_pre' }, subscription: { S: 'ci#message' } } }));
    const orphan = await log.get('evt_pre', 'ci');
    expect(orphan?.message).toMatchObject({ event_id: 'evt_pre', subscription: 'ci', payload_ref: '' });
    expect(orphan?.message.payload).toBeUndefined();
    expect((await log.listBySubscription('ci', 10))[0]?.message.payload_ref).toBe('');
  });

  test('more than 25 records are written in several batches', async () => {
    const log = new DynamoEventLog(dynamo.client, dynamo.tables.events);
    const many = Array.from({ length: 60 }, (_, i) => record(`evt_many_${String(i).padStart(2, '0')}`, 'many', 'queued', `2026-11-22T11:00:${String(i).padStart(2, '0')}.000Z`));
    await log.putAll(many);
    expect(await log.listByStatus('many', 'queued')).toHaveLength(60);
  });

  test('an unreachable table is `unavailable`', async () => {
    const log = new DynamoEventLog(dynamo.client, 'no-such-table');
    await expect(log.get('x', 'y')).rejects.toMatchObject({ code: 'unavailable' });
  });
});

describe('SqsEventQueue (AWS JSON protocol)', () => {
  let sqs: LocalServer;
  let failIds = new Set<string>();
  beforeAll(async () => {
    sqs = await startLocalServer((req, res) => {
      const input = JSON.parse(req.body) as { Entries: Array<{ Id: string; MessageBody: string }> };
      const ok = input.Entries.filter((e) => !failIds.has(e.Id));
      sendJson(res, 200, {
        Successful: ok.map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })),
        Failed: input.Entries.filter((e) => failIds.has(e.Id)).map((e) => ({ Id: e.Id, Code: 'InternalError', SenderFault: false, Message: 'try again' })),
      }, { 'content-type': 'application/x-amz-json-1.0' });
      failIds = new Set();
    });
  });
  afterAll(async () => sqs.close());
  beforeEach(() => {
    sqs.requests.length = 0;
  });

  const client = () => new SQSClient({ endpoint: sqs.url, region: 'eu-west-1', credentials, maxAttempts: 1 });
  const message = (i: number, pad = 0): QueueMessage => ({
    v: 1, event_id: `evt_${i}`, subscription: 's', source: 'github', event: 'push', delivery_id: `d${i}`, received_at: '2026-11-22T00:00:00Z', payload: { pad: 'x'.repeat(pad) },
  });

  test('23 messages go as SendMessageBatch requests of at most 10 entries', async () => {
    const queue = new SqsEventQueue(client(), `${sqs.url}/123456789012/hookagent-test-queue`);
    await queue.send(Array.from({ length: 23 }, (_, i) => message(i)));
    expect(sqs.requests.map((r) => r.headers['x-amz-target'])).toEqual(Array(3).fill('AmazonSQS.SendMessageBatch'));
    const sizes = sqs.requests.map((r) => (JSON.parse(r.body) as { Entries: unknown[] }).Entries.length);
    expect(sizes).toEqual([10, 10, 3]);
    const first = JSON.parse(sqs.requests[0]!.body) as { QueueUrl: string; Entries: Array<{ MessageBody: string }> };
    expect(first.QueueUrl).toBe(`${sqs.url}/123456789012/hookagent-test-queue`);
    expect(JSON.parse(first.Entries[0]!.MessageBody)).toMatchObject({ event_id: 'evt_0' });
  });

  test('entries SQS reports as failed are sent again', async () => {
    const queue = new SqsEventQueue(client(), `${sqs.url}/q`);
    failIds = new Set(['1']);
    await queue.send([message(0), message(1)]);
    expect(sqs.requests).toHaveLength(2);
    expect((JSON.parse(sqs.requests[1]!.body) as { Entries: Array<{ Id: string }> }).Entries.map((e) => e.Id)).toEqual(['1']);
  });

  test('delaySeconds (debounce) becomes each entry\'s DelaySeconds, capped at 900; without it none is sent', async () => {
    const queue = new SqsEventQueue(client(), `${sqs.url}/q`);
    await queue.send([message(0), message(1)], { delaySeconds: 60 });
    await queue.send([message(2)], { delaySeconds: 5000 });
    await queue.send([message(3)]);
    const delays = sqs.requests.map((r) => (JSON.parse(r.body) as { Entries: Array<{ DelaySeconds?: number }> }).Entries.map((e) => e.DelaySeconds));
    expect(delays).toEqual([[60, 60], [900], [undefined]]);
  });

  test('batches also respect the 256 KiB request size', () => {
    const entries = Array.from({ length: 4 }, (_, i) => ({ Id: String(i), MessageBody: 'x'.repeat(100 * 1024) }));
    expect(chunkEntries(entries).map((c) => c.length)).toEqual([2, 2]);
  });

  test('an unreachable queue is `unavailable`', async () => {
    const queue = new SqsEventQueue(new SQSClient({ endpoint: 'http://127.0.0.1:1', region: 'eu-west-1', credentials, maxAttempts: 1 }), 'http://127.0.0.1:1/q');
    await expect(queue.send([message(0)])).rejects.toMatchObject({ code: 'unavailable', retryable: true });
  });
});

describe('S3PayloadStore (REST, path style)', () => {
  test('PutObject then GetObject by pointer; a missing object is payload_missing', async () => {
    const objects = new Map<string, string>();
    const s3 = await startLocalServer((req, res) => {
      const path = req.url.split('?')[0]!;
      if (req.method === 'PUT') {
        objects.set(path, req.body);
        res.writeHead(200, { etag: '"abc"' });
        res.end();
      } else if (objects.has(path)) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(objects.get(path));
      } else {
        res.writeHead(404, { 'content-type': 'application/xml' });
        res.end('<?xml version="1.0" encoding="UTF-8"?><Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message></Error>');
      }
    });
    try {
      const store = new S3PayloadStore(new S3Client({ endpoint: s3.url, forcePathStyle: true, region: 'eu-west-1', credentials, maxAttempts: 1 }), 'payload-bucket');
      const pointer = await store.put('evt_1', '{"big":true}');
      expect(pointer).toBe('s3://payload-bucket/payloads/evt_1.json');
      expect(s3.requests[0]).toMatchObject({ method: 'PUT', body: '{"big":true}' });
      expect(s3.requests[0]?.url.split('?')[0]).toBe('/payload-bucket/payloads/evt_1.json');
      expect(s3.requests[0]?.headers['content-type']).toBe('application/json');
      expect(await store.get(pointer)).toBe('{"big":true}');
      await expect(store.get('s3://payload-bucket/payloads/gone.json')).rejects.toMatchObject({ code: 'payload_missing' });
      await expect(store.get('not-a-pointer')).rejects.toMatchObject({ code: 'payload_pointer_invalid' });
    } finally {
      await s3.close();
    }
  });
});

describe('SsmSecretSource', () => {
  test('environment first, then /hookagent/<stage>/<VAR> with decryption, cached; unknown → undefined', async () => {
    const ssm = await startLocalServer((req, res) => {
      const input = JSON.parse(req.body) as { Name: string; WithDecryption: boolean };
      if (input.Name === '/hookagent/prod/GITHUB_TOKEN') {
        sendJson(res, 200, { Parameter: { Name: input.Name, Type: 'SecureString', Value: 'from-ssm', Version: 1 } }, { 'content-type': 'application/x-amz-json-1.1' });
      } else {
        sendJson(res, 400, { __type: 'ParameterNotFound', message: 'not found' }, { 'content-type': 'application/x-amz-json-1.1' });
      }
    });
    try {
      const source = new SsmSecretSource(new SSMClient({ endpoint: ssm.url, region: 'eu-west-1', credentials, maxAttempts: 1 }), 'prod', { FROM_ENV: 'env-value' });
      expect(await source.get('FROM_ENV')).toBe('env-value');
      expect(await source.get('GITHUB_TOKEN')).toBe('from-ssm');
      expect(await source.get('GITHUB_TOKEN')).toBe('from-ssm');
      expect(await source.get('MISSING')).toBeUndefined();
      const asked = ssm.requests.map((r) => [r.headers['x-amz-target'], (JSON.parse(r.body) as { Name: string; WithDecryption: boolean })]);
      expect(asked).toEqual([
        ['AmazonSSM.GetParameter', { Name: '/hookagent/prod/GITHUB_TOKEN', WithDecryption: true }],
        ['AmazonSSM.GetParameter', { Name: '/hookagent/prod/MISSING', WithDecryption: true }],
      ]);
      expect(source.where('X')).toContain('/hookagent/prod/X');
    } finally {
      await ssm.close();
    }
  });
});
