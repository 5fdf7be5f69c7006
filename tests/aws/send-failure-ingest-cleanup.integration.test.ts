/**
 * Hunt 10 (D1): ingest's queue send fails after SQS may have stored the message (a 5xx after
 * the store, an answer lost to a timeout, or one entry of a batch accepted). Ingest then
 * withdraws only the records no worker has started, and the worker's first write is
 * conditional on its record: either the withdrawal or the worker's run happens, never both,
 * so the sender's retry of a 503 never delivers the event a second time.
 *
 * The deployed modules, functions/ingest/handler.ts and functions/worker/handler.ts, over
 * dynalite, with the local SQS stand-in (tests/support/faulty-aws.ts) and a local Telegram.
 */
import type { SQSBatchResponse } from 'aws-lambda';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { TestDynamo } from '../support/dynalite';
import type { Call, FaultyAws } from '../support/faulty-aws';
import { INTERNAL_FAILURE, pollWorker, useFaultyStage } from '../support/faulty-stage';
import { bodyOf } from '../support/ingest-harness';
import type { LocalServer } from '../support/local-http';
import { githubEvent } from '../support/requests';

const stage = useFaultyStage({ deliveryTimeout: '2s' });
let dynamo: TestDynamo;
let aws: FaultyAws;
let telegram: LocalServer;
const QUEUE = () => stage.queueUrl;
const DLQ = () => stage.deadLetterQueueUrl;

beforeAll(async () => {
  ({ dynamo, aws, telegram } = stage);
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const at = '2026-11-24T00:00:00Z';
  const base = { skills: [], deliver: ['messenger' as const], agent: 'none' as const, state: 'active' as const, created_at: at, updated_at: at, secret: 'whsec_x' };
  await subscriptions.create({ ...base, name: 'issues-to-chat', events: ['issues'], prompt: 'Issue {issue.title}' });
  // Two subscriptions of one event: two entries of one SendMessageBatch.
  await subscriptions.create({ ...base, name: 'pr-chat', events: ['pull_request'], prompt: 'PR chat {pull_request.title}' });
  await subscriptions.create({ ...base, name: 'pr-team', events: ['pull_request'], prompt: 'PR team {pull_request.title}' });
});

beforeEach(() => {
  aws.hook = () => undefined;
});

const handlers = async () => ({
  ingest: (await import('../../functions/ingest/handler')).handler,
});

/** The event source mapping: one batch of what is receivable; failures left, the rest deleted. */
const poll = () => pollWorker(stage);

const isSend = (call: Call) => call.service === 'sqs' && call.operation === 'SendMessageBatch';
const postsOf = (text: string) => telegram.requests.filter((r) => r.body.includes(text)).length;
const deadLettered = (eventId: string) => (aws.queues.get(DLQ()) ?? []).filter((m) => m.body.includes(eventId));
const issue = (title: string) => JSON.stringify({ action: 'opened', issue: { number: 7, title }, repository: { full_name: 'o/r' } });
const record = (eventId: string, subscription: string) => new DynamoEventLog(dynamo.client, dynamo.tables.events).get(eventId, subscription);
const claimOf = (delivery: string) => new DynamoDedupStore(dynamo.client, dynamo.tables.dedup, { now: () => Date.now() }).inspect(`github#${delivery}`);

test('a send that reached SQS but answered 5xx, the worker having delivered it meanwhile: accepted (202, committed), and the sender\'s retry is a duplicate', async () => {
  const { ingest } = await handlers();
  let sends = 0;
  aws.hook = async (call) => {
    if (!isSend(call)) return undefined;
    sends += 1;
    if (sends === 1) {
      // Stored now; the worker runs it before SQS's (failed) answers reach ingest.
      call.carryOut?.();
      await poll();
      return { ...INTERNAL_FAILURE, afterPassing: true };
    }
    return sends <= 3 ? INTERNAL_FAILURE : undefined;
  };
  const body = issue('disk full on db-1');
  const first = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'sent-1' }));
  expect([first.statusCode, bodyOf(first).status]).toEqual([202, 'accepted']);
  const eventId = String(bodyOf(first).event_id);
  expect(await claimOf('sent-1')).toMatchObject({ eventId, committed: true });

  const retry = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'sent-1' }));
  expect([retry.statusCode, bodyOf(retry).status]).toEqual([200, 'duplicate']);
  for (let i = 0; i < 3; i++) await poll();
  expect({ posts: postsOf('disk full on db-1'), status: (await record(eventId, 'issues-to-chat'))?.status }).toEqual({ posts: 1, status: 'delivered' });
});

test('the worker read the record before ingest withdrew it: its first write finds it gone, it dead-letters the message unposted, and the retry delivers once', async () => {
  const { ingest } = await handlers();
  let sends = 0;
  let worker: Promise<unknown> | undefined;
  let withdrawn: () => void = () => undefined;
  const ingestDone = new Promise<void>((resolve) => (withdrawn = resolve));
  aws.hook = async (call) => {
    // The worker's writes of the record wait until ingest has answered (its cleanup is done).
    if (call.service === 'dynamodb' && call.operation === 'UpdateItem' && String(call.input.TableName).endsWith('-events')) await ingestDone;
    if (!isSend(call)) return undefined;
    sends += 1;
    if (sends === 1) {
      call.carryOut?.();
      worker = poll();
      // The worker has read the record (and waits at its first write) before ingest hears back.
      while (!aws.calls.some((c) => ['GetItem', 'Query'].includes(c.operation) && String(c.input.TableName).endsWith('-events'))) await new Promise((resolve) => setImmediate(resolve));
      return { ...INTERNAL_FAILURE, afterPassing: true };
    }
    return sends <= 3 ? INTERNAL_FAILURE : undefined;
  };
  const body = issue('cpu hot on web-2');
  const first = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'sent-2' }));
  withdrawn();
  expect(first.statusCode).toBe(503);
  const answer = (await worker) as SQSBatchResponse;
  expect(answer.batchItemFailures).toEqual([]);
  expect(postsOf('cpu hot on web-2')).toBe(0);
  const eventId = (await claimOf('sent-2'))?.eventId as string;
  expect(deadLettered(eventId).map((m) => (m.attributes?.reason as { StringValue?: string } | undefined)?.StringValue)).toEqual(['the event record of this message was deleted']);

  const retry = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'sent-2' }));
  expect([retry.statusCode, bodyOf(retry).event_id]).toEqual([202, eventId]);
  for (let i = 0; i < 3; i++) await poll();
  expect({ posts: postsOf('cpu hot on web-2'), status: (await record(eventId, 'issues-to-chat'))?.status }).toEqual({ posts: 1, status: 'delivered' });
});

test('one entry of a batch accepted, the other failed twice, the first delivered meanwhile: 503, its record kept; the retry queues only the other, each delivered once', async () => {
  const { ingest } = await handlers();
  let sends = 0;
  aws.hook = async (call) => {
    if (!isSend(call)) return undefined;
    sends += 1;
    if (sends > 2) return undefined;
    const entries = call.input.Entries as Array<{ Id: string }>;
    const [kept, ...refused] = entries;
    // SQS stores the first entry only, and reports the other failed (not the sender's fault), twice.
    call.carryOut?.((id) => sends === 1 && id === kept?.Id);
    if (sends === 2) await poll();
    return {
      status: 200, afterPassing: true,
      body: { Successful: sends === 1 ? [{ Id: kept?.Id, MessageId: 'm', MD5OfMessageBody: 'x' }] : [], Failed: (sends === 1 ? refused : entries).map((e) => ({ Id: e.Id, SenderFault: false, Code: 'InternalError', Message: 'try again' })) },
    };
  };
  const body = JSON.stringify({ action: 'opened', pull_request: { number: 3, title: 'bump deps' }, repository: { full_name: 'o/r' } });
  const first = await ingest(githubEvent('pull_request', body, 'gh-secret', { 'x-github-delivery': 'sent-3' }));
  expect(first.statusCode).toBe(503);
  const eventId = (await claimOf('sent-3'))?.eventId as string;
  expect(postsOf('bump deps')).toBe(1);

  const retry = await ingest(githubEvent('pull_request', body, 'gh-secret', { 'x-github-delivery': 'sent-3' }));
  expect([retry.statusCode, bodyOf(retry).event_id]).toEqual([202, eventId]);
  for (let i = 0; i < 3; i++) await poll();
  const statuses = await Promise.all(['pr-chat', 'pr-team'].map(async (s) => (await record(eventId, s))?.status));
  expect({ chat: postsOf('PR chat bump deps'), team: postsOf('PR team bump deps'), statuses }).toEqual({ chat: 1, team: 1, statuses: ['delivered', 'delivered'] });
});

test('a send that failed before SQS stored anything: the records are withdrawn and the claim released (503); the retry is processed at once', async () => {
  const { ingest } = await handlers();
  let sends = 0;
  aws.hook = (call) => (isSend(call) && ++sends <= 3 ? INTERNAL_FAILURE : undefined);
  const body = issue('queue down');
  const first = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'sent-4' }));
  expect(first.statusCode).toBe(503);
  const claim = await claimOf('sent-4');
  expect(claim).toMatchObject({ committed: false, claimedAt: 0 });
  expect(await new DynamoEventLog(dynamo.client, dynamo.tables.events).getEvent(claim?.eventId as string)).toEqual([]);
  const retry = await ingest(githubEvent('issues', body, 'gh-secret', { 'x-github-delivery': 'sent-4' }));
  expect(retry.statusCode).toBe(202);
  for (let i = 0; i < 2; i++) await poll();
  expect(postsOf('queue down')).toBe(1);
});
