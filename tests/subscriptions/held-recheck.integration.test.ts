/**
 * A resume checks each held event against the subscription as it is at the release: one
 * that `update` made it stop taking (events or payload filters changed while it was held)
 * ends `suppressed` with the reason and is not queued. Through the lifecycle use case on
 * the DynamoDB adapters (dynalite) with release claims, as the CLI runs it against AWS;
 * a payload kept apart (`payload_ref`) is read back for the filter check.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import { replayEvent } from '../../functions/core/subscriptions/replay';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { eventRecord } from '../../functions/core/worker/record';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock, RecordingQueue } from '../support/recording-queue';

let dynamo: TestDynamo;
let dir: string;
beforeAll(async () => {
  dynamo = await startDynalite();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-held-recheck-'));
});
afterAll(async () => {
  await dynamo.close();
  rmSync(dir, { recursive: true, force: true });
});

let counter = 0;
async function setup(events: string[], filters: string[] = []) {
  counter += 1;
  const name = `recheck${counter}`;
  const clock = new ManualClock(Date.parse('2026-11-24T10:00:00Z'));
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const log = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const queue = new RecordingQueue();
  const payloads = new FilePayloadStore(join(dir, name));
  const subscription: Subscription = { name, events, filters, skills: [], deliver: ['log'], state: 'active', created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z', secret: 's' };
  await subscriptions.create(subscription);
  const deps: LifecycleDeps = { subscriptions, events: log, queue, clock, payloads, leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock) };
  await pauseSubscription(deps, name);
  let n = 0;
  /** A held record as ingest writes it for the paused subscription. */
  const hold = async (event: string, action: string | undefined, payload: Record<string, unknown>, apart = false) => {
    n += 1;
    const id = `evt_${name}_${n}`;
    const message: QueueMessage = {
      v: 1, event_id: id, subscription: name, source: 'github', event, ...(action ? { action } : {}), delivery_id: `d-${id}`,
      received_at: new Date(clock.now() + n).toISOString(), subscription_created_at: subscription.created_at,
      ...(apart ? { payload_ref: await payloads.put(id, JSON.stringify(payload)) } : { payload }),
    };
    await log.putAll([eventRecord(message, 'held', message.received_at)]);
    return id;
  };
  /** As `webhook update` writes it: a change of events or filters is stamped `routing_changed_at`. */
  const update = async (changes: Partial<Subscription>) => {
    clock.advance(1_000);
    const current = await subscriptions.get(name);
    const at = new Date(clock.now()).toISOString();
    await subscriptions.put({ ...current!, ...changes, updated_at: at, ...(changes.events || changes.filters ? { routing_changed_at: at } : {}) });
  };
  return { name, deps, log, queue, hold, update, clock };
}

test('events and filters narrowed while held: only what the subscription takes now is queued; the rest ends suppressed with the reason', async () => {
  const s = await setup(['issues']);
  const kept = await s.hold('issues', 'opened', { action: 'opened', issue: { labels: [{ name: 'bug' }] } });
  const closed = await s.hold('issues', 'closed', { action: 'closed', issue: { labels: [{ name: 'bug' }] } });
  const docs = await s.hold('issues', 'opened', { action: 'opened', issue: { labels: [{ name: 'docs' }] } });
  // Large enough to be kept apart: its filter is checked on the payload read back.
  const apart = await s.hold('issues', 'opened', { action: 'opened', issue: { labels: [{ name: 'docs' }] }, padding: 'x'.repeat(1000) }, true);
  await s.update({ events: ['issues.opened'], filters: ['any(issue.labels[*].name == bug)'] });

  const result = await resumeSubscription(s.deps, s.name);
  expect(result).toEqual({ kind: 'resumed', released: 1, notTaken: 3 });
  expect(s.queue.sent.map((m) => m.event_id)).toEqual([kept]);
  expect((await s.log.get(kept, s.name))?.status).toBe('queued');
  const closedRecord = await s.log.get(closed, s.name);
  expect(closedRecord).toMatchObject({ status: 'suppressed' });
  expect(closedRecord?.warnings?.[0]).toContain("the subscription '" + s.name + "' was updated while the event was held and no longer takes it (event filters issues.opened do not match github:issues.closed)");
  for (const id of [docs, apart]) {
    const record = await s.log.get(id, s.name);
    expect(record?.status).toBe('suppressed');
    expect(record?.warnings?.[0]).toContain('filter "any(issue.labels[*].name == bug)" failed');
  }
  // Nothing left held: a second resume has nothing to do.
  expect(await resumeSubscription(s.deps, s.name)).toEqual({ kind: 'unchanged' });
});

test('a subscription resumed unchanged (or changed in ways that still take them) releases every held event', async () => {
  const s = await setup(['pull_request'], ['pull_request.draft == false']);
  const a = await s.hold('pull_request', 'opened', { action: 'opened', pull_request: { draft: false } });
  const b = await s.hold('pull_request', 'synchronize', { action: 'synchronize', pull_request: { draft: false } });
  // A new prompt and a wider event list still take both.
  await s.update({ prompt: 'Review {pull_request.title}', events: ['pull_request', 'issues'] });
  expect(await resumeSubscription(s.deps, s.name)).toEqual({ kind: 'resumed', released: 2 });
  expect(s.queue.sent.map((m) => m.event_id)).toEqual([a, b]);
});

test('a payload kept apart that can no longer be read is released on its event filter alone (never lost to the check)', async () => {
  const s = await setup(['issues']);
  const id = await s.hold('issues', 'opened', { action: 'opened', issue: { labels: [] } }, true);
  await s.update({ filters: ['exists issue.milestone'] });
  rmSync(join(dir, s.name), { recursive: true, force: true });
  expect(await resumeSubscription(s.deps, s.name)).toEqual({ kind: 'resumed', released: 1 });
  expect(s.queue.sent.map((m) => m.event_id)).toEqual([id]);
});

test('a replay held after the change is the subscription\'s as it is: released, though its event filters would not take the original', async () => {
  const s = await setup(['issues']);
  // An event that ran before the narrowing.
  const ran = await s.hold('issues', 'closed', { action: 'closed', issue: { labels: [] } });
  const record = await s.log.get(ran, s.name);
  await s.log.putAll([{ ...record!, status: 'delivered' }]);
  await s.update({ events: ['issues.opened'] });
  // Replayed on purpose after the change, while paused: held.
  s.clock.advance(1_000);
  const { copies } = await replayEvent(s.deps, ran);
  expect(copies.map((c) => c.status)).toEqual(['held']);
  s.clock.advance(1_000);
  expect(await resumeSubscription(s.deps, s.name)).toEqual({ kind: 'resumed', released: 1 });
  expect(s.queue.sent.map((m) => m.replay_of)).toEqual([ran]);
});

test('a subscription stored before routing_changed_at existed (none on it) releases every held event, as before', async () => {
  const s = await setup(['issues']);
  const held = await s.hold('issues', 'closed', { action: 'closed' });
  const current = await s.deps.subscriptions.get(s.name);
  await s.deps.subscriptions.put({ ...current!, events: ['issues.opened'] });
  expect(await resumeSubscription(s.deps, s.name)).toEqual({ kind: 'resumed', released: 1 });
  expect(s.queue.sent.map((m) => m.event_id)).toEqual([held]);
});
