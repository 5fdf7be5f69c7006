/**
 * A sticky comment's find-then-create/edit, one at a time per (subscription, subject).
 * Two deliveries on the same pull/merge request that both list the comments before either
 * posts would each create a sticky comment (a burst of events, several worker slots, serve
 * processes or Lambda containers). A short lease in the LeaseStore (SQLite locally, the
 * DynamoDB dedup table on AWS), keyed by the subject, makes the second wait for the first.
 * The holder renews it while it works, so a holder that died blocks the others only until
 * the lease runs out (serve also drops such leases at start).
 */
import { randomUUID } from 'node:crypto';
import { describeError } from '../errors';
import type { Logger } from '../log';
import type { LeaseStore } from '../ports';
import { realSleep } from './http';
import type { DeliveryOutcome } from './target';

/** How long the lease lasts unless renewed; the holder renews it every third of that. */
export const SUBJECT_LEASE_MS = 30_000;
/** Pauses between tries while another delivery holds the lease: doubling, with jitter. */
const FIRST_PAUSE_MS = 50;
const LONGEST_PAUSE_MS = 500;

export interface SubjectLease {
  leases: LeaseStore;
  subscription: string;
  /** `Subject.key` (events/subject.ts): the same pull/merge request or issue gives the same key. */
  subjectKey: string;
  /** How long to wait for another holder before the message goes back to the queue. */
  waitMs: number;
  logger: Logger;
}

/** The lease's id in the LeaseStore (its `eventId` slot; the subscription is its own slot). */
export const subjectLeaseId = (subjectKey: string): string => `sticky#${subjectKey}`;

/** Runs `work` holding the subject's lease; a retryable `sticky_busy` failure when it stays taken past `waitMs`. */
export async function underSubjectLease(lease: SubjectLease, work: () => Promise<DeliveryOutcome>): Promise<DeliveryOutcome> {
  const { leases, subscription } = lease;
  const id = subjectLeaseId(lease.subjectKey);
  const holder = randomUUID();
  const deadline = Date.now() + lease.waitMs;
  let pause = FIRST_PAUSE_MS;
  while (!(await leases.acquire(id, subscription, holder, SUBJECT_LEASE_MS))) {
    if (Date.now() >= deadline) {
      return {
        status: 'failed', retryable: true, code: 'sticky_busy',
        message: `another delivery of '${subscription}' was still updating its sticky comment on ${lease.subjectKey} after ${lease.waitMs} ms; the queue tries again`,
      };
    }
    await realSleep(Math.min(pause / 2 + Math.random() * (pause / 2), Math.max(0, deadline - Date.now())));
    pause = Math.min(pause * 2, LONGEST_PAUSE_MS);
  }
  // A renewal still in flight at the end is awaited: landing after the release, it would take the lease again.
  let renewing: Promise<unknown> = Promise.resolve();
  const renewal = setInterval(() => {
    renewing = leases.acquire(id, subscription, holder, SUBJECT_LEASE_MS).catch(() => undefined);
  }, SUBJECT_LEASE_MS / 3);
  renewal.unref();
  try {
    return await work();
  } finally {
    clearInterval(renewal);
    await renewing;
    try {
      await leases.release(id, subscription, holder);
    } catch (error) {
      lease.logger.warn('the sticky comment lease could not be released; it runs out by itself', { subscription, subject: lease.subjectKey, error: describeError(error) });
    }
  }
}
