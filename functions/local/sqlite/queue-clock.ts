/**
 * The local queue's times through steps of the wall clock (clock-steps.ts). `visible_at` stays
 * wall-clock on disk; the consumer (the queue that receives: serve, which holds the serve lock)
 * re-times the rows when its receive or a change of visibility sees a step, so a step changes
 * no wait that was running:
 * - forward: messages in flight stay invisible for what is left of their visibility timeout.
 *   Their handlers in this process still run (serve is the queue's only consumer), and a
 *   second handler would run the agent and deliver again.
 * - backward: everything timed before the step (in flight, paced retries, delayed sends, and
 *   messages that were visible already) keeps its time left instead of waiting for the
 *   clock to catch up (hours).
 * A wait of a message not in flight (a paced retry, a debounce window) may end up to a forward
 * step early: a message sent after the step (by the CLI, say) cannot be told apart from it.
 * A backward step is seen at the next receive (within the consumer's idle check, or when a
 * batch ends) or change of visibility; a delayed send made in between ends at once.
 */
import type Database from 'better-sqlite3';
import type { Clock } from '../../core/ports';
import { WallClockSteps } from '../clock-steps';
import type { StoreDb } from './db';

export class QueueClock {
  private readonly steps: WallClockSteps;
  private readonly inFlightLater: Database.Statement;
  private readonly waitingEarlier: Database.Statement;
  /** Set by the first receive: only the consumer re-times rows (two processes would shift them twice). */
  private consumer = false;

  constructor(private readonly store: StoreDb, private readonly clock: Clock, monotonic?: () => number) {
    this.steps = new WallClockSteps(clock, monotonic);
    this.inFlightLater = store.db.prepare('UPDATE queue SET visible_at = visible_at + ? WHERE in_flight = 1');
    this.waitingEarlier = store.db.prepare('UPDATE queue SET visible_at = visible_at + ? WHERE visible_at > ?');
  }

  /**
   * A write of the queue that times rows (`receiving`: a receive), given the wall clock. In
   * the consumer, a step seen re-times the rows first, in the same transaction; when that
   * fails, the step is seen again by the next write.
   */
  write<T>(receiving: boolean, run: (now: number) => T, options: { durable?: boolean } = {}): Promise<T> {
    this.consumer ||= receiving;
    if (!this.consumer) return this.store.write(() => run(this.clock.now()), options);
    let undo = () => {};
    return this.store.write(() => {
      const reading = this.steps.read();
      undo = reading.undo;
      if (reading.step > 0) this.inFlightLater.run(reading.step);
      else if (reading.step < 0) this.waitingEarlier.run(reading.step, reading.now);
      return run(reading.now);
    }, options).catch((error: unknown) => {
      undo();
      throw error;
    });
  }
}
