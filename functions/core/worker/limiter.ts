/**
 * A counting semaphore: at most `limit` agent runs at once in this process. On AWS a
 * container runs one batch at a time, so the overall bound is the event source mapping's
 * maximum concurrency × this limit.
 */
export interface Limiter {
  run<T>(task: () => Promise<T>): Promise<T>;
  readonly active: number;
}

export function createLimiter(limit: number): Limiter {
  if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`A concurrency limit must be a positive integer, not ${limit}`);
  const waiting: Array<() => void> = [];
  let active = 0;
  const release = () => {
    const next = waiting.shift();
    if (next) next();
    else active -= 1;
  };
  return {
    get active() {
      return active;
    },
    async run<T>(task: () => Promise<T>): Promise<T> {
      if (active < limit) active += 1;
      // The slot passes straight from a finishing run to the next waiter.
      else await new Promise<void>((resolve) => waiting.push(resolve));
      try {
        return await task();
      } finally {
        release();
      }
    },
  };
}
