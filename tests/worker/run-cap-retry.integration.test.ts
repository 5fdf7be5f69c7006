/**
 * Hunt 11 D4: `max_runs_per_hour` counts and checks the run of an event whose first attempt
 * ended before the gate (the payload store, S3 on AWS, briefly unavailable). The gate used
 * to count only attempt 1 (`attempts <= 1`), so such an event ran beyond the cap, uncounted.
 * Now the record says the hour its run was counted in (`run_counted`): counted and checked
 * whenever that is absent, never twice, and given back to that hour. Over the worker with
 * both stores' event logs and counters: SQLite, and DynamoDB on dynalite.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoCounterStore } from '../../functions/aws/counter-store';
import { DynamoEventLog } from '../../functions/aws/event-log';
import type { Agent, AgentRequest } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { HookError } from '../../functions/core/errors';
import { jsonLogger } from '../../functions/core/log';
import type { CounterStore, EventLog } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { subscriptionBudgetKey } from '../../functions/core/worker/budget';
import { giveBackRun, runsKey } from '../../functions/core/worker/gates';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { RecordWriter } from '../../functions/core/worker/record';
import { FilePayloadStore } from '../../functions/local/file-payload-store';
import { SqliteCounterStore } from '../../functions/local/sqlite/counters';
import { SqliteEventLog } from '../../functions/local/sqlite/event-log';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { tempStore, type TestStore } from '../support/local-store';
import { MemorySubscriptionStore } from '../support/memory';
import { ManualClock } from '../support/recording-queue';

/** An agent that fails retryably as many times as asked, then answers. */
class CountingAgent implements Agent {
  calls: AgentRequest[] = [];
  failures = 0;
  async run(request: AgentRequest) {
    this.calls.push(request);
    if (this.failures > 0) {
      this.failures -= 1;
      throw new HookError('provider_unavailable', 'The provider answered 503', { retryable: true });
    }
    return { text: `ran ${this.calls.length}`, steps: 1, refusedTools: [] };
  }
}

/** The payload store answering a retryable failure once for the objects named (S3's SlowDown / 503). */
class FlakyPayloads extends FilePayloadStore {
  failNext = new Set<string>();
  override async get(pointer: string): Promise<string> {
    if (this.failNext.delete(pointer)) throw new HookError('unavailable', 'The payload store is unavailable (SlowDown)', { retryable: true });
    return super.get(pointer);
  }
}

/** Real counters whose reads fail while `failReads` is set (the budget check's read). */
class FlakyCounters implements CounterStore {
  failReads = false;
  constructor(private readonly inner: CounterStore) {}
  add(key: string, amount: number, ttlSeconds: number) {
    return this.inner.add(key, amount, ttlSeconds);
  }
  async get(key: string) {
    if (this.failReads) throw new HookError('store_unavailable', 'The counters cannot be read (throttled)');
    return this.inner.get(key);
  }
}

let dynamo: TestDynamo;
let sqlite: TestStore;
let dir: string;
beforeAll(async () => {
  dynamo = await startDynalite();
  sqlite = tempStore();
  dir = mkdtempSync(join(tmpdir(), 'hookagent-run-cap-retry-'));
});
afterAll(async () => {
  sqlite.close();
  await dynamo.close();
  rmSync(dir, { recursive: true, force: true });
});

type Stores = (clock: ManualClock) => { events: EventLog; counters: CounterStore };
const adapters: Array<[string, Stores]> = [
  ['SQLite', (clock) => ({ events: new SqliteEventLog(sqlite.store), counters: new SqliteCounterStore(sqlite.store, clock) })],
  ['DynamoDB on dynalite', (clock) => ({ events: new DynamoEventLog(dynamo.client, dynamo.tables.events), counters: new DynamoCounterStore(dynamo.client, dynamo.tables.dedup, clock) })],
];

let n = 0;
describe.each(adapters)('max_runs_per_hour with retries before the gate, %s', (_name, stores) => {
  async function setup(fields: Partial<Subscription>) {
    n += 1;
    const clock = new ManualClock(Date.parse('2026-11-24T10:20:00Z'));
    const { events, counters: real } = stores(clock);
    const counters = new FlakyCounters(real);
    const subscriptions = new MemorySubscriptionStore();
    const subscription: Subscription = {
      name: `retried${n}`, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Alert {alert}', ...fields,
    };
    await subscriptions.create(subscription);
    const agent = new CountingAgent();
    const payloads = new FlakyPayloads(join(dir, subscription.name));
    const deps: WorkerDeps = {
      events, subscriptions, payloads, agent, skills: new SkillLibrary(undefined), targets: { log: logTarget },
      config: { agent: { provider: 'openai', model: 'gpt-test', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
      clock, logger: jsonLogger(() => undefined), maxReceiveCount: 5, counters,
    };
    let m = 0;
    /** An event with its payload in the payload store, as ingest keeps large ones (and every one on AWS). */
    const message = async (): Promise<QueueMessage> => {
      m += 1;
      const id = `evt_${subscription.name}_${m}`;
      return {
        v: 1, event_id: id, subscription: subscription.name, source: 'custom', event: 'alert', delivery_id: `d-${id}`,
        received_at: new Date(clock.now()).toISOString(), payload_ref: await payloads.put(id, JSON.stringify({ alert: `a${m}` })),
      };
    };
    const receive = async (sent: QueueMessage, receiveCount: number) => {
      await processMessage(JSON.stringify(sent), receiveCount, deps);
      return (await events.get(sent.event_id, sent.subscription))!;
    };
    const runs = () => real.get(runsKey(subscription.name, clock.now()));
    return { deps, events, counters, agent, payloads, message, receive, runs, subscription, clock };
  }

  test('cap 1: an event whose payload read failed once is checked against the cap on its retry (rate_limited, not a second run)', async () => {
    const { agent, payloads, message, receive, runs } = await setup({ max_runs_per_hour: 1 });
    expect((await receive(await message(), 1)).status).toBe('delivered');
    const second = await message();
    payloads.failNext.add(second.payload_ref!);
    expect(await receive(second, 1)).toMatchObject({ status: 'queued', attempts: 1, error: { code: 'unavailable' } });
    const record = await receive(second, 2);
    expect({ status: record.status, agentCalls: agent.calls.length, runsThisHour: await runs() }).toEqual({ status: 'rate_limited', agentCalls: 1, runsThisHour: 1 });
    expect(record.run_counted).toBeUndefined();
  });

  test('cap 2: such an event runs and is counted once; the record says the hour, and a retry after its run does not count it again', async () => {
    const { agent, payloads, message, receive, runs } = await setup({ max_runs_per_hour: 2 });
    const sent = await message();
    payloads.failNext.add(sent.payload_ref!);
    expect((await receive(sent, 1)).status).toBe('queued');
    agent.failures = 1;
    // Receive 2 passes the gate (counted), then the provider fails: the count is kept for the retry.
    expect(await receive(sent, 2)).toMatchObject({ status: 'queued', run_counted: '2026-11-24T10', error: { code: 'provider_unavailable' } });
    expect(await runs()).toBe(1);
    expect(await receive(sent, 3)).toMatchObject({ status: 'delivered', run_counted: '2026-11-24T10' });
    expect([agent.calls.length, await runs()]).toEqual([2, 1]);
    // The hour's second run is still free, and a third is refused.
    expect((await receive(await message(), 1)).status).toBe('delivered');
    expect((await receive(await message(), 1)).status).toBe('rate_limited');
    expect(await runs()).toBe(2);
  });

  test('a run counted before a retry is given back when the retry ends over budget without calling the agent', async () => {
    const { agent, counters, message, receive, runs, subscription, clock } = await setup({ max_runs_per_hour: 1, daily_tokens: 100 });
    const sent = await message();
    counters.failReads = true;
    expect(await receive(sent, 1)).toMatchObject({ status: 'queued', run_counted: '2026-11-24T10' });
    expect(await runs()).toBe(1);
    counters.failReads = false;
    await counters.add(subscriptionBudgetKey(subscription.name, clock.now()), 100, 3600);
    expect((await receive(sent, 2)).status).toBe('over_budget');
    expect([agent.calls.length, await runs()]).toEqual([0, 0]);
  });

  test('giveBackRun gives the run back to the hour it was counted in, after the hour turned, and clears the record\'s hour with its next write', async () => {
    const { events, counters, message, receive, subscription, clock } = await setup({ max_runs_per_hour: 3 });
    const record = await receive(await message(), 1);
    expect(record.run_counted).toBe('2026-11-24T10');
    const counted = runsKey(subscription.name, clock.now());
    expect(await counters.get(counted)).toBe(1);
    clock.advance(3600_000);
    const writer = new RecordWriter(record, events, new FilePayloadStore(join(dir, 'unused')), () => new Date(clock.now()).toISOString(), true);
    await giveBackRun(writer, subscription, counters);
    await writer.save();
    expect(await counters.get(counted)).toBe(0);
    expect((await events.get(record.event_id, record.subscription))!.run_counted).toBeUndefined();
  });
});
