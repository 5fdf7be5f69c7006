/**
 * Delivery fan-out: the reply goes to every wanted target that has not received it yet,
 * side by side; each outcome is logged and becomes the record's per-target state.
 */
import type { Config } from '../config/types';
import type { DeliveryOutcome, DeliveryRequest, DeliveryTarget } from '../delivery/target';
import { describeError, isHookError } from '../errors';
import type { Logger } from '../log';
import { redactSecrets } from '../redact';
import type { EventRecord, QueueMessage, Subscription, TargetKind, TargetOutcome } from '../types';

export interface FanOutInput {
  subscription: Subscription;
  message: QueueMessage;
  payload: Record<string, unknown>;
  reply: string;
  /** What earlier attempts delivered: those targets are skipped. */
  previous: EventRecord['targets'];
  /** Set when an earlier attempt may have delivered without recording it (DeliveryRequest.earlierAttempt). */
  earlierAttempt?: DeliveryRequest['earlierAttempt'];
  targets: Partial<Record<TargetKind, DeliveryTarget>>;
  settings: Config['delivery'];
  logger: Logger;
  now: () => string;
  /** Configured secret values: a target's answer may echo one (a token in a URL path); masked before anything is stored or logged. */
  secrets: readonly string[];
  /**
   * Called as soon as one target has the reply, before the others finish: recorded then, a
   * crash or stop while a slower target is in flight does not send it there again. Also
   * called for a lone target that cannot be repeated unseen (`immediately`: a chat post),
   * so that a crash right after the post does not post it again.
   */
  onDelivered?: (kind: TargetKind, outcome: TargetOutcome, options: { immediately: boolean }) => Promise<void>;
}

/**
 * Whether an earlier attempt may have delivered this message without recording it: the
 * queue gave it before (a kill -9 or a Lambda timeout mid-post leaves no other trace), or
 * its record kept a reply (a reply is stored before any delivery starts). A first attempt
 * is neither, so it makes no search.
 */
export function mayHaveDelivered(receiveCount: number, found: EventRecord | undefined): boolean {
  return receiveCount > 1 || found?.reply !== undefined;
}

export type TargetFailure = { kind: TargetKind } & Extract<DeliveryOutcome, { status: 'failed' }>;

export interface FanOutResult {
  /** The record's new per-target state. */
  targets: Record<string, TargetOutcome>;
  failures: TargetFailure[];
}

export async function fanOut(input: FanOutInput): Promise<FanOutResult> {
  const wanted: TargetKind[] = input.subscription.deliver.length > 0 ? input.subscription.deliver : ['log'];
  const pending = wanted.filter((kind) => input.previous?.[kind]?.status !== 'delivered');
  const targets = { ...input.previous };
  // With a chat target among them, every outcome is recorded at once: these records are
  // written one after another, and one waiting for an fsync would hold the chat's back.
  const unrepeatable = pending.some((kind) => input.targets[kind]?.unrepeatable === true);
  const outcomes = await Promise.all(pending.map(async (kind) => {
    const outcome = masked(await deliverTo(kind, input), input.secrets);
    targets[kind] = outcome.status === 'delivered'
      ? { status: 'delivered', ...(outcome.detail ? { detail: outcome.detail } : {}), at: input.now() }
      : { status: 'failed', detail: `${outcome.code}: ${outcome.message}`, at: input.now() };
    input.logger[outcome.status === 'delivered' ? 'info' : 'warn'](`target ${kind} ${outcome.status}`, { target: kind, ...(outcome.status === 'failed' ? { code: outcome.code, reason: outcome.message } : {}) });
    if (outcome.status === 'delivered' && input.onDelivered && (pending.length > 1 || unrepeatable)) await input.onDelivered(kind, targets[kind], { immediately: unrepeatable });
    return [kind, outcome] as const;
  }));
  return { targets, failures: outcomes.flatMap(([kind, o]) => (o.status === 'failed' ? [{ kind, ...o }] : [])) };
}

function masked(outcome: DeliveryOutcome, secrets: readonly string[]): DeliveryOutcome {
  if (outcome.status === 'failed') return { ...outcome, message: redactSecrets(outcome.message, secrets) };
  return outcome.detail ? { ...outcome, detail: redactSecrets(outcome.detail, secrets) } : outcome;
}

async function deliverTo(kind: TargetKind, input: FanOutInput): Promise<DeliveryOutcome> {
  const target = input.targets[kind];
  if (!target) return { status: 'failed', retryable: false, code: 'target_unavailable', message: `Delivery target '${kind}' is not available in this build` };
  try {
    return await target.deliver({ subscription: input.subscription, message: input.message, payload: input.payload, reply: input.reply, settings: input.settings, logger: input.logger, ...(input.earlierAttempt ? { earlierAttempt: input.earlierAttempt } : {}) });
  } catch (error) {
    // A target that throws instead of answering is treated as a passing failure.
    return { status: 'failed', retryable: true, code: isHookError(error) ? error.code : 'delivery_failed', message: describeError(error) };
  }
}
