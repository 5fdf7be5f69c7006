/**
 * Hunt 9 (subs) D2: `webhook update --debounce 0` (or a shorter window) while a debounced
 * event A waits in the queue. Until A's old window has passed (`debounce_pointer_until`),
 * the events accepted after the change are not delayed and carry no subject key, but each
 * is recorded as its subject's latest, so A is superseded by the latest of them when it
 * leaves the queue. Through ingest and the worker on DynamoDB (dynalite) and on the local
 * SQLite store; the update's arithmetic as a table.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { pointerKeptUntil } from '../../functions/core/ingest/debounce';
import { createIngest, type InboundRequest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { SubscriptionStore } from '../../functions/core/ports';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { GITHUB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';
import { ManualClock } from '../support/recording-queue';
import { githubEvent } from '../support/requests';

const WORKER_CONFIG = { agent: { provider: 'openai', model: 'm', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } } as WorkerDeps['config'];

/** As `webhook update` writes a new debounce setting (cli/webhook/write.ts). */
async function updateDebounce(store: Pick<SubscriptionStore, 'get' | 'put'>, name: string, seconds: number | undefined, nowMs: number): Promise<Subscription> {
  const existing = (await store.get(name)) as Subscription;
  const { debounce_seconds: _old, ...rest } = existing;
  const next: Subscription = { ...rest, ...(seconds ? { debounce_seconds: seconds } : {}), updated_at: new Date(nowMs).toISOString() };
  const until = pointerKeptUntil(existing, next, nowMs);
  if (until) next.debounce_pointer_until = until;
  else delete next.debounce_pointer_until;
  await store.put(next);
  return next;
}

describe('the time until which `update` keeps the pointer', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  const at = (ms: number) => new Date(now + ms).toISOString();
  const sub = (fields: Partial<Subscription>): Subscription => ({ name: 's', events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', ...fields });
  test.each([
    ['turned off: the old window from now', { debounce_seconds: 60 }, {}, at(60_000)],
    ['shortened: the old window from now', { debounce_seconds: 60 }, { debounce_seconds: 10 }, at(60_000)],
    ['lengthened: nothing to keep', { debounce_seconds: 10 }, { debounce_seconds: 60 }, undefined],
    ['never debounced: nothing to keep', {}, {}, undefined],
    ['60 s → 10 s earlier, now off: the earlier, later time is kept', { debounce_seconds: 10, debounce_pointer_until: at(50_000) }, {}, at(50_000)],
    ['a kept time sooner than the old window from now gives way to it', { debounce_seconds: 10, debounce_pointer_until: at(5_000) }, {}, at(10_000)],
    ['a kept time that has passed is dropped', { debounce_pointer_until: at(-1_000) }, {}, undefined],
  ])('%s', (_name, before, after, expected) => {
    expect(pointerKeptUntil(sub(before), sub(after), now)).toBe(expected);
  });
});

/**
 * One temporary directory for a describe's payloads, skills and store. Removed after the
 * describe's own afterAll (jest runs afterAll hooks in the order declared, and a store must
 * be closed, its checkpoint thread gone, before its files are removed).
 */
function useTempDir(): { dir: () => string; remove: () => void } {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'hookagent-debounce-change-'));
  });
  return { dir: () => dir, remove: () => rmSync(dir, { recursive: true, force: true, maxRetries: 5 }) };
}

describe('AWS (dynalite): ingest and the worker', () => {
  let h: Harness;
  const { dir: temp, remove } = useTempDir();
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => {
    await h.close();
    remove();
  });

  const worker = (): WorkerDeps => ({
    events: h.events, subscriptions: h.subscriptions, payloads: new FilePayloadStore(join(temp(), 'payloads')), agent: echoAgent,
    skills: new SkillLibrary(temp()), targets: { log: logTarget }, config: WORKER_CONFIG,
    clock: h.clock, logger: silentLogger, maxReceiveCount: 5, debounce: h.debounce,
  });
  let pr = 200;
  /** A push to pull request `pr`: what it queued for subscription `name` (every test's subscription takes it). */
  const push = async (name: string, sha: string): Promise<{ id: string; message: QueueMessage; delay: number | undefined }> => {
    const body = JSON.stringify({ action: 'synchronize', number: pr, pull_request: { number: pr, head: { sha } }, repository: { full_name: 'o/r' } });
    const result = await h.handler(githubEvent('pull_request', body, GITHUB_SECRET));
    expect(result.statusCode).toBe(202);
    h.clock.advance(1_000);
    const id = bodyOf(result).event_id as string;
    const index = h.queue.sent.findIndex((m) => m.event_id === id && m.subscription === name);
    return { id, message: h.queue.sent[index] as QueueMessage, delay: h.queue.delays[index] };
  };
  const run = async (message: QueueMessage) => processMessage(JSON.stringify(message), 1, worker());

  test('debounce turned off: the later events run at once, each recorded as the latest; the waiting one is superseded by the last', async () => {
    pr += 1;
    await h.addSubscription({ name: 'deb-off', events: ['pull_request'], debounce_seconds: 30, agent: 'none', prompt: 'PR {number}' });
    const a = await push('deb-off', 'a');
    expect(a.delay).toBe(30);
    const subject = a.message.subject_key as string;
    await updateDebounce(h.subscriptions, 'deb-off', undefined, h.clock.now());
    const b = await push('deb-off', 'b');
    const c = await push('deb-off', 'c');
    // Not debounced: no delay, and no subject key the gate could supersede them by.
    expect([b.delay, c.delay, b.message.subject_key, c.message.subject_key]).toEqual([0, 0, undefined, undefined]);
    expect(await h.debounce.getLatest('deb-off', subject)).toBe(c.id);
    expect(await run(b.message)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(await run(c.message)).toEqual({ kind: 'ack', status: 'delivered' });
    // A's window ends: it leaves the queue after them.
    expect(await run(a.message)).toEqual({ kind: 'ack', status: 'superseded' });
    expect(await h.events.get(a.id, 'deb-off')).toMatchObject({ status: 'superseded', superseded_by: c.id });
  });

  test('once the old window has passed, events write no pointer', async () => {
    pr += 1;
    await h.addSubscription({ name: 'deb-after', events: ['pull_request'], debounce_seconds: 5, agent: 'none', prompt: 'PR {number}' });
    const a = await push('deb-after', 'a');
    await updateDebounce(h.subscriptions, 'deb-after', undefined, h.clock.now());
    h.clock.advance(5_000);
    const b = await push('deb-after', 'b');
    expect(b.delay).toBe(0);
    expect(await h.debounce.getLatest('deb-after', a.message.subject_key as string)).toBe(a.id);
  });

  test('a shorter window: later events are debounced with it and still supersede the waiting one', async () => {
    pr += 1;
    await h.addSubscription({ name: 'deb-short', events: ['pull_request'], debounce_seconds: 60, agent: 'none', prompt: 'PR {number}' });
    const a = await push('deb-short', 'a');
    const stored = await updateDebounce(h.subscriptions, 'deb-short', 10, h.clock.now());
    expect(stored.debounce_pointer_until).toBeDefined();
    const b = await push('deb-short', 'b');
    expect([b.delay, b.message.subject_key]).toEqual([10, a.message.subject_key]);
    expect(await run(b.message)).toEqual({ kind: 'ack', status: 'delivered' });
    expect(await run(a.message)).toEqual({ kind: 'ack', status: 'superseded' });
  });
});

describe('local store: ingest and the worker', () => {
  const SECRET = 'whsec_debounce_change';
  const request = (id: string): InboundRequest => ({
    method: 'POST', path: '/webhooks/custom/deb', isBase64Encoded: false, sourceIp: '127.0.0.1',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json', 'x-request-id': id },
    // Shaped like a GitHub issue event: its subject is issue o/r#7.
    body: JSON.stringify({ repository: { full_name: 'o/r' }, issue: { number: 7 }, id }),
  });
  let runtime: LocalRuntime;
  const clock = new ManualClock(Date.now());
  const { dir: temp, remove } = useTempDir();
  beforeAll(async () => {
    runtime = await openLocalRuntime(join(temp(), 'data'), { role: 'serve', clock });
  });
  afterAll(async () => {
    await runtime.close();
    remove();
  });

  /** serve's worker over what the queue hands out now; the event ids it ran, in order. */
  async function drain(): Promise<string[]> {
    const deps = runtime.workerDeps({ agent: echoAgent, skills: new SkillLibrary(temp()), targets: { log: logTarget }, config: WORKER_CONFIG, logger: silentLogger });
    const ran: string[] = [];
    for (let batch = await runtime.queue.receive(10); batch.length > 0; batch = await runtime.queue.receive(10)) {
      for (const m of batch) {
        expect((await processMessage(m.body, m.receiveCount, deps, m.message)).kind).toBe('ack');
        ran.push((JSON.parse(m.body) as { event_id: string }).event_id);
        await runtime.queue.delete(m.receiptHandle);
      }
    }
    return ran;
  }
  const ingest = async (id: string): Promise<string> => {
    const answer = await createIngest(runtime.ingestDeps({ webhooks: { max_payload_size: 65536 } }, silentLogger))(request(id));
    expect(answer.status).toBe(202);
    clock.advance(1_000);
    return (answer.body as { event_id: string }).event_id;
  };

  test('debounce turned off while A waits: B runs at once, and A is superseded by B when its window ends', async () => {
    await runtime.subscriptions.create({ name: 'deb', events: [], skills: [], deliver: ['log'], state: 'active', debounce_seconds: 3, created_at: '', updated_at: '', secret: SECRET });
    const a = await ingest('A');
    await updateDebounce(runtime.subscriptions, 'deb', undefined, clock.now());
    const b = await ingest('B');
    expect(await drain()).toEqual([b]);
    expect((await runtime.events.get(b, 'deb'))?.status).toBe('delivered');
    clock.advance(3_000);
    expect(await drain()).toEqual([a]);
    expect(await runtime.events.get(a, 'deb')).toMatchObject({ status: 'superseded', superseded_by: b });
  });
});
