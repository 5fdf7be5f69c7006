/**
 * Hunt 9 (local) defect 1: a resume that releases a record while the worker that held it
 * still has its message in flight must leave the record a live message. The worker
 * received a message queued before `pause`, wrote the record `held` and acknowledged it;
 * `resume` ran between that write and the consumer's delete. The release found the key's
 * message in flight and added nothing, then the delete removed it: the record stayed
 * `queued` with nothing in the queue. Steps run in a fixed order on one SQLite store, the
 * worker as serve runs it (processMessage, then the consumer's delete on `ack`).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { DeliveryTarget } from '../../functions/core/delivery/target';
import { createIngest, type InboundRequest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import type { SubscriptionStore } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import { pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { LOCAL_MAX_RECEIVE_COUNT, openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import type { ReceivedMessage } from '../../functions/local/sqlite/queue';
import { ManualClock } from '../support/recording-queue';
import { eventually } from '../support/serve';

const WORKER_CONFIG = { agent: { provider: 'openai', model: 'm', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } } as WorkerDeps['config'];
const SECRET = 'whsec_release';

const dirs: string[] = [];
const runtimes: LocalRuntime[] = [];
afterAll(async () => {
  for (const r of runtimes) await r.close();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

interface Setup {
  r: LocalRuntime;
  lifecycle: LifecycleDeps;
  /** The texts the `log` target was given, in order. */
  delivered: string[];
  worker(subscriptions?: SubscriptionStore): WorkerDeps;
  accept(n: number): Promise<string>;
  status(eventId: string): Promise<string | undefined>;
  /** processMessage, then the consumer's delete when the outcome is `ack`. */
  handle(m: ReceivedMessage, deps?: WorkerDeps): Promise<string>;
}

async function setup(): Promise<Setup> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-release-'));
  dirs.push(dir);
  const clock = new ManualClock(Date.now());
  const r = await openLocalRuntime(dir, { role: 'serve', clock });
  runtimes.push(r);
  await r.subscriptions.create({ name: 'a', events: [], skills: [], deliver: ['log'], state: 'active', agent: 'none', prompt: 'Event {n}', created_at: '', updated_at: '', secret: SECRET });
  const delivered: string[] = [];
  const target: DeliveryTarget = { kind: 'log', deliver: async (request) => {
    delivered.push(request.reply);
    return { status: 'delivered', detail: 'recorded' };
  } };
  const skillsDir = mkdtempSync(join(tmpdir(), 'hookagent-release-skills-'));
  dirs.push(skillsDir);
  const skills = new SkillLibrary(skillsDir);
  const worker = (subscriptions?: SubscriptionStore): WorkerDeps => {
    const deps = r.workerDeps({ agent: { run: () => Promise.reject(new Error('no agent here')) }, skills, targets: { log: target }, config: WORKER_CONFIG, logger: silentLogger });
    return subscriptions ? { ...deps, subscriptions } : deps;
  };
  const ingest = createIngest(r.ingestDeps({ webhooks: { max_payload_size: 65536 } }, silentLogger));
  const accept = async (n: number): Promise<string> => {
    const request: InboundRequest = {
      method: 'POST', path: '/webhooks/custom/a', isBase64Encoded: false, sourceIp: '127.0.0.1',
      headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json', 'x-request-id': `release-${n}` }, body: JSON.stringify({ n }),
    };
    const reply = await ingest(request);
    expect(reply.status).toBe(202);
    return (reply.body as { event_id: string }).event_id;
  };
  const handle = async (m: ReceivedMessage, deps = worker()): Promise<string> => {
    const outcome = await processMessage(m.body, m.receiveCount, deps, m.message);
    if (outcome.kind === 'ack') await r.queue.delete(m.receiptHandle);
    return outcome.kind === 'ack' ? outcome.status : `retry: ${outcome.reason}`;
  };
  const lifecycle: LifecycleDeps = { subscriptions: r.subscriptions, events: r.events, queue: r.queue, clock, leases: r.leases, release: r.release, payloads: r.payloads };
  const status = async (eventId: string) => (await r.events.get(eventId, 'a'))?.status;
  return { r, lifecycle, delivered, worker, accept, status, handle };
}

test('worker holds (paused after queueing) → resume releases → worker acks: the record keeps a message and is delivered once', async () => {
  const t = await setup();
  const eventId = await t.accept(1);
  await pauseSubscription(t.lifecycle, 'a');
  const [m] = await t.r.queue.receive(10);
  // The worker writes `held`, reads the subscription again (still paused) and answers ack...
  const outcome = await processMessage(m!.body, m!.receiveCount, t.worker(), m!.message);
  expect(outcome).toEqual({ kind: 'ack', status: 'held' });
  // ...and resume runs before the consumer deletes the message.
  expect(await resumeSubscription(t.lifecycle, 'a')).toEqual({ kind: 'resumed', released: 1 });
  await t.r.queue.delete(m!.receiptHandle);
  expect(await t.status(eventId)).toBe('queued');
  const again = await t.r.queue.receive(10);
  // A new message as far as the worker can tell: its own id, not received before.
  expect(again.map((a) => [a.receiveCount, a.messageId === m!.messageId])).toEqual([[1, false]]);
  expect(await t.handle(again[0]!)).toBe('delivered');
  expect(await t.r.queue.size()).toBe(0);
  expect(t.delivered).toEqual(['Event 1']);
});

test('held and released more times than maxReceiveCount: each release is a fresh message, never dead-lettered for it', async () => {
  const t = await setup();
  const eventId = await t.accept(2);
  for (let cycle = 0; cycle <= LOCAL_MAX_RECEIVE_COUNT; cycle++) {
    await pauseSubscription(t.lifecycle, 'a');
    const [m] = await t.r.queue.receive(10);
    expect(m?.receiveCount).toBe(1);
    expect(await processMessage(m!.body, m!.receiveCount, t.worker(), m!.message)).toEqual({ kind: 'ack', status: 'held' });
    expect(await resumeSubscription(t.lifecycle, 'a')).toEqual({ kind: 'resumed', released: 1 });
    await t.r.queue.delete(m!.receiptHandle);
  }
  const [last] = await t.r.queue.receive(10);
  expect(await t.handle(last!)).toBe('delivered');
  expect(await t.r.queue.deadLetters()).toEqual([]);
  expect(await t.status(eventId)).toBe('delivered');
  expect(t.delivered).toEqual(['Event 2']);
});

test('the worker sees the resume at its second read and runs the event itself: the released copy is not delivered again', async () => {
  const t = await setup();
  const eventId = await t.accept(3);
  await pauseSubscription(t.lifecycle, 'a');
  // The worker's read of the subscription after its held write waits at a gate.
  let reached = false;
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const gated: SubscriptionStore = Object.assign(Object.create(t.r.subscriptions) as SubscriptionStore, {
    get: async (name: string) => {
      if (!reached && (await t.status(eventId)) === 'held') {
        reached = true;
        await opened;
      }
      return t.r.subscriptions.get(name);
    },
  });
  const [m] = await t.r.queue.receive(10);
  const first = t.handle(m!, t.worker(gated));
  await eventually(() => reached, 'the worker at its read after the held write');
  expect(await t.status(eventId)).toBe('held');
  expect(await resumeSubscription(t.lifecycle, 'a')).toEqual({ kind: 'resumed', released: 1 });
  // The released copy comes while the first worker still runs: its lease sends the copy back.
  const [copy] = await t.r.queue.receive(10);
  expect(await processMessage(copy!.body, copy!.receiveCount, t.worker(), copy!.message)).toMatchObject({ kind: 'retry', reason: 'another copy of this message is being processed' });
  open();
  expect(await first).toBe('delivered');
  // The first worker's delete was stale: the copy is still there, and finds the work done.
  await t.r.queue.changeVisibility(copy!.receiptHandle, 0);
  const [later] = await t.r.queue.receive(10);
  expect(await t.handle(later!)).toBe('delivered');
  expect(await t.r.queue.size()).toBe(0);
  expect(t.delivered).toEqual(['Event 3']);
});

test('a re-send of a message still in flight (ingest resuming a claim) adds nothing and does not re-arm it', async () => {
  const t = await setup();
  const eventId = await t.accept(4);
  const [m] = await t.r.queue.receive(10);
  const record = await t.r.events.get(eventId, 'a');
  await t.r.queue.sendRecorded([record!.message]);
  expect(await t.r.queue.size()).toBe(1);
  expect(await t.r.queue.receive(10)).toEqual([]);
  expect(await t.handle(m!)).toBe('delivered');
  expect(await t.r.queue.size()).toBe(0);
  expect(t.delivered).toEqual(['Event 4']);
});
