/**
 * Hunt 2, D4 on AWS: SQS's redrive moves a message to the DLQ by itself after
 * maxReceiveCount receives; when the last attempt was cut off (a Lambda timeout, a
 * crash), no code of ours saw it and the record stayed `processing`. `webhook
 * dead-letters` (the CLI, against the recording AWS endpoint and dynalite) sets such
 * records `failed` with the queue's reason, and only with calls the CLI policy allows.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { startAwsRecorder, type AwsRecorder, type RecordedMessage, type RecorderOptions } from '../support/aws-recorder';
import { buildCli, runCli } from '../support/cli';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer } from '../support/local-http';

let dynamo: TestDynamo;
let recorder: AwsRecorder;
let options: RecorderOptions & { queues: Record<string, RecordedMessage[]> };
let dir: string;

beforeAll(async () => {
  buildCli();
  dynamo = await startDynalite('prod');
  options = { dynamoEndpoint: dynamo.endpoint, parameters: {}, queues: {} };
  recorder = await startAwsRecorder(options);
  dir = mkdtempSync(join(tmpdir(), 'hookagent-settle-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { stage: prod, region: eu-west-1 }\n');
}, 120_000);
afterAll(async () => Promise.all([recorder.close(), dynamo.close()]));

const env = () => ({
  AWS_ENDPOINT_URL_DYNAMODB: recorder.url, AWS_ENDPOINT_URL_SQS: recorder.url,
  AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'secret', AWS_REGION: 'eu-west-1', AWS_MAX_ATTEMPTS: '1',
});

const at = '2026-11-22T12:00:00.000Z';
const message = (id: string): QueueMessage => ({ v: 1, event_id: id, subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: id, received_at: at, payload: { n: 1 } });
const record = (id: string, fields: Partial<EventRecord>): EventRecord => ({
  event_id: id, subscription: 'alerts', status: 'processing', source: 'custom', event: 'alert', delivery_id: id, received_at: at, updated_at: at, message: message(id), attempts: 5, ...fields,
});

test('a letter SQS redrove while its record says processing: listing it marks the record failed; finished records are left alone', async () => {
  const events = new DynamoEventLog(dynamo.client, 'hookagent-prod-events');
  await events.putAll([
    record('evt_loop_1', {}),
    record('evt_loop_2', { status: 'queued', error: { code: 'unavailable', message: 'model 503' } }),
    record('evt_done_1', { status: 'failed', error: { code: 'provider_auth', message: 'refused' }, dead_lettered_at: at }),
  ]);
  const dlq = `${recorder.url}/123456789012/hookagent-prod-dead-letters`;
  options.queues = {
    [`${recorder.url}/123456789012/hookagent-prod-queue`]: [],
    // The redrive's letters carry no reason; the worker's own carry one.
    [dlq]: [{ id: 'l1', body: JSON.stringify(message('evt_loop_1')) }, { id: 'l2', body: JSON.stringify(message('evt_loop_2')) },
      { id: 'l3', body: JSON.stringify(message('evt_done_1')), reason: 'provider_auth: refused' }],
  };
  recorder.calls.length = 0;
  const result = await runCli(['--config-dir', dir, 'webhook', 'dead-letters', '--json'], env());
  expect(result).toMatchObject({ code: 0, stderr: '' });
  expect((JSON.parse(result.stdout) as Array<{ event_id: string }>).map((l) => l.event_id)).toEqual(['evt_loop_1', 'evt_loop_2', 'evt_done_1']);

  expect(await events.get('evt_loop_1', 'alerts')).toMatchObject({
    status: 'failed', dead_lettered_at: expect.any(String),
    error: { code: 'receive_limit', message: expect.stringMatching(/^gave up after 5 attempts: received 5 times without success/) },
  });
  expect((await events.get('evt_loop_2', 'alerts'))?.error?.message).toMatch(/without success.*before that: unavailable: model 503$/);
  expect(await events.get('evt_done_1', 'alerts')).toMatchObject({ status: 'failed', dead_lettered_at: at, error: { code: 'provider_auth', message: 'refused' } });
  // The letters stay in the DLQ, for redrive.
  expect(options.queues[dlq]!.map((m) => m.id)).toEqual(['l1', 'l2', 'l3']);
  // RECEIVES is the worker's receives, not the listings' (hunt 3, D12): listed again, the same.
  // The queue's letters: its maxReceiveCount (this endpoint answers no RedrivePolicy: the default 5);
  // a worker letter without its recorded receive: 1.
  const again = await runCli(['--config-dir', dir, 'webhook', 'dead-letters'], env());
  const rows = again.stdout.trim().split('\n').slice(1).map((r) => r.split('\t').slice(1, 4));
  expect(rows).toEqual([['evt_loop_1', 'alerts', '5'], ['evt_loop_2', 'alerts', '5'], ['evt_done_1', 'alerts', '1']]);
  expect((JSON.parse(result.stdout) as Array<{ receive_count: number }>).map((l) => l.receive_count)).toEqual([5, 5, 1]);
  // Every call is one the README's CLI policy allows (no UpdateItem).
  const policy = JSON.parse(readFileSync(join(__dirname, '..', '..', 'infra', 'cli-policy.json'), 'utf8')) as { Statement: Array<{ Action: string[] }> };
  const allowed = new Set(policy.Statement.flatMap((s) => s.Action));
  expect([...new Set(recorder.calls.map((c) => c.action))].filter((a) => !allowed.has(a))).toEqual([]);
}, 60_000);

/**
 * Fix 6: the records were marked with the CLI's constant 5 ("gave up after 5 attempts")
 * while RECEIVES showed the deployed maxReceiveCount. Deployed with 3 (the event queue's
 * RedrivePolicy, answered here by an endpoint in front of the recorder), both say 3.
 */
test("the record's 'gave up after N attempts' uses the deployed maxReceiveCount, as RECEIVES does", async () => {
  const events = new DynamoEventLog(dynamo.client, 'hookagent-prod-events');
  await events.putAll([record('evt_loop_3', { attempts: 3 })]);
  // SQS with the deployed redrive policy: GetQueueAttributes on the event queue answers it; the rest goes to the recorder.
  const sqs = await startLocalServer(async (req, res) => {
    const input = JSON.parse(req.body || '{}') as { QueueUrl?: string };
    if (req.headers['x-amz-target'] === 'AmazonSQS.GetQueueAttributes' && input.QueueUrl?.endsWith('/hookagent-prod-queue')) {
      recorder.calls.push({ action: 'sqs:GetQueueAttributes', resource: input.QueueUrl });
      return sendJson(res, 200, { Attributes: { RedrivePolicy: JSON.stringify({ deadLetterTargetArn: 'arn:aws:sqs:eu-west-1:123456789012:hookagent-prod-dead-letters', maxReceiveCount: 3 }) } }, { 'content-type': 'application/x-amz-json-1.0' });
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
    const answer = await fetch(recorder.url + req.url, { method: req.method, headers, body: req.body });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(await answer.text());
  });
  try {
    options.queues = {
      [`${sqs.url}/123456789012/hookagent-prod-queue`]: [],
      [`${sqs.url}/123456789012/hookagent-prod-dead-letters`]: [{ id: 'l4', body: JSON.stringify(message('evt_loop_3')) }],
    };
    recorder.calls.length = 0;
    const result = await runCli(['--config-dir', dir, 'webhook', 'dead-letters', '--json'], { ...env(), AWS_ENDPOINT_URL_SQS: sqs.url });
    expect(result).toMatchObject({ code: 0, stderr: '' });
    expect((JSON.parse(result.stdout) as Array<{ receive_count: number; reason: string }>).map((l) => [l.receive_count, l.reason])).toEqual([[3, 'the queue gave up after 3 receives']]);
    expect(await events.get('evt_loop_3', 'alerts')).toMatchObject({
      status: 'failed', error: { code: 'receive_limit', message: expect.stringMatching(/^gave up after 3 attempts: received 3 times without success/) },
    });
    expect(recorder.calls).toContainEqual({ action: 'sqs:GetQueueAttributes', resource: `${sqs.url}/123456789012/hookagent-prod-queue` });
  } finally {
    await sqs.close();
  }
}, 60_000);
