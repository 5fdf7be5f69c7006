/**
 * Hunt 10 (D2): Telegram answered, then DynamoDB throttles the write of that outcome for a
 * few seconds (longer than the SDK's three attempts and the batch handler's two in-process
 * retries). A chat post carries nothing a later attempt could find it by, and the record of
 * it kept in the process (core/worker/unrecorded.ts) is per Lambda container: the outcome
 * write is retried in place, under the lease, while the invocation has time left for it.
 * The deployed worker module over dynalite and a local SQS; another container is the
 * module loaded afresh.
 */
import type { SQSBatchResponse } from 'aws-lambda';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { INVOCATION_MARGIN_MS } from '../../functions/core/worker/retry-schedule';
import type { TestDynamo } from '../support/dynalite';
import type { Call, FaultyAws } from '../support/faulty-aws';
import { THROTTLED, useFaultyStage } from '../support/faulty-stage';
import { bodyOf } from '../support/ingest-harness';
import type { LocalServer } from '../support/local-http';
import { githubEvent } from '../support/requests';

type WorkerHandler = typeof import('../../functions/worker/handler').handler;

// agent.timeout + 3 delivery timeouts (4 s) is what a message needs left in the invocation to start.
const stage = useFaultyStage({ agent: '{ provider: echo, timeout: 1s }', deliveryTimeout: '1s' });
let dynamo: TestDynamo;
let aws: FaultyAws;
let telegram: LocalServer;
const QUEUE = () => stage.queueUrl;

beforeAll(async () => {
  ({ dynamo, aws, telegram } = stage);
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
    name: 'alerts-to-chat', events: ['issues'], skills: [], deliver: ['messenger'], agent: 'none', prompt: 'Issue {issue.title}', state: 'active',
    created_at: '2026-11-24T00:00:00Z', updated_at: '2026-11-24T00:00:00Z', secret: 'whsec_x',
  });
});

async function poll(worker: WorkerHandler, remainingMs: () => number = () => 290_000): Promise<SQSBatchResponse> {
  const event = aws.receive(QUEUE(), 10, 1800);
  const answer = await worker(event, { getRemainingTimeInMillis: remainingMs } as never);
  const failed = new Set(answer.batchItemFailures.map((f) => f.itemIdentifier));
  for (const r of event.Records) if (!failed.has(r.messageId)) aws.deleteByReceipt(QUEUE(), r.receiptHandle);
  return answer;
}

const isRecordWrite = (call: Call) => call.service === 'dynamodb' && ['UpdateItem', 'PutItem', 'BatchWriteItem'].includes(call.operation) && String(call.input.TableName ?? '').endsWith('-events');
const postsOf = (text: string) => telegram.requests.filter((r) => r.body.includes(text)).length;

async function accepted(delivery: string, title: string): Promise<string> {
  const ingest = (await import('../../functions/ingest/handler')).handler;
  const body = JSON.stringify({ action: 'opened', issue: { number: 1, title }, repository: { full_name: 'o/r' } });
  const answer = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': delivery }));
  expect(answer.statusCode).toBe(202);
  return String(bodyOf(answer).event_id);
}

test('a chat post whose outcome writes are throttled beyond the SDK\'s and the batch handler\'s retries: the write is retried in place, and the next container does not post it again', async () => {
  const containerA = (await import('../../functions/worker/handler')).handler;
  let containerB: WorkerHandler | undefined;
  jest.isolateModules(() => {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    containerB = (require('../../functions/worker/handler') as typeof import('../../functions/worker/handler')).handler;
  });
  const eventId = await accepted('d-1', 'disk full on db-1');

  // From the moment Telegram has the post, the events table throttles the next 10 writes: more
  // than the SDK's 3 attempts of each of the 3 attempts the batch handler makes in-process.
  let throttles = 10;
  aws.hook = (call) => {
    if (postsOf('disk full on db-1') === 0 || !isRecordWrite(call) || throttles === 0) return undefined;
    throttles -= 1;
    return THROTTLED;
  };
  const first = await poll(containerA);
  // Had it been given back, the paced retry (30 s later) would be received by another container.
  for (const m of aws.queues.get(QUEUE()) ?? []) m.visibleAt = 0;
  await poll(containerB as WorkerHandler);
  aws.hook = () => undefined;

  const record = await new DynamoEventLog(dynamo.client, dynamo.tables.events).get(eventId, 'alerts-to-chat');
  expect({ throttles, failed: first.batchItemFailures.length, status: record?.status, posts: postsOf('disk full on db-1') }).toEqual({ throttles: 0, failed: 0, status: 'delivered', posts: 1 });
}, 60_000);

test('an outage longer than the invocation leaves time for: the outcome write is given up before the invocation ends, and the message given back (README, Known limits)', async () => {
  const worker = (await import('../../functions/worker/handler')).handler;
  await accepted('d-2', 'fan failed on rack-3');
  aws.hook = (call) => (postsOf('fan failed on rack-3') > 0 && isRecordWrite(call) ? THROTTLED : undefined);
  // Enough to start (agent.timeout + 3 delivery timeouts), and a little more than the margin after that.
  const end = Date.now() + 4_000 + INVOCATION_MARGIN_MS + 1_500;
  const answer = await poll(worker, () => end - Date.now());
  const finishedAt = Date.now();
  aws.hook = () => undefined;
  expect({ failed: answer.batchItemFailures.length, posts: postsOf('fan failed on rack-3'), beforeTheEnd: finishedAt < end }).toEqual({ failed: 1, posts: 1, beforeTheEnd: true });
}, 60_000);
