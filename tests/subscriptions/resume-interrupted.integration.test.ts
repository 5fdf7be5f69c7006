/**
 * Hunt 2, D2: `webhook resume` cut off (Ctrl-C, kill -9, a full disk) must strand no
 * event answered `held`. The resume is killed after each of its writes in turn (locally:
 * after its k-th committed SQLite write; on AWS: after its k-th call to DynamoDB or SQS),
 * then resumed again as a user would: every held event must then be queued with its
 * message, none left held, none queued without a message.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SQSClient } from '@aws-sdk/client-sqs';
import { DynamoEventLog } from '../../functions/aws/event-log';
import { DynamoLeaseStore } from '../../functions/aws/lease-store';
import { SqsEventQueue } from '../../functions/aws/sqs-queue';
import { DynamoSubscriptionStore } from '../../functions/aws/subscription-store';
import { newEventId } from '../../functions/core/ids';
import { systemClock, type EventLog, type SubscriptionStore } from '../../functions/core/ports';
import { RELEASE_CLAIM_MS, releaseRecords, resumeSubscription, type LifecycleDeps } from '../../functions/core/subscriptions/lifecycle';
import type { EventRecord, QueueMessage } from '../../functions/core/types';
import { eventRecord } from '../../functions/core/worker/record';
import { openLocalRuntime, type LocalRuntime } from '../../functions/local/compose';
import { callBudget, dyingAfter, killAfterWrites } from '../support/crash';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import type { LocalServer } from '../support/local-http';
import { sentBodies, startLocalSqs } from '../support/local-sqs';
import { ManualClock } from '../support/recording-queue';

const HELD = 4;

function heldRecords(subscription: string, nowMs: number): EventRecord[] {
  return Array.from({ length: HELD }, (_, i) => {
    const at = new Date(nowMs + i).toISOString();
    const message: QueueMessage = {
      v: 1, event_id: newEventId(nowMs + i), subscription, source: 'custom', event: 'deploy', delivery_id: `${subscription}-${i}`, received_at: at, payload: { n: i },
    };
    return eventRecord(message, 'held', at);
  });
}

async function pausedWithHeld(subscriptions: SubscriptionStore, events: EventLog, name: string, nowMs: number): Promise<EventRecord[]> {
  await subscriptions.create({ name, events: [], skills: [], deliver: ['log'], state: 'paused', created_at: '', updated_at: '', secret: 'x' });
  const held = heldRecords(name, nowMs);
  await events.putAll(held);
  return held;
}

describe('local store', () => {
  // As the CLI's resume and serve's ingest wire it (cli/webhook/state.ts, functions/local/compose.ts).
  const lifecycle = (r: LocalRuntime): LifecycleDeps => ({ subscriptions: r.subscriptions, events: r.events, queue: r.queue, clock: systemClock, leases: r.leases, release: r.release });
  const open = (dir: string) => openLocalRuntime(dir, { role: 'cli', clock: systemClock });
  const messagesPerEvent = (r: LocalRuntime): Map<string, number> => new Map((r.store.db.prepare('SELECT event_key, COUNT(*) AS n FROM queue GROUP BY event_key').all() as Array<{ event_key: string; n: number }>)
    .map((row) => [row.event_key.split('\u0000')[0] as string, row.n]));

  test('a resume killed after any of its writes: the next resume queues every held event, each with one message', async () => {
    const seen: Array<{ k: number; heldAfterCrash: number }> = [];
    for (let k = 0; ; k++) {
      const dir = mkdtempSync(join(tmpdir(), 'hookagent-resume-kill-'));
      const setup = await open(dir);
      const held = await pausedWithHeld(setup.subscriptions, setup.events, 'held', Date.now());
      await setup.close();

      const dying = await open(dir);
      const crash = killAfterWrites(dying.store, k);
      await resumeSubscription(lifecycle(dying), 'held').catch((error: unknown) => {
        if (!crash.killed) throw error;
      });
      await dying.close();

      const next = await open(dir);
      try {
        seen.push({ k, heldAfterCrash: (await next.events.listByStatus('held', 'held')).length });
        await resumeSubscription(lifecycle(next), 'held');
        const queued = await next.events.listByStatus('held', 'queued');
        const messages = messagesPerEvent(next);
        expect({ k, held: (await next.events.listByStatus('held', 'held')).length, queued: queued.map((r) => r.event_id) }).toEqual({ k, held: 0, queued: held.map((r) => r.event_id) });
        expect({ k, messages: held.map((r) => messages.get(r.event_id) ?? 0) }).toEqual({ k, messages: held.map(() => 1) });
        expect((await next.subscriptions.get('held'))?.state).toBe('active');
      } finally {
        await next.close();
        rmSync(dir, { recursive: true, force: true });
      }
      if (!crash.killed) break;
    }
    // The kills landed before, inside and after the release.
    expect(seen[0]?.heldAfterCrash).toBe(HELD);
    expect(seen[seen.length - 1]?.heldAfterCrash).toBe(0);
  }, 60_000);

  test('two releasers at once (a resume in the CLI, ingest in serve: two connections) queue each held event once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'hookagent-resume-race-'));
    const [cli, serve] = [await open(dir), await open(dir)];
    try {
      const held = await pausedWithHeld(cli.subscriptions, cli.events, 'race', Date.now());
      const [a, b] = await Promise.all([releaseRecords(lifecycle(cli), held), releaseRecords(lifecycle(serve), held)]);
      expect([...a, ...b].map((r) => r.event_id).sort()).toEqual(held.map((r) => r.event_id).sort());
      const messages = messagesPerEvent(cli);
      expect(held.map((r) => messages.get(r.event_id))).toEqual(held.map(() => 1));
      // Released once, a record is not released again.
      expect(await releaseRecords(lifecycle(serve), held)).toEqual([]);
    } finally {
      await Promise.all([cli.close(), serve.close()]);
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('AWS (DynamoDB on dynalite, SQS on 127.0.0.1)', () => {
  let dynamo: TestDynamo;
  let sqs: LocalServer;
  beforeAll(async () => {
    [dynamo, sqs] = await Promise.all([startDynalite(), startLocalSqs()]);
  });
  afterAll(async () => Promise.all([dynamo.close(), sqs.close()]));

  const sentPerEvent = (): Map<string, number> => {
    const counts = new Map<string, number>();
    for (const body of sentBodies(sqs)) {
      const id = (JSON.parse(body) as QueueMessage).event_id;
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  };

  test('a resume killed after any of its calls: held events whose claim is still live are said; after the claim\'s minute the next resume queues them all', async () => {
    const clock = new ManualClock(Date.now());
    const stores = () => ({
      subscriptions: new DynamoSubscriptionStore(dynamo.client, dynamo.tables.subscriptions),
      events: new DynamoEventLog(dynamo.client, dynamo.tables.events),
      queue: new SqsEventQueue(new SQSClient({ endpoint: sqs.url, region: 'eu-west-1', credentials: { accessKeyId: 'AKID', secretAccessKey: 'secret' }, maxAttempts: 1 }), `${sqs.url}/000000000000/hookagent-test-queue`),
      leases: new DynamoLeaseStore(dynamo.client, dynamo.tables.dedup, clock),
    });
    const seen: number[] = [];
    for (let k = 0; ; k++) {
      const name = `aws-held-${k}`;
      const fresh = stores();
      const held = await pausedWithHeld(fresh.subscriptions, fresh.events, name, clock.now());
      const budget = callBudget(k);
      const dying = stores();
      const deps: LifecycleDeps = {
        subscriptions: dyingAfter(dying.subscriptions, budget), events: dyingAfter(dying.events, budget), queue: dyingAfter(dying.queue, budget),
        leases: dyingAfter(dying.leases, budget), clock,
      };
      await resumeSubscription(deps, name).catch((error: unknown) => {
        if (!budget.killed) throw error;
      });
      const next: LifecycleDeps = { ...stores(), clock };
      seen.push((await next.events.listByStatus(name, 'held')).length);

      // Run again at once: what a live (or just killed) releaser holds is said, not silently skipped.
      const again = await resumeSubscription(next, name);
      const stillHeld = (await next.events.listByStatus(name, 'held')).length;
      expect({ k, claimedElsewhere: ('claimedElsewhere' in again && again.claimedElsewhere) || 0 }).toEqual({ k, claimedElsewhere: stillHeld });

      // After the claim's minute, a resume releases the rest.
      clock.advance(RELEASE_CLAIM_MS + 1_000);
      await resumeSubscription(next, name);
      const queued = await next.events.listByStatus(name, 'queued');
      expect({ k, held: (await next.events.listByStatus(name, 'held')).length, queued: queued.map((r) => r.event_id) }).toEqual({ k, held: 0, queued: held.map((r) => r.event_id) });
      // Each was sent; one whose send landed just before the kill may go twice (the worker's lease and finished-record check absorb it).
      const sent = sentPerEvent();
      expect({ k, sentOnceOrTwice: held.map((r) => [1, 2].includes(sent.get(r.event_id) ?? 0)) }).toEqual({ k, sentOnceOrTwice: held.map(() => true) });
      if (!budget.killed) break;
      clock.advance(1_000);
    }
    expect(seen[0]).toBe(HELD);
    expect(seen[seen.length - 1]).toBe(0);
  }, 120_000);
});
