/**
 * The write of a chat post's outcome (an unrepeatable target: Telegram, a Slack incoming
 * webhook), which nothing else could find the post by. The note kept in the process
 * (unrecorded.ts) covers a retry in the same process only, and on Lambda the message's next
 * receive usually goes to another container, which would post again. So where the
 * invocation's time is bounded (Lambda), a store failing for a moment (throttling) is
 * waited out here, with backoff, under the lease, for as long as the invocation and the
 * lease leave time (less INVOCATION_MARGIN_MS); only then does the attempt fail. The
 * local worker gives the message back to its own process at once, as for any store failure.
 */
import { isHookError } from '../errors';
import type { Step } from './agent-step';
import { INVOCATION_MARGIN_MS } from './retry-schedule';

const FIRST_WAIT_MS = 250;
const MAX_WAIT_MS = 4_000;

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `write` (the outcome's save), again after a retryable store failure while time is left. */
export async function writeChatOutcome(step: Pick<Step, 'deps' | 'lease' | 'logger'>, write: () => Promise<unknown>, sleep = realSleep): Promise<void> {
  for (let wait = FIRST_WAIT_MS, tries = 1; ; wait = Math.min(MAX_WAIT_MS, wait * 2), tries++) {
    try {
      await write();
      if (tries > 1) step.logger.info('the chat post\'s outcome is recorded after the store failed', { tries });
      return;
    } catch (error) {
      const left = timeLeft(step);
      if (!isHookError(error) || !error.retryable || left === undefined || left < wait) throw error;
      if (tries === 1) step.logger.warn('the chat post\'s outcome could not be recorded; trying again in place', { code: error.code, left_ms: left });
      await sleep(wait);
    }
  }
}

/** What this attempt may still spend on the write; undefined when the invocation is not bounded. */
function timeLeft({ deps, lease }: Pick<Step, 'deps' | 'lease'>): number | undefined {
  const invocation = deps.remainingMs?.();
  if (invocation === undefined) return undefined;
  const left = Math.min(invocation, lease ? lease.until() - deps.clock.now() : Number.POSITIVE_INFINITY);
  return Number.isFinite(left) ? left - INVOCATION_MARGIN_MS : undefined;
}
