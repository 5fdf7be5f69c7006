/** Giving a worker lease up, with retries in the background when the store fails for a moment. */
import { describeError } from '../errors';
import type { Logger } from '../log';
import type { LeaseStore } from '../ports';
import type { QueueMessage } from '../types';

/** Release attempts after a failed one (a store failing for a moment, e.g. a full disk), 1 s apart and doubling. */
const RELEASE_RETRIES = 5;

/**
 * Gives the lease up. A release that fails is tried again in the background: a lease left
 * behind would keep every later copy of the message waiting for its whole duration
 * (minutes) after the store has recovered.
 */
export async function releaseLease(leases: LeaseStore, message: QueueMessage, holder: string, logger: Logger, attempt = 0): Promise<void> {
  try {
    await leases.release(message.event_id, message.subscription, holder);
  } catch (error) {
    if (attempt >= RELEASE_RETRIES) {
      logger.warn('the worker lease could not be released; it expires by itself', { error: describeError(error) });
      return;
    }
    if (attempt === 0) logger.warn('the worker lease could not be released; trying again', { error: describeError(error) });
    setTimeout(() => void releaseLease(leases, message, holder, logger, attempt + 1), 1000 * 2 ** attempt).unref();
  }
}
