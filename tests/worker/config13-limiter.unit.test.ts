/**
 * config13 (hunt 13, D1): serve keeps one limiter for its lifetime and moves its limit with
 * each reloaded `agent.concurrency`: a raised limit starts waiting runs at once, a lowered one
 * lets the runs in flight finish and starts the next only once the active ones are under it.
 */
import { createLimiter } from '../../functions/core/worker/limiter';

/** A task the test ends by hand, recording that it started. */
function held(started: string[], name: string) {
  let finish!: () => void;
  const done = new Promise<void>((resolve) => (finish = resolve));
  return { task: async () => { started.push(name); await done; return name; }, finish };
}
const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

test('a raised limit starts the waiting runs at once, in arrival order', async () => {
  const limiter = createLimiter(1);
  const started: string[] = [];
  const [a, b, c] = ['a', 'b', 'c'].map((name) => held(started, name));
  const runs = [a, b, c].map((h) => limiter.run(h!.task));
  await settle();
  expect(started).toEqual(['a']);
  limiter.setLimit(3);
  await settle();
  expect({ started, active: limiter.active }).toEqual({ started: ['a', 'b', 'c'], active: 3 });
  [a, b, c].forEach((h) => h!.finish());
  expect(await Promise.all(runs)).toEqual(['a', 'b', 'c']);
  expect(limiter.active).toBe(0);
});

test('a lowered limit lets the runs in flight finish and holds the next until the active ones are under it', async () => {
  const limiter = createLimiter(2);
  const started: string[] = [];
  const [a, b, c] = ['a', 'b', 'c'].map((name) => held(started, name));
  const first = [limiter.run(a!.task), limiter.run(b!.task)];
  await settle();
  limiter.setLimit(1);
  const third = limiter.run(c!.task);
  await settle();
  expect({ started, active: limiter.active }).toEqual({ started: ['a', 'b'], active: 2 });
  a!.finish();
  await first[0];
  await settle();
  // One run (b) is still active: at the new limit of 1, c waits.
  expect({ started, active: limiter.active }).toEqual({ started: ['a', 'b'], active: 1 });
  b!.finish();
  await first[1];
  await settle();
  expect({ started, active: limiter.active }).toEqual({ started: ['a', 'b', 'c'], active: 1 });
  c!.finish();
  expect(await third).toBe('c');
  expect(limiter.active).toBe(0);
});

test('a limit that is not a positive integer is refused and the previous one kept', async () => {
  const limiter = createLimiter(1);
  expect(() => limiter.setLimit(0)).toThrow(RangeError);
  const started: string[] = [];
  const [a, b] = ['a', 'b'].map((name) => held(started, name));
  const runs = [limiter.run(a!.task), limiter.run(b!.task)];
  await settle();
  expect(started).toEqual(['a']);
  a!.finish();
  b!.finish();
  expect(await Promise.all(runs)).toEqual(['a', 'b']);
});
