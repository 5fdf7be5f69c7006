/**
 * `webhook delete` racing the worker that holds a queued event of a paused subscription
 * (hunt 13): the worker read the subscription (paused), `delete` ran (subscription removed,
 * none of its records held yet), then the worker wrote the record `held`. Its second read
 * must see the delete: the record ends `failed` and the message reaches the dead letters,
 * instead of being acknowledged with the record held for ever. Also when a subscription was
 * created again under the name in between (another one: it does not take the event).
 * The real SQLite runtime, the worker run as serve runs it (processMessage, then the
 * consumer's delete on `ack`); the delete runs at a fixed point, inside the store's read.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeliveryTarget } from '../../functions/core/delivery/target';
import { createIngest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import type { SubscriptionStore } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import { deleteSubscription } from '../../functions/core/subscriptions/held-settle';
import { pauseSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { Subscription } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { ManualClock } from '../support/recording-queue';

const WORKER_CONFIG = { agent: { provider: 'openai', model: 'm', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } } as WorkerDeps['config'];
const SECRET = 'whsec_delete_race';
const DELETED = "subscription_not_found: The subscription 'a' was deleted while the event was held";
const dirs: string[] = [];
const runtimes: LocalRuntime[] = [];
afterAll(async () => {
  for (const r of runtimes) await r.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const temp = (prefix: string) => {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  dirs.push(dir);
  return dir;
};

const subscription = (createdAt: string): Subscription => ({
  name: 'a', events: [], skills: [], deliver: ['log'], state: 'active', agent: 'none', prompt: 'Event {n}', created_at: createdAt, updated_at: createdAt, secret: SECRET,
});

/**
 * An event of 'a' queued, then 'a' paused; the worker receives the message and `between`
 * runs right after its first read of the subscription (`atRead` 1: before its second).
 */
async function raceWorker(between: (r: LocalRuntime) => Promise<void>, atRead = 0) {
  const clock = new ManualClock(Date.now());
  const r = await openLocalRuntime(temp('hookagent-deleteheld13-'), { role: 'serve', clock });
  runtimes.push(r);
  await r.subscriptions.create(subscription('2026-01-01T00:00:00.000Z'));
  const delivered: string[] = [];
  const target: DeliveryTarget = { kind: 'log', deliver: async (request) => {
    delivered.push(request.reply);
    return { status: 'delivered', detail: 'recorded' };
  } };
  const ingest = createIngest(r.ingestDeps({ webhooks: { max_payload_size: 65536 } }, silentLogger));
  const reply = await ingest({
    method: 'POST', path: '/webhooks/custom/a', isBase64Encoded: false, sourceIp: '127.0.0.1',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json', 'x-request-id': 'delete-race-1' }, body: JSON.stringify({ n: 1 }),
  });
  expect(reply.status).toBe(202);
  const eventId = (reply.body as { event_id: string }).event_id;
  const lifecycle: LifecycleDeps = { subscriptions: r.subscriptions, events: r.events, queue: r.queue, clock, leases: r.leases, release: r.release, payloads: r.payloads };
  await pauseSubscription(lifecycle, 'a');

  let reads = 0;
  const racing: SubscriptionStore = Object.assign(Object.create(r.subscriptions) as SubscriptionStore, {
    get: async (name: string) => {
      if (reads === atRead && atRead > 0) await between(r);
      const found = await r.subscriptions.get(name);
      if (reads++ === atRead && atRead === 0) await between(r);
      return found;
    },
  });
  const deps: WorkerDeps = {
    ...r.workerDeps({ agent: { run: () => Promise.reject(new Error('no agent here')) }, skills: new SkillLibrary(temp('hookagent-deleteheld13-skills-')), targets: { log: target }, config: WORKER_CONFIG, logger: silentLogger }),
    subscriptions: racing,
  };
  const [m] = await r.queue.receive(10);
  const outcome = await processMessage(m!.body, m!.receiveCount, deps, m!.message);
  if (outcome.kind === 'ack') await r.queue.delete(m!.receiptHandle);
  return { r, eventId, outcome, delivered, record: await r.events.get(eventId, 'a'), letters: await r.queue.deadLetters(), queued: await r.queue.size() };
}

test('delete lands between the worker\'s read of the paused subscription and its held write: the event ends failed and is dead-lettered', async () => {
  let ended = -1;
  const t = await raceWorker(async (r) => {
    ended = await deleteSubscription({ subscriptions: r.subscriptions, events: r.events }, 'a', new Date().toISOString());
  });
  // `delete` found nothing held yet: the worker's second read ends it.
  expect(ended).toBe(0);
  expect(t.outcome).toEqual({ kind: 'ack', status: 'failed' });
  expect(t.record?.status).toBe('failed');
  expect(`${t.record?.error?.code}: ${t.record?.error?.message}`).toBe(DELETED);
  expect(t.record?.dead_lettered_at).toBeDefined();
  expect(t.letters.map((l) => l.reason)).toEqual([DELETED]);
  expect(t.queued).toBe(0);
  expect(t.delivered).toEqual([]);
});

test('deleted and created again (active) between the two reads: the new subscription does not take the event; it ends failed, dead-lettered', async () => {
  const t = await raceWorker(async (r) => {
    await deleteSubscription({ subscriptions: r.subscriptions, events: r.events }, 'a', new Date().toISOString());
    await r.subscriptions.create(subscription('2026-01-02T00:00:00.000Z'));
  });
  expect(t.outcome).toEqual({ kind: 'ack', status: 'failed' });
  expect(t.record?.status).toBe('failed');
  expect(`${t.record?.error?.code}: ${t.record?.error?.message}`).toBe(DELETED);
  expect(t.letters).toHaveLength(1);
  expect(t.delivered).toEqual([]);
});

test('delete lands after the held write, before the second read: delete ends it, and the worker still dead-letters the message once', async () => {
  let ended = -1;
  const t = await raceWorker(async (r) => {
    ended = await deleteSubscription({ subscriptions: r.subscriptions, events: r.events }, 'a', new Date().toISOString());
  }, 1);
  expect(ended).toBe(1);
  expect(t.outcome).toEqual({ kind: 'ack', status: 'failed' });
  expect(t.record?.status).toBe('failed');
  expect(`${t.record?.error?.code}: ${t.record?.error?.message}`).toBe(DELETED);
  expect(t.letters.map((l) => l.reason)).toEqual([DELETED]);
});

test('still paused at the second read: the event stays held for resume, acknowledged (unchanged)', async () => {
  const t = await raceWorker(async () => undefined);
  expect(t.outcome).toEqual({ kind: 'ack', status: 'held' });
  expect(t.record?.status).toBe('held');
  expect(t.letters).toEqual([]);
});
