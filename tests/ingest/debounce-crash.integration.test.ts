/**
 * Hunt 2, D3: a debounced event's subject's "latest event" pointer must never name an
 * event that has no queue message: such a ghost supersedes the accepted earlier event and
 * never runs itself, so nothing runs for the subject. Locally: serve is killed after each
 * write of event B's request in turn (after A was accepted), restarted, and the worker
 * drains the queue. On AWS (dynalite): B's queue send refused (503), and B's pointer lost
 * after B was queued.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { createIngest, type InboundRequest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { DEBOUNCE_TTL_SECONDS } from '../../functions/core/worker/gates';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { killAfterWrites } from '../support/crash';
import { GITHUB_SECRET, bodyOf, startHarness, type Harness } from '../support/ingest-harness';
import { ManualClock } from '../support/recording-queue';
import { githubEvent } from '../support/requests';

const WORKER_CONFIG = { agent: { provider: 'openai', model: 'm', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } } as WorkerDeps['config'];

describe('local store: serve killed during a debounced request', () => {
  const SECRET = 'whsec_debounce';
  const request = (id: string): InboundRequest => ({
    method: 'POST', path: '/webhooks/custom/deb', isBase64Encoded: false, sourceIp: '127.0.0.1',
    headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json', 'x-request-id': id },
    // Shaped like a GitHub issue event: its subject is issue o/r#7.
    body: JSON.stringify({ repository: { full_name: 'o/r' }, issue: { number: 7 }, id }),
  });
  const serve = (dir: string, clock: ManualClock) => openLocalRuntime(dir, { role: 'serve', clock });
  const ingestOf = (r: LocalRuntime) => createIngest(r.ingestDeps({ webhooks: { max_payload_size: 65536 } }, silentLogger));

  /** serve's worker over the queue until it is empty, as the consumer runs it. */
  async function drain(r: LocalRuntime): Promise<void> {
    const deps = r.workerDeps({ agent: echoAgent, skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'ha-skills-'))), targets: { log: logTarget }, config: WORKER_CONFIG, logger: silentLogger });
    for (let batch = await r.queue.receive(10); batch.length > 0; batch = await r.queue.receive(10)) {
      for (const m of batch) {
        const outcome = await processMessage(m.body, m.receiveCount, deps, m.message);
        expect(outcome.kind).toBe('ack');
        await r.queue.delete(m.receiptHandle);
      }
    }
  }

  test('after A was accepted, a kill after any write of B\'s request never leaves A superseded by an event that does not run', async () => {
    const outcomes: Array<{ k: number; b: number | undefined; a: string; bStatus: string | undefined }> = [];
    for (let k = 0; ; k++) {
      const dir = mkdtempSync(join(tmpdir(), 'hookagent-debounce-kill-'));
      const clock = new ManualClock(Date.now());
      const first = await serve(dir, clock);
      await first.subscriptions.create({ name: 'deb', events: [], skills: [], deliver: ['log'], state: 'active', debounce_seconds: 3, created_at: '', updated_at: '', secret: SECRET });
      const a = await ingestOf(first)(request('A'));
      expect(a.status).toBe(202);
      const aId = (a.body as { event_id: string }).event_id;
      await first.close();

      clock.advance(1_000);
      const dying = await serve(dir, clock);
      const crash = killAfterWrites(dying.store, k);
      const b = await ingestOf(dying)(request('B')).catch(() => undefined);
      await dying.close();

      // Restarted; the debounce delay passes; the worker runs what the queue holds.
      const next = await serve(dir, clock);
      try {
        clock.advance(4_000);
        await drain(next);
        const bRecord = (await next.events.listBySubscription('deb', 10)).find((r) => r.event_id !== aId);
        const aRecord = (await next.events.get(aId, 'deb')) as EventRecord;
        outcomes.push({ k, b: b?.status, a: aRecord.status, bStatus: bRecord?.status });
        // Something ran for the subject: A, or B which superseded it.
        if (aRecord.status === 'superseded') {
          expect({ k, supersededBy: aRecord.superseded_by, b: bRecord?.status }).toEqual({ k, supersededBy: bRecord?.event_id, b: 'delivered' });
        } else {
          expect({ k, a: aRecord.status }).toEqual({ k, a: 'delivered' });
        }
        // B answered 202 runs (it is the latest of the burst).
        if (b?.status === 202) expect({ k, b: bRecord?.status }).toEqual({ k, b: 'delivered' });
      } finally {
        await next.close();
        rmSync(dir, { recursive: true, force: true });
      }
      if (!crash.killed) break;
    }
    // Killed before B was stored, and not at all.
    expect(outcomes[0]).toMatchObject({ a: 'delivered' });
    expect(outcomes[outcomes.length - 1]).toMatchObject({ b: 202, a: 'superseded', bStatus: 'delivered' });
  }, 60_000);
});

describe('AWS (dynalite): the queue send and the latest pointer are separate writes', () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(async () => h.close());

  const worker = (): WorkerDeps => ({
    events: h.events, subscriptions: h.subscriptions, payloads: new FilePayloadStore(join(mkdtempSync(join(tmpdir(), 'ha-')), 'p')), agent: echoAgent,
    skills: new SkillLibrary(mkdtempSync(join(tmpdir(), 'ha-'))), targets: { log: logTarget }, config: WORKER_CONFIG,
    clock: h.clock, logger: silentLogger, maxReceiveCount: 5, debounce: h.debounce,
  });
  let pr = 100;
  const push = async (sub: string) => {
    const body = JSON.stringify({ action: 'synchronize', number: pr, pull_request: { number: pr }, repository: { full_name: 'o/r' }, sub });
    const result = await h.handler(githubEvent('pull_request', body, GITHUB_SECRET));
    h.clock.advance(1_000);
    return result;
  };
  const sentFor = (eventId: string): QueueMessage | undefined => h.queue.sent.find((m) => m.event_id === eventId);

  test('B\'s send refused (503): A is not superseded by B, and runs', async () => {
    pr += 1;
    await h.addSubscription({ name: 'deb-refused', events: ['pull_request'], debounce_seconds: 30, agent: 'none', prompt: 'PR {number}' });
    const a = await push('a');
    expect(a.statusCode).toBe(202);
    const aId = bodyOf(a).event_id as string;
    h.queue.refuseNext();
    const b = await push('b');
    expect(b.statusCode).toBe(503);
    expect(await processMessage(JSON.stringify(sentFor(aId)), 1, worker())).toEqual({ kind: 'ack', status: 'delivered' });
    expect((await h.events.get(aId, 'deb-refused'))?.status).toBe('delivered');
  });

  test('B queued but its pointer never written (a crash between the two): B is not superseded by the earlier A', async () => {
    pr += 1;
    await h.addSubscription({ name: 'deb-lost', events: ['pull_request'], debounce_seconds: 30, agent: 'none', prompt: 'PR {number}' });
    const aId = bodyOf(await push('a')).event_id as string;
    const bId = bodyOf(await push('b')).event_id as string;
    const subject = sentFor(bId)?.subject_key as string;
    // What the crash leaves: B's message queued, the subject's latest still A.
    await h.debounce.setLatest('deb-lost', subject, aId, DEBOUNCE_TTL_SECONDS);
    expect(await processMessage(JSON.stringify(sentFor(aId)), 1, worker())).toEqual({ kind: 'ack', status: 'delivered' });
    expect(await processMessage(JSON.stringify(sentFor(bId)), 1, worker())).toEqual({ kind: 'ack', status: 'delivered' });
    // The pointer on the later B still supersedes the earlier one, as before.
    const cId = bodyOf(await push('c')).event_id as string;
    const dId = bodyOf(await push('d')).event_id as string;
    expect(await processMessage(JSON.stringify(sentFor(cId)), 1, worker())).toEqual({ kind: 'ack', status: 'superseded' });
    expect((await h.events.get(cId, 'deb-lost'))?.superseded_by).toBe(dId);
  });
});
