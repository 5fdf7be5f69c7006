/**
 * Hunt 9 D2: `resume --discard-held` while events arrive. Afterwards the subscription is
 * active, and an event it answered `held` is either deleted or released (queued with its
 * message), never left held (nothing would release it) and never deleted once released
 * (its message would find no record). Ingest's half of the race is `releaseIfResumed`, as
 * accept.ts calls it after writing held records. On the local store (as the CLI and serve
 * wire it) and on DynamoDB (dynalite, with release claims); steps are ordered with gates.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { newEventId } from '../../functions/core/ids';
import { systemClock, type EventLog, type EventQueue } from '../../functions/core/ports';
import { releaseIfResumed, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { EventRecord, EventStatus, QueueMessage } from '../../functions/core/types';
import { eventRecord } from '../../functions/core/worker/record';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { RecordingQueue } from '../support/recording-queue';
import { eventually } from '../support/serve';

/** A gate a test opens by hand; `reached` once something waits at it. */
function gate() {
  let open: () => void = () => {};
  const opened = new Promise<void>((resolve) => (open = resolve));
  const state = { reached: false, open, wait: async () => {
    state.reached = true;
    await opened;
  } };
  return state;
}

let n = 0;
function held(subscription: string): EventRecord {
  n += 1;
  const at = new Date(Date.now() + n).toISOString();
  const message: QueueMessage = { v: 1, event_id: newEventId(Date.now() + n), subscription, source: 'custom', event: 'deploy', delivery_id: `d-${n}`, received_at: at, payload: { n } };
  return eventRecord(message, 'held', at);
}

/** The discard's event log: its listing of held records returns, then waits at `listed`. */
function gatedListing(events: EventLog, listed: ReturnType<typeof gate>): EventLog {
  return Object.assign(Object.create(events) as EventLog, {
    listByStatus: async (subscription: string, status: EventStatus) => {
      const found = await events.listByStatus(subscription, status);
      if (status === 'held' && !listed.reached) await listed.wait();
      return found;
    },
  });
}

interface Fixture {
  deps: LifecycleDeps;
  /** How many queue messages each event has. */
  messages(eventId: string): Promise<number>;
}

const fixtures: Array<[string, () => Promise<Fixture & { close(): Promise<void> }>]> = [
  ['the local store', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookagent-discard-'));
    const r: LocalRuntime = await openLocalRuntime(dir, { role: 'cli', clock: systemClock });
    return {
      // As the CLI's resume and serve's ingest wire it (cli/webhook/state.ts, functions/local/compose.ts).
      deps: { subscriptions: r.subscriptions, events: r.events, queue: r.queue, clock: systemClock, leases: r.leases, release: r.release },
      messages: async (eventId) => (r.store.db.prepare('SELECT event_key FROM queue').pluck().all() as string[]).filter((k) => k.split('\u0000')[0] === eventId).length,
      close: async () => {
        await r.close();
        rmSync(dir, { recursive: true, force: true });
      },
    };
  }],
  ['DynamoDB', async () => {
    const dynamo: TestDynamo = await startDynalite();
    const queue = new RecordingQueue();
    return {
      deps: {
        subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions), events: new DynamoEventLog(dynamo.client, dynamo.tables.events),
        queue, clock: systemClock, leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, systemClock),
      },
      messages: async (eventId) => queue.sent.filter((m) => m.event_id === eventId).length,
      close: () => dynamo.close(),
    };
  }],
];

describe.each(fixtures)('on %s', (_label, start) => {
  let t: Fixture & { close(): Promise<void> };
  let name: string;
  beforeEach(async () => {
    t = await start();
    name = `discard${++n}`;
    await t.deps.subscriptions.create({ name, events: [], skills: [], deliver: ['log'], state: 'paused', created_at: '', updated_at: '', secret: 'x' });
  });
  afterEach(async () => t.close());

  const statusOf = async (record: EventRecord) => (await t.deps.events.get(record.event_id, name))?.status;

  test('an event held while the discard runs is released by ingest, not left held on the active subscription', async () => {
    const old = held(name);
    await t.deps.events.putAll([old]);
    const listed = gate();
    const discard = resumeSubscription({ ...t.deps, events: gatedListing(t.deps.events, listed) }, name, { discardHeld: true });
    await eventually(() => listed.reached, 'the discard listed the held records');
    // A request ingest held after that listing, then read the subscription again.
    const late = held(name);
    await t.deps.events.putAll([late]);
    await releaseIfResumed(t.deps, [late]);
    listed.open();
    expect(await discard).toEqual({ kind: 'discarded', discarded: 1 });
    expect({
      state: (await t.deps.subscriptions.get(name))?.state, held: (await t.deps.events.listByStatus(name, 'held')).length,
      old: await statusOf(old), late: await statusOf(late), lateMessages: await t.messages(late.event_id),
    }).toEqual({ state: 'active', held: 0, old: undefined, late: 'queued', lateMessages: 1 });
  });

  test('a held event ingest releases after the discard listed it keeps its record and its one message', async () => {
    const raced = held(name);
    await t.deps.events.putAll([raced]);
    const listed = gate();
    const discard = resumeSubscription({ ...t.deps, events: gatedListing(t.deps.events, listed) }, name, { discardHeld: true });
    await eventually(() => listed.reached, 'the discard listed the held records');
    // The request that held it reads the subscription again now.
    await releaseIfResumed(t.deps, [raced]);
    listed.open();
    expect(await discard).toEqual({ kind: 'discarded', discarded: 0 });
    expect({ held: (await t.deps.events.listByStatus(name, 'held')).length, raced: await statusOf(raced), messages: await t.messages(raced.event_id) })
      .toEqual({ held: 0, raced: 'queued', messages: 1 });
  });
});

test('on DynamoDB, a held event whose releaser is sending its message is left to it, not deleted', async () => {
  const [, start] = fixtures[1]!;
  const t = await start();
  try {
    const name = `discard${++n}`;
    await t.deps.subscriptions.create({ name, events: [], skills: [], deliver: ['log'], state: 'paused', created_at: '', updated_at: '', secret: 'x' });
    const raced = held(name);
    await t.deps.events.putAll([raced]);
    const listed = gate();
    const discard = resumeSubscription({ ...t.deps, events: gatedListing(t.deps.events, listed) }, name, { discardHeld: true });
    await eventually(() => listed.reached, 'the discard listed the held records');
    // Ingest's release has claimed the record and read it held; its message is on its way.
    const sending = gate();
    const queue: EventQueue = { send: async (messages) => {
      await sending.wait();
      return t.deps.queue.send(messages);
    } };
    const release = releaseIfResumed({ ...t.deps, queue }, [raced]);
    await eventually(() => sending.reached, 'the releaser sending the message');
    listed.open();
    expect(await discard).toEqual({ kind: 'discarded', discarded: 0 });
    sending.open();
    await release;
    expect({ raced: (await t.deps.events.get(raced.event_id, name))?.status, messages: await t.messages(raced.event_id) }).toEqual({ raced: 'queued', messages: 1 });
  } finally {
    await t.close();
  }
});
