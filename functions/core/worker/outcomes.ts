/**
 * How one message's attempt ends when it does not deliver: dead-lettered, failed for good,
 * or given back to the queue for a later try. Each writes the record first, so the event
 * log shows why before the queue acts; what a provider or target said is redacted first.
 */
import type { Logger } from '../log';
import { redactSecrets } from '../redact';
import type { MessageOutcome, WorkerDeps } from './deps';
import type { RecordWriter } from './record';
import { secretsOf } from './secrets';

/**
 * A message whose event record is gone: ingest withdrew it after a queue send that failed
 * but reached the queue, and the sender's retry is processed instead (README, "Ingest's
 * calls per event"). Dead-lettered unrun, with the README's reason.
 */
export async function recordDeleted(body: string, receiveCount: number, deps: WorkerDeps, logger: Logger, said: string): Promise<MessageOutcome> {
  const reason = 'the event record of this message was deleted';
  logger.warn(said, { attempt: receiveCount });
  if (!deps.deadLetters) return { kind: 'retry', reason };
  await deps.deadLetters.send(body, reason, receiveCount);
  return { kind: 'ack', status: 'failed' };
}
interface Attempt {
  deps: WorkerDeps;
  writer: RecordWriter;
  /** The queue message as received: what the dead-letter queue keeps. */
  body: string;
  receiveCount: number;
  logger: Logger;
  now: () => string;
}

export interface Outcomes {
  /** To the dead-letter sink now (the record notes when); without one, the queue's redrive moves it. */
  deadLetter: (reason: string) => Promise<MessageOutcome>;
  /** Failed for good: recorded `failed` and dead-lettered. */
  finalFailure: (code: string, said: string) => Promise<MessageOutcome>;
  /** Back to the queue (`queued` again), or `failed` on its last receive. */
  retryLater: (code: string, said: string, retryAfterMs?: number) => Promise<MessageOutcome>;
}

export function outcomesOf({ deps, writer, body, receiveCount, logger, now }: Attempt): Outcomes {
  const deadLetter = async (reason: string): Promise<MessageOutcome> => {
    if (!deps.deadLetters) return { kind: 'retry', reason };
    await deps.deadLetters.send(body, reason, receiveCount);
    await writer.save({ dead_lettered_at: now() });
    logger.warn('dead-lettered', { reason });
    return { kind: 'ack', status: 'failed' };
  };
  // What a provider or target said can echo a credential: never recorded, logged or dead-lettered as is.
  const secrets = secretsOf(deps.config);
  const finalFailure = async (code: string, said: string): Promise<MessageOutcome> => {
    const text = redactSecrets(said, secrets);
    logger.error('failed', { code, reason: text });
    await writer.save({ status: 'failed', error: { code, message: text } });
    return deadLetter(`${code}: ${text}`);
  };
  const retryLater = async (code: string, said: string, retryAfterMs?: number): Promise<MessageOutcome> => {
    const text = redactSecrets(said, secrets);
    if (receiveCount >= deps.maxReceiveCount) {
      // The queue moves the message to the dead-letter queue after this receive.
      const reason = `gave up after ${receiveCount} attempts: ${text}`;
      logger.error('failed', { code, reason });
      await writer.save({ status: 'failed', error: { code, message: reason } });
      return { kind: 'retry', reason };
    }
    logger.warn('will retry', { code, reason: text, attempt: receiveCount, ...(retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {}) });
    await writer.save({ status: 'queued', error: { code, message: text } });
    return { kind: 'retry', reason: text, ...(retryAfterMs !== undefined ? { retryAfterMs } : {}) };
  };
  return { deadLetter, finalFailure, retryLater };
}
