/** The worker over real stores (dynalite): lifecycle, idempotency, [SILENT], failures, batches. */
import { withFindings } from '../../functions/core/delivery/findings';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SQSEvent } from 'aws-lambda';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { echoAgent, type Agent, type AgentRequest } from '../../functions/core/agent/agent';
import { withRun, type AgentRun } from '../../functions/core/agent/run-record';
import { isSilent } from '../../functions/core/agent/silent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import type { DeliveryOutcome, DeliveryTarget } from '../../functions/core/delivery/target';
import { HookError } from '../../functions/core/errors';
import { jsonLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage, Subscription, TargetKind } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { createWorkerHandler } from '../../functions/worker/batch';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { sendJson, startLocalServer } from '../support/local-http';
import { eventually } from '../support/serve';
import { ManualClock } from '../support/recording-queue';

describe('[SILENT] detection (DESIGN §2.4)', () => {
  test.each([
    ['[SILENT]', true], ['  [silent]  ', true], ['[Silent] nothing to do', true], ['Checked everything.\n[SILENT]', true],
    ['[SILENT]\nbecause resolved', true], ['\n\n[SILENT]\n\n', true], ['All good.\n  [SILENT]  ', true],
    ['[SILENT', false], ['SILENT', false], ['I would answer [SILENT] here but no.', false], ['The marker is [SILENT]. Done', false],
    ['[SILENT]x\nmore', true], ['ok\n[SILENT] please\nend', false], ['', false], ['(SILENT)', false],
  ])('%p → %p', (reply, silent) => {
    expect(isSilent(reply)).toBe(silent);
  });
});

let dynamo: TestDynamo;
beforeAll(async () => {
  dynamo = await startDynalite();
});
afterAll(async () => dynamo.close());

class ScriptedAgent implements Agent {
  calls: AgentRequest[] = [];
  constructor(private readonly answers: Array<string | HookError>) {}
  async run(request: AgentRequest) {
    this.calls.push(request);
    const next = this.answers.length > 1 ? this.answers.shift() : this.answers[0];
    if (next instanceof HookError) throw next;
    return { text: next ?? '', steps: 1, refusedTools: [] };
  }
}

class ScriptedTarget implements DeliveryTarget {
  received: string[] = [];
  constructor(readonly kind: TargetKind, private readonly outcomes: DeliveryOutcome[]) {}
  async deliver(request: { reply: string }): Promise<DeliveryOutcome> {
    this.received.push(request.reply);
    return (this.outcomes.length > 1 ? this.outcomes.shift() : this.outcomes[0]) as DeliveryOutcome;
  }
}

let counter = 0;
async function setup(overrides: Partial<WorkerDeps> = {}, subscription: Partial<Subscription> = {}) {
  counter += 1;
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const name = `sub${counter}`;
  await subscriptions.create({
    name, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x',
    prompt: 'Alert {alerts.0.labels.alertname}', ...subscription,
  });
  const logs: string[] = [];
  const dead: Array<{ body: string; reason: string }> = [];
  const configDir = mkdtempSync(join(tmpdir(), 'hookagent-worker-'));
  const deps: WorkerDeps = {
    events, subscriptions, payloads: new FilePayloadStore(join(configDir, 'payloads')), agent: echoAgent, skills: new SkillLibrary(configDir),
    targets: { log: logTarget }, config: { agent: { provider: 'echo', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
    clock: new ManualClock(), logger: jsonLogger((l) => logs.push(l)), maxReceiveCount: 3,
    deadLetters: { send: async (body, reason) => void dead.push({ body, reason }) }, ...overrides,
  };
  const message: QueueMessage = {
    v: 1, event_id: `evt_${counter}`, subscription: name, source: 'custom', event: 'alert', delivery_id: `d${counter}`,
    received_at: '2026-11-22T12:00:00.000Z', payload: { alerts: [{ labels: { alertname: 'DiskRunningFull' } }] },
  };
  return { deps, events, message, body: JSON.stringify(message), name, logs, dead, configDir };
}

test('a message is rendered, answered, delivered and recorded', async () => {
  const { deps, events, message, body, logs } = await setup();
  expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  const record = await events.get(message.event_id, message.subscription);
  expect(record).toMatchObject({ status: 'delivered', prompt: 'Alert DiskRunningFull', reply: 'Alert DiskRunningFull', attempts: 1, targets: { log: { status: 'delivered' } } });
  const lines = logs.map((l) => JSON.parse(l) as Record<string, unknown>);
  expect(lines.filter((l) => l.message === 'target log delivered')).toHaveLength(1);
  for (const line of lines) expect(line).toMatchObject({ event_id: message.event_id, subscription: message.subscription });
});

test('a redelivered finished message is acknowledged without running the agent again', async () => {
  const agent = new ScriptedAgent(['hello']);
  const { deps, body } = await setup({ agent });
  await processMessage(body, 1, deps);
  expect(await processMessage(body, 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  expect(agent.calls).toHaveLength(1);
});

test('a partly delivered message re-delivers only the missing target, with the stored reply', async () => {
  const agent = new ScriptedAgent(['first reply', 'a different reply']);
  const chat = new ScriptedTarget('teamchat', [
    { status: 'failed', retryable: true, code: 'http_500', message: 'Slack answered 500' },
    { status: 'delivered', detail: 'ts=1' },
  ]);
  const telegram = new ScriptedTarget('messenger', [{ status: 'delivered', detail: 'message 7' }]);
  const { deps, events, message, body } = await setup({ agent, targets: { teamchat: chat, messenger: telegram } }, { deliver: ['teamchat', 'messenger'] });
  const first = await processMessage(body, 1, deps);
  expect(first).toEqual({ kind: 'retry', reason: 'teamchat: Slack answered 500' });
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'queued', error: { code: 'http_500' }, targets: { teamchat: { status: 'failed' }, messenger: { status: 'delivered' } } });
  expect(await processMessage(body, 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  expect(agent.calls).toHaveLength(1);
  expect(chat.received).toEqual(['first reply', 'first reply']);
  expect(telegram.received).toEqual(['first reply']);
  expect((await events.get(message.event_id, message.subscription))?.attempts).toBe(2);
});

test('a reply longer than the record keeps is delivered whole on the retry too (it was the record\'s cut copy)', async () => {
  const long = Array.from({ length: 4000 }, (_, i) => `line ${i}: ${'x'.repeat(30)}`).join('\n');
  expect(long.length).toBeGreaterThan(100_000);
  const chat = new ScriptedTarget('teamchat', [
    { status: 'failed', retryable: true, code: 'http_500', message: 'Slack answered 500' },
    { status: 'delivered', detail: 'ts=1' },
  ]);
  const { deps, events, message, body } = await setup({ agent: new ScriptedAgent([long]), targets: { teamchat: chat } }, { deliver: ['teamchat'] });
  expect(await processMessage(body, 1, deps)).toMatchObject({ kind: 'retry' });
  const stored = await events.get(message.event_id, message.subscription);
  expect(stored?.reply?.length).toBeLessThan(long.length);
  expect(stored?.reply_ref).toEqual(expect.any(String));
  expect(await processMessage(body, 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  expect(chat.received).toEqual([long, long]);
});

test('a target that has the reply is recorded at once, while a slower one is still in flight (a stop then does not post it again)', async () => {
  let release: (() => void) | undefined;
  const slow: DeliveryTarget = { kind: 'messenger', deliver: () => new Promise<DeliveryOutcome>((resolve) => (release = () => resolve({ status: 'delivered', detail: 'message 7' }))) };
  const chat = new ScriptedTarget('teamchat', [{ status: 'delivered', detail: 'ts=1' }]);
  const { deps, events, message, body } = await setup({ agent: new ScriptedAgent(['hello']), targets: { teamchat: chat, messenger: slow } }, { deliver: ['teamchat', 'messenger'] });
  const run = processMessage(body, 1, deps);
  await eventually(async () => (await events.get(message.event_id, message.subscription))?.targets?.teamchat?.status === 'delivered', 'teamchat recorded while messenger is in flight');
  expect((await events.get(message.event_id, message.subscription))?.targets?.messenger).toBeUndefined();
  release!();
  expect(await run).toEqual({ kind: 'ack', status: 'delivered' });
  expect((await events.get(message.event_id, message.subscription))?.targets).toMatchObject({ teamchat: { status: 'delivered' }, messenger: { status: 'delivered' } });
});

test('[SILENT] → nothing delivered, recorded as suppressed', async () => {
  const target = new ScriptedTarget('teamchat', [{ status: 'delivered' }]);
  const { deps, events, message, body } = await setup({ agent: new ScriptedAgent(['Resolved already.\n[SILENT]']), targets: { teamchat: target } }, { deliver: ['teamchat'] });
  expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'suppressed' });
  expect(target.received).toEqual([]);
  expect((await events.get(message.event_id, message.subscription))?.status).toBe('suppressed');
});

test('[SILENT] from a run that never read the diff: still not delivered, but the event log says it was no review', async () => {
  const target = new ScriptedTarget('teamchat', [{ status: 'delivered' }]);
  const silentUnread = withFindings('[SILENT] nothing to flag', [], 'get_change_diff failed: GitHub answered 500');
  const { deps, events, message, body } = await setup({ agent: new ScriptedAgent([silentUnread]), targets: { teamchat: target } }, { deliver: ['teamchat'] });
  expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'suppressed' });
  expect(target.received).toEqual([]);
  const record = await events.get(message.event_id, message.subscription);
  expect(record?.status).toBe('suppressed');
  expect(record?.warnings).toContain("the agent answered [SILENT] without reading the change's diff (get_change_diff failed: GitHub answered 500): this is no review of it");
});

test('a retryable agent failure is retried, then fails with its reason on the last receive', async () => {
  const agent = new ScriptedAgent([new HookError('agent_timeout', 'The agent did not answer within 1s', { retryable: true })]);
  const { deps, events, message, body, dead } = await setup({ agent });
  expect(await processMessage(body, 1, deps)).toMatchObject({ kind: 'retry' });
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'queued', error: { code: 'agent_timeout' } });
  expect(await processMessage(body, 3, deps)).toEqual({ kind: 'retry', reason: 'gave up after 3 attempts: The agent did not answer within 1s' });
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'failed', error: { code: 'agent_timeout', message: 'gave up after 3 attempts: The agent did not answer within 1s' } });
  expect(dead).toEqual([]);
});

test('a permanent failure is recorded with its message and dead-lettered at once', async () => {
  const agent = new ScriptedAgent([new HookError('provider_auth', 'Incorrect API key provided')]);
  const { deps, events, message, body, dead } = await setup({ agent });
  expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
  expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'failed', error: { code: 'provider_auth', message: 'Incorrect API key provided' } });
  expect(dead).toEqual([{ body, reason: 'provider_auth: Incorrect API key provided' }]);
  expect(await processMessage(body, 2, deps)).toEqual({ kind: 'ack', status: 'failed' });
});

test('tokens of a run that failed after spending them add to the retry\'s: the record\'s usage is what the budget counted', async () => {
  const usage = (input: number, output: number, cacheRead: number): AgentRun['usage'] => ({ provider: 'openai', model: 'm', input_tokens: input, output_tokens: output, cache_read_tokens: cacheRead, steps: 1 });
  const transcript: AgentRun['transcript'] = { v: 1, provider: 'openai', system_sha256: '', user: '', steps: [] };
  let call = 0;
  const agent: Agent = {
    async run() {
      call += 1;
      if (call === 1) throw withRun(new HookError('provider_rate_limited', 'slow down', { retryable: true }), { usage: usage(100, 10, 40), transcript });
      return { text: 'answer', steps: 1, refusedTools: [], run: { usage: usage(50, 5, 0), transcript } };
    },
  };
  const { deps, events, message, body } = await setup({ agent });
  expect(await processMessage(body, 1, deps)).toMatchObject({ kind: 'retry' });
  expect((await events.get(message.event_id, message.subscription))?.usage).toMatchObject({ input_tokens: 100, output_tokens: 10 });
  expect(await processMessage(body, 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  expect((await events.get(message.event_id, message.subscription))?.usage).toEqual({ provider: 'openai', model: 'm', input_tokens: 150, output_tokens: 15, cache_read_tokens: 40, steps: 2, spent_at: expect.any(String) });
});

test('a failure whose text echoes a configured secret is recorded, logged and dead-lettered with it masked', async () => {
  const key = 'sk-live-0123456789abcdef';
  const token = 'xoxb-1234-5678-telltale';
  const agent = new ScriptedAgent([new HookError('provider_auth', `invalid x-api-key: ${key} (also tried ${token})`)]);
  const config = { agent: { provider: 'openai' as const, model: 'm', api_key: key, timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {}, teamchat: { provider: 'slack' as const, bot_token: token, channel: '#c' } } };
  const { deps, events, message, body, dead, logs } = await setup({ agent, config: config as unknown as WorkerDeps['config'] });
  expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
  const stored = JSON.stringify(await events.get(message.event_id, message.subscription));
  for (const text of [stored, JSON.stringify(dead), logs.join('\n')]) {
    expect(text).not.toContain(key);
    expect(text).not.toContain(token);
  }
  expect(dead).toEqual([{ body, reason: 'provider_auth: invalid x-api-key: •••••• (also tried ••••••)' }]);
});

test('a target whose error echoes its token (a gateway quoting the request path): masked in the record\'s per-target detail, the log and the dead letter', async () => {
  const token = '123456789:AAE-secretTelegramBotToken-XYZ';
  // What many proxies in front of an API answer: the request path, token included.
  const api = await startLocalServer((req, res) => sendJson(res, 400, { ok: false, error_code: 400, description: `Bad Request: no route for ${req.method} ${req.url}` }));
  try {
    const delivery = { timeout_ms: 1000, codehost: {}, messenger: { provider: 'telegram' as const, bot_token: token, chat_id: '-100', api_url: api.url } };
    const config = { agent: { provider: 'echo' as const, timeout_ms: 1000, max_steps: 4 }, delivery };
    const { deps, events, message, body, dead, logs } = await setup({ targets: createDeliveryTargets(delivery), config }, { deliver: ['messenger'] });
    expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
    const stored = await events.get(message.event_id, message.subscription);
    expect(stored?.targets?.messenger).toMatchObject({ status: 'failed', detail: expect.stringContaining('/bot••••••/sendMessage') });
    for (const text of [JSON.stringify(stored), JSON.stringify(dead), logs.join('\n')]) expect(text).not.toContain(token);
    expect(logs.join('\n')).toContain('/bot••••••/sendMessage');
  } finally {
    await api.close();
  }
});

test('a Slack incoming webhook URL is secret by its path: an error quoting only the path is masked too', async () => {
  const api = await startLocalServer((req, res) => {
    res.writeHead(400, { 'content-type': 'text/plain' });
    res.end(`no route for POST ${req.url}`);
  });
  try {
    const delivery = { timeout_ms: 1000, codehost: {}, teamchat: { provider: 'slack' as const, webhook_url: `${api.url}/services/T0AAAA/B0BBBB/s3cretPathPart`, api_url: 'https://slack.com/api' } };
    const config = { agent: { provider: 'echo' as const, timeout_ms: 1000, max_steps: 4 }, delivery };
    const { deps, events, message, body, dead, logs } = await setup({ targets: createDeliveryTargets(delivery), config }, { deliver: ['teamchat'] });
    expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'failed' });
    const stored = await events.get(message.event_id, message.subscription);
    for (const text of [JSON.stringify(stored), JSON.stringify(dead), logs.join('\n')]) expect(text).not.toContain('s3cretPathPart');
    expect(stored?.targets?.teamchat?.detail).toContain('no route for POST ••••••');
  } finally {
    await api.close();
  }
});

test('bad input: malformed message, deleted subscription, missing payload pointer, unknown target, invalid skill', async () => {
  const { deps, dead, configDir } = await setup();
  expect(await processMessage('{"not":"a message"}', 1, deps)).toEqual({ kind: 'ack', status: 'malformed' });
  expect(await processMessage('not json', 1, deps)).toEqual({ kind: 'ack', status: 'malformed' });
  expect(dead.map((d) => d.reason)).toEqual(['malformed queue message', 'malformed queue message']);

  const gone = await setup();
  await gone.deps.subscriptions.delete(gone.name);
  expect(await processMessage(gone.body, 1, gone.deps)).toEqual({ kind: 'ack', status: 'failed' });
  expect((await gone.events.get(gone.message.event_id, gone.name))?.error?.code).toBe('subscription_not_found');

  const pointer = await setup();
  const { payload: _p, ...rest } = pointer.message;
  const byRef = JSON.stringify({ ...rest, payload_ref: `file://${join(configDir, 'payloads', 'nothing.json')}` });
  expect(await processMessage(byRef, 1, pointer.deps)).toEqual({ kind: 'ack', status: 'failed' });
  expect((await pointer.events.get(pointer.message.event_id, pointer.name))?.error?.code).toBe('payload_missing');

  const noTarget = await setup({}, { deliver: ['messenger'] });
  expect(await processMessage(noTarget.body, 1, noTarget.deps)).toEqual({ kind: 'ack', status: 'failed' });
  expect((await noTarget.events.get(noTarget.message.event_id, noTarget.name))?.error?.code).toBe('target_unavailable');

  const badSkill = await setup({}, { skills: ['mine'] });
  mkdirSync(join(badSkill.configDir, 'skills', 'mine'), { recursive: true });
  writeFileSync(join(badSkill.configDir, 'skills', 'mine', 'SKILL.md'), 'no front matter');
  expect(await processMessage(badSkill.body, 1, badSkill.deps)).toEqual({ kind: 'ack', status: 'failed' });
  expect((await badSkill.events.get(badSkill.message.event_id, badSkill.name))?.error?.code).toBe('skill_invalid');
});

test('a payload that travelled by pointer is read through the PayloadStore', async () => {
  const { deps, events, message } = await setup();
  const pointer = await deps.payloads.put(message.event_id, JSON.stringify({ alerts: [{ labels: { alertname: 'FromStore' } }] }));
  const { payload: _p, ...rest } = message;
  expect(await processMessage(JSON.stringify({ ...rest, payload_ref: pointer }), 1, deps)).toMatchObject({ status: 'delivered' });
  expect((await events.get(message.event_id, message.subscription))?.reply).toBe('Alert FromStore');
});

test('the system prompt fences the payload and carries the skills; the echo reply is the bare prompt', async () => {
  const agent = new ScriptedAgent(['ok']);
  const { deps, body } = await setup({ agent }, { skills: ['alert-triage'] });
  await processMessage(body, 1, deps);
  const [request] = agent.calls;
  expect(request?.system).toContain('untrusted');
  expect(request?.system).toContain('[SILENT]');
  expect(request?.system).toContain('## Skill: alert-triage');
  // The template's words stay outside the fence; the payload value is inside a fence of a random token.
  expect(request?.prompt).toMatch(/^Alert <untrusted-data-([0-9a-f]{18})>DiskRunningFull<\/untrusted-data-\1>$/);
  expect(request?.rendered).toBe('Alert DiskRunningFull');
});

test('a batch with one failing message reports only that one', async () => {
  const { deps, message } = await setup({ agent: new ScriptedAgent(['fine']) });
  const bad = { ...message, event_id: `${message.event_id}-bad`, subscription: 'no-such-subscription' };
  const good = { ...message, event_id: `${message.event_id}-good` };
  const retry = { ...message, event_id: `${message.event_id}-retry` };
  const handler = createWorkerHandler({ ...deps, deadLetters: undefined });
  const record = (id: string, m: unknown) => ({ messageId: id, receiptHandle: id, body: JSON.stringify(m), attributes: { ApproximateReceiveCount: '1' } });
  const event = { Records: [record('a', good), record('b', bad), record('c', retry)] } as unknown as SQSEvent;
  const response = await handler(event);
  expect(response.batchItemFailures).toEqual([{ itemIdentifier: 'b' }]);
});

describe('fewer writes per message (issue 16)', () => {
  class RecordingEventLog extends DynamoEventLog {
    writes: Array<{ kind: 'put' | 'update'; fields: Partial<EventRecord> }> = [];
    override async putAll(records: EventRecord[]): Promise<void> {
      for (const r of records) this.writes.push({ kind: 'put', fields: r });
      return super.putAll(records);
    }
    override async update(eventId: string, subscription: string, changes: Partial<EventRecord>): Promise<void> {
      this.writes.push({ kind: 'update', fields: changes });
      return super.update(eventId, subscription, changes);
    }
  }

  test('"processing" is written together with the prompt, before the agent runs; the record shows it meanwhile', async () => {
    const events = new RecordingEventLog(dynamo.client, dynamo.tables.events);
    const seen: Array<EventRecord | undefined> = [];
    let target: Awaited<ReturnType<typeof setup>> | undefined;
    const agent: Agent = {
      async run(request) {
        seen.push(await events.get(target!.message.event_id, target!.message.subscription));
        return echoAgent.run(request);
      },
    };
    target = await setup({ events, agent });
    const { deps, message, body } = target;
    await events.putAll([{ event_id: message.event_id, subscription: message.subscription, status: 'queued', source: 'custom', event: 'alert', delivery_id: message.delivery_id, received_at: message.received_at, updated_at: message.received_at, message, attempts: 0 }]);
    events.writes = [];
    expect(await processMessage(body, 1, deps)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(seen[0]).toMatchObject({ status: 'processing', attempts: 1, prompt: 'Alert DiskRunningFull' });
    // processing + prompt, then the reply, then delivered: three small updates, no whole-record write.
    expect(events.writes.map((w) => [w.kind, w.fields.status])).toEqual([['update', 'processing'], ['update', undefined], ['update', 'delivered']]);
    expect(events.writes[0]!.fields).toMatchObject({ attempts: 1, prompt: 'Alert DiskRunningFull' });
  });

  test('a redelivery with its reply stored shows "processing" while it delivers', async () => {
    const events = new RecordingEventLog(dynamo.client, dynamo.tables.events);
    const states: Array<string | undefined> = [];
    let ids: { event_id: string; subscription: string } | undefined;
    const chat: DeliveryTarget = {
      kind: 'teamchat',
      async deliver() {
        states.push((await events.get(ids!.event_id, ids!.subscription))?.status);
        return states.length === 1 ? { status: 'failed', retryable: true, code: 'http_500', message: 'Slack answered 500' } : { status: 'delivered' };
      },
    } as DeliveryTarget;
    const { deps, message, body } = await setup({ events, agent: new ScriptedAgent(['hello']), targets: { teamchat: chat } }, { deliver: ['teamchat'] });
    ids = message;
    expect(await processMessage(body, 1, deps)).toMatchObject({ kind: 'retry' });
    expect(await processMessage(body, 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(states).toEqual(['processing', 'processing']);
    expect((await events.get(message.event_id, message.subscription))?.attempts).toBe(2);
  });

  test('a message handed over already parsed is used as it is', async () => {
    const { deps, events, message } = await setup();
    // The body is only its text: were it parsed, this one would be refused as malformed.
    expect(await processMessage('{"not":"parsed"}', 1, deps, message)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(await events.get(message.event_id, message.subscription)).toMatchObject({ status: 'delivered', reply: 'Alert DiskRunningFull' });
  });
});
