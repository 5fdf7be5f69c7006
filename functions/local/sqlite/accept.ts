/**
 * AtomicAccept over SQLite: a new event's committed delivery-id claim, its records and its
 * queue messages in one write, so one transaction and one WAL fsync stand behind the 202
 * and there is never a pending claim to commit or to clean up after a crash.
 */
import type { AtomicAccept, Claim, ClaimOptions } from '../../core/ports';
import type { EventRecord, QueueMessage } from '../../core/types';
import type { StoreDb } from './db';
import type { SqliteDedupStore } from './dedup';
import type { SqliteEventLog } from './event-log';
import { SqliteQueue } from './queue';

export class SqliteAtomicAccept implements AtomicAccept {
  constructor(
    private readonly store: StoreDb,
    private readonly dedup: SqliteDedupStore,
    private readonly events: SqliteEventLog,
    private readonly queue: SqliteQueue,
  ) {}

  async acceptNew(input: { dedupKey?: string; claim: ClaimOptions; records: EventRecord[]; messages: QueueMessage[] }): Promise<Claim> {
    // The messages are the records' own, written in this same transaction: queued by reference.
    const [bodies, keys] = SqliteQueue.bodiesOf(input.messages, true);
    const claim = await this.store.write((): Claim => {
      const found: Claim = input.dedupKey ? this.dedup.claimNow(input.dedupKey, input.claim, true) : { kind: 'new' };
      if (found.kind !== 'new') return found;
      this.events.putNow(input.records);
      this.queue.sendNow(bodies, keys, 0, input.messages);
      return found;
    }).catch((error: unknown) => {
      this.queue.forget(keys);
      throw error;
    });
    if (claim.kind === 'new' && bodies.length > 0) this.queue.sent();
    return claim;
  }
}
