/**
 * A resume that ends the later events of a held debounced burst (`update` made the
 * subscription stop taking them) and releases an earlier one points the subject at the one
 * it releases: the worker's gate lets it run, and supersedes an earlier event still waiting
 * in the queue. Only while the pointer names an ended event: one accepted since stays the
 * latest. Through the lifecycle use case on the local store (its atomic release) and on the
 * DynamoDB adapters (dynalite, release claims), as the CLI runs them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDebounceStore } from '../../functions/aws/debounce-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import type { DebounceStore } from '../../functions/core/ports';
import { pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { DEBOUNCE_TTL_SECONDS, debounceGate } from '../../functions/core/worker/gates';
import { eventRecord } from '../../functions/core/worker/record';
import { openLocalRuntime } from '../../functions/local/compose';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock, RecordingQueue } from '../support/recording-queue';

let dynamo: TestDynamo;
let dir: string;
const closers: Array<() => Promise<void>> = [];
beforeAll(async () => {
  dynamo = await startDynalite();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-held13-'));
});
afterAll(async () => {
  for (const close of closers) await close();
  await dynamo.close();
  rmSync(dir, { recursive: true, force: true });
});

interface Backend { deps: LifecycleDeps; debounce: DebounceStore; sent: () => string[] }

const clock = new ManualClock(Date.parse('2026-11-24T10:00:00Z'));
const backends: Record<string, (name: string) => Promise<Backend>> = {
  local: async (name) => {
    const runtime = await openLocalRuntime(join(dir, name), { role: 'cli', clock });
    closers.push(() => runtime.close());
    const deps: LifecycleDeps = { subscriptions: runtime.subscriptions, events: runtime.events, queue: runtime.queue, clock, leases: runtime.leases, release: runtime.release };
    return { deps, debounce: runtime.debounce, sent: () => [] };
  },
  dynamodb: async () => {
    const queue = new RecordingQueue();
    const debounce = new DynamoDebounceStore(dynamo.client, dynamo.tables.dedup, clock);
    const deps: LifecycleDeps = {
      subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions), events: new DynamoEventLog(dynamo.client, dynamo.tables.events),
      queue, clock, leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock), debounce,
    };
    return { deps, debounce, sent: () => queue.sent.map((m) => m.event_id) };
  },
};

let counter = 0;
async function setup(backend: string) {
  counter += 1;
  const name = `held13-${backend}-${counter}`;
  const b = await backends[backend]!(name);
  const subscription: Subscription = {
    name, events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', debounce_seconds: 5,
    created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z', secret: 's',
  };
  await b.deps.subscriptions.create(subscription);
  const subjectKey = 'github:o/r#pr:7';
  let n = 0;
  const message = (action: string): QueueMessage => {
    n += 1;
    return {
      v: 1, event_id: `evt_${name}_${n}`, subscription: name, source: 'github', event: 'pull_request', action, delivery_id: `d-${name}-${n}`,
      received_at: new Date(clock.now() + n).toISOString(), subscription_created_at: subscription.created_at, subject_key: subjectKey,
      payload: { action, number: 7, repository: { full_name: 'o/r' } },
    };
  };
  /** As ingest writes an event it holds for the paused debounced subscription: its record, then it as its subject's latest. */
  const hold = async (action: string) => {
    const m = message(action);
    await b.deps.events.putAll([eventRecord(m, 'held', m.received_at)]);
    await b.debounce.setLatest(name, subjectKey, m.event_id, DEBOUNCE_TTL_SECONDS);
    return m;
  };
  /** `webhook update --filter`, as it stamps a change of routing. */
  const filter = async (expression: string) => {
    clock.advance(1_000);
    const current = await b.deps.subscriptions.get(name);
    const at = new Date(clock.now()).toISOString();
    await b.deps.subscriptions.put({ ...current!, filters: [expression], updated_at: at, routing_changed_at: at });
  };
  const gate = async (m: QueueMessage) => debounceGate(m, (await b.deps.subscriptions.get(name))!, b.debounce);
  const status = async (m: QueueMessage) => (await b.deps.events.get(m.event_id, name))?.status;
  return { ...b, name, subjectKey, message, hold, filter, gate, status };
}

describe.each(Object.keys(backends))('%s', (backend) => {
  test('the held event released runs: the subject no longer names the later one the update refused', async () => {
    const s = await setup(backend);
    // Accepted before the pause, still waiting out its window in the queue.
    const queued = s.message('opened');
    await s.debounce.setLatest(s.name, s.subjectKey, queued.event_id, DEBOUNCE_TTL_SECONDS);
    await pauseSubscription(s.deps, s.name);
    const a = await s.hold('labeled');
    const b = await s.hold('synchronize');
    await s.filter('action == labeled');

    expect(await resumeSubscription(s.deps, s.name)).toEqual({ kind: 'resumed', released: 1, notTaken: 1 });
    expect(await s.status(a)).toBe('queued');
    expect(await s.status(b)).toBe('suppressed');
    if (backend === 'dynamodb') expect(s.sent()).toEqual([a.event_id]);
    expect(await s.debounce.getLatest(s.name, s.subjectKey)).toBe(a.event_id);
    expect(await s.gate(a)).toBeUndefined();
    // The earlier queued event is superseded by the released one, as without the pause.
    expect(await s.gate(queued)).toEqual({ status: 'superseded', superseded_by: a.event_id });
  });

  test('an event recorded as the latest since the hold keeps the pointer', async () => {
    const s = await setup(backend);
    await pauseSubscription(s.deps, s.name);
    const a = await s.hold('labeled');
    await s.hold('synchronize');
    await s.filter('action == labeled');
    // Accepted meanwhile (the pointer names neither held event): the release must not move it.
    const later = s.message('labeled');
    await s.debounce.setLatest(s.name, s.subjectKey, later.event_id, DEBOUNCE_TTL_SECONDS);

    expect(await resumeSubscription(s.deps, s.name)).toEqual({ kind: 'resumed', released: 1, notTaken: 1 });
    expect(await s.debounce.getLatest(s.name, s.subjectKey)).toBe(later.event_id);
    expect(await s.gate(a)).toEqual({ status: 'superseded', superseded_by: later.event_id });
  });
});
