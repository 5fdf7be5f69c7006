/**
 * A process killed (kill -9) at a chosen point, on real stores. Locally: its first `k`
 * writes to the SQLite store are committed and every later one never runs (a killed
 * process commits nothing more). On AWS: its first `k` calls to DynamoDB/SQS adapters go
 * through and every later one fails. The test then opens the stores again, as the next
 * process would, and checks what the crash left.
 */
import type { StoreDb } from '../../functions/local/sqlite/db';

export class Killed extends Error {
  constructor() {
    super('the process was killed here (test)');
  }
}

export interface CrashPoint {
  /** Whether the process "died" (a write or call was refused). */
  readonly killed: boolean;
}

/** Lets the first `k` writes of `store` run; refuses every later one. */
export function killAfterWrites(store: StoreDb, k: number): CrashPoint {
  const write = store.write.bind(store);
  const state = { killed: false, left: k };
  store.write = (<T>(run: () => T, options?: { durable?: boolean }): Promise<T> => {
    if (state.left <= 0) {
      state.killed = true;
      return Promise.reject(new Killed());
    }
    state.left -= 1;
    return write(run, options);
  }) as StoreDb['write'];
  return state;
}

/** A budget of calls shared by every adapter wrapped with it. */
export interface CallBudget extends CrashPoint {
  left: number;
  killed: boolean;
}

export const callBudget = (k: number): CallBudget => ({ left: k, killed: false });

/** `target` whose method calls spend `budget`; once it is spent, every call fails (the process is gone). */
export function dyingAfter<T extends object>(target: T, budget: CallBudget): T {
  return new Proxy(target, {
    get(object, property) {
      const value = Reflect.get(object, property, object) as unknown;
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        if (budget.left <= 0) {
          budget.killed = true;
          return Promise.reject(new Killed());
        }
        budget.left -= 1;
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
}
