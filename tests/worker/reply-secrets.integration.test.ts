/**
 * A configured secret never leaves in an agent's reply (untrusted-input hunt 7: a tool's
 * error text reaches the comment through the unread-diff note, and a model can repeat
 * what a tool echoed): the worker masks every secret value of the configuration in the
 * reply before it is stored or delivered. Over a real SQLite store and a local Telegram
 * Bot API server; the echo agent repeats a prompt that quotes the payload.
 *
 * Hunt 9 (agent2 D1): the findings and the unread-diff reason travel base64-encoded in the
 * reply's hidden blocks, out of reach of a mask over the whole reply; they are masked part
 * by part. A local OpenAI-compatible model server records a finding that quotes the
 * configured code-host token, and a local code host answers get_change_diff with a 401 that
 * quotes it. The transcript `webhook event` shows is masked the same way.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent, type Agent } from '../../functions/core/agent/agent';
import { loopAgent } from '../../functions/core/agent/loop';
import { openAiProvider } from '../../functions/core/agent/openai';
import { BUILTIN_TOOLS } from '../../functions/core/agent/tools';
import { loadTranscript } from '../../functions/core/agent/transcript-store';
import type { Config } from '../../functions/core/config/types';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { silentLogger } from '../../functions/core/log';
import { MASK } from '../../functions/core/redact';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage, Subscription } from '../../functions/core/types';
import { processMessage } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { SqliteSubscriptionStore } from '../../functions/local/sqlite/subscriptions';
import type { TestStore } from '../support/local-store';
import { sendJson, startLocalServer, type LocalServer } from '../support/local-http';
import { useStoreAndTelegram } from '../support/store-telegram';

const BOT_TOKEN = '4242:telegram-bot-token-secret';
let t: TestStore;
let telegram: LocalServer;
useStoreAndTelegram((store, server) => {
  t = store;
  telegram = server;
});

test('a reply that carries a configured secret is stored and posted with it masked', async () => {
  const subscriptions = new SqliteSubscriptionStore(t.store);
  const subscription: Subscription = { name: 'alerts', events: [], skills: [], deliver: ['messenger'], state: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', secret: 'x', prompt: 'Alert: {alert}' };
  await subscriptions.create(subscription);
  const message: QueueMessage = { v: 1, event_id: 'evt_s', subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: 'd-s', received_at: '2026-01-01T00:00:00Z', payload: { alert: `failed: 401 for token ${BOT_TOKEN}` } };
  const record: EventRecord = { event_id: 'evt_s', subscription: 'alerts', status: 'queued', source: 'custom', event: 'alert', delivery_id: 'd-s', received_at: message.received_at, updated_at: message.received_at, message };
  const events = new SqliteEventLog(t.store);
  await events.putAll([record]);
  const delivery = { timeout_ms: 2_000, codehost: {}, messenger: { provider: 'telegram' as const, bot_token: BOT_TOKEN, chat_id: '-100', api_url: telegram.url } };
  const outcome = await processMessage(JSON.stringify(message), 1, {
    events, subscriptions, payloads: new FilePayloadStore(join(t.dir, 'payloads')), agent: echoAgent,
    skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'hookagent-skills-'))), targets: createDeliveryTargets(delivery),
    config: { agent: { provider: 'echo', timeout_ms: 5_000, max_steps: 2 }, delivery }, clock: { now: () => Date.now() }, logger: silentLogger, maxReceiveCount: 3,
  });
  expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
  const posted = (JSON.parse(telegram.requests[0]!.body) as { text: string }).text;
  expect(posted).toContain(`failed: 401 for token ${MASK}`);
  expect(posted).not.toContain(BOT_TOKEN);
  const stored = await events.get('evt_s', 'alerts');
  // The reply is masked; the payload and the prompt are what the sender sent.
  expect(stored?.reply).toBe(`Alert: failed: 401 for token ${MASK}`);
});

const GITHUB_TOKEN = 'ghp_h9AgentTwoConfiguredToken0123456789';
let llm: LocalServer;
let script: unknown[] = [];
beforeAll(async () => {
  llm = await startLocalServer((_req, res) => sendJson(res, 200, script.shift()));
});
afterAll(async () => llm.close());

const usage = { prompt_tokens: 50, completion_tokens: 10 };
const call = (id: string, name: string, args: unknown) => ({ choices: [{ index: 0, finish_reason: 'tool_calls', message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] } }], usage });
const answer = (content: string) => ({ choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content } }], usage });

/** One code-review run of `payload` by the model over `llm`, delivered to Telegram; the codehost API at `hostUrl`. */
async function review(eventId: string, payload: Record<string, unknown>, hostUrl: string) {
  const subscriptions = new SqliteSubscriptionStore(t.store);
  await subscriptions.create({ name: 'review', events: [], skills: ['code-review'], deliver: ['messenger'], state: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', secret: 'x', prompt: 'Review {title}' });
  const message: QueueMessage = { v: 1, event_id: eventId, subscription: 'review', source: 'github', event: 'pull_request', action: 'opened', delivery_id: `d-${eventId}`, received_at: '2026-01-01T00:00:00Z', payload };
  const events = new SqliteEventLog(t.store);
  await events.putAll([{ event_id: eventId, subscription: 'review', status: 'queued', source: 'github', event: 'pull_request', delivery_id: message.delivery_id, received_at: message.received_at, updated_at: message.received_at, message }]);
  const delivery: Config['delivery'] = {
    timeout_ms: 2_000, codehost: { github: { token: GITHUB_TOKEN, api_url: hostUrl } },
    messenger: { provider: 'telegram', bot_token: BOT_TOKEN, chat_id: '-100', api_url: telegram.url },
  };
  const payloads = new FilePayloadStore(join(t.dir, 'payloads'));
  const agent: Agent = loopAgent(openAiProvider({ baseUrl: `${llm.url}/v1`, model: 'm' }), BUILTIN_TOOLS, delivery);
  const outcome = await processMessage(JSON.stringify(message), 1, {
    events, subscriptions, payloads, agent, skills: new SkillLibrary(undefined), targets: createDeliveryTargets(delivery),
    config: { agent: { provider: 'openai', model: 'm', timeout_ms: 5_000, max_steps: 4 }, delivery }, clock: { now: () => Date.now() }, logger: silentLogger, maxReceiveCount: 3,
  });
  expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
  const stored = await events.get(eventId, 'review');
  return { posted: (JSON.parse(telegram.requests[0]!.body) as { text: string }).text, stored, transcript: await loadTranscript(payloads, stored?.transcript_ref) };
}

test('a configured token quoted in a finding is masked in the posted list of findings, the record and the transcript', async () => {
  script = [
    call('c1', 'record_finding', { path: 'deploy.sh', line: 3, severity: 'critical', body: `Hard-coded GitHub token ${GITHUB_TOKEN}: revoke it and read it from the environment.` }),
    answer(`One critical problem: deploy.sh commits the token ${GITHUB_TOKEN}.`),
  ];
  const { posted, stored, transcript } = await review('evt_f', { title: 'add deploy script' }, 'http://127.0.0.1:9');
  expect(posted).toContain(`deploy.sh commits the token ${MASK}.`);
  expect(posted).toContain(`- **critical** \`deploy.sh\` line 3: Hard-coded GitHub token ${MASK}: revoke it`);
  expect(posted).not.toContain(GITHUB_TOKEN);
  expect(stored?.reply).not.toContain(GITHUB_TOKEN);
  // What `webhook event` shows: the transcript's reply (its findings too), its steps and tool inputs.
  expect(transcript?.reply).toContain(`deploy.sh commits the token ${MASK}.`);
  expect(transcript?.steps[0]?.tool_calls[0]?.input).toMatchObject({ body: expect.stringContaining(`token ${MASK}: revoke`) });
  expect(JSON.stringify(transcript)).not.toContain(GITHUB_TOKEN);
});

test("a configured token quoted in the code host's error is masked in the unread-diff note and the transcript", async () => {
  const host = await startLocalServer((_req, res) => sendJson(res, 401, { message: `Bad credentials: token ${GITHUB_TOKEN} has expired`, documentation_url: 'https://docs.github.com/rest' }));
  try {
    script = [call('c1', 'get_change_diff', {}), answer('I could not read the diff, so this is no review.')];
    const payload = { title: 'add deploy script', number: 7, pull_request: { number: 7, head: { sha: 'a'.repeat(40) } }, repository: { full_name: 'o/r', name: 'r', owner: { login: 'o' } } };
    const { posted, stored, transcript } = await review('evt_u', payload, host.url);
    expect(host.requests.length).toBeGreaterThan(0);
    expect(posted).toContain(`could not read this change's diff (get_change_diff failed: github answered 401: Bad credentials: token ${MASK} has expired)`);
    expect(posted).not.toContain(GITHUB_TOKEN);
    expect(stored?.reply).not.toContain(GITHUB_TOKEN);
    expect(transcript?.steps[0]?.tool_calls[0]).toMatchObject({ name: 'get_change_diff', ok: false, result: expect.stringContaining(`token ${MASK} has expired`) });
    expect(JSON.stringify(transcript)).not.toContain(GITHUB_TOKEN);
  } finally {
    await host.close();
  }
});
