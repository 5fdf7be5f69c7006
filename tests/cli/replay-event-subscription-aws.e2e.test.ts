/**
 * `webhook replay evt_… --subscription X` on an AWS stage, where X's payload filter turned
 * away the request that stored the event: the request is found in the DynamoDB request log
 * (read by its time index, around the event's own time, at its endpoint) and run for X
 * once its filters take it, as `webhook replay req_…` runs it. The built CLI against a
 * dynalite stage and a local SQS on 127.0.0.1; the request comes in through ingest wired
 * as the stage's Lambda wires it (the claim with the records, the commit with the entry).
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
import { sendJson, type LocalServer } from '../support/local-http';
import { startLocalSqs } from '../support/local-sqs';
import { RecordingQueue } from '../support/recording-queue';
import { githubEvent } from '../support/requests';

const GH_SECRET = 'replay-event-aws-secret';
const stage = useCliStage();
let sqs: LocalServer;
let dir: string;
beforeAll(async () => {
  // The local SQS answers SendMessageBatch; the CLI asks GetQueueUrl first.
  sqs = await startLocalSqs();
  const batch = sqs.respond;
  sqs.respond = (request, response) => (request.headers['x-amz-target'] === 'AmazonSQS.GetQueueUrl'
    ? sendJson(response, 200, { QueueUrl: `${sqs.url}/hookagent-prod-queue` }) : batch(request, response));
  dir = mkdtempSync(join(tmpdir(), 'hookagent-replay-evt-aws-'));
  writeFileSync(join(dir, 'config.yaml'), 'aws: { region: eu-west-1, stage: prod }\n');
});
afterAll(async () => {
  await sqs?.close();
  rmSync(dir, { recursive: true, force: true });
});

const cli = (...args: string[]) => runCli(['--config-dir', dir, ...args], { ...stage.env(), AWS_ENDPOINT_URL_SQS: sqs.url });
const sentBodies = (): string[] => sqs.requests.filter((r) => r.headers['x-amz-target'] === 'AmazonSQS.SendMessageBatch')
  .flatMap((r) => (JSON.parse(r.body) as { Entries: Array<{ MessageBody: string }> }).Entries.map((e) => e.MessageBody));

test('the event is run for the subscription whose payload filter turned its request away, once the filter takes it', async () => {
  const { client, tables } = stage.dynamo;
  const subscriptions = new DynamoSubscriptionStore(client, tables.subscriptions);
  const now = new Date().toISOString();
  const base = { events: ['pull_request.opened'], skills: [], deliver: ['log'], state: 'active', created_at: now, updated_at: now, secret: 'whsec_x' } as unknown as Omit<Subscription, 'name'>;
  await subscriptions.create({ ...base, name: 'all-prs' });
  const ready: Subscription = { ...base, name: 'ready-prs', filters: ['pull_request.draft == false'] };
  await subscriptions.create(ready);
  const requests = new DynamoRequestLog(client, tables.requests, systemClock, tables.dedup);
  const payloads = mkdtempSync(join(tmpdir(), 'hookagent-replay-evt-aws-payloads-'));
  const ingest = createIngest({
    config: { webhooks: { github: { secret: [GH_SECRET] }, max_payload_size: 64 * 1024 } }, queue: new RecordingQueue(), clock: systemClock, logger: silentLogger,
    dedup: new DynamoDedupStore(client, tables.dedup, systemClock, tables.events), events: new DynamoEventLog(client, tables.events), requests,
    payloads: new FilePayloadStore(payloads), subscriptions: new SubscriptionCache(subscriptions, 0, systemClock),
  });
  const body = JSON.stringify({ action: 'opened', number: 31, pull_request: { number: 31, draft: true }, repository: { full_name: 'o/r' } });
  const answer = await ingest(toInboundRequest(githubEvent('pull_request', body, GH_SECRET, { 'x-github-delivery': 'aws-by-event-1' })));
  rmSync(payloads, { recursive: true, force: true });
  expect(answer.body).toMatchObject({ status: 'accepted', subscriptions: ['all-prs'] });
  const eventId = (answer.body as { event_id: string }).event_id;
  const request = (await requests.list({ limit: 5 })).find((e) => e.event_id === eventId)!.request_id;

  const early = await cli('webhook', 'replay', eventId, '--subscription', 'ready-prs');
  expect([early.code, early.stderr]).toEqual([1, expect.stringContaining(`'ready-prs' as it is now still does not take request '${request}' (filter "pull_request.draft == false" failed (pull_request.draft is true))`)]);

  await subscriptions.put({ ...ready, filters: [], updated_at: new Date().toISOString() });
  const replayed = await cli('webhook', 'replay', eventId, '--subscription', 'ready-prs');
  expect([replayed.code, replayed.stderr, replayed.stdout]).toEqual([0, '', expect.stringMatching(new RegExp(`^Queued (evt_\\w+) for 'ready-prs' \\(a replay of ${eventId}\\)\\.\\n$`))]);
  const copy = /^Queued (evt_\w+)/.exec(replayed.stdout)![1]!;
  expect(sentBodies()).toEqual([expect.stringContaining(copy)]);
  expect(sentBodies()[0]).toContain('"subscription":"ready-prs"');
  const [record] = JSON.parse((await cli('webhook', 'event', copy, '--json')).stdout) as Array<Record<string, unknown>>;
  expect(record).toMatchObject({ subscription: 'ready-prs', status: 'queued', request: { replay_of: eventId } });
}, 120_000);
