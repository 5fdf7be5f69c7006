/**
 * Hunt 13 (awsruntime, D1), the local store's side: a debounced event whose payload is not
 * inline (over 200 KB) takes ingest's general path (payload, records, then the delayed send),
 * not the one-transaction accept. Its delayed message is queued by reference to its record,
 * as every recorded message now is, and keeps its delay: it runs once the window has passed,
 * and a record deleted meanwhile (ingest's withdrawal) leaves it dead-lettered unrun.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { echoAgent } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { createIngest, type InboundRequest } from '../../functions/core/ingest/service';
import { silentLogger } from '../../functions/core/log';
import { SkillLibrary } from '../../functions/core/skills/library';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { ManualClock } from '../support/recording-queue';

const WORKER_CONFIG = { agent: { provider: 'openai', model: 'm', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } } as WorkerDeps['config'];
const SECRET = 'whsec_debounce';
const WINDOW_MS = 30_000;

let dir: string;
let skillsDir: string;
let clock: ManualClock;
let runtime: LocalRuntime;

beforeEach(async () => {
  dir = mkdtempSync(join(tmpdir(), 'hookagent-awsruntime13-'));
  skillsDir = mkdtempSync(join(tmpdir(), 'hookagent-awsruntime13-skills-'));
  clock = new ManualClock(Date.now());
  runtime = await openLocalRuntime(dir, { role: 'serve', clock });
  await runtime.subscriptions.create({
    name: 'deb', events: [], skills: [], deliver: ['log'], state: 'active', debounce_seconds: WINDOW_MS / 1000, created_at: '', updated_at: '', secret: SECRET,
  });
});

afterEach(async () => {
  await runtime.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(skillsDir, { recursive: true, force: true });
});

/** Shaped like a GitHub issue event (its subject is issue o/r#7), with a 300 KB log: stored as a payload, not inline. */
const bigRequest = (): InboundRequest => ({
  method: 'POST', path: '/webhooks/custom/deb', isBase64Encoded: false, sourceIp: '127.0.0.1',
  headers: { authorization: `Bearer ${SECRET}`, 'content-type': 'application/json' },
  body: JSON.stringify({ repository: { full_name: 'o/r' }, issue: { number: 7 }, log: 'x'.repeat(300 * 1024) }),
});

async function accepted(): Promise<string> {
  const answer = await createIngest(runtime.ingestDeps({ webhooks: { max_payload_size: 1024 * 1024 } }, silentLogger))(bigRequest());
  expect(answer.status).toBe(202);
  // By reference: the queue row names the record, whose message holds the payload's reference.
  expect(runtime.store.db.prepare('SELECT body FROM queue').pluck().all()).toEqual(['']);
  // Delayed: nothing to receive before the window has passed.
  expect(await runtime.queue.receive(10)).toEqual([]);
  return (answer.body as { event_id: string }).event_id;
}

test('a debounced event with a large payload is queued by reference, with its delay, and runs after the window', async () => {
  const eventId = await accepted();
  clock.advance(WINDOW_MS);
  const [received, ...more] = await runtime.queue.receive(10);
  expect(more).toEqual([]);
  const deps = runtime.workerDeps({ agent: echoAgent, skills: new SkillLibrary(skillsDir), targets: { log: logTarget }, config: WORKER_CONFIG, logger: silentLogger });
  expect(await processMessage(received!.body, received!.receiveCount, deps, received!.message)).toMatchObject({ kind: 'ack', status: 'delivered' });
  expect((await runtime.events.get(eventId, 'deb'))?.status).toBe('delivered');
});

test('its record withdrawn while it waits: dead-lettered unrun after the window, named', async () => {
  const eventId = await accepted();
  const record = await runtime.events.get(eventId, 'deb');
  expect(await runtime.events.deleteUnstarted([record!])).toHaveLength(0);
  clock.advance(WINDOW_MS);
  expect(await runtime.queue.receive(10)).toEqual([]);
  expect(await runtime.queue.deadLetters()).toEqual([expect.objectContaining({ reason: 'the event record of this message was deleted' })]);
});
