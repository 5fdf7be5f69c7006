/**
 * One inline write (GitHub's one review, a GitLab discussion) under failures. A write is
 * tried up to 3 times. Before each resend there is a look for what the last try may have
 * made (its findings' hidden markers): a 5xx or a lost answer can come after the host made
 * it. A rate limit is waited out first, as the host asks (Retry-After), when the wait fits
 * what is left of the in-place budget (all of one review's waits together, at most the
 * delivery's in-place maximum). A longer wait gives the write up with that reason, and the
 * review's remaining writes with it, so they are not sent into the same limit one by one.
 * A write the host takes or refuses whole (GitHub's review: its 422 names no comment) is
 * sent again in halves until the refused comments stand alone (sendInParts).
 */
import type { ApiFailure } from './codehost-api';
import { IN_PLACE_RATE_LIMIT_WAIT_MS, realSleep, type HttpResult } from './http';

/** Tries of one write; between them, a look for what an earlier try made. */
export const INLINE_ATTEMPTS = 3;
/** A rate limit that names no wait (the clients always name one; this is a floor). */
const DEFAULT_RATE_LIMIT_WAIT_MS = 1_000;

/** The waits of one inline review: what is left of its budget, and why it stopped, once it did. */
export interface InlinePacing {
  sleep: (ms: number) => Promise<void>;
  leftMs: number;
  stopped?: string;
}

export function inlinePacing(sleep?: (ms: number) => Promise<void>, maxWaitMs?: number): InlinePacing {
  return { sleep: sleep ?? realSleep, leftMs: maxWaitMs ?? IN_PLACE_RATE_LIMIT_WAIT_MS };
}

export type InlineSent = { ok: true } | { ok: false; why: string };

/** `send` makes the write once (attempts: 1); `landed` says whether an earlier try made it after all. */
export async function sendInline(pacing: InlinePacing, send: () => Promise<HttpResult>, landed: () => Promise<boolean>): Promise<InlineSent> {
  if (pacing.stopped) return { ok: false, why: pacing.stopped };
  let failure: ApiFailure['failure'] | undefined;
  for (let attempt = 0; attempt < INLINE_ATTEMPTS; attempt++) {
    if (attempt > 0 && (await landed())) return { ok: true };
    const answer = await send();
    if (answer.ok) return { ok: true };
    failure = answer.failure;
    if (!failure.retryable || attempt === INLINE_ATTEMPTS - 1) break;
    if (failure.code === 'rate_limited') {
      const wait = failure.retryAfterMs ?? DEFAULT_RATE_LIMIT_WAIT_MS;
      if (wait > pacing.leftMs) {
        pacing.stopped = `rate_limited: asked to wait ${Math.ceil(wait / 1000)} s, longer than a delivery waits in place`;
        return { ok: false, why: pacing.stopped };
      }
      pacing.leftMs -= wait;
      await pacing.sleep(wait);
    }
  }
  return { ok: false, why: failure?.code ?? 'failed' };
}

/** Most sends while the refused comments of one review are looked for (30 findings, one refused: at most 11). */
export const MAX_PART_SENDS = 20;
/** The answer that splits a write: a validation failure, which does not say which comment failed. */
const SPLIT_ON = 'http_422';

export interface PartsSent<T> {
  posted: T[];
  failed: Array<{ items: T[]; why: string }>;
}

/**
 * Sends `items` as one write (`send`: sendInline of one part), and a refused write of
 * several again in halves. When the first half is taken, the refused item is in the second,
 * so that is split without being sent whole. Nothing taken is sent again: every item is in
 * one part that is taken or not. Past MAX_PART_SENDS, what is left is not sent: it fails
 * with the refusal its review met.
 */
export async function sendInParts<T>(items: T[], send: (part: T[]) => Promise<InlineSent>): Promise<PartsSent<T>> {
  const out: PartsSent<T> = { posted: [], failed: [] };
  let sends = 0;
  /** `refused`: this very part was refused already, for that reason. True when all of it was taken. */
  const place = async (part: T[], refused?: string): Promise<boolean> => {
    if (refused === undefined) {
      if (sends === MAX_PART_SENDS) {
        out.failed.push({ items: part, why: SPLIT_ON });
        return false;
      }
      sends++;
      const sent = await send(part);
      if (sent.ok) {
        out.posted.push(...part);
        return true;
      }
      if (sent.why !== SPLIT_ON || part.length === 1) {
        out.failed.push({ items: part, why: sent.why });
        return false;
      }
      refused = sent.why;
    }
    if (part.length === 1) {
      out.failed.push({ items: part, why: refused });
      return false;
    }
    const half = Math.ceil(part.length / 2);
    const firstTaken = await place(part.slice(0, half));
    await place(part.slice(half), firstTaken ? refused : undefined);
    return false;
  };
  await place(items);
  return out;
}
