/**
 * Hunt 2, D4: a message the local queue dead-letters after `maxReceiveCount` receives must
 * not leave its event `processing` for ever. serve is killed while the worker runs the
 * message (the agent never answers), five times; the next start's receive dead-letters the
 * message, and the record must then say `failed`, why, and that it was dead-lettered.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Agent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { createIngest, type InboundRequest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { ManualClock } from '../support/recording-queue';
import { eventually } from '../support/serve';

const WORKER_CONFIG = { agent: { provider: 'openai', model: 'm', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } } as WorkerDeps['config'];
const SECRET = 'whsec_loop';

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

async function withSubscription(clock: ManualClock): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'hookagent-gave-up-'));
  dirs.push(dir);
  const r = await openLocalRuntime(dir, { role: 'serve', clock });
  await r.subscriptions.create({ name: 'loop', events: [], skills: [], deliver: ['log'], state: 'active', prompt: 'Event {n}', created_at: '', updated_at: '', secret: SECRET });
  await r.close();
  return dir;
}

async function accept(r: LocalRuntime, n: number): Promise<string> {
  const request: InboundRequest = {
    method: 'POST', path: '/webhooks/custom/loop', isBase64Encoded: false, sourceIp: '127.0.0.1',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json', 'x-request-id': `loop-${n}` }, body: JSON.stringify({ n }),
  };
  const reply = await createIngest(r.ingestDeps({ webhooks: { max_payload_size: 65536 } }, silentLogger))(request);
  expect(reply.status).toBe(202);
  return (reply.body as { event_id: string }).event_id;
}

/** The worker's deps in serve, with an agent that takes the call and never answers (the process is killed meanwhile). */
function hangingWorker(r: LocalRuntime, calls: { count: number }): WorkerDeps {
  const agent: Agent = { run: () => {
    calls.count += 1;
    return new Promise(() => {});
  } };
  return r.workerDeps({ agent, skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'ha-skills-'))), targets: { log: logTarget }, config: WORKER_CONFIG, logger: silentLogger });
}

test('serve killed five times while the message runs: the sixth start dead-letters it and the record ends failed, with the reason', async () => {
  const clock = new ManualClock(Date.now());
  const dir = await withSubscription(clock);
  let r = await openLocalRuntime(dir, { role: 'serve', clock });
  const eventId = await accept(r, 1);
  const calls = { count: 0 };
  for (let attempt = 1; attempt <= 5; attempt++) {
    const [m] = await r.queue.receive(10);
    expect(m?.receiveCount).toBe(attempt);
    void processMessage(m!.body, m!.receiveCount, hangingWorker(r, calls), m!.message);
    await eventually(() => calls.count === attempt, `attempt ${attempt} at the agent`);
    expect((await r.events.get(eventId, 'loop'))?.status).toBe('processing');
    // kill -9: the next serve finds the message in flight and makes it visible at once.
    await r.close();
    r = await openLocalRuntime(dir, { role: 'serve', clock });
  }
  try {
    expect(await r.queue.receive(10)).toEqual([]);
    const [letter] = await r.queue.deadLetters();
    expect(letter).toMatchObject({ receiveCount: 5, reason: 'received 5 times without success' });
    expect(JSON.parse(letter!.body)).toMatchObject({ event_id: eventId });
    const record = await r.events.get(eventId, 'loop');
    expect(record).toMatchObject({
      status: 'failed', attempts: 5, dead_lettered_at: new Date(clock.now()).toISOString(),
      error: { code: 'receive_limit', message: expect.stringMatching(/^gave up after 5 attempts: received 5 times without success/) },
    });
  } finally {
    await r.close();
  }
});

test('a record the worker already gave up on keeps its reason and gets dead_lettered_at; a redriven message (no event key) ends failed too', async () => {
  const clock = new ManualClock(Date.now());
  const dir = await withSubscription(clock);
  const r = await openLocalRuntime(dir, { role: 'serve', clock });
  try {
    const gaveUp = await accept(r, 2);
    // The worker's last attempt wrote its own give-up; the queue's redrive follows on the next receive.
    await r.events.update(gaveUp, 'loop', { status: 'failed', attempts: 5, error: { code: 'model_unavailable', message: 'gave up after 5 attempts: 503' } });
    // A message redriven from the dead letters is queued by its body, without the event key.
    const redriven = await accept(r, 3);
    const [own] = (await r.queue.receive(10)).filter((m) => JSON.parse(m.body).event_id === redriven);
    await r.queue.delete(own!.receiptHandle);
    await r.queue.sendBodies([JSON.stringify((await r.events.get(redriven, 'loop'))?.message as QueueMessage)]);
    await r.events.update(redriven, 'loop', { status: 'processing', attempts: 5 });
    for (let receive = 0; receive < 6; receive++) {
      await r.queue.receive(10);
      clock.advance(6 * 60_000);
    }
    expect((await r.queue.deadLetters()).map((d) => JSON.parse(d.body).event_id).sort()).toEqual([gaveUp, redriven].sort());
    expect(await r.events.get(gaveUp, 'loop')).toMatchObject({
      status: 'failed', dead_lettered_at: expect.any(String), error: { code: 'model_unavailable', message: 'gave up after 5 attempts: 503' },
    });
    expect(await r.events.get(redriven, 'loop')).toMatchObject({ status: 'failed', dead_lettered_at: expect.any(String), error: { code: 'receive_limit' } });
  } finally {
    await r.close();
  }
});
