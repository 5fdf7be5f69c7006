/**
 * A counting semaphore: at most `limit` agent runs at once in this process. On AWS a
 * container runs one batch at a time, so the overall bound is the event source mapping's
 * maximum concurrency × this limit. `serve` keeps one for its lifetime and moves its limit
 * with each reloaded `agent.concurrency`.
 */
export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  readonly active: number;
  /**
   * The bound for runs that start from now on. Runs in flight finish and still count:
   * after a lower limit, a waiting run starts only once the active ones are under it.
   */
  setLimit(limit: number): void;
}

function checked(limit: number): number {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`A concurrency limit must be a positive integer, not ${limit}`);
  return limit;
}

export function createLimiter(initialLimit: number): Limiter {
  let limit = checked(initialLimit);
  const waiting: Array<() => void> = [];
  let active = 0;
  // Waiters start in arrival order while there is room: the slot is theirs before any newcomer's.
  const admit = () => {
    while (active < limit && waiting.length > 0) {
      active += 1;
      waiting.shift()?.();
    }
  };
  return {
    get active() {
      return active;
    },
    setLimit(next: number) {
      limit = checked(next);
      admit();
    },
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active < limit && waiting.length === 0) active += 1;
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        active -= 1;
        admit();
      }
    },
  };
}
