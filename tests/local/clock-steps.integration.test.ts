/**
 * Steps of the wall clock (NTP, a VM resumed) against the monotonic clock, in the local
 * queue and lease store: what is on disk stays wall-clock, and serve's own waits and leases
 * keep the time they had left. The two clocks are driven by hand here; clock-step.e2e runs
 * serve through real steps.
 */
import { STEP_TOLERANCE_MS, WallClockSteps } from '../../functions/local/clock-steps';
import { SqliteLeaseStore } from '../../functions/local/sqlite/leases';
import { SqliteQueue } from '../../functions/local/sqlite/queue';
import { tempStore, type TestStore } from '../support/local-store';
import { ManualClock } from '../support/recording-queue';

const stores: TestStore[] = [];
afterAll(() => stores.forEach((s) => s.close()));

/** A wall clock and a monotonic one: `pass` moves both, `step` only the wall clock. */
function clocks() {
  const wall = new ManualClock();
  const mono = new ManualClock(0);
  return {
    wall, monotonic: () => mono.now(),
    pass(ms: number) {
      wall.advance(ms);
      mono.advance(ms);
    },
    step: (ms: number) => wall.advance(ms),
  };
}

function store(): TestStore {
  const t = tempStore();
  stores.push(t);
  return t;
}

function queueWith(c: ReturnType<typeof clocks>): SqliteQueue {
  return new SqliteQueue(store().store, { visibilityTimeoutMs: 30_000, maxReceiveCount: 5, clock: c.wall, monotonic: c.monotonic });
}

const bodies = (received: Array<{ body: string }>) => received.map((m) => m.body);

test('WallClockSteps: a step is seen once, drift below the tolerance is not a step, and an undone reading is seen again', () => {
  const c = clocks();
  const steps = new WallClockSteps(c.wall, c.monotonic);
  expect(steps.read().step).toBe(0);
  c.pass(60_000);
  c.step(STEP_TOLERANCE_MS - 1);
  expect(steps.read().step).toBe(0);
  c.step(-10 * 60_000);
  const reading = steps.read();
  expect(reading.step).toBe(-10 * 60_000 + STEP_TOLERANCE_MS - 1);
  reading.undo();
  expect(steps.read().step).toBe(reading.step);
  expect(steps.read().step).toBe(0);
});

test('a forward step does not hand out a message in flight again; it comes back when its visibility timeout has passed on the monotonic clock', async () => {
  const c = clocks();
  const queue = queueWith(c);
  await queue.sendBodies(['in-flight']);
  expect(bodies(await queue.receive(10))).toEqual(['in-flight']);
  c.pass(1_000);
  c.step(10 * 60_000);
  await queue.sendBodies(['next']);
  expect(bodies(await queue.receive(10))).toEqual(['next']);
  expect(await queue.nextVisibleIn()).toBe(29_000);
  c.pass(28_999);
  expect(await queue.receive(10)).toEqual([]);
  c.pass(1);
  expect((await queue.receive(10)).map((m) => [m.body, m.receiveCount])).toEqual([['in-flight', 2]]);
});

test('a backward step of 3 hours holds nothing back: waiting messages stay visible, a paced retry and a message in flight keep the time they had left', async () => {
  const c = clocks();
  const queue = queueWith(c);
  await queue.sendBodies(['in-flight', 'retried', 'waiting']);
  expect(bodies(await queue.receive(1))).toEqual(['in-flight']);
  const [retried] = await queue.receive(1);
  await queue.changeVisibility(retried!.receiptHandle, 20);
  c.pass(1_000);
  c.step(-3 * 3600_000);
  expect(bodies(await queue.receive(10))).toEqual(['waiting']);
  expect(await queue.nextVisibleIn()).toBe(19_000);
  c.pass(19_000);
  expect(bodies(await queue.receive(10))).toEqual(['retried']);
  c.pass(10_000);
  expect(bodies(await queue.receive(10))).toEqual(['in-flight']);
});

test('a change of visibility right after a backward step times the message on the stepped clock: its wait neither ends at once nor is shifted later', async () => {
  const c = clocks();
  const queue = queueWith(c);
  await queue.sendBodies(['retried']);
  const [m] = await queue.receive(1);
  c.step(-3 * 3600_000);
  await queue.changeVisibility(m!.receiptHandle, 20);
  expect(await queue.nextVisibleIn()).toBe(20_000);
  expect(await queue.receive(1)).toEqual([]);
  c.pass(20_000);
  expect(bodies(await queue.receive(1))).toEqual(['retried']);
});

test('a lease held in this process is not taken over after a forward step while its holder works; it is once it has run out on the monotonic clock', async () => {
  const c = clocks();
  const leases = new SqliteLeaseStore(store().store, c.wall, c.monotonic);
  expect(await leases.acquire('evt_1', 'alerts', 'first', 280_000)).toBe(true);
  c.pass(1_000);
  c.step(10 * 60_000);
  expect(await leases.acquire('evt_1', 'alerts', 'second', 280_000)).toBe(false);
  // The holder renews its own lease: another 280 s from now.
  expect(await leases.acquire('evt_1', 'alerts', 'first', 280_000)).toBe(true);
  c.pass(279_999);
  expect(await leases.acquire('evt_1', 'alerts', 'second', 280_000)).toBe(false);
  c.pass(1);
  expect(await leases.acquire('evt_1', 'alerts', 'second', 280_000)).toBe(true);
  expect(await leases.acquire('evt_1', 'alerts', 'first', 280_000)).toBe(false);
  await leases.release('evt_1', 'alerts', 'second');
  expect(await leases.acquire('evt_1', 'alerts', 'third', 280_000)).toBe(true);
});

test('a lease in this process whose holder is stuck runs out on the monotonic clock, not hours later after a backward step', async () => {
  const c = clocks();
  const leases = new SqliteLeaseStore(store().store, c.wall, c.monotonic);
  expect(await leases.acquire('evt_1', 'alerts', 'stuck', 30_000)).toBe(true);
  c.step(-3 * 3600_000);
  c.pass(29_999);
  expect(await leases.acquire('evt_1', 'alerts', 'next', 30_000)).toBe(false);
  c.pass(1);
  expect(await leases.acquire('evt_1', 'alerts', 'next', 30_000)).toBe(true);
});

test('a lease held by another process is judged by its expiry on disk (wall clock), as before', async () => {
  const c = clocks();
  const t = store();
  const here = new SqliteLeaseStore(t.store, c.wall, c.monotonic);
  const elsewhere = new SqliteLeaseStore(t.reopen(), c.wall, c.monotonic);
  expect(await elsewhere.acquire('evt_1', 'alerts', 'cli', 30_000)).toBe(true);
  expect(await here.acquire('evt_1', 'alerts', 'serve', 30_000)).toBe(false);
  c.pass(30_000);
  expect(await here.acquire('evt_1', 'alerts', 'serve', 30_000)).toBe(true);
  // `elsewhere` believes it still holds it until it learns otherwise from the row.
  expect(await elsewhere.acquire('evt_1', 'alerts', 'cli', 30_000)).toBe(false);
  expect(await elsewhere.acquire('evt_1', 'alerts', 'other', 30_000)).toBe(false);
});
