/**
 * Faults, injected through real parts: an OpenAI-compatible model server that fails or
 * never answers, a Slack webhook that answers 500, 429 or nothing, a queue that refuses
 * sends, a store that is unreachable. Each message is redelivered as SQS would (receive
 * count rising) until the worker lets it go. Then: every accepted event ended delivered,
 * suppressed or dead-lettered with its reason in the event log, and the target got each
 * delivery at most once.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { createDynamoClient } from '../../functions/aws/dynamo';
import { DynamoDedupStore } from '../../functions/aws/dedup-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { signHub } from '../../functions/core/auth/signatures';
import { parseConfig, resolveConfig } from '../../functions/core/config/load';
import type { Config } from '../../functions/core/config/types';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { SubscriptionCache } from '../../functions/core/ingest/subscription-cache';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { systemClock, type EventQueue } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { apiGatewayHandler } from '../../functions/ingest/api-gateway';
import { toSqsRecord } from '../../functions/local/consumer';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { MemoryPayloadStore } from '../support/memory';
import { createAgent } from '../../functions/worker/agent-factory';
import { createWorkerHandler } from '../../functions/worker/batch';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { apiEvent } from '../support/requests';
import { Tally } from './tally';

const MAX_RECEIVES = 5;
const tally = new Tally('faults');

/** What the model server and the Slack webhook do next, per event (keyed by the text `seq=N`). */
type LlmBehaviour = 'ok' | 'silent' | '500' | '400' | 'hang';
type SlackBehaviour = 'ok' | '500' | '429' | '404' | 'hang';
const llmPlan = new Map<string, LlmBehaviour[]>();
const slackPlan = new Map<string, SlackBehaviour[]>();
/** Successful receipts at the target, per seq: must never exceed 1. */
const delivered = new Map<string, number>();

let dynamo: TestDynamo;
let llm: LocalServer;
let slack: LocalServer;
let config: Config;
const deadLetters: Array<{ body: string; reason: string }> = [];

// The prompt's payload value arrives fenced (`seq=<untrusted-data-TOKEN>3</…>`); replies carry it bare.
const seqOf = (text: string) => /seq=(?:<untrusted-data-[0-9a-f]+>)?(\d+)/.exec(text)?.[1] ?? '?';
const next = <T>(plan: Map<string, T[]>, seq: string, fallback: T): T => {
  const steps = plan.get(seq);
  return steps && steps.length > 1 ? (steps.shift() as T) : steps?.[0] ?? fallback;
};

beforeAll(async () => {
  dynamo = await startDynalite();
  llm = await startLocalServer((req, res) => {
    const seq = seqOf(req.body);
    const behaviour = next(llmPlan, seq, 'ok');
    if (behaviour === 'hang') return; // never answers: the agent's timeout
    if (behaviour === '500') return sendJson(res, 500, { error: { message: 'upstream failed', type: 'server_error' } });
    if (behaviour === '400') return sendJson(res, 400, { error: { message: 'context length exceeded', type: 'invalid_request_error' } });
    const content = behaviour === 'silent' ? '[SILENT]' : `reply for seq=${seq}`;
    sendJson(res, 200, { choices: [{ message: { role: 'assistant', content } }] });
  });
  slack = await startLocalServer((req, res) => {
    const seq = seqOf(req.body);
    const behaviour = next(slackPlan, seq, 'ok');
    if (behaviour === 'hang') return;
    if (behaviour === '500') return void res.writeHead(500, { 'content-type': 'text/plain' }).end('internal_error');
    if (behaviour === '429') return void res.writeHead(429, { 'content-type': 'text/plain', 'retry-after': '0' }).end('rate_limited');
    if (behaviour === '404') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('no_service');
    delivered.set(seq, (delivered.get(seq) ?? 0) + 1);
    res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
  });
  const parsed = parseConfig([
    'webhooks: { github: { secret: ${GH} } }',
    'agent: { provider: openai, model: gpt-test, base_url: ${LLM_URL}, api_key: ${KEY}, timeout: 300ms }',
    'delivery: { timeout: 300ms, teamchat: { provider: slack, webhook_url: ${SLACK_URL} } }',
  ].join('\n'));
  if (!parsed.ok) throw new Error(parsed.error.message);
  const values: Record<string, string> = { GH: 'gh-faults', LLM_URL: `${llm.url}/v1`, KEY: 'sk-faults', SLACK_URL: `${slack.url}/services/T/B/x` };
  const resolved = await resolveConfig(parsed.value, { get: async (name) => values[name] });
  if (!resolved.ok) throw new Error(resolved.error.message);
  config = resolved.value;
  await new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions).create({
    name: 'faults', events: ['*'], prompt: 'seq={seq}', skills: [], deliver: ['teamchat'], state: 'active', created_at: '', updated_at: '', secret: 'x',
  });
}, 60_000);

afterAll(async () => {
  tally.flush();
  await Promise.all([dynamo.close(), llm.close(), slack.close()]);
});

function worker(events = new DynamoEventLog(dynamo.client, dynamo.tables.events)) {
  return createWorkerHandler({
    events, payloads: new FilePayloadStore(mkdtempSync(join(tmpdir(), 'hookagent-faults-'))),
    subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
    agent: createAgent(config.agent, config.delivery, undefined), skills: new SkillLibrary(undefined),
    // Rate-limit waits are not slept through here: the queue's redelivery is the retry.
    targets: createDeliveryTargets(config.delivery, async () => {}), config, clock: systemClock, logger: silentLogger, maxReceiveCount: MAX_RECEIVES,
    deadLetters: { send: async (body, reason) => void deadLetters.push({ body, reason }) },
  });
}

function message(seq: number): QueueMessage {
  return { v: 1, event_id: `evt_faults_${seq}`, subscription: 'faults', source: 'github', event: 'push', delivery_id: `d${seq}`, received_at: new Date().toISOString(), payload: { seq } };
}

/** Delivers the message as SQS would: again after each reported failure, up to the redrive. */
async function runToEnd(msg: QueueMessage, handler = worker()): Promise<{ receives: number; redriven: boolean }> {
  for (let receive = 1; receive <= MAX_RECEIVES; receive++) {
    const record = toSqsRecord({ messageId: msg.event_id, receiptHandle: `${msg.event_id}-${receive}`, body: JSON.stringify(msg), receiveCount: receive, sentAt: Date.now() }, 'arn:aws:sqs:local:0:q');
    const result = await handler({ Records: [record] } satisfies SQSEvent);
    if (result.batchItemFailures.length === 0) return { receives: receive, redriven: false };
  }
  // The queue's redrive policy moves it to the dead-letter queue now.
  deadLetters.push({ body: JSON.stringify(msg), reason: 'redrive' });
  return { receives: MAX_RECEIVES, redriven: true };
}

const record = (seq: number): Promise<EventRecord | undefined> => new DynamoEventLog(dynamo.client, dynamo.tables.events).get(`evt_faults_${seq}`, 'faults');

const scenarios: Array<{ name: string; llm?: LlmBehaviour[]; slack?: SlackBehaviour[]; end: 'delivered' | 'suppressed' | 'failed'; reason?: RegExp }> = [
  { name: 'everything works', end: 'delivered' },
  { name: 'the model answers [SILENT]', llm: ['silent'], end: 'suppressed' },
  { name: 'the model fails with 500 twice, then answers', llm: ['500', '500', 'ok'], end: 'delivered' },
  { name: 'the model never answers, then answers', llm: ['hang', 'ok'], end: 'delivered' },
  { name: 'the model never answers at all', llm: ['hang'], end: 'failed', reason: /gave up after 5 attempts.*(timeout|time)/i },
  { name: 'the model refuses the request (400: permanent)', llm: ['400'], end: 'failed', reason: /400|context length/i },
  { name: 'Slack answers 500, then ok', slack: ['500', 'ok'], end: 'delivered' },
  { name: 'Slack rate-limits (429) twice, then ok', slack: ['429', '429', 'ok'], end: 'delivered' },
  { name: 'Slack never answers, then ok', slack: ['hang', 'ok'], end: 'delivered' },
  { name: 'Slack answers 500 every time', slack: ['500'], end: 'failed', reason: /gave up after 5 attempts/ },
  { name: 'Slack answers 404 (permanent)', slack: ['404'], end: 'failed', reason: /404|no_service/ },
];

describe('worker faults: every event ends delivered, suppressed or dead-lettered with its reason', () => {
  test.each(scenarios.map((s, i) => [s.name, i] as const))('%s', async (_name, seq) => {
    await tally.check(async () => {
      const scenario = scenarios[seq]!;
      if (scenario.llm) llmPlan.set(String(seq), [...scenario.llm]);
      if (scenario.slack) slackPlan.set(String(seq), [...scenario.slack]);
      const before = deadLetters.length;
      await runToEnd(message(seq));
      const final = await record(seq);
      expect(final?.status).toBe(scenario.end);
      if (scenario.end === 'failed') {
        expect(final?.error?.message).toMatch(scenario.reason!);
        expect(deadLetters.length).toBe(before + 1);
      } else {
        expect(deadLetters.length).toBe(before);
      }
      expect(delivered.get(String(seq)) ?? 0).toBe(scenario.end === 'delivered' ? 1 : 0);
      // Redelivering a finished message changes nothing and sends nothing again.
      await runToEnd(message(seq));
      expect(delivered.get(String(seq)) ?? 0).toBe(scenario.end === 'delivered' ? 1 : 0);
    });
  }, 30_000);

  test('the event log unreachable: the message is retried, nothing is delivered, and it completes once the store is back', async () => {
    await tally.check(async () => {
      const seq = 100;
      const unreachable = new DynamoEventLog(createDynamoClient({ endpoint: 'http://127.0.0.1:9' }), dynamo.tables.events);
      const msg = message(seq);
      const down = await worker(unreachable)({ Records: [toSqsRecord({ messageId: 'm', receiptHandle: 'r', body: JSON.stringify(msg), receiveCount: 1, sentAt: Date.now() }, 'arn')] });
      expect(down.batchItemFailures).toHaveLength(1);
      expect(delivered.get(String(seq))).toBeUndefined();
      await runToEnd(msg);
      expect((await record(seq))?.status).toBe('delivered');
      expect(delivered.get(String(seq))).toBe(1);
    });
  });
});

describe('ingest faults: nothing is half-accepted', () => {
  async function ingestWith(queue: EventQueue, dynamoEndpoint = dynamo.endpoint) {
    const client = createDynamoClient({ endpoint: dynamoEndpoint });
    const ingest = createIngest({
      config, queue, payloads: new MemoryPayloadStore(), clock: systemClock, logger: silentLogger,
      subscriptions: new SubscriptionCache(new DynamoSubscriptionStore(client, dynamo.tables.subscriptions), 0, systemClock),
      dedup: new DynamoDedupStore(client, dynamo.tables.dedup, systemClock), events: new DynamoEventLog(client, dynamo.tables.events),
    });
    return apiGatewayHandler(async () => ingest, silentLogger);
  }
  const post = (seq: number) => {
    const body = JSON.stringify({ seq });
    return apiEvent({ path: '/webhooks/github', body, headers: { 'x-github-event': 'push', 'x-github-delivery': `ing-${seq}`, 'x-hub-signature-256': signHub(body, 'gh-faults') } });
  };

  test('the queue refuses sends: 503, no record left, and the sender\'s retry of the same delivery is accepted', async () => {
    await tally.check(async () => {
      const sent: QueueMessage[] = [];
      let refuse = true;
      const handler = await ingestWith({ send: async (messages) => { if (refuse) throw new Error('SQS unavailable'); sent.push(...messages); } });
      const refused = await handler(post(200));
      expect(refused.statusCode).toBe(503);
      expect(refused.headers).toMatchObject({ 'retry-after': '5' });
      expect(sent).toHaveLength(0);
      refuse = false;
      const retried = await handler(post(200));
      expect(retried.statusCode).toBe(202);
      expect(sent).toHaveLength(1);
      const eventId = JSON.parse(retried.body ?? '{}').event_id as string;
      const records = await new DynamoEventLog(dynamo.client, dynamo.tables.events).getEvent(eventId);
      expect(records.map((r) => r.status)).toEqual(['queued']);
    });
  });

  test('the store is unreachable: 503 unavailable, never 500, nothing queued', async () => {
    await tally.check(async () => {
      const sent: QueueMessage[] = [];
      const handler = await ingestWith({ send: async (messages) => void sent.push(...messages) }, 'http://127.0.0.1:9');
      const result = await handler(post(300));
      expect(result.statusCode).toBe(503);
      expect(JSON.parse(result.body ?? '{}')).toMatchObject({ status: 'error', code: 'unavailable' });
      expect(sent).toHaveLength(0);
    });
  });
});
