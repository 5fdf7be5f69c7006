/**
 * The lean JSON-protocol client of ingest's hot path (functions/aws/aws-json.ts): its
 * Signature Version 4 is the SDK signer's, byte for byte; errors come back as the SDK's
 * do (name, fields); 5xx answers are retried. Also dynalite's TransactWriteItems (test
 * support) is all or nothing, and the message text helper keeps to well-formed text.
 */
import { GetItemCommand } from '@aws-sdk/client-dynamodb';
import { SignatureV4 } from '@smithy/signature-v4';
import { createHash, createHmac } from 'node:crypto';
import { AwsJsonClient, AwsJsonError, awsJsonBeside } from '../../functions/aws/aws-json';
import { messageJson, rememberMessageJson } from '../../functions/core/message-json';
import type { QueueMessage } from '../../functions/core/types';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer } from '../support/local-http';

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'session-token' };

class NodeSha256 {
  private hash;
  constructor(private readonly secret?: Uint8Array | string) {
    this.hash = secret ? createHmac('sha256', secret) : createHash('sha256');
  }
  update(data: Uint8Array | string): void {
    this.hash.update(data);
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
  reset(): void {
    this.hash = this.secret ? createHmac('sha256', this.secret) : createHash('sha256');
  }
}

test('the signature is the SDK signer\'s for the same request, time and credentials', async () => {
  const server = await startLocalServer((_req, res) => sendJson(res, 200, {}, { 'content-type': 'application/x-amz-json-1.0' }));
  try {
    const now = Date.parse('2026-11-23T18:34:43.123Z');
    const client = new AwsJsonClient({
      service: 'dynamodb', targetPrefix: 'DynamoDB_20120810', region: async () => 'eu-west-1', credentials: async () => credentials,
      endpoint: async () => server.url, now: () => now,
    });
    const body = JSON.stringify({ TableName: 't', Item: { key: { S: 'k "quoted" é' } } });
    await client.call('PutItem', body);
    client.destroy();
    const sent = server.requests[0]!;
    const url = new URL(server.url);
    const signer = new SignatureV4({ credentials, region: 'eu-west-1', service: 'dynamodb', sha256: NodeSha256 as never, applyChecksum: false });
    const headers: Record<string, string> = {};
    for (const name of ['content-type', 'host', 'x-amz-date', 'x-amz-target', 'x-amz-security-token']) headers[name] = String(sent.headers[name]);
    const signed = await signer.sign(
      { method: 'POST', protocol: 'http:', hostname: url.hostname, port: Number(url.port), path: '/', headers: { ...headers }, body, query: {} },
      { signingDate: new Date(now) },
    );
    expect(sent.headers['x-amz-date']).toBe('20261123T183443Z');
    expect(sent.headers.authorization).toBe(signed.headers.authorization);
    expect(sent.body).toBe(body);
  } finally {
    await server.close();
  }
});

test('5xx answers are retried; service errors carry their name and fields', async () => {
  let calls = 0;
  const server = await startLocalServer((_req, res) => {
    calls += 1;
    if (calls === 1) return sendJson(res, 500, { __type: 'com.amazonaws.dynamodb.v20120810#InternalServerError', message: 'try again' });
    sendJson(res, 400, { __type: 'com.amazonaws.dynamodb.v20120810#TransactionCanceledException', Message: 'cancelled', CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] });
  });
  const client = new AwsJsonClient({
    service: 'dynamodb', targetPrefix: 'DynamoDB_20120810', region: async () => 'eu-west-1', credentials: async () => credentials,
    endpoint: async () => server.url, maxAttempts: async () => 3,
  });
  try {
    const error = await client.call('TransactWriteItems', '{}').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AwsJsonError);
    expect(error).toMatchObject({ name: 'TransactionCanceledException', message: 'cancelled', status: 400, CancellationReasons: [{ Code: 'ConditionalCheckFailed' }] });
    expect(calls).toBe(2);
  } finally {
    client.destroy();
    await server.close();
  }
});

describe('over dynalite', () => {
  let dynamo: TestDynamo;
  beforeAll(async () => {
    dynamo = await startDynalite();
  });
  afterAll(async () => {
    await dynamo.close();
  });

  test('TransactWriteItems is all or nothing, with a reason per item; a repeated token is not applied twice', async () => {
    const rpc = awsJsonBeside(dynamo.client, 'dynamodb');
    const table = dynamo.tables.dedup;
    const put = (key: string, value: string, condition?: string) => ({
      Put: { TableName: table, Item: { key: { S: key }, v: { S: value } }, ...(condition ? { ConditionExpression: condition } : {}) },
    });
    await rpc.call('TransactWriteItems', JSON.stringify({ TransactItems: [put('tx-a', 'first'), put('tx-b', 'first')] }));
    const cancelled = await rpc.call('TransactWriteItems', JSON.stringify({
      TransactItems: [put('tx-a', 'second'), put('tx-c', 'second'), put('tx-b', 'second', 'attribute_not_exists(#k)')].map((item, i) => (i === 2 ? { Put: { ...item.Put, ExpressionAttributeNames: { '#k': 'key' } } } : item)),
    })).catch((e: unknown) => e);
    expect(cancelled).toMatchObject({ name: 'TransactionCanceledException', CancellationReasons: [{ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }] });
    const value = async (key: string) => (await dynamo.client.send(new GetItemCommand({ TableName: table, Key: { key: { S: key } }, ConsistentRead: true }))).Item?.v?.S;
    expect([await value('tx-a'), await value('tx-b'), await value('tx-c')]).toEqual(['first', 'first', undefined]);

    const token = 'tx-token-1';
    await rpc.call('TransactWriteItems', JSON.stringify({ ClientRequestToken: token, TransactItems: [put('tx-d', 'once', 'attribute_not_exists(#k)')].map((i) => ({ Put: { ...i.Put, ExpressionAttributeNames: { '#k': 'key' } } })) }));
    // The same request again (an SDK retry after a lost answer): success, not a failed condition.
    await rpc.call('TransactWriteItems', JSON.stringify({ ClientRequestToken: token, TransactItems: [put('tx-d', 'once', 'attribute_not_exists(#k)')].map((i) => ({ Put: { ...i.Put, ExpressionAttributeNames: { '#k': 'key' } } })) }));
    expect(await value('tx-d')).toBe('once');
  });
});

describe('message text', () => {
  const message = (): QueueMessage => ({ v: 1, event_id: 'evt_1', subscription: 's', source: 'github', event: 'push', delivery_id: 'd', received_at: '2026-11-23T00:00:00Z', payload: { a: 'é' } });

  test('embeds the body it was parsed from, and parses to the same message', () => {
    const m = message();
    rememberMessageJson(m, ' { "a" : "\\u00e9" } ');
    expect(messageJson(m)).toBe('{"v":1,"event_id":"evt_1","subscription":"s","source":"github","event":"push","delivery_id":"d","received_at":"2026-11-23T00:00:00Z","payload": { "a" : "\\u00e9" } }');
    expect(JSON.parse(messageJson(m))).toEqual(m);
  });

  test('text with a lone surrogate is not used (JSON.stringify escapes it; SQS and DynamoDB would refuse it)', () => {
    const m = { ...message(), payload: { a: '\ud800' } };
    rememberMessageJson(m, '{"a":"\ud800"}');
    expect(messageJson(m)).toBe(JSON.stringify(m));
    const copy = { ...message() };
    expect(messageJson(copy)).toBe(JSON.stringify(copy));
  });
});
