/**
 * The operator's view of the local dead-letter table (`webhook dead-letters` / `redrive`),
 * as the `DeadLetterQueue` port has it on AWS over SQS: list, and move letters back to the
 * local queue (each one removed from the table and queued in one transaction: a crash
 * leaves it in one place or the other, and two redrives at once move it once).
 */
import { describeBody, type DeadLetter, type DeadLetterQueue } from '../../core/operations/dead-letters';
import type { StoreDb } from './db';
import type { SqliteQueue } from './queue';

interface Row {
  id: number;
  message_id: string;
  body: string;
  receive_count: number;
  reason: string | null;
  dead_at: number;
}

export class SqliteDeadLetterQueue implements DeadLetterQueue {
  private readonly remove;

  constructor(private readonly store: StoreDb, private readonly queue: SqliteQueue) {
    this.remove = store.db.prepare('DELETE FROM dead_letters WHERE id = ?');
  }

  private rows(): Array<{ row: Row; letter: DeadLetter }> {
    return (this.store.db.prepare('SELECT id, message_id, body, receive_count, reason, dead_at FROM dead_letters ORDER BY id').all() as Row[]).map((row) => ({
      row,
      letter: {
        id: row.message_id, ...describeBody(row.body), reason: row.reason ?? `gave up after ${row.receive_count} receive(s)`,
        receive_count: row.receive_count, dead_at: new Date(row.dead_at).toISOString(), body: row.body,
      },
    }));
  }

  async list(): Promise<DeadLetter[]> {
    return this.store.read('The dead-letter table', () => this.rows().map((r) => r.letter));
  }

  async redrive(select: (letter: DeadLetter) => boolean, beforeRequeue: (letter: DeadLetter) => Promise<void>): Promise<DeadLetter[]> {
    const moved: DeadLetter[] = [];
    for (const { row, letter } of await this.store.read('The dead-letter table', () => this.rows())) {
      if (!select(letter)) continue;
      try {
        await beforeRequeue(letter);
      } catch {
        continue; // Left where it is; the caller reports what moved.
      }
      // Removed and queued in one transaction, and only by the redrive that removes it: two
      // redrives at once (or one cut off between two writes) never queue a letter twice.
      const queued = await this.store.write(() => {
        if (this.remove.run(row.id).changes === 0) return false;
        this.queue.sendNow([row.body]);
        return true;
      });
      if (!queued) continue;
      this.queue.sent();
      moved.push(letter);
    }
    return moved;
  }
}
