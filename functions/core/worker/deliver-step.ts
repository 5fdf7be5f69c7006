/**
 * The delivery part of one message: the reply fanned out to the subscription's targets,
 * each target's outcome recorded as it lands, then the record finished (delivered) or the
 * message given back or failed with what the targets said.
 */
import type { DeliveryRequest } from '../delivery/target';
import type { EventLog } from '../ports';
import type { Subscription, TargetKind, TargetOutcome } from '../types';
import type { Step } from './agent-step';
import { fanOut } from './fan-out';
import { writeChatOutcome } from './outcome-write';
import type { MessageOutcome } from './process';
import { secretsOf } from './secrets';
import { UnrecordedDeliveries } from './unrecorded';

/**
 * Targets delivered whose outcome could not be written yet (unrecorded.ts), per event log:
 * one per worker as composed (serve's, a Lambda container's); a worker composed again over
 * a store opened again starts with none, as a process started again does.
 */
const unrecordedByLog = new WeakMap<EventLog, UnrecordedDeliveries>();
function unrecordedOf(events: EventLog): UnrecordedDeliveries {
  let found = unrecordedByLog.get(events);
  if (!found) unrecordedByLog.set(events, (found = new UnrecordedDeliveries()));
  return found;
}

export async function deliverStep(step: Step, subscription: Subscription, payload: Record<string, unknown>, reply: string, earlierAttempt: DeliveryRequest['earlierAttempt']): Promise<MessageOutcome> {
  const { deps, message, writer, logger, started, finalFailure, retryLater } = step;
  // Each target's delivery is recorded as it lands (one write at a time), not only when all are done.
  const unrecorded = unrecordedOf(deps.events);
  let recorded = Promise.resolve();
  const onDelivered = (kind: TargetKind, outcome: TargetOutcome, options: { immediately: boolean }) => {
    // Noted first: if the write fails, a retry in this process does not deliver it again.
    unrecorded.note(message.event_id, message.subscription, kind, outcome);
    const save = () => writer.save({ targets: { ...writer.current.targets, [kind]: outcome } }, options);
    // A chat post's outcome is the one write not given up quickly (outcome-write.ts).
    return (recorded = recorded.then(async () => {
      await (deps.targets[kind]?.unrepeatable ? writeChatOutcome(step, save) : save());
    }));
  };
  const { targets, failures } = await fanOut({
    subscription, message, payload, reply, previous: unrecorded.withNoted(message.event_id, message.subscription, writer.current.targets), targets: deps.targets, settings: deps.config.delivery, logger, now: () => new Date(deps.clock.now()).toISOString(), secrets: secretsOf(deps.config), onDelivered,
    ...(earlierAttempt ? { earlierAttempt } : {}),
  });
  const delivered = { targets, timings: { ...writer.current.timings, total_ms: deps.clock.now() - started } };
  if (failures.length === 0) {
    await writer.save({ ...delivered, status: 'delivered', error: undefined });
    unrecorded.forget(message.event_id, message.subscription);
    return { kind: 'ack', status: 'delivered' };
  }
  await writer.save(delivered);
  unrecorded.forget(message.event_id, message.subscription);
  const summary = failures.map((f) => `${f.kind}: ${f.message}`).join('; ');
  const code = failures[0]?.code ?? 'delivery_failed';
  const waits = failures.flatMap((f) => (f.retryable && f.retryAfterMs !== undefined ? [f.retryAfterMs] : []));
  return failures.some((f) => f.retryable) ? retryLater(code, summary, waits.length > 0 ? Math.max(...waits) : undefined) : finalFailure(code, summary);
}
