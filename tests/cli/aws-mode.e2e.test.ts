/**
 * With an `aws` section (or --stage), the CLI acts on that deployment's tables through the
 * standard AWS SDK configuration; here the SDK's endpoint variables point it at dynalite.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { EventRecord } from '../../functions/core/types';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { buildCli, runCli } from '../support/cli';

let dynamo: TestDynamo;
let sqs: LocalServer;
beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  // SQS's JSON protocol: GetQueueUrl by name, then SendMessageBatch to that URL.
  sqs = await startLocalServer((req, res) => {
    const input = JSON.parse(req.body) as { QueueName?: string; QueueUrl?: string; Entries?: Array<{ Id: string; MessageBody: string }> };
    const target = String(req.headers['x-amz-target']);
    if (target === 'AmazonSQS.GetQueueUrl') {
      if (input.QueueName !== 'hookagent-prod-queue') return sendJson(res, 400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' });
      return sendJson(res, 200, { QueueUrl: `${sqs.url}/123456789012/hookagent-prod-queue` });
    }
    sendJson(res, 200, {
      Successful: (input.Entries ?? []).map((e) => ({ Id: e.Id, MessageId: `m-${e.Id}`, MD5OfMessageBody: createHash('md5').update(e.MessageBody).digest('hex') })),
      Failed: [],
    });
  });
}, 60_000);
afterAll(async () => Promise.all([dynamo.close(), sqs.close()]));

const env = () => ({ AWS_ENDPOINT_URL_DYNAMODB: dynamo.endpoint, AWS_ENDPOINT_URL_SQS: sqs.url, AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1' });

test('an aws section sends the CLI to hookagent-<stage>-* tables, not the local store', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-aws-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
  const result = await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'remote', '--events', 'push'], env());
  expect(result.code).toBe(0);
  // The only thing on stderr: the printed URLs are serve's (no webhooks.public_url here).
  expect(result.stderr).toMatch(/^note: these URLs are serve's on this machine, not stage 'prod'[^\n]*\n$/);
  const stored = await new DynamoSubscriptionStore(dynamo.client, 'hookagent-prod-subscriptions').get('remote');
  expect(stored).toMatchObject({ name: 'remote', events: ['push'] });
  const list = await runCli(['--config-dir', dir, 'webhook', 'list', '--json'], env());
  expect(JSON.parse(list.stdout)).toEqual([expect.objectContaining({ name: 'remote' })]);
});

test('--stage and --region select a deployment without an aws section; a missing table is a clear error', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-aws-'));
  const ok = await runCli(['--config-dir', dir, '--stage', 'prod', '--region', 'eu-west-1', 'webhook', 'show', 'remote', '--json'], env());
  expect(ok.code).toBe(0);
  const missing = await runCli(['--config-dir', dir, '--stage', 'staging', 'webhook', 'list'], env());
  expect(missing.code).toBe(1);
  expect(missing.stderr).toContain('The subscription store is unavailable');
});

test('resume releases held events to the deployment\'s queue, found by its name hookagent-<stage>-queue', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-aws-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
  expect((await runCli(['--config-dir', dir, 'webhook', 'subscribe', 'held-one', '--events', 'push'], env())).code).toBe(0);
  expect((await runCli(['--config-dir', dir, 'webhook', 'pause', 'held-one'], env())).code).toBe(0);
  const at = '2026-11-22T10:00:00.000Z';
  const message = { v: 1 as const, event_id: 'evt-held-1', subscription: 'held-one', source: 'github' as const, event: 'push', delivery_id: 'd-1', received_at: at, payload: { ref: 'main' } };
  const record: EventRecord = { event_id: 'evt-held-1', subscription: 'held-one', status: 'held', source: 'github', event: 'push', delivery_id: 'd-1', received_at: at, updated_at: at, message };
  await new DynamoEventLog(dynamo.client, 'hookagent-prod-events').putAll([record]);
  sqs.requests.length = 0;
  const resumed = await runCli(['--config-dir', dir, 'webhook', 'resume', 'held-one'], env());
  expect(resumed).toMatchObject({ code: 0, stderr: '' });
  expect(sqs.requests.map((r) => r.headers['x-amz-target'])).toEqual(['AmazonSQS.GetQueueUrl', 'AmazonSQS.SendMessageBatch']);
  const batch = JSON.parse(sqs.requests[1]!.body) as { QueueUrl: string; Entries: Array<{ MessageBody: string }> };
  expect(batch.QueueUrl).toBe(`${sqs.url}/123456789012/hookagent-prod-queue`);
  expect(JSON.parse(batch.Entries[0]!.MessageBody)).toEqual(message);
  expect(await new DynamoEventLog(dynamo.client, 'hookagent-prod-events').get('evt-held-1', 'held-one')).toMatchObject({ status: 'queued' });
});
