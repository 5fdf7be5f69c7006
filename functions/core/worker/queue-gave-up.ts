/**
 * The record of a message the queue itself gave up on: received `maxReceiveCount` times,
 * the last attempt never finishing (the process died, a Lambda timed out), so the
 * worker's own "gave up after N attempts" write never ran. The local queue applies this
 * in the transaction that dead-letters the message; on AWS, where SQS's redrive moves it,
 * listing the dead letters does (operations/dead-letters.ts). Either way the record ends
 * `failed` with its reason, as the worker's give-up leaves it, never `processing` for ever.
 */
import type { EventRecord, EventStatus } from '../types';

export const QUEUE_GAVE_UP_CODE = 'receive_limit';

/** Statuses of a record whose message was still expected to finish it. */
const UNFINISHED = new Set<EventStatus>(['held', 'queued', 'processing', 'abandoned']);

/** The changes to write, or undefined when the record is finished already (and dead-lettered, if failed). */
export function queueGaveUpChanges(
  record: Pick<EventRecord, 'status' | 'error' | 'dead_lettered_at'>, receiveCount: number, at: string,
): Partial<EventRecord> | undefined {
  if (record.status === 'failed') return record.dead_lettered_at ? undefined : { dead_lettered_at: at, updated_at: at };
  if (!UNFINISHED.has(record.status)) return undefined;
  const earlier = record.error ? `; before that: ${record.error.code}: ${record.error.message}` : '';
  const message = `gave up after ${receiveCount} attempts: received ${receiveCount} times without success; the last attempt did not finish (the worker stopped or timed out)${earlier}`;
  return { status: 'failed', error: { code: QUEUE_GAVE_UP_CODE, message }, dead_lettered_at: at, updated_at: at };
}
