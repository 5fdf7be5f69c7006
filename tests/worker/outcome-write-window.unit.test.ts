/**
 * Hunt 10 (D2): a chat post's outcome write is retried in place, with backoff, while the
 * invocation and the lease leave time for it (less a margin), and only then fails; where the
 * invocation is not bounded (the local worker) a failure is given back at once, as before.
 * The clock moves only as the write's waits are slept.
 */
import { HookError } from '../../functions/core/errors';
import { silentLogger } from '../../functions/core/log';
import { writeChatOutcome } from '../../functions/core/worker/outcome-write';
import { INVOCATION_MARGIN_MS } from '../../functions/core/worker/retry-schedule';
import type { WorkerDeps } from '../../functions/core/worker/process';

interface Run {
  /** When the store comes back (ms from the start); Infinity: never. */
  outageMs: number;
  /** The invocation's time left at the start; undefined: not bounded. */
  remainingMs?: number;
  /** The lease's time left at the start. */
  leaseMs?: number;
  error?: HookError;
}

async function run({ outageMs, remainingMs, leaseMs = 600_000, error = new HookError('unavailable', 'throttled', { retryable: true }) }: Run) {
  let now = 0;
  const tries: number[] = [];
  const deps = { clock: { now: () => now }, ...(remainingMs !== undefined ? { remainingMs: () => remainingMs - now } : {}) } as unknown as WorkerDeps;
  const lease = { until: () => leaseMs, extend: async () => true, release: async () => undefined };
  const write = async () => {
    tries.push(now);
    now += 50; // the write's own round trip
    if (now < outageMs) throw error;
  };
  const outcome = await writeChatOutcome({ deps, lease, logger: silentLogger }, write, async (ms) => {
    now += ms;
  }).then(() => 'written', (e: unknown) => (e === error ? 'failed' : e));
  return { outcome, tries, endedAt: now };
}

test('a store outage shorter than the invocation\'s time left is waited out: the outcome is written', async () => {
  const got = await run({ outageMs: 20_000, remainingMs: 240_000 });
  expect(got.outcome).toBe('written');
  expect(got.tries.length).toBeGreaterThan(3);
  expect(got.endedAt).toBeGreaterThanOrEqual(20_000);
});

test('a longer outage: retried until the invocation\'s time left, less the margin, runs out; then the attempt fails', async () => {
  const got = await run({ outageMs: Number.POSITIVE_INFINITY, remainingMs: 60_000 });
  expect(got.outcome).toBe('failed');
  const window = 60_000 - INVOCATION_MARGIN_MS;
  expect(got.endedAt).toBeLessThanOrEqual(window);
  // The waits grow to a few seconds, so the last try is at most one wait (and its round trip) short of the window.
  expect(got.tries.at(-1)).toBeGreaterThan(window - 5_000);
});

test('the lease bounds it too: no retry past the lease, less the margin, where another copy could take the message over', async () => {
  const got = await run({ outageMs: Number.POSITIVE_INFINITY, remainingMs: 240_000, leaseMs: 30_000 });
  expect(got.outcome).toBe('failed');
  expect(got.endedAt).toBeLessThanOrEqual(30_000 - INVOCATION_MARGIN_MS);
  expect(got.tries.at(-1)).toBeGreaterThan(30_000 - INVOCATION_MARGIN_MS - 5_000);
});

test('no time left beyond the margin, an unbounded (local) worker, or a permanent error: it fails at the first try', async () => {
  expect((await run({ outageMs: 1_000, remainingMs: INVOCATION_MARGIN_MS })).tries).toEqual([0]);
  expect((await run({ outageMs: 1_000 })).tries).toEqual([0]);
  const permanent = new HookError('store_damaged', 'the store is damaged');
  expect(await run({ outageMs: 1_000, remainingMs: 240_000, error: permanent })).toMatchObject({ outcome: 'failed', tries: [0] });
});
