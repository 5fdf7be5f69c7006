/**
 * When a message that failed for a passing reason comes back: about 30 s × 2^(receive−1),
 * capped at 15 minutes (SQS's ChangeMessageVisibility allows up to 12 hours; 15 minutes
 * keeps five tries within about half an hour), with ±20 % jitter so that a burst that
 * failed together does not come back together. A longer `Retry-After` from the other
 * side wins. Waits of at most `IN_PROCESS_WAIT_LIMIT_MS` are waited out in-process first.
 */
export const RETRY_BASE_SECONDS = 30;
export const RETRY_CAP_SECONDS = 15 * 60;
/** A `Retry-After` this short is cheaper to wait out than to give the message back. */
export const IN_PROCESS_WAIT_LIMIT_MS = 10_000;
/** In-process re-runs of one message before it is given back to the queue. */
export const IN_PROCESS_RETRIES = 2;
/**
 * Kept at the end of a bounded invocation (Lambda) for a message's last writes, its lease's
 * release and the batch answer: neither an in-process re-run nor the retries of a chat
 * post's outcome write (outcome-write.ts) run into it.
 */
export const INVOCATION_MARGIN_MS = 10_000;

/** Seconds until the message is visible again, for its `receiveCount`-th receive (1-based). */
export function retryDelaySeconds(receiveCount: number, retryAfterMs?: number, random: () => number = Math.random): number {
  const exponent = Math.max(0, Math.min(receiveCount, 16) - 1);
  const base = Math.min(RETRY_CAP_SECONDS, RETRY_BASE_SECONDS * 2 ** exponent);
  const jittered = Math.round(base * (0.8 + 0.4 * random()));
  const backoff = Math.min(RETRY_CAP_SECONDS, Math.max(1, jittered));
  const asked = retryAfterMs === undefined ? 0 : Math.ceil(retryAfterMs / 1000);
  // SQS refuses a visibility timeout above 12 hours.
  return Math.min(12 * 3600, Math.max(backoff, asked));
}
