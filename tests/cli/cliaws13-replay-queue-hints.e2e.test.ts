/**
 * The CLI on an AWS stage when the queue or a table fails (hunt 13, cliaws): a replay whose
 * send fails leaves no copy `queued` for nothing to run; a missing queue and a throttled table
 * get the hints that say what to do (dynalite, a local SQS and a throttling DynamoDB proxy).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoRequestLog } from '../../functions/aws/request-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { createIngest } from '../../functions/core/ingest/service';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { silentLogger } from '../../functions/core/log';
import { systemClock } from '../../functions/core/ports';
import type { Subscription } from '../../functions/core/types';
import { toInboundRequest } from '../../functions/ingest/api-gateway';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { runCli } from '../support/cli';
import { useCliStage } from '../support/cli-stage';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { RecordingQueue } from '../support/recording-queue';
import { githubEvent } from '../support/requests';

const GH_SECRET = 'hunt13-cliaws';
const stage = useCliStage();
let sqs: LocalServer;
let dynamoProxy: LocalServer;
/** What the local SQS answers: 'ok', 'throttled' (SendMessageBatch) or 'missing' (GetQueueUrl). */
let sqsMode: 'ok' | 'throttled' | 'missing' = 'ok';
/** DynamoDB operations the proxy answers with a throttle. */
let throttledDynamo = new Set<string>();
let dir: string;
let payloadDir: string;

beforeAll(async () => {
  sqs = await startLocalServer((req, res) => {
    const target = String(req.headers['x-amz-target']);
    if (target === 'AmazonSQS.GetQueueUrl') {
      if (sqsMode === 'missing') return sendJson(res, 400, { __type: 'com.amazonaws.sqs#QueueDoesNotExist', message: 'The specified queue does not exist.' }, { 'content-type': 'application/x-amz-json-1.0' });
      return sendJson(res, 200, { QueueUrl: `${sqs.url}/123456789012/hookagent-prod-queue` }, { 'content-type': 'application/x-amz-json-1.0' });
    }
    if (sqsMode === 'throttled') return sendJson(res, 400, { __type: 'com.amazonaws.sqs#ThrottlingException', message: 'Rate exceeded' }, { 'content-type': 'application/x-amz-json-1.0' });
    const input = JSON.parse(req.body) as { Entries: Array<{ Id: string }> };
    return sendJson(res, 200, { Successful: input.Entries.map((e) => ({ Id: e.Id, MessageId: `m${e.Id}`, MD5OfMessageBody: 'x' })), Failed: [] }, { 'content-type': 'application/x-amz-json-1.0' });
  });
  // DynamoDB: dynalite, except the operations a test throttles.
  dynamoProxy = await startLocalServer(async (req, res) => {
    const operation = String(req.headers['x-amz-target']).split('.')[1] ?? '';
    if (throttledDynamo.has(operation)) {
      return sendJson(res, 400, {
        __type: 'com.amazonaws.dynamodb.v20120810#ProvisionedThroughputExceededException',
        message: 'The level of configured provisioned throughput for the table was exceeded. Consider increasing your provisioning level with the UpdateTable API.',
      }, { 'content-type': 'application/x-amz-json-1.0' });
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
    const answer = await fetch(stage.dynamo.endpoint, { method: 'POST', headers, body: req.body });
    res.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/x-amz-json-1.0' }).end(await answer.text());
  });
  dir = mkdtempSync(join(tmpdir(), 'hookagent-hunt13-cliaws-'));
  payloadDir = mkdtempSync(join(tmpdir(), 'hookagent-hunt13-cliaws-payloads-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
});
afterAll(async () => {
  await sqs?.close();
  await dynamoProxy?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(payloadDir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(['--config-dir', dir, ...args], { ...stage.env(), AWS_ENDPOINT_URL_SQS: sqs.url, AWS_ENDPOINT_URL_DYNAMODB: dynamoProxy.url });

/** A subscription `name` on the stage and one GitHub push accepted for it (ingest as the stage's Lambda runs it); returns the event id. */
async function acceptedPush(name: string, event: string): Promise<string> {
  const { client, tables } = stage.dynamo;
  const subscriptions = new DynamoSubscriptionStore(client, tables.subscriptions);
  const now = new Date().toISOString();
  if (!(await subscriptions.get(name))) {
    await subscriptions.create({ name, events: [event], skills: [], deliver: ['log'], state: 'active', created_at: now, updated_at: now, secret: 'whsec_x' } as unknown as Subscription);
  }
  const ingest = createIngest({
    config: { webhooks: { github: { secret: [GH_SECRET] }, max_payload_size: 64 * 1024 } }, queue: new RecordingQueue(), clock: systemClock, logger: silentLogger,
    dedup: new DynamoDedupStore(client, tables.dedup, systemClock, tables.events), events: new DynamoEventLog(client, tables.events),
    requests: new DynamoRequestLog(client, tables.requests, systemClock, tables.dedup),
    payloads: new FilePayloadStore(payloadDir), subscriptions: new SubscriptionCache(subscriptions, 0, systemClock),
  } as never);
  const body = JSON.stringify({ ref: 'refs/heads/main', ref_type: 'branch', repository: { full_name: 'o/r' } });
  const answer = await ingest(toInboundRequest(githubEvent(event, body, GH_SECRET)));
  expect(answer.body).toMatchObject({ status: 'accepted', subscriptions: [name] });
  return (answer.body as { event_id: string }).event_id;
}

async function recordsOf(name: string): Promise<Array<{ event_id: string; status: string; replay_of?: string }>> {
  const listed = await cli('webhook', 'events', name, '--json');
  expect(listed.code).toBe(0);
  return (JSON.parse(listed.stdout) as Array<{ event_id: string; status: string; replay_of?: string }>)
    .map((r) => ({ event_id: r.event_id, status: r.status, ...(r.replay_of ? { replay_of: r.replay_of } : {}) }));
}

test('D1: a replay whose queue send fails leaves no copy `queued` forever (nothing will ever run it)', async () => {
  const original = await acceptedPush('rep', 'push');
  sqsMode = 'throttled';
  const replayed = await cli('webhook', 'replay', original);
  sqsMode = 'ok';
  expect(replayed.code).toBe(1);
  expect(replayed.stderr).toContain('ThrottlingException');
  // The user is told to run it again; the failed attempt must not leave a copy that says it is waiting in the queue.
  const copies = (await recordsOf('rep')).filter((r) => r.replay_of === original);
  expect(copies).toEqual([]);
}, 60_000);

test('D2: replay or resume on a stage whose queue is missing says which queue and what to check, not "--help"', async () => {
  const original = await acceptedPush('gone', 'create');
  sqsMode = 'missing';
  const replayed = await cli('webhook', 'replay', original);
  sqsMode = 'ok';
  expect(replayed.code).toBe(1);
  // hints.ts has a hint for exactly this (/QueueDoesNotExist/), and the operations commands say
  // "The queue hookagent-prod-queue does not exist: is the stage deployed in this region?".
  expect(replayed.stderr).not.toContain('Run the command with --help');
  expect(replayed.stderr).toMatch(/hookagent-prod-queue|deployed in this region/);
}, 60_000);

test('D3: a throttled DynamoDB table (ProvisionedThroughputExceededException) gets the throttling hint, not "the store did not answer"', async () => {
  throttledDynamo = new Set(['Scan']);
  const listed = await cli('webhook', 'list');
  throttledDynamo = new Set();
  expect(listed.code).toBe(1);
  expect(listed.stderr).toContain('ProvisionedThroughputExceededException');
  expect(listed.stderr).not.toContain('The store did not answer');
  expect(listed.stderr).toContain('AWS is throttling these calls');
}, 60_000);
