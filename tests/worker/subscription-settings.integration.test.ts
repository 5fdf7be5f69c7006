/**
 * Issue 17 in the worker, over real stores (dynalite): direct delivery (`agent: none`),
 * per-subscription model / max steps / timeout, max runs per hour (DynamoCounterStore),
 * and debounce end to end (ingest → delayed messages → worker): five pushes to one pull
 * request → one run, on the last; the four others `superseded` by it.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoCounterStore } from '../../functions/aws/counter-store';
import { DynamoDebounceStore } from '../../functions/aws/debounce-store';
import { type Agent, type AgentRequest } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { jsonLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { runsKey } from '../../functions/core/worker/gates';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { GITHUB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';
import { githubEvent } from '../support/requests';

class RecordingAgent implements Agent {
  calls: AgentRequest[] = [];
  constructor(private readonly reply = '[SILENT]', readonly label = 'default') {}
  async run(request: AgentRequest) {
    this.calls.push(request);
    return { text: `${this.reply}`, steps: 1, refusedTools: [] };
  }
}

let h: Harness;
let counters: DynamoCounterStore;
let debounce: DynamoDebounceStore;
beforeAll(async () => {
  h = await startHarness();
  counters = new DynamoCounterStore(h.dynamo.client, h.dynamo.tables.dedup, h.clock);
  debounce = new DynamoDebounceStore(h.dynamo.client, h.dynamo.tables.dedup, h.clock);
});
afterAll(async () => h.close());
beforeEach(() => {
  h.queue.sent.length = 0;
  h.queue.delays.length = 0;
});

let n = 0;
function worker(agent: Agent, extra: Partial<WorkerDeps> = {}): WorkerDeps {
  return {
    events: h.events, subscriptions: h.subscriptions, payloads: new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'ha-')), 'p')), agent,
    skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'ha-'))), targets: { log: logTarget },
    config: { agent: { provider: 'openai', model: 'gpt-default', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock: h.clock, logger: jsonLogger(() => undefined), maxReceiveCount: 3, debounce, counters, ...extra,
  };
}

async function subscription(fields: Partial<Subscription>): Promise<Subscription> {
  n += 1;
  return h.addSubscription({ name: `s${n}`, events: ['*'], prompt: 'Alert {alert}', ...fields });
}

function message(sub: string, fields: Partial<QueueMessage> = {}): QueueMessage {
  n += 1;
  return {
    v: 1, event_id: `evt_w${n}`, subscription: sub, source: 'custom', event: 'alert', delivery_id: `d${n}`,
    received_at: new Date(h.clock.now()).toISOString(), payload: { alert: '[SILENT] Disk {full}' }, ...fields,
  };
}

test('--agent none: the rendered template is delivered as is; no agent call, [SILENT] not applied', async () => {
  const agent = new RecordingAgent();
  const sub = await subscription({ agent: 'none' });
  const m = message(sub.name);
  expect(await processMessage(JSON.stringify(m), 1, worker(agent))).toEqual({ kind: 'ack', status: 'delivered' });
  expect(agent.calls).toHaveLength(0);
  const record = await h.events.get(m.event_id, sub.name);
  expect(record).toMatchObject({ status: 'delivered', reply: 'Alert [SILENT] Disk {full}', targets: { log: { status: 'delivered' } } });
  expect(record?.model).toBeUndefined();
});

test('--model, --max-steps, --timeout override agent.* for one subscription; the record names the model', async () => {
  const base = new RecordingAgent('ok');
  const byModel = new Map<string, RecordingAgent>();
  const agentFor = (model: string) => byModel.get(model) ?? byModel.set(model, new RecordingAgent('ok', model)).get(model)!;
  const cheap = await subscription({ model: 'gpt-mini', max_steps: 2, timeout_ms: 30_000 });
  const plain = await subscription({});
  const a = message(cheap.name);
  const b = message(plain.name);
  await processMessage(JSON.stringify(a), 1, worker(base, { agentFor }));
  await processMessage(JSON.stringify(b), 1, worker(base, { agentFor }));
  expect(byModel.get('gpt-mini')?.calls[0]).toMatchObject({ maxSteps: 2, timeoutMs: 30_000 });
  expect(base.calls).toHaveLength(1);
  expect(base.calls[0]).toMatchObject({ maxSteps: 4, timeoutMs: 1000 });
  expect((await h.events.get(a.event_id, cheap.name))?.model).toBe('gpt-mini');
  expect((await h.events.get(b.event_id, plain.name))?.model).toBe('gpt-default');
});

test('--max-runs-per-hour: beyond the cap accepted and recorded rate_limited, no agent call; the next hour runs again', async () => {
  const agent = new RecordingAgent('ok');
  const sub = await subscription({ max_runs_per_hour: 2 });
  const statuses: string[] = [];
  const messages = [message(sub.name), message(sub.name), message(sub.name)];
  for (const m of messages) statuses.push((await processMessage(JSON.stringify(m), 1, worker(agent))) .kind === 'ack' ? (await h.events.get(m.event_id, sub.name))?.status ?? '' : 'retry');
  expect(statuses).toEqual(['delivered', 'delivered', 'rate_limited']);
  expect(agent.calls).toHaveLength(2);
  const limited = await h.events.get(messages[2]!.event_id, sub.name);
  expect(limited?.error?.message).toContain('webhook replay');
  // Redelivered, a rate-limited message stays rate limited (it is final) without counting again;
  // only the two runs that happened count (the refused one gave its count back).
  await processMessage(JSON.stringify(messages[2]), 2, worker(agent));
  expect(await counters.get(runsKey(sub.name, h.clock.now()))).toBe(2);
  h.clock.advance(3600_000);
  const later = message(sub.name);
  await processMessage(JSON.stringify(later), 1, worker(agent));
  expect((await h.events.get(later.event_id, sub.name))?.status).toBe('delivered');
});

test('DynamoCounterStore and DynamoDebounceStore: atomic adds, latest wins, expired = absent', async () => {
  const results = await Promise.all(Array.from({ length: 10 }, () => counters.add('parallel', 1, 60)));
  expect(results.sort((x, y) => x - y)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  expect(await counters.get('parallel')).toBe(10);
  expect(await counters.get('never')).toBe(0);
  await debounce.setLatest('sub', 'github:o/r#pr:1', 'evt_a', 60);
  await debounce.setLatest('sub', 'github:o/r#pr:1', 'evt_b', 60);
  expect(await debounce.getLatest('sub', 'github:o/r#pr:1')).toBe('evt_b');
  expect(await debounce.getLatest('other', 'github:o/r#pr:1')).toBeUndefined();
  h.clock.advance(61_000);
  expect(await debounce.getLatest('sub', 'github:o/r#pr:1')).toBeUndefined();
});

test('debounce: five pushes to one pull request in a burst → one run, on the last; four superseded by it', async () => {
  const agent = new RecordingAgent('reviewed');
  const sub = await h.addSubscription({ name: 'debounced-review', events: ['pull_request'], debounce_seconds: 60, prompt: 'Review {pull_request.head.sha}' });
  await h.addSubscription({ name: 'immediate', events: ['pull_request.closed'] });
  const shas = ['a1', 'b2', 'c3', 'd4', 'e5'].map((s) => s.repeat(20));
  const ids: string[] = [];
  for (const sha of shas) {
    const body = JSON.stringify({ action: 'synchronize', number: 9, pull_request: { number: 9, head: { sha } }, repository: { full_name: 'o/r' } });
    const result = await h.handler(githubEvent('pull_request', body, GITHUB_SECRET));
    expect(result.statusCode).toBe(202);
    ids.push(bodyOf(result).event_id as string);
    h.clock.advance(5_000);
  }
  // Every message asked SQS to hold it for the debounce time and names its subject.
  const mine = h.queue.sent.flatMap((m, i) => (m.subscription === sub.name ? [{ m, delay: h.queue.delays[i] }] : []));
  expect(mine.map((x) => x.delay)).toEqual([60, 60, 60, 60, 60]);
  expect(new Set(mine.map((x) => x.m.subject_key))).toEqual(new Set(['github:o/r#9']));
  // Subscriptions without debounce are queued at once.
  expect(h.queue.delays.filter((d, i) => h.queue.sent[i]?.subscription !== sub.name).every((d) => d === 0)).toBe(true);
  // The delays elapse; the worker receives them in order.
  for (const { m } of mine) await processMessage(JSON.stringify(m), 1, worker(agent));
  expect(agent.calls).toHaveLength(1);
  expect(agent.calls[0]?.rendered).toBe(`Review ${shas[4]}`);
  const records = await Promise.all(ids.map((id) => h.events.get(id, sub.name)));
  expect(records.map((r) => r?.status)).toEqual(['superseded', 'superseded', 'superseded', 'superseded', 'delivered']);
  expect(records.slice(0, 4).map((r) => r?.superseded_by)).toEqual([ids[4], ids[4], ids[4], ids[4]]);
  // A replay of a superseded event runs (replays are never debounced).
  const replay = { ...mine[0]!.m, event_id: 'evt_replay1', replay_of: ids[0] };
  await processMessage(JSON.stringify(replay), 1, worker(agent));
  expect(agent.calls).toHaveLength(2);
});

test('debounce keeps subjects apart: two pull requests each run once', async () => {
  const agent = new RecordingAgent('ok');
  const sub = await h.addSubscription({ name: 'two-prs', events: ['pull_request'], debounce_seconds: 30 });
  for (const number of [1, 2, 1, 2]) {
    const body = JSON.stringify({ action: 'synchronize', number, pull_request: { number }, repository: { full_name: 'o/r' } });
    await h.handler(githubEvent('pull_request', body, GITHUB_SECRET));
    h.clock.advance(1000);
  }
  for (const m of h.queue.sent.filter((x) => x.subscription === sub.name)) await processMessage(JSON.stringify(m), 1, worker(agent));
  expect(agent.calls.map((c) => (c.payload as { number: number }).number).sort()).toEqual([1, 2]);
});

test('debounce: an event without a subject is queued at once; a paused subscription holds instead of delaying', async () => {
  const custom = await h.addSubscription({ name: 'no-subject', debounce_seconds: 60 });
  const body = JSON.stringify({ event_type: 'deploy', status: 'done' });
  const { apiEvent } = await import('../support/requests');
  const result = await h.handler(apiEvent({ path: '/webhooks/custom/no-subject', body, headers: { authorization: `Bearer ${custom.secret}` } }));
  expect(bodyOf(result)).toMatchObject({ status: 'accepted' });
  expect(h.queue.delays).toEqual([0]);
  expect(h.queue.sent[0]?.subject_key).toBeUndefined();

  await h.addSubscription({ name: 'paused-debounce', events: ['pull_request'], debounce_seconds: 60, state: 'paused' });
  const pr = JSON.stringify({ action: 'synchronize', number: 4, pull_request: { number: 4 }, repository: { full_name: 'o/r' } });
  const held = await h.handler(githubEvent('pull_request', pr, GITHUB_SECRET));
  expect(bodyOf(held).held ?? bodyOf(held).subscriptions).toContain('paused-debounce');
  expect(h.queue.sent.filter((m) => m.subscription === 'paused-debounce')).toHaveLength(0);
});
