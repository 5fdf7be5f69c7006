/**
 * A chat post that landed while its outcome could not be written (the disk full, the
 * database locked) is not posted again when the message is tried again in the same process
 * (fault hunt 7, H4: Slack and Telegram answered 200, the write failed with SQLITE_FULL,
 * the worker's retry a second later found nothing delivered on record and posted again).
 * Over a real SQLite store and a local Telegram Bot API server; the event log refuses the
 * target's write once, as the store does when the disk is full.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent } from '../../functions/core/agent/agent';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { HookError } from '../../functions/core/errors';
import { silentLogger } from '../../functions/core/log';
import type { EventLog } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage, Subscription } from '../../functions/core/types';
import { processMessage } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { SqliteSubscriptionStore } from '../../functions/local/sqlite/subscriptions';
import type { TestStore } from '../support/local-store';
import type { LocalServer } from '../support/local-http';
import { useStoreAndTelegram } from '../support/store-telegram';

let t: TestStore;
let telegram: LocalServer;
useStoreAndTelegram((store, server) => {
  t = store;
  telegram = server;
});

/** The real event log, except that the first write of a delivered target fails as a full disk makes it. */
function fullOnce(inner: EventLog): { log: EventLog; refused: () => number } {
  let refused = 0;
  const log: EventLog = Object.create(inner) as EventLog;
  log.update = (eventId, subscription, changes, options) => {
    if (refused === 0 && Object.values(changes.targets ?? {}).some((o) => o?.status === 'delivered')) {
      refused += 1;
      return Promise.reject(new HookError('unavailable', 'The local store is unavailable: SQLITE_FULL: database or disk is full', { retryable: true }));
    }
    return inner.update(eventId, subscription, changes, options);
  };
  return { log, refused: () => refused };
}

test('a Telegram post whose outcome could not be written is not posted again by the next attempt; the record ends delivered', async () => {
  const subscriptions = new SqliteSubscriptionStore(t.store);
  const subscription: Subscription = { name: 'alerts', events: [], skills: [], deliver: ['messenger'], state: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', secret: 'x', agent: 'none', prompt: 'Alert: {alert}' };
  await subscriptions.create(subscription);
  const message: QueueMessage = { v: 1, event_id: 'evt_full', subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: 'd-full', received_at: '2026-01-01T00:00:00Z', payload: { alert: 'disk full' } };
  const record: EventRecord = { event_id: 'evt_full', subscription: 'alerts', status: 'queued', source: 'custom', event: 'alert', delivery_id: 'd-full', received_at: message.received_at, updated_at: message.received_at, message };
  const inner = new SqliteEventLog(t.store);
  await inner.putAll([record]);
  const { log, refused } = fullOnce(inner);
  const delivery = { timeout_ms: 2_000, codehost: {}, messenger: { provider: 'telegram' as const, bot_token: '42:test', chat_id: '-100', api_url: telegram.url } };
  const deps = {
    events: log, subscriptions, payloads: new FilePayloadStore(join(t.dir, 'payloads')), agent: echoAgent,
    skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'hookagent-skills-'))), targets: createDeliveryTargets(delivery),
    config: { agent: { provider: 'echo' as const, timeout_ms: 5_000, max_steps: 2 }, delivery }, clock: { now: () => Date.now() }, logger: silentLogger, maxReceiveCount: 5,
  };

  // The first attempt posts, then cannot record it: the store's failure ends the attempt (the batch retries it).
  await expect(processMessage(JSON.stringify(message), 1, deps)).rejects.toMatchObject({ code: 'unavailable' });
  expect(refused()).toBe(1);
  expect(telegram.requests).toHaveLength(1);
  expect((await inner.get('evt_full', 'alerts'))?.targets?.messenger).toBeUndefined();

  // The retry, once the store writes again: nothing posted again, the delivery on record.
  expect(await processMessage(JSON.stringify(message), 2, deps)).toEqual({ kind: 'ack', status: 'delivered' });
  expect(telegram.requests).toHaveLength(1);
  expect(await inner.get('evt_full', 'alerts')).toMatchObject({ status: 'delivered', targets: { messenger: { status: 'delivered' } } });

  // Once on record, a later copy of the message is a finished record: still one post.
  expect(await processMessage(JSON.stringify(message), 3, deps)).toMatchObject({ kind: 'ack' });
  expect(telegram.requests).toHaveLength(1);
});
