/**
 * AtomicAccept over SQLite: a new event's committed delivery-id claim, its records, its
 * queue messages and, for debounced ones, their subjects' latest event, in one write, so
 * one transaction and one WAL fsync stand behind the 202 and there is never a pending
 * claim to commit or to clean up after a crash, nor a latest event without its message.
 */
import type { AtomicAccept, Claim, ClaimOptions, DelayedMessage } from '../../core/ports';
import type { EventRecord, QueueMessage } from '../../core/types';
import { DEBOUNCE_TTL_SECONDS } from '../../core/worker/gates';
import type { StoreDb } from './db';
import type { SqliteDebounceStore } from './debounce';
import type { SqliteDedupStore } from './dedup';
import type { SqliteEventLog } from './event-log';
import type { SqliteQueue } from './queue';
import { bodiesOf, delayMs } from './queue-rows';

export class SqliteAtomicAccept implements AtomicAccept {
  constructor(
    private readonly store: StoreDb,
    private readonly dedup: SqliteDedupStore,
    private readonly events: SqliteEventLog,
    private readonly queue: SqliteQueue,
    private readonly debounce: SqliteDebounceStore,
  ) {}

  async acceptNew(input: { dedupKey?: string; claim: ClaimOptions; records: EventRecord[]; messages: QueueMessage[]; delayed?: DelayedMessage[] }): Promise<Claim> {
    // The messages are the records' own, written in this same transaction: queued by reference.
    const [bodies, keys] = bodiesOf(input.messages, true);
    const delayed = input.delayed ?? [];
    const claim = await this.store.write((): Claim => {
      const found: Claim = input.dedupKey ? this.dedup.claimNow(input.dedupKey, input.claim, true) : { kind: 'new' };
      if (found.kind !== 'new') return found;
      this.events.putNow(input.records);
      this.queue.sendNow(bodies, keys, 0, input.messages);
      for (const { message, delaySeconds } of delayed) {
        // Not handed to the consumer: it will not want it before the delay.
        const [body, key] = bodiesOf([message], true);
        this.queue.sendNow(body, key, delayMs(delaySeconds));
        this.debounce.setLatestNow(message.subscription, message.subject_key as string, message.event_id, DEBOUNCE_TTL_SECONDS);
      }
      return found;
    }).catch((error: unknown) => {
      this.queue.forget(keys);
      throw error;
    });
    if (claim.kind === 'new' && bodies.length + delayed.length > 0) this.queue.sent();
    return claim;
  }
}
