/**
 * `max_runs_per_hour` in the worker over both counter stores (SQLite and DynamoDB on
 * dynalite): only runs that happen count (hunt 9). A `rate_limited` refusal and an
 * `over_budget` event give their count back, so raising the cap in the same hour lets a
 * replay run; the refusal says the hour's real count; two workers at cap - 1 never both run.
 */
import { DynamoCounterStore } from '../../functions/aws/counter-store';
import type { Agent, AgentRequest } from '../../functions/core/agent/agent';
import { logTarget } from '../../functions/core/delivery/log-target';
import { jsonLogger } from '../../functions/core/log';
import type { CounterStore } from '../../functions/core/ports';
import { SkillLibrary } from '../../functions/core/skills/library';
import type { QueueMessage, Subscription } from '../../functions/core/types';
import { subscriptionBudgetKey } from '../../functions/core/worker/budget';
import { runsKey } from '../../functions/core/worker/gates';
import { processMessage, type WorkerDeps } from '../../functions/core/worker/process';
import { SqliteCounterStore } from '../../functions/local/sqlite/counters';
import { startDynalite, type TestDynamo } from '../support/dynalite';
import { tempStore, type TestStore } from '../support/local-store';
import { MemoryEventLog, MemoryPayloadStore, MemorySubscriptionStore } from '../support/memory';
import { ManualClock } from '../support/recording-queue';

class CountingAgent implements Agent {
  calls: AgentRequest[] = [];
  async run(request: AgentRequest) {
    this.calls.push(request);
    return { text: `ran ${this.calls.length}`, steps: 1, refusedTools: [] };
  }
}

let dynamo: TestDynamo;
let sqlite: TestStore;
beforeAll(async () => {
  dynamo = await startDynalite();
  sqlite = tempStore();
});
afterAll(async () => {
  sqlite.close();
  await dynamo.close();
});

const adapters: Array<[string, (clock: ManualClock) => CounterStore]> = [
  ['SQLite', (clock) => new SqliteCounterStore(sqlite.store, clock)],
  ['DynamoDB on dynalite', (clock) => new DynamoCounterStore(dynamo.client, dynamo.tables.dedup, clock)],
];

let n = 0;
describe.each(adapters)('max_runs_per_hour over %s counters', (_name, makeCounters) => {
  async function setup(fields: Partial<Subscription>) {
    n += 1;
    const clock = new ManualClock();
    const counters = makeCounters(clock);
    const subscriptions = new MemorySubscriptionStore();
    const subscription: Subscription = {
      name: `capped${n}`, events: [], skills: [], deliver: ['log'], state: 'active', created_at: '', updated_at: '', secret: 'x', prompt: 'Alert {alert}', ...fields,
    };
    await subscriptions.create(subscription);
    const events = new MemoryEventLog();
    const agent = new CountingAgent();
    const deps: WorkerDeps = {
      events, subscriptions, payloads: new MemoryPayloadStore(), agent, skills: new SkillLibrary(undefined), targets: { log: logTarget },
      config: { agent: { provider: 'openai', model: 'gpt-test', timeout_ms: 1000, max_steps: 4 }, delivery: { timeout_ms: 1000, codehost: {} } },
      clock, logger: jsonLogger(() => undefined), maxReceiveCount: 3, counters,
    };
    const message = (extra: Partial<QueueMessage> = {}): QueueMessage => {
      n += 1;
      return {
        v: 1, event_id: `evt_cap${n}`, subscription: subscription.name, source: 'custom', event: 'alert', delivery_id: `d${n}`,
        received_at: new Date(clock.now()).toISOString(), payload: { alert: `a${n}` }, ...extra,
      };
    };
    const run = async (m: QueueMessage) => {
      await processMessage(JSON.stringify(m), 1, deps);
      return (await events.get(m.event_id, m.subscription))!;
    };
    const runs = () => counters.get(runsKey(subscription.name, clock.now()));
    const update = (changes: Partial<Subscription>) => subscriptions.put({ ...subscription, ...changes });
    return { deps, counters, agent, message, run, runs, update, subscription, clock };
  }

  test('refusals give their count back: after raising the cap, a replay runs in the same hour; the refusal says the real count', async () => {
    const { agent, message, run, runs, update } = await setup({ max_runs_per_hour: 1 });
    expect((await run(message())).status).toBe('delivered');
    const refused = [message(), message()];
    for (const m of refused) {
      expect(await run(m)).toMatchObject({ status: 'rate_limited', error: { code: 'rate_limited', message: `max_runs_per_hour 1 reached (1 run this hour); replay it with 'hookagent webhook replay ${m.event_id}'` } });
    }
    expect(await runs()).toBe(1);

    await update({ max_runs_per_hour: 2 });
    expect((await run(message({ replay_of: refused[0]!.event_id }))).status).toBe('delivered');
    expect(await runs()).toBe(2);
    const over = message({ replay_of: refused[1]!.event_id });
    expect((await run(over)).error?.message).toContain('max_runs_per_hour 2 reached (2 runs this hour)');
    expect(await runs()).toBe(2);
    expect(agent.calls).toHaveLength(2);
  });

  test('an event refused by the token budget after the gate is no run: the hour\'s only run is still free', async () => {
    const { counters, agent, message, run, runs, update, subscription, clock } = await setup({ max_runs_per_hour: 1, daily_tokens: 100 });
    await counters.add(subscriptionBudgetKey(subscription.name, clock.now()), 100, 3600);
    expect(await run(message())).toMatchObject({ status: 'over_budget', error: { code: 'over_budget' } });
    expect(await runs()).toBe(0);
    expect(agent.calls).toHaveLength(0);

    await update({ max_runs_per_hour: 1, daily_tokens: 1000 });
    expect((await run(message())).status).toBe('delivered');
    expect(await runs()).toBe(1);
    expect((await run(message())).status).toBe('rate_limited');
  });

  test('an event that fails before its agent is called (a skill that cannot be loaded) is no run', async () => {
    const { agent, message, run, runs } = await setup({ max_runs_per_hour: 1, skills: ['no-such-skill'] });
    expect((await run(message())).status).toBe('failed');
    expect(agent.calls).toHaveLength(0);
    expect(await runs()).toBe(0);
  });

  test('two workers at cap - 1: exactly one runs, and the count ends at the cap', async () => {
    const { deps, counters, agent, message, runs, subscription, clock } = await setup({ max_runs_per_hour: 3 });
    await counters.add(runsKey(subscription.name, clock.now()), 2, 7200);
    const pair = [message(), message()];
    await Promise.all(pair.map((m) => processMessage(JSON.stringify(m), 1, deps)));
    const statuses = await Promise.all(pair.map(async (m) => (await deps.events.get(m.event_id, m.subscription))?.status));
    expect(statuses.sort()).toEqual(['delivered', 'rate_limited']);
    expect(agent.calls).toHaveLength(1);
    expect(await runs()).toBe(3);
  });

  test('a give-back never takes a counter below zero, nor starts one', async () => {
    const clock = new ManualClock();
    const counters = makeCounters(clock);
    const key = `giveback${++n}`;
    expect(await counters.add(key, -1, 60)).toBe(0);
    expect(await counters.get(key)).toBe(0);
    expect(await counters.add(key, 2, 60)).toBe(2);
    expect(await counters.add(key, -1, 60)).toBe(1);
    expect(await counters.add(key, -5, 60)).toBe(0);
    expect(await counters.add(key, 1, 60)).toBe(1);
    clock.advance(60_000);
    // An expired counter is gone: a late give-back leaves it so, and the next add starts afresh.
    expect(await counters.add(key, -1, 60)).toBe(0);
    expect(await counters.add(key, 1, 60)).toBe(1);
    clock.advance(30_000);
    expect(await counters.get(key)).toBe(1);
  });
});
