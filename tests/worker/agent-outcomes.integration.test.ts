/**
 * The worker with real model providers (local servers speaking the OpenAI Chat Completions
 * and Bedrock Converse wire formats) over dynalite: replies that must not be posted are
 * recorded failures with nothing delivered; usage and transcript are recorded; the daily
 * token budget stops runs without calling the model, and the next day runs again.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BedrockRuntimeClient } from '@aws-sdk/client-bedrock-runtime';
import { NodeHttpHandler } from '@smithy/node-http-handler';
import { bedrockProvider } from '../../functions/aws/bedrock-provider';
import { DynamoCounterStore } from '../../functions/aws/counter-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { loadTranscript } from '../../functions/core/agent/transcript-store';
import type { DeliveryOutcome, DeliveryTarget } from '../../functions/core/delivery/target';
import { jsonLogger } from '../../functions/core/log';
import type { CounterStore } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { globalBudgetKey, subscriptionBudgetKey } from '../../functions/core/worker/budget';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { MemoryCounterStore } from '../support/memory-counters';
import { ManualClock } from '../support/recording-queue';

let dynamo: TestDynamo;
let llm: LocalServer;
let script: Array<[number, unknown]> = [];
beforeAll(async () => {
  dynamo = await startDynalite();
  llm = await startLocalServer((_req, res) => {
    const [status, body] = script.shift() ?? [500, { error: { message: 'no script' } }];
    sendJson(res, status, body);
  });
});
afterAll(async () => {
  await llm.close();
  await dynamo.close();
});
beforeEach(() => {
  llm.requests.length = 0;
  script = [];
});

class RecordingTarget implements DeliveryTarget {
  readonly kind = 'codehost_comment' as const;
  received: string[] = [];
  async deliver(request: { reply: string }): Promise<DeliveryOutcome> {
    this.received.push(request.reply);
    return { status: 'delivered', detail: 'https://github.test/o/r/pull/7#issuecomment-1' };
  }
}

const completion = (content: string | null, finish_reason: string, usage = { prompt_tokens: 120, completion_tokens: 30, prompt_tokens_details: { cached_tokens: 20 } }) => ({
  id: 'chatcmpl-1', object: 'chat.completion', model: 'gpt-test', choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason }], usage,
});

let counter = 0;
async function setup(options: { subscription?: Partial<Subscription>; counters?: CounterStore; clock?: ManualClock; agent?: WorkerDeps['agent']; maxTokens?: number; dailyTokens?: number } = {}) {
  counter += 1;
  const name = `agent${counter}`;
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  await subscriptions.create({
    name, events: [], skills: [], deliver: ['codehost_comment'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Review {pull_request.title}', ...options.subscription,
  });
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const target = new RecordingTarget();
  const logs: string[] = [];
  const clock = options.clock ?? new ManualClock();
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'hookagent-agent-')), 'payloads')),
    agent: options.agent ?? loopAgent(openAiProvider({ baseUrl: `${llm.url}/v1`, apiKey: 'sk-test', model: 'gpt-test' }), {}, { timeout_ms: 1000, codehost: {} }),
    skills: new SkillLibrary(undefined), targets: { codehost_comment: target },
    config: {
      agent: { provider: 'openai', model: 'gpt-test', timeout_ms: 5000, max_steps: 4, ...(options.maxTokens ? { max_tokens: options.maxTokens } : {}), ...(options.dailyTokens ? { budget: { daily_tokens: options.dailyTokens } } : {}) },
      delivery: { timeout_ms: 1000, codehost: {} },
    },
    clock, logger: jsonLogger((l) => logs.push(l)), maxReceiveCount: 3, deadLetters: { send: async () => {} },
    ...(options.counters ? { counters: options.counters } : {}),
  };
  const message = (n: number): QueueMessage => ({
    v: 1, event_id: `evt_${counter}_${n}`, subscription: name, source: 'github', event: 'pull_request', delivery_id: `d${counter}_${n}`,
    received_at: new Date(clock.now()).toISOString(), payload: { pull_request: { title: 'Add x' } },
  });
  return { deps, events, target, message, name, logs };
}

describe('replies that must not be posted (OpenAI-compatible)', () => {
  test.each([
    ['an empty reply', [completion('', 'stop')], 'agent_reply_empty'],
    ['a null reply', [completion(null, 'stop')], 'agent_reply_empty'],
    ['finish_reason length twice (after one shorter retry)', [completion('A long revi', 'length'), completion('Still lo', 'length')], 'agent_reply_truncated'],
    ['finish_reason content_filter', [completion('', 'content_filter')], 'agent_reply_filtered'],
  ])('%s is a recorded failure, nothing posted, usage kept', async (_what, answers, code) => {
    script = answers.map((a) => [200, a] as [number, unknown]);
    const { deps, events, target, message } = await setup({ maxTokens: 300 });
    const m = message(1);
    expect(await processMessage(JSON.stringify(m), 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
    expect(target.received).toEqual([]);
    const record = await events.get(m.event_id, m.subscription);
    expect(record).toMatchObject({ status: 'failed', error: { code } });
    expect(record?.reply).toBeUndefined();
    expect(record?.usage).toMatchObject({ provider: 'openai', model: 'gpt-test', input_tokens: 100 * answers.length, output_tokens: 30 * answers.length, cache_read_tokens: 20 * answers.length, steps: answers.length });
    expect((JSON.parse(llm.requests[0]!.body) as { max_tokens?: number }).max_tokens).toBe(300);
  });

  test('length once, then a complete shorter reply, is posted; the subscription max_tokens wins', async () => {
    script = [[200, completion('A long revi', 'length')], [200, completion('LGTM.', 'stop')]];
    const { deps, events, target, message } = await setup({ maxTokens: 300, subscription: { max_tokens: 64 } });
    const m = message(1);
    expect(await processMessage(JSON.stringify(m), 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(target.received).toEqual(['LGTM.']);
    expect(llm.requests.map((r) => (JSON.parse(r.body) as { max_tokens?: number }).max_tokens)).toEqual([64, 64]);
    const retry = JSON.parse(llm.requests[1]!.body) as { messages: Array<Record<string, unknown>> };
    expect(retry.messages.slice(-2)).toEqual([{ role: 'assistant', content: 'A long revi' }, { role: 'user', content: expect.stringContaining('much shorter') }]);
    const record = await events.get(m.event_id, m.subscription);
    const transcript = await loadTranscript(deps.payloads, record?.transcript_ref);
    expect(transcript).toMatchObject({ provider: 'openai', retried_shorter: true, reply: 'LGTM.', user: expect.stringMatching(/^Review <untrusted-data-([0-9a-f]+)>Add x<\/untrusted-data-\1>$/) });
    expect(transcript?.system_sha256).toMatch(/^[0-9a-f]{64}$/);
  });
});

test('Bedrock stopReason max_tokens and guardrail_intervened are recorded failures; usage from the Converse answer', async () => {
  const bedrock = await startLocalServer((_req, res) => {
    const next = bedrockScript.shift() ?? { output: { message: { role: 'assistant', content: [] } }, stopReason: 'end_turn' };
    sendJson(res, 200, next);
  });
  const bedrockScript: unknown[] = [];
  try {
    const client = new BedrockRuntimeClient({ endpoint: bedrock.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 's' }, maxAttempts: 1, requestHandler: new NodeHttpHandler() });
    const agent = loopAgent(bedrockProvider(client, 'anthropic.claude-test'), {}, { timeout_ms: 1000, codehost: {} });
    const cut = { output: { message: { role: 'assistant', content: [{ text: 'Half' }] } }, stopReason: 'max_tokens', usage: { inputTokens: 50, outputTokens: 10, totalTokens: 60 } };
    bedrockScript.push(cut, cut);
    const { deps, events, target, message } = await setup({ agent, maxTokens: 100 });
    const m = message(1);
    expect(await processMessage(JSON.stringify(m), 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
    expect(await events.get(m.event_id, m.subscription)).toMatchObject({ error: { code: 'agent_reply_truncated' }, usage: { provider: 'bedrock', input_tokens: 100, output_tokens: 20, steps: 2 } });
    expect((JSON.parse(bedrock.requests[0]!.body) as { inferenceConfig?: unknown }).inferenceConfig).toEqual({ maxTokens: 100 });
    bedrockScript.push({ output: { message: { role: 'assistant', content: [{ text: 'Sorry, the model cannot answer.' }] } }, stopReason: 'guardrail_intervened', usage: { inputTokens: 5, outputTokens: 1 } });
    const m2 = message(2);
    expect(await processMessage(JSON.stringify(m2), 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
    expect(await events.get(m2.event_id, m2.subscription)).toMatchObject({ error: { code: 'agent_reply_filtered' } });
    expect(target.received).toEqual([]);
  } finally {
    await bedrock.close();
  }
});

describe('daily token budgets', () => {
  test.each([
    ['the subscription budget (memory counters)', () => new MemoryCounterStore(clockA), { subscription: { daily_tokens: 100 } }],
    ['agent.budget.daily_tokens (DynamoDB counters on dynalite)', () => new DynamoCounterStore(dynamo.client, dynamo.tables.dedup, clockA), { dailyTokens: 100 }],
  ])('%s: spent → over_budget without calling the model; the next UTC day runs again', async (_what, makeCounters, settings) => {
    clockA.current = Date.parse(`2026-11-2${++day}T10:00:00Z`);
    const counters = makeCounters();
    const { deps, events, target, message, name } = await setup({ counters, clock: clockA, ...settings });
    script = [[200, completion('First review.', 'stop')]];
    const first = message(1);
    expect(await processMessage(JSON.stringify(first), 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(await counters.get(subscriptionBudgetKey(name, clockA.now()))).toBe(150);
    expect(await counters.get(globalBudgetKey(clockA.now()))).toBeGreaterThanOrEqual(150);

    const second = message(2);
    expect(await processMessage(JSON.stringify(second), 1, deps)).toEqual({ kind: 'ack', status: 'over_budget' });
    expect(llm.requests).toHaveLength(1);
    expect(target.received).toEqual(['First review.']);
    expect(await events.get(second.event_id, second.subscription)).toMatchObject({ status: 'over_budget', error: { code: 'over_budget', message: expect.stringContaining('the model was not called') } });
    // A redelivery of an over-budget message does nothing more.
    expect(await processMessage(JSON.stringify(second), 2, deps)).toEqual({ kind: 'ack', status: 'over_budget' });

    clockA.advance(24 * 3600 * 1000);
    script = [[200, completion('Next day review.', 'stop')]];
    const third = message(3);
    expect(await processMessage(JSON.stringify(third), 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(llm.requests).toHaveLength(2);
  });
});
const clockA = new ManualClock();
let day = 0;

describe('DynamoCounterStore on dynalite', () => {
  test('adds atomically, reads 0 when absent or expired, and restarts an expired counter', async () => {
    const clock = new ManualClock();
    const store = new DynamoCounterStore(dynamo.client, dynamo.tables.dedup, clock);
    expect(await store.get('k')).toBe(0);
    const totals = await Promise.all(Array.from({ length: 10 }, () => store.add('k', 5, 60)));
    expect(totals.sort((a, b) => a - b)).toEqual([5, 10, 15, 20, 25, 30, 35, 40, 45, 50]);
    expect(await store.get('k')).toBe(50);
    expect(await store.add('k', 0, 60)).toBe(50);
    clock.advance(61_000);
    expect(await store.get('k')).toBe(0);
    expect(await store.add('k', 7, 60)).toBe(7);
    expect(await store.get('k')).toBe(7);
  });

  test('a store that is down is a retryable unavailable, and the worker retries the event later', async () => {
    const { createDynamoClient } = await import('../../functions/aws/dynamo');
    const dead = createDynamoClient({ endpoint: 'http://127.0.0.1:9' });
    const store = new DynamoCounterStore(dead, dynamo.tables.dedup, new ManualClock());
    await expect(store.get('k')).rejects.toMatchObject({ code: 'unavailable', retryable: true });
    const { deps, message } = await setup({ counters: store, subscription: { daily_tokens: 10 } });
    expect(await processMessage(JSON.stringify(message(1)), 1, deps)).toMatchObject({ kind: 'retry' });
    expect(llm.requests).toHaveLength(0);
    dead.destroy();
  });
});
