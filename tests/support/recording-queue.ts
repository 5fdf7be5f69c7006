/** An EventQueue adapter for tests: keeps what was sent, and can be told to refuse sends. */
import { HookError } from '../../functions/core/errors';
import type { EventQueue, SendOptions } from '../../functions/core/ports';
import type { QueueMessage } from '../../functions/core/types';

export class RecordingQueue implements EventQueue {
  readonly sent: QueueMessage[] = [];
  /** The delay each sent message asked for (0 without one), in the order of `sent`. */
  readonly delays: number[] = [];
  private refusals = 0;

  refuseNext(count = 1): void {
    this.refusals = count;
  }

  async send(messages: QueueMessage[], options: SendOptions = {}): Promise<void> {
    if (this.refusals > 0) {
      this.refusals -= 1;
      throw new HookError('unavailable', 'The queue is unavailable (test refusal)', { retryable: true });
    }
    this.sent.push(...structuredClone(messages));
    this.delays.push(...messages.map(() => options.delaySeconds ?? 0));
  }
}

/** A clock the test moves by hand. */
export class ManualClock {
  constructor(public current = Date.parse('2026-11-22T12:00:00Z')) {}
  now(): number {
    return this.current;
  }
  advance(ms: number): void {
    this.current += ms;
  }
}
