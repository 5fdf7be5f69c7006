/**
 * A Slack post (bot token) in flight when the process dies is not posted again when the
 * message comes back: the worker tells the target that an earlier attempt may have posted
 * (the queue gave the message before, or the record kept a reply), the target finds the
 * post by its metadata, and the record says delivered with that post's ts. A first attempt
 * makes no search. Real worker, real SQLite store (a kill -9 leaves what was committed;
 * the next process opens the database again), a local Slack Web API.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent } from '../../functions/core/agent/agent';
import type { Config } from '../../functions/core/config/types';
import { DELIVERY_EVENT_TYPE } from '../../functions/core/delivery/slack-lookup';
import { createDeliveryTargets } from '../../functions/core/delivery/targets';
import type { Logger, LogFields } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage, Subscription } from '../../functions/core/types';
import { processMessage } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import type { StoreDb } from '../../functions/local/sqlite/db';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { SqliteSubscriptionStore } from '../../functions/local/sqlite/subscriptions';
import { Killed } from '../support/crash';
import { startFakeSlack, type FakeSlack } from '../support/fake-slack';
import { tempStore, type TestStore } from '../support/local-store';

let slack: FakeSlack;
let t: TestStore;
const warnings: Array<{ message: string; fields?: LogFields }> = [];
const logger: Logger = { debug() {}, info() {}, warn: (message, fields) => void warnings.push({ message, fields }), error() {}, child: (fields) => ({ ...logger, warn: (m, f) => logger.warn(m, { ...fields, ...f }), child: logger.child }) };

beforeAll(async () => {
  slack = await startFakeSlack();
});
afterAll(() => slack.close());
beforeEach(() => {
  slack.reset();
  warnings.length = 0;
  t = tempStore();
});
afterEach(() => t.close());

const delivery = (): Config['delivery'] => ({ timeout_ms: 2_000, codehost: {}, teamchat: { provider: 'slack', bot_token: slack.token, channel: 'C0OPS', api_url: slack.apiUrl } });

function queued(eventId: string): EventRecord {
  const message: QueueMessage = { v: 1, event_id: eventId, subscription: 'alerts', source: 'custom', event: 'alert', delivery_id: `d-${eventId}`, received_at: new Date().toISOString(), payload: { alert: `disk full ${eventId}` } };
  return { event_id: eventId, subscription: 'alerts', status: 'queued', source: 'custom', event: 'alert', delivery_id: message.delivery_id, received_at: message.received_at, updated_at: message.received_at, message, attempts: 0 };
}

/** One process's worker over `store` (a process opens the database, runs the message, and may die). */
async function worker(store: StoreDb) {
  const subscriptions = new SqliteSubscriptionStore(store);
  if (!(await subscriptions.get('alerts'))) {
    const subscription: Subscription = { name: 'alerts', events: [], skills: [], deliver: ['teamchat'], state: 'active', created_at: '2026-01-01T00:00:00Z', updated_at: '2026-01-01T00:00:00Z', secret: 'x', agent: 'none', prompt: 'Alert: {alert}' };
    await subscriptions.create(subscription);
  }
  const events = new SqliteEventLog(store);
  const config = delivery();
  const run = (record: EventRecord, receiveCount: number) => processMessage(JSON.stringify(record.message), receiveCount, {
    events, subscriptions, payloads: new FilePayloadStore(join(t.dir, 'payloads')), agent: echoAgent,
    skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'hookagent-skills-'))), targets: createDeliveryTargets(config),
    config: { agent: { provider: 'echo', timeout_ms: 5_000, max_steps: 2 }, delivery: config }, clock: { now: () => Date.now() }, logger, maxReceiveCount: 5,
  });
  return { events, run };
}

/** The process dies (kill -9) the moment Slack has the post: no write after that reaches the store. */
function dieWhenSlackHasIt(store: StoreDb): void {
  const write = store.write.bind(store);
  store.write = (<T>(run: () => T, options?: { durable?: boolean; now?: boolean }): Promise<T> =>
    (slack.posts.length > 0 ? Promise.reject(new Killed()) : write(run, options))) as StoreDb['write'];
}

/** Runs the message in a process that dies as soon as its post reaches Slack. */
async function firstProcessDiesAfterPosting(record: EventRecord): Promise<void> {
  const first = await worker(t.store);
  await first.events.putAll([record]);
  dieWhenSlackHasIt(t.store);
  await expect(first.run(record, 1)).rejects.toThrow(Killed);
  expect(slack.posts).toHaveLength(1);
}

describe('Slack with a bot token, through the worker', () => {
  test('a first attempt posts once with its metadata, reads no history, and records the ts', async () => {
    const { events, run } = await worker(t.store);
    const record = queued('evt_w1');
    await events.putAll([record]);
    expect(await run(record, 1)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(slack.historyCalls).toEqual([]);
    expect(slack.posts).toHaveLength(1);
    expect(slack.posts[0]!.body.metadata).toEqual({ event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: 'evt_w1', subscription: 'alerts', target: 'teamchat' } });
    expect(await events.get('evt_w1', 'alerts')).toMatchObject({ status: 'delivered', targets: { teamchat: { status: 'delivered', detail: `channel C0OPS ts ${slack.posts[0]!.message.ts}` } } });
  });

  test('killed once Slack had the post: the message received again is not posted again, and is recorded delivered with the post\'s ts', async () => {
    const record = queued('evt_w2');
    await firstProcessDiesAfterPosting(record);
    const next = await worker(t.reopen());
    expect(await next.run(record, 2)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(slack.posts).toHaveLength(1);
    expect(slack.historyCalls).toHaveLength(1);
    const stored = await next.events.get('evt_w2', 'alerts');
    expect(stored).toMatchObject({ status: 'delivered', targets: { teamchat: { status: 'delivered', detail: expect.stringContaining(`channel C0OPS ts ${slack.posts[0]!.message.ts}`) } } });
    expect(warnings).toEqual([]);
  });

  test('the record alone tells (a reply kept, receive count 1, as a handed-over message after a restart): still found, not posted again', async () => {
    const record = queued('evt_w3');
    await firstProcessDiesAfterPosting(record);
    const next = await worker(t.reopen());
    expect((await next.events.get('evt_w3', 'alerts'))?.reply).toBeDefined();
    expect(await next.run(record, 1)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(slack.posts).toHaveLength(1);
  });

  test('killed before the post reached Slack: the retry reads the history, finds nothing, and posts once', async () => {
    const record = queued('evt_w4');
    const first = await worker(t.store);
    await first.events.putAll([record]);
    // The post is read and dropped (never kept) as the process dies with it.
    slack.script['chat.postMessage'].push({ kind: 'drop' });
    const write = t.store.write.bind(t.store);
    let dead = false;
    slack.server.requests.length = 0;
    t.store.write = (<T>(run: () => T, options?: { durable?: boolean; now?: boolean }): Promise<T> => {
      dead ||= slack.server.requests.some((r) => r.url === '/api/chat.postMessage');
      return dead ? Promise.reject(new Killed()) : write(run, options);
    }) as StoreDb['write'];
    await expect(first.run(record, 1)).rejects.toThrow(Killed);
    expect(slack.posts).toHaveLength(0);
    const next = await worker(t.reopen());
    expect(await next.run(record, 2)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(slack.historyCalls).toHaveLength(1);
    expect(slack.posts).toHaveLength(1);
    expect(await next.events.get('evt_w4', 'alerts')).toMatchObject({ status: 'delivered', targets: { teamchat: { detail: `channel C0OPS ts ${slack.posts[0]!.message.ts}` } } });
  });

  test('without channels:history the retry posts again as before, and the worker log says which scope prevents it', async () => {
    const record = queued('evt_w5');
    await firstProcessDiesAfterPosting(record);
    slack.scopes.delete('channels:history');
    const next = await worker(t.reopen());
    expect(await next.run(record, 2)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(slack.posts).toHaveLength(2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ message: 'teamchat_earlier_post_unknown', fields: { event_id: 'evt_w5', subscription: 'alerts', reason: expect.stringContaining('missing_scope: the bot token lacks channels:history') } });
  });

  test('the answer lost on the wire (the post kept, the connection reset): the queue\'s retry finds it instead of posting twice', async () => {
    const { events, run } = await worker(t.store);
    const record = queued('evt_w6');
    await events.putAll([record]);
    slack.script['chat.postMessage'].push({ kind: 'keep_then_reset' });
    expect(await run(record, 1)).toMatchObject({ kind: 'retry' });
    expect(await run(record, 2)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(slack.posts).toHaveLength(1);
    expect(await events.get('evt_w6', 'alerts')).toMatchObject({ status: 'delivered', targets: { teamchat: { status: 'delivered', detail: expect.stringContaining(slack.posts[0]!.message.ts) } } });
  });
});
