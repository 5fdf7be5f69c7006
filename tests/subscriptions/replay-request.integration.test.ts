/**
 * Hunt 11 D2: `webhook replay req_…` runs a request one subscription took and another's
 * filters turned away, for the latter, from the stored event, once its filters take it;
 * otherwise it is refused with the precise reason, never with advice to have the sender
 * deliver it again (that redelivery is answered `duplicate`). Through the use case on the
 * DynamoDB adapters (dynalite), as the CLI runs it against AWS, with the payload kept apart
 * (`payload_ref`) in the payload store and read back from there.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { selectSubscriptions } from '../../functions/core/ingest/select';
import { pauseSubscription, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import { replayRequest } from '../../functions/core/subscriptions/replay-request';
import type { QueueMessage, RequestRecord, Subscription } from '../../functions/core/types';
import { eventRecord } from '../../functions/core/worker/record';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { ManualClock, RecordingQueue } from '../support/recording-queue';

let dynamo: TestDynamo;
let dir: string;
beforeAll(async () => {
  dynamo = await startDynalite();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-replay-request-'));
});
afterAll(async () => {
  await dynamo.close();
  rmSync(dir, { recursive: true, force: true });
});

const DRAFT = { action: 'opened', number: 12, pull_request: { number: 12, draft: true }, repository: { full_name: 'o/r' } };
let n = 0;

/**
 * `took-N` (no filter) and `picky-N` (drafts refused): a draft pull request arrives, as
 * ingest accepts it: one record for took-N, its payload kept apart, and the request-log
 * entry with both verdicts.
 */
async function arrived() {
  n += 1;
  const [took, picky] = [`took-${n}`, `picky-${n}`];
  const clock = new ManualClock(Date.parse('2026-11-24T10:00:00Z'));
  const subscriptions = new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions);
  const events = new DynamoEventLog(dynamo.client, dynamo.tables.events);
  const payloads = new FilePayloadStore(join(dir, `case${n}`));
  const queue = new RecordingQueue();
  const base = { events: ['pull_request.opened'], skills: [], deliver: ['log' as const], state: 'active' as const, updated_at: '2026-11-24T09:00:00.000Z', secret: 's' };
  const subscription = (name: string, fields: Partial<Subscription>): Subscription => ({ ...base, name, created_at: `2026-11-24T09:00:0${n % 10}.000Z`, ...fields });
  await subscriptions.create(subscription(took, {}));
  await subscriptions.create(subscription(picky, { filters: ['pull_request.draft == false'] }));
  const deps: LifecycleDeps = { subscriptions, events, queue, clock, payloads, leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock) };

  const eventId = `evt_case${n}`;
  const at = new Date(clock.now()).toISOString();
  const message: QueueMessage = {
    v: 1, event_id: eventId, subscription: took, source: 'github', event: 'pull_request', action: 'opened', delivery_id: `d-${n}`, received_at: at,
    subject_key: 'github:o/r#pull_request/12', subscription_created_at: base.updated_at, payload_ref: await payloads.put(eventId, JSON.stringify(DRAFT)),
  };
  await events.putAll([{ ...eventRecord(message, 'delivered', at) }]);
  const { verdicts } = selectSubscriptions([(await subscriptions.get(took))!, (await subscriptions.get(picky))!], 'github', 'pull_request', 'opened', DRAFT);
  const entry: RequestRecord = {
    request_id: `req_0mwvi4gf2000${n}978fba17`, received_at: at, endpoint: 'github', method: 'POST', status: 202, outcome: 'accepted',
    event: 'pull_request', action: 'opened', delivery_id: `d-${n}`, event_id: eventId, header_names: [], candidates: verdicts,
  };
  /** As `webhook update` writes it. */
  const update = async (name: string, changes: Partial<Subscription>) => {
    clock.advance(1_000);
    const current = (await subscriptions.get(name))!;
    const stamp = new Date(clock.now()).toISOString();
    await subscriptions.put({ ...current, ...changes, updated_at: stamp, routing_changed_at: stamp });
  };
  return { took, picky, deps, events, payloads, queue, entry, eventId, update, clock };
}

test('once its filter takes the event, the request runs for the subscription that filtered it: a new record from the stored event, its payload read through the pointer', async () => {
  const s = await arrived();
  await s.update(s.picky, { filters: [] });
  s.clock.advance(1_000);
  const { copies } = await replayRequest(s.deps, s.entry);
  expect(copies).toHaveLength(1);
  const [copy] = copies;
  expect(copy).toMatchObject({ subscription: s.picky, status: 'queued', message: { subscription: s.picky, replay_of: s.eventId, payload_ref: expect.any(String) } });
  expect(copy!.message.subject_key).toBeUndefined();
  expect(copy!.message.subscription_created_at).toBe((await s.deps.subscriptions.get(s.picky))!.created_at);
  expect(s.queue.sent.map((m) => [m.event_id, m.subscription])).toEqual([[copy!.event_id, s.picky]]);
  expect((await s.events.get(copy!.event_id, s.picky))?.status).toBe('queued');
  // The subscription that took it has no new attempt.
  expect((await s.events.getEvent(s.eventId)).map((r) => r.subscription)).toEqual([s.took]);
});

test('for a paused subscription the run is held, and resume releases it', async () => {
  const s = await arrived();
  await s.update(s.picky, { filters: ['pull_request.number == 12'] });
  await pauseSubscription(s.deps, s.picky);
  s.clock.advance(1_000);
  const { copies: [copy] } = await replayRequest(s.deps, s.entry, s.picky);
  expect(copy).toMatchObject({ status: 'held', subscription: s.picky });
  expect(s.queue.sent).toEqual([]);
  s.clock.advance(1_000);
  expect(await resumeSubscription(s.deps, s.picky)).toMatchObject({ kind: 'resumed', released: 1 });
  expect(s.queue.sent.map((m) => m.event_id)).toEqual([copy!.event_id]);
});

test('refused with the precise reason, and never with advice to redeliver', async () => {
  const s = await arrived();
  const refusal = async (only?: string): Promise<{ code: string; message: string }> => {
    const error = await replayRequest(s.deps, s.entry, only).then(() => undefined, (e: { code: string; message: string }) => e);
    expect(error).toBeDefined();
    expect(error!.message).not.toMatch(/deliver it again|redeliver/i);
    return { code: error!.code, message: error!.message };
  };
  expect(await refusal(s.picky)).toEqual({ code: 'unsupported', message: expect.stringContaining(`'${s.picky}' as it is now still does not take request '${s.entry.request_id}' (filter "pull_request.draft == false" failed (pull_request.draft is true))`) });
  expect(await refusal(s.took)).toEqual({ code: 'bad_option', message: expect.stringContaining(`'${s.took}' took request '${s.entry.request_id}': it is event ${s.eventId}`) });
  expect(await refusal('newcomer')).toEqual({ code: 'event_not_found', message: expect.stringContaining(`has no verdict of 'newcomer'`) });
  await s.update(s.picky, { filters: [] });
  await s.deps.subscriptions.delete(s.picky);
  expect(await refusal(s.picky)).toMatchObject({ code: 'subscription_not_found' });
  expect((await refusal()).message).toContain(`'${s.picky}' (deleted since)`);
  const onlyTaken = { ...s.entry, candidates: s.entry.candidates!.filter((v) => v.matched) };
  await expect(replayRequest(s.deps, onlyTaken)).rejects.toMatchObject({ code: 'bad_option', message: `No subscription's filters turned request '${s.entry.request_id}' away ('${s.took}' took it): replay its event with 'hookagent webhook replay ${s.eventId}'` });
  expect(s.queue.sent).toEqual([]);
});

test('a payload that can no longer be read is said, and nothing is queued', async () => {
  const s = await arrived();
  await s.update(s.picky, { filters: [] });
  rmSync(join(dir, `case${n}`), { recursive: true, force: true });
  await expect(replayRequest(s.deps, s.entry)).rejects.toMatchObject({ code: 'payload_missing', message: expect.stringContaining(`The stored payload of event ${s.eventId} cannot be read`) });
  expect(s.queue.sent).toEqual([]);
});
