/**
 * Steps of the wall clock, seen against the monotonic clock. The wall clock steps (NTP
 * correcting a drifted clock, a board without an RTC set right after boot, a VM resumed or
 * migrated); `performance.now()` does not. What the local store keeps on disk stays
 * wall-clock (other processes and a restart read it), so serve measures the deadlines of its
 * own work on the monotonic clock: a step must neither hand a message or a lease whose
 * holder still works to a second one, nor hold back what waited until the clock catches up.
 */
import { performance } from 'node:perf_hooks';
import { systemClock, type Clock } from '../core/ports';

/** A change of the two clocks' difference below this is drift (NTP slews by up to 0.5 ms/s), not a step. */
export const STEP_TOLERANCE_MS = 1_000;

/** The monotonic clock beside `clock`: performance.now() for the system clock; a test's clock is its own (it never steps). */
export function monotonicOf(clock: Clock): () => number {
  return clock === systemClock ? () => performance.now() : () => clock.now();
}

export interface ClockReading {
  /** The wall clock, epoch ms. */
  now: number;
  /** How far it stepped since the previous reading that saw a step (ms; forward > 0), 0 for none. */
  step: number;
  /** Forgets that this reading saw its step (what it was for failed): the next reading sees it again. */
  undo(): void;
}

export class WallClockSteps {
  /** Wall minus monotonic, as of the last step seen; undefined before the first reading. */
  private offset: number | undefined;

  constructor(private readonly clock: Clock, private readonly monotonic: () => number = monotonicOf(clock)) {}

  read(): ClockReading {
    const now = this.clock.now();
    const offset = now - this.monotonic();
    const before = this.offset;
    const step = before === undefined ? 0 : offset - before;
    if (before !== undefined && Math.abs(step) < STEP_TOLERANCE_MS) return { now, step: 0, undo: () => {} };
    this.offset = offset;
    return {
      now, step,
      undo: () => {
        if (this.offset === offset) this.offset = before;
      },
    };
  }
}
