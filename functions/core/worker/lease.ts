/**
 * The worker lease of one (event, subscription): taken before the record is read, lengthened
 * for a subscription whose agent may run longer than agent.timeout, and given up (with
 * retries in the background when the store fails for a moment). And the time an agent run
 * needs, which the lease and the invocation's time left must both cover.
 */
import { describeError } from '../errors';
import type { Logger } from '../log';
import type { LeaseStore } from '../ports';
import type { QueueMessage, Subscription } from '../types';
import type { MessageOutcome, WorkerDeps } from './process';

export const ANOTHER_COPY = 'another copy of this message is being processed';
export const NOT_STARTED = 'not started: too little time left in this invocation';

/** A message not started because this invocation has too little time left for it. */
export interface Late { leftMs: number; neededMs: number }

/** What one run may take: the agent's timeout and its deliveries. */
export const agentBudgetMs = (deps: Pick<WorkerDeps, 'config'>, agentMs = deps.config.agent.timeout_ms) => agentMs + 3 * deps.config.delivery.timeout_ms;
const leaseMsFor = (deps: WorkerDeps, agentMs: number) => deps.leaseMs ?? agentMs + 10 * deps.config.delivery.timeout_ms + 60_000;

/** The lease a message runs under. */
export interface HeldLease {
  /** Lengthens it for an agent run of `agentMs`; false when another holder has it. */
  extend(agentMs: number): Promise<boolean>;
  release(): Promise<void>;
  /** When it ends (epoch ms by the worker's clock, counted from before it was last taken). */
  until(): number;
}

/** Takes the lease for agent.timeout; undefined while another copy holds it. */
export async function takeLease(deps: WorkerDeps & { leases: LeaseStore }, message: QueueMessage, holder: string, logger: Logger): Promise<HeldLease | undefined> {
  const { leases } = deps;
  let until = 0;
  const take = async (agentMs: number): Promise<boolean> => {
    const from = deps.clock.now();
    const taken = await leases.acquire(message.event_id, message.subscription, holder, leaseMsFor(deps, agentMs));
    if (taken) until = from + leaseMsFor(deps, agentMs);
    return taken;
  };
  if (!(await take(deps.config.agent.timeout_ms))) return undefined;
  return {
    // A holder renews its own lease (both adapters): no other copy can take it in between.
    extend: take,
    release: () => releaseLease(leases, message, holder, logger),
    until: () => until,
  };
}

/**
 * Before the agent runs: the subscription's --timeout may be longer than agent.timeout, which
 * sized the lease and the batch handler's time check. Not started when the invocation has too
 * little time left for it; the lease lengthened, so a copy cannot take it over mid-run (hunt 9).
 */
export async function readyToRun(deps: WorkerDeps, subscription: Subscription, lease: HeldLease | undefined): Promise<MessageOutcome | undefined> {
  const agentMs = subscription.timeout_ms ?? deps.config.agent.timeout_ms;
  const neededMs = agentBudgetMs(deps, agentMs);
  const leftMs = deps.remainingMs?.();
  if (leftMs !== undefined && leftMs < neededMs) return { kind: 'retry', reason: NOT_STARTED, late: { leftMs, neededMs } };
  if (lease && agentMs > deps.config.agent.timeout_ms && !(await lease.extend(agentMs))) return { kind: 'retry', reason: ANOTHER_COPY };
  return undefined;
}

/** Release attempts after a failed one (a store failing for a moment, e.g. a full disk), 1 s apart and doubling. */
const RELEASE_RETRIES = 5;

/**
 * Gives the lease up. A release that fails is tried again in the background: a lease left
 * behind would keep every later copy of the message waiting for its whole duration
 * (minutes) after the store has recovered.
 */
async function releaseLease(leases: LeaseStore, message: QueueMessage, holder: string, logger: Logger, attempt = 0): Promise<void> {
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
