/**
 * A configured secret never leaves in an agent's reply (untrusted-input hunt 7: a tool's
 * error text reaches the comment through the unread-diff note, and a model can repeat
 * what a tool echoed): the worker masks every secret value of the configuration in the
 * reply before it is stored or delivered. Over a real SQLite store and a local Telegram
 * Bot API server; the echo agent repeats a prompt that quotes the payload.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent } from '../../functions/core/agent/agent';
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
import type { LocalServer } from '../support/local-http';
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
