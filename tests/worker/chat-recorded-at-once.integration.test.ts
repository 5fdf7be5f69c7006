/**
 * A chat post (Slack, Telegram) carries nothing a later attempt could find it by, so the
 * worker records its delivery the moment the chat answers, committed at once in the local
 * store instead of with the next group commit (which waits for the fsync in progress, tens
 * of ms under load): a kill -9 in that wait posted it again (fault hunt, D5). Over a real
 * SQLite store, a local Telegram Bot API server and a second connection, as the CLI has.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent } from '../../functions/core/agent/agent';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import { silentLogger } from '../../functions/core/log';
import type { EventLog, UpdateOptions } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage, Subscription, TargetKind } from '../../functions/core/types';
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

const queued = (eventId: string, subscription: string): EventRecord => {
  const message: QueueMessage = { v: 1, event_id: eventId, subscription, source: 'custom', event: 'alert', delivery_id: `d-${eventId}`, received_at: '2026-01-01T00:00:00Z', payload: { alert: 'disk full' } };
  return { event_id: eventId, subscription, status: 'queued', source: 'custom', event: 'alert', delivery_id: message.delivery_id, received_at: message.received_at, updated_at: message.received_at, message };
};

/** The stored status of a record, read by another connection (what survives this process). */
function statusSeenByOther(other: ReturnType<TestStore['reopen']>, eventId: string): string | undefined {
  return other.db.prepare('SELECT status FROM events WHERE event_id = ?').pluck().get(eventId) as string | undefined;
}

describe('a write that must not wait (the store)', () => {
  test('with an fsync in flight, an immediate update is committed before update() returns; a plain one waits', async () => {
    const log = new SqliteEventLog(t.store);
    const other = t.reopen();
    await log.putAll([queued('e1', 's'), queued('e2', 's')]);
    // A durable write starts an fsync; its commit has happened when this resolves, the fsync has not.
    await Promise.all([log.putAll([queued('e3', 's')]), t.store.committed()]);
    const plain = log.update('e1', 's', { status: 'processing' });
    expect(statusSeenByOther(other, 'e1')).toBe('queued');
    const immediate = log.update('e2', 's', { status: 'processing' }, { immediately: true });
    expect(statusSeenByOther(other, 'e2')).toBe('processing');
    await Promise.all([plain, immediate]);
    expect(statusSeenByOther(other, 'e1')).toBe('processing');
  });
});

describe('the worker records a chat post at once (local store)', () => {
  /** The real event log, each update's options noted with what another connection saw right after the call. */
  function observed(inner: EventLog, other: ReturnType<TestStore['reopen']>) {
    const updates: Array<{ changes: Partial<EventRecord>; options?: UpdateOptions; committedAtCall: boolean }> = [];
    const log: EventLog = Object.create(inner) as EventLog;
    log.update = (eventId, subscription, changes, options) => {
      const done = inner.update(eventId, subscription, changes, options);
      const targets = other.db.prepare('SELECT data FROM events WHERE event_id = ?').pluck().get(eventId) as string;
      updates.push({ changes, options, committedAtCall: JSON.stringify((JSON.parse(targets) as EventRecord).targets ?? {}) === JSON.stringify(changes.targets ?? null) });
      return done;
    };
    return { log, updates };
  }

  async function run(deliver: TargetKind[]) {
    const subscriptions = new SqliteSubscriptionStore(t.store);
    const subscription: Subscription = { name: 'alerts', events: [], skills: [], deliver, state: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', secret: 'x', agent: 'none', prompt: 'Alert: {alert}' };
    await subscriptions.create(subscription);
    const record = queued('evt_chat', 'alerts');
    const inner = new SqliteEventLog(t.store);
    await inner.putAll([record]);
    const { log, updates } = observed(inner, t.reopen());
    const delivery = { timeout_ms: 2_000, codehost: {}, messenger: { provider: 'telegram' as const, bot_token: '42:test', chat_id: '-100', api_url: telegram.url } };
    const outcome = await processMessage(JSON.stringify(record.message), 1, {
      events: log, subscriptions, payloads: new FilePayloadStore(join(t.dir, 'payloads')), agent: echoAgent,
      skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'hookagent-skills-'))), targets: createDeliveryTargets(delivery),
      config: { agent: { provider: 'echo', timeout_ms: 5_000, max_steps: 2 }, delivery }, clock: { now: () => Date.now() }, logger: silentLogger, maxReceiveCount: 3,
    });
    return { outcome, updates, stored: await inner.get('evt_chat', 'alerts') };
  }

  test('a lone Telegram target: its delivery is recorded immediately, committed when the call returns, before the final status', async () => {
    const { outcome, updates, stored } = await run(['messenger']);
    expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
    expect(telegram.requests).toHaveLength(1);
    const at = updates.findIndex((u) => u.changes.targets?.messenger?.status === 'delivered');
    expect(at).toBeGreaterThanOrEqual(0);
    expect(updates[at]).toMatchObject({ options: { immediately: true }, committedAtCall: true });
    expect(updates[at]!.changes.status).toBeUndefined();
    expect(updates.findIndex((u) => u.changes.status === 'delivered')).toBeGreaterThan(at);
    expect(stored).toMatchObject({ status: 'delivered', targets: { messenger: { status: 'delivered' } } });
  });

  test('Telegram beside the log target: both outcomes recorded immediately, as they land', async () => {
    const { outcome, updates } = await run(['messenger', 'log']);
    expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
    const early = updates.filter((u) => u.changes.targets && u.changes.status === undefined);
    expect(early).toHaveLength(2);
    for (const u of early) expect(u).toMatchObject({ options: { immediately: true }, committedAtCall: true });
  });

  test('a lone log target costs no extra write: its outcome comes with the final status', async () => {
    const { outcome, updates, stored } = await run(['log']);
    expect(outcome).toEqual({ kind: 'ack', status: 'delivered' });
    expect(updates.filter((u) => u.options?.immediately)).toEqual([]);
    expect(updates.filter((u) => u.changes.targets)).toHaveLength(1);
    expect(stored).toMatchObject({ status: 'delivered', targets: { log: { status: 'delivered' } } });
  });
});
