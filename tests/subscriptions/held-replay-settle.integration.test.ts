/**
 * Hunt 11 D1: a replay held by a paused, debounced subscription is no part of a debounced
 * burst at `resume` ("Replays (`webhook replay`) are never debounced"). It kept the
 * original's subject key and the time of the replay as its arrival, so resume's settling
 * either superseded the newer event held while paused by the replay, or the replay by a
 * newer event. Through the lifecycle use cases on the local SQLite store, as the CLI runs them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newEventId } from '../../functions/core/ids';
import { pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import { replayEvent, replayRecord } from '../../functions/core/subscriptions/replay';
import type { EventRecord, EventStatus, QueueMessage } from '../../functions/core/types';
import { eventRecord } from '../../functions/core/worker/record';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { ManualClock } from '../support/recording-queue';

const SUBJECT = 'github:o/r#pull_request/9';
let dir: string;
let runtime: LocalRuntime;
const clock = new ManualClock(Date.parse('2026-11-24T10:00:00Z'));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookagent-held-replay-'));
  runtime = await openLocalRuntime(dir, { role: 'cli', clock });
});
afterAll(async () => {
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
});

const lifecycle = (): LifecycleDeps => ({ subscriptions: runtime.subscriptions, events: runtime.events, queue: runtime.queue, clock, leases: runtime.leases, release: runtime.release, payloads: runtime.payloads });

let n = 0;
/** A pull request event of the subject as ingest records it for a debounced subscription. */
async function arrive(subscription: string, sha: string, status: EventStatus): Promise<EventRecord> {
  clock.advance(1000);
  n += 1;
  const at = new Date(clock.now()).toISOString();
  const message: QueueMessage = {
    v: 1, event_id: newEventId(clock.now()), subscription, source: 'github', event: 'pull_request', action: 'synchronize', delivery_id: `d-${n}`,
    received_at: at, subject_key: SUBJECT, payload: { number: 9, pull_request: { head: { sha } } }, subscription_created_at: '2026-11-24T09:00:00.000Z',
  };
  const record = eventRecord(message, status, at);
  await runtime.events.putAll([record]);
  return record;
}

async function debounced(name: string): Promise<void> {
  await runtime.subscriptions.create({
    name, events: ['pull_request'], skills: [], deliver: ['log'], state: 'active', agent: 'none', debounce_seconds: 1,
    created_at: '2026-11-24T09:00:00.000Z', updated_at: '2026-11-24T09:00:00.000Z', secret: 's',
  });
}

const statusOf = async (record: EventRecord) => (await runtime.events.get(record.event_id, record.subscription))!;

test('a replay carries no debounce subject', async () => {
  const original = eventRecord({ v: 1, event_id: 'evt_x', subscription: 's', source: 'github', event: 'pull_request', delivery_id: 'd', received_at: '2026-11-24T10:00:00.000Z', subject_key: SUBJECT, payload: {} }, 'delivered', '2026-11-24T10:00:00.000Z');
  const copy = replayRecord(original, clock.now(), 'held');
  expect(copy.message.subject_key).toBeUndefined();
  expect(copy.message.replay_of).toBe('evt_x');
});

test('a replay held while paused does not supersede a newer event of the subject held after it arrived', async () => {
  await debounced('held-replay-a');
  const first = await arrive('held-replay-a', 'aaaaaaa', 'delivered');
  await pauseSubscription(lifecycle(), 'held-replay-a');
  const newer = await arrive('held-replay-a', 'bbbbbbb', 'held');
  clock.advance(1000);
  const { copies: [copy] } = await replayEvent(lifecycle(), first.event_id);
  expect(copy).toMatchObject({ status: 'held' });

  const result = await resumeSubscription(lifecycle(), 'held-replay-a');
  expect(result).toMatchObject({ kind: 'resumed', released: 2 });
  expect(await statusOf(newer)).toMatchObject({ status: 'queued' });
  expect((await statusOf(copy!)).status).toBe('queued');
  expect((await statusOf(newer)).superseded_by).toBeUndefined();
});

test('a newer event held while paused does not supersede a replay made before it', async () => {
  await debounced('held-replay-b');
  const first = await arrive('held-replay-b', 'ccccccc', 'delivered');
  await pauseSubscription(lifecycle(), 'held-replay-b');
  clock.advance(1000);
  const { copies: [copy] } = await replayEvent(lifecycle(), first.event_id);
  const newer = await arrive('held-replay-b', 'ddddddd', 'held');

  expect(await resumeSubscription(lifecycle(), 'held-replay-b')).toMatchObject({ kind: 'resumed', released: 2 });
  expect((await statusOf(copy!)).status).toBe('queued');
  expect((await statusOf(newer)).status).toBe('queued');
});

test('a replay copy held before replays dropped their subject key is released and supersedes nothing; the burst around it still settles', async () => {
  await debounced('held-replay-c');
  const first = await arrive('held-replay-c', 'eeeeeee', 'delivered');
  await pauseSubscription(lifecycle(), 'held-replay-c');
  const older = await arrive('held-replay-c', 'fffffff', 'held');
  const newer = await arrive('held-replay-c', '1111111', 'held');
  clock.advance(1000);
  // As replay.ts made it before: the original's message whole, subject key included.
  const legacy = eventRecord({ ...first.message, event_id: newEventId(clock.now()), received_at: new Date(clock.now()).toISOString(), replay_of: first.event_id }, 'held', new Date(clock.now()).toISOString());
  await runtime.events.putAll([legacy]);

  expect(await resumeSubscription(lifecycle(), 'held-replay-c')).toMatchObject({ kind: 'resumed', released: 2 });
  expect((await statusOf(legacy)).status).toBe('queued');
  expect(await statusOf(newer)).toMatchObject({ status: 'queued' });
  expect(await statusOf(older)).toMatchObject({ status: 'superseded', superseded_by: newer.event_id });
});
