/**
 * One queue message, start to finish: render, run the agent, honour [SILENT], deliver to
 * each target, and record every step in the event log. Idempotent under redelivery: a
 * finished record is acknowledged without work; a partly delivered one keeps its stored
 * reply and re-delivers only the targets that did not succeed. Copies of one message
 * never run side by side: each takes the worker lease of its (event, subscription) first,
 * and a copy that finds a live lease asks to be retried later. A failed record always
 * ends in the dead-letter queue. The record's transitions live in record.ts, the agent run
 * in agent-step.ts, the delivery fan-out in fan-out.ts, how an attempt ends in outcomes.ts.
 */
import { randomUUID } from 'node:crypto';
import { describeError, isHookError } from '../errors';
import { childLogger, type Logger } from '../log';
import type { Rendered } from '../templates/template';
import type { QueueMessage, EventRecord } from '../types';
import { splitFindings } from '../delivery/findings';
import { mayHaveDelivered } from './fan-out';
import { debounceGate, runCapGate } from './gates';
import { acceptedFor, deletedWhileHeld, endDeletedHeld, notThisSubscription } from '../subscriptions/held-settle';
import { parseQueueMessage } from './message';
import { RecordGone, RecordWriter, eventRecord, noteMessageBytes } from './record';
import { ANOTHER_COPY, readyToRun, takeLease, type HeldLease } from './lease';
import { runAgentStep, type Step } from './agent-step';
import { deliverStep } from './deliver-step';
import { deliversDirectly, directMessage, silencedReply } from './direct';
import type { MessageOutcome, WorkerDeps } from './deps';
import { outcomesOf, recordDeleted, type Outcomes } from './outcomes';

export { STORED_TEXT_CAP } from './record';
export { secretsOf } from './secrets';
export { agentBudgetMs, NOT_STARTED, type Late } from './lease';
export type { MessageOutcome, WorkerDeps } from './deps';

const FINISHED = new Set<EventRecord['status']>(['delivered', 'suppressed', 'failed', 'over_budget', 'superseded', 'rate_limited']);

/** `parsed`: the message `body` is the text of, when it was handed over already parsed (message.ts). */
export async function processMessage(body: string, receiveCount: number, deps: WorkerDeps, parsed?: QueueMessage): Promise<MessageOutcome> {
  if (parsed) noteMessageBytes(parsed, body);
  const message = parsed ?? parseQueueMessage(body);
  if (!message) {
    deps.logger.error('malformed queue message', { bytes: body.length });
    if (deps.deadLetters) {
      await deps.deadLetters.send(body, 'malformed queue message', receiveCount);
      return { kind: 'ack', status: 'malformed' };
    }
    return { kind: 'retry', reason: 'malformed queue message' };
  }
  const logger = childLogger(deps.logger, { event_id: message.event_id, subscription: message.subscription });
  const run = async (lease?: HeldLease): Promise<MessageOutcome> => {
    try {
      return await processLeased(message, body, receiveCount, deps, logger, lease);
    } catch (error) {
      // The first write found the record withdrawn by ingest (record.ts): nothing was delivered.
      if (error instanceof RecordGone) return recordDeleted(body, receiveCount, deps, logger, 'the event record of this message was deleted before it started');
      throw error;
    }
  };
  if (!deps.leases) return run();
  const lease = await takeLease({ ...deps, leases: deps.leases }, message, randomUUID(), logger);
  if (!lease) {
    logger.info('another copy of this message is running; retry later', { attempt: receiveCount });
    return { kind: 'retry', reason: ANOTHER_COPY };
  }
  try {
    return await run(lease);
  } finally {
    await lease.release();
  }
}

/** One message under its lease: the record's transitions, the agent run, the fan-out. */
async function processLeased(sent: QueueMessage, body: string, receiveCount: number, deps: WorkerDeps, logger: Logger, lease?: HeldLease): Promise<MessageOutcome> {
  const now = () => new Date(deps.clock.now()).toISOString();
  // A message sent by reference is its record's: read with the record (one read either way).
  const found = await deps.events.get(sent.event_id, sent.subscription, sent.recorded ? undefined : sent);
  if (sent.recorded && (!found || found.message.recorded || (found.message.payload === undefined && !found.message.payload_ref))) {
    return recordDeleted(body, receiveCount, deps, logger, 'the message was sent by reference and its event record is gone');
  }
  const message = sent.recorded && found ? found.message : sent;
  const writer = new RecordWriter(found ?? eventRecord(message, 'queued', now()), deps.events, deps.payloads, now, found !== undefined);

  const { deadLetter, finalFailure, retryLater } = outcomesOf({ deps, writer, body, receiveCount, logger, now });
  if (found && FINISHED.has(found.status)) {
    // A failed record whose message never reached the dead-letter queue goes there now.
    if (found.status === 'failed' && !found.dead_lettered_at && deps.deadLetters) {
      return deadLetter(found.error ? `${found.error.code}: ${found.error.message}` : 'failed');
    }
    if (found.status === 'failed' && !deps.deadLetters) {
      // Without a sink only the queue's redrive moves it: keep giving it back until then.
      logger.warn('failed; left to the queue\'s redrive', { status: found.status });
      return { kind: 'retry', reason: found.error?.message ?? 'failed' };
    }
    logger.info('already finished; acknowledged without work', { status: found.status });
    return { kind: 'ack', status: found.status };
  }
  const started = deps.clock.now();
  // Written with the next transition (the prompt, as a rule) before anything slow runs.
  writer.stage({ status: 'processing', attempts: (writer.current.attempts ?? 0) + 1 });

  const step: Step = { deps, message, writer, logger, started, finalFailure, retryLater, ...(lease ? { lease } : {}) };

  const attemptsBefore = found?.attempts ?? 0;
  const subscription = await deps.subscriptions.get(message.subscription);
  if (!acceptedFor(writer.current, subscription)) return finalFailure('subscription_not_found', notThisSubscription(message.subscription, writer.current, subscription));
  if (subscription.state === 'paused' && writer.current.reply === undefined) {
    // Paused after the event was queued (a debounced one waits up to 15 min): held like
    // what arrives while paused, and released by resume. Read again after the write, as
    // ingest does: a resume between the two reads would not have seen the held record.
    // A delete between the two reads may have scanned for held records before this write: then the record is ended here.
    await writer.save({ status: 'held', attempts: attemptsBefore });
    const again = await deps.subscriptions.get(message.subscription);
    if (!acceptedFor(writer.current, again)) return endDeleted(deps, writer, finalFailure, logger);
    if (again.state !== 'active') {
      logger.info('held: the subscription was paused after the event was queued');
      return { kind: 'ack', status: 'held' };
    }
    writer.stage({ status: 'processing', attempts: attemptsBefore + 1 });
  }

  let payload: Record<string, unknown>;
  try {
    payload = message.payload ?? (JSON.parse(await deps.payloads.get(message.payload_ref as string)) as Record<string, unknown>);
  } catch (error) {
    if (isHookError(error) && error.retryable) return retryLater(error.code, error.message);
    return finalFailure('payload_missing', isHookError(error) ? error.message : `The stored payload cannot be read: ${describeError(error)}`);
  }

  // The reply is generated once; a redelivery re-uses it (whole: the record may keep it cut).
  let reply = writer.current.reply;
  if (reply !== undefined && writer.current.reply_ref) {
    try {
      reply = await deps.payloads.get(writer.current.reply_ref);
    } catch (error) {
      return retryLater(isHookError(error) ? error.code : 'unavailable', `The whole reply cannot be read back for this retry: ${describeError(error)}`);
    }
  }
  const notYet = reply === undefined && subscription.agent !== 'none' ? await readyToRun(deps, subscription, lease) : undefined;
  if (notYet) {
    logger.info('not started now; retry later', { reason: notYet.kind === 'retry' ? notYet.reason : '', attempt: receiveCount });
    return notYet;
  }
  const gate = reply === undefined ? (await debounceGate(message, subscription, deps.debounce)) ?? (await runCapGate(writer, subscription, deps.counters, deps.clock.now())) : undefined;
  if (gate) {
    logger.info(gate.status === 'superseded' ? 'superseded by a later event of the same subject' : 'rate limited: max_runs_per_hour reached', { ...gate });
    await writer.save(gate.status === 'superseded' ? { status: 'superseded', superseded_by: gate.superseded_by } : { status: 'rate_limited', error: { code: 'rate_limited', message: `max_runs_per_hour ${subscription.max_runs_per_hour} reached (${gate.runs} run${gate.runs === 1 ? '' : 's'} this hour); replay it with 'hookagent webhook replay ${message.event_id}'` } });
    return { kind: 'ack', status: gate.status };
  }
  if (reply === undefined && deliversDirectly(subscription)) {
    // Direct delivery (direct.ts): the rendered template is the message; no agent, no [SILENT].
    let rendered: Rendered;
    try {
      rendered = directMessage(subscription, payload, message);
    } catch (error) {
      return finalFailure('prompt_invalid', `The prompt cannot be rendered from this payload: ${describeError(error)}`);
    }
    reply = rendered.text;
    await writer.save({ prompt: reply, reply, warnings: rendered.warnings });
  }
  if (reply === undefined) {
    const ran = await runAgentStep(step, subscription, payload);
    if ('kind' in ran) return ran;
    reply = ran.reply;
  }

  if (silencedReply(subscription, reply)) {
    // Silence is no verdict on a change whose diff the run never read: the event log says so.
    const { unread } = splitFindings(reply);
    const warnings = unread ? [...(writer.current.warnings ?? []), `the agent answered [SILENT] without reading the change's diff (${unread}): this is no review of it`] : writer.current.warnings;
    logger.info('suppressed: the agent answered [SILENT]', unread ? { unread_diff: unread } : {});
    await writer.save({ status: 'suppressed', ...(warnings ? { warnings } : {}), timings: { ...writer.current.timings, total_ms: deps.clock.now() - started } });
    return { kind: 'ack', status: 'suppressed' };
  }

  // A redelivery with its reply stored has written nothing yet: show it processing while it delivers.
  if (writer.unsaved) await writer.save();
  return deliverStep(step, subscription, payload, reply, mayHaveDelivered(receiveCount, found) ? { since: message.received_at } : undefined);
}

/**
 * The subscription was deleted after the worker wrote the record `held` (its first read saw
 * it paused): nothing will release the record, and delete's scan may have missed it. Ended
 * `failed` as delete ends held records, written only while still held, then dead-lettered
 * through the usual final failure. A record another releaser moved on is left to it.
 */
async function endDeleted(deps: WorkerDeps, writer: RecordWriter, finalFailure: Outcomes['finalFailure'], logger: Logger): Promise<MessageOutcome> {
  const { event_id: eventId, subscription } = writer.current;
  const [ended] = await endDeletedHeld(deps.events, [writer.current], new Date(deps.clock.now()).toISOString());
  // Not ended here: delete's own scan ended it (failed, the same error), or a release queued it with a message of its own.
  const moved = ended ? undefined : await deps.events.get(eventId, subscription);
  if (moved && moved.status !== 'failed') {
    logger.info('the subscription was deleted while held, but the record was moved on meanwhile', { status: moved.status });
    return { kind: 'ack', status: moved.status };
  }
  return finalFailure('subscription_not_found', deletedWhileHeld(subscription));
}
