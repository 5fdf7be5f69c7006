/**
 * One queue message, start to finish: render, run the agent, honour [SILENT], deliver to
 * each target, and record every step in the event log. Idempotent under redelivery: a
 * finished record is acknowledged without work; a partly delivered one keeps its stored
 * reply and re-delivers only the targets that did not succeed.
 */
import type { Config } from '../config/types';
import type { DeliveryOutcome, DeliveryTarget } from '../delivery/target';
import { describeError, isHookError } from '../errors';
import type { Logger } from '../log';
import type { Clock, DeadLetterSink, EventLog, PayloadStore, SubscriptionStore } from '../ports';

import type { SkillLibrary } from '../skills/library';
import type { Skill } from '../skills/skill';
import { renderPrompt } from '../templates/template';
import type { EventRecord, QueueMessage, Subscription, TargetKind } from '../types';
import type { Agent } from '../agent/agent';
import { isSilent } from '../agent/silent';
import { fencePrompt, systemPrompt } from '../agent/system-prompt';
import { parseQueueMessage } from './message';

/** What the event log keeps of a prompt or a reply. */
export const STORED_TEXT_CAP = 64 * 1024;

export interface WorkerDeps {
  events: EventLog;
  payloads: PayloadStore;
  subscriptions: SubscriptionStore;
  agent: Agent;
  skills: SkillLibrary;
  targets: Partial<Record<TargetKind, DeliveryTarget>>;
  /** Resolved `agent` and `delivery` sections. */
  config: Pick<Config, 'agent' | 'delivery'>;
  clock: Clock;
  logger: Logger;
  maxReceiveCount: number;
  /** Where permanently failed messages go at once; without it they are retried until the queue's redrive. */
  deadLetters?: DeadLetterSink;
}

/** `retry`: report the message as failed so the queue delivers it again (or dead-letters it). */
export type MessageOutcome = { kind: 'ack'; status: EventRecord['status'] | 'malformed' } | { kind: 'retry'; reason: string };

const cap = (text: string) => (text.length > STORED_TEXT_CAP ? `${text.slice(0, STORED_TEXT_CAP)}…[truncated]` : text);

export async function processMessage(body: string, receiveCount: number, deps: WorkerDeps): Promise<MessageOutcome> {
  const message = parseQueueMessage(body);
  if (!message) {
    deps.logger.error('malformed queue message', { bytes: body.length });
    if (deps.deadLetters) {
      await deps.deadLetters.send(body, 'malformed queue message');
      return { kind: 'ack', status: 'malformed' };
    }
    return { kind: 'retry', reason: 'malformed queue message' };
  }
  const log = { event_id: message.event_id, subscription: message.subscription };
  const now = () => new Date(deps.clock.now()).toISOString();

  const stored = await deps.events.get(message.event_id, message.subscription);
  let record = stored ?? newRecord(message, now());
  if (record.status === 'delivered' || record.status === 'suppressed' || record.status === 'failed') {
    deps.logger.info('already finished; acknowledged without work', { ...log, status: record.status });
    return { kind: 'ack', status: record.status };
  }
  const started = deps.clock.now();
  record = { ...record, status: 'processing', attempts: (record.attempts ?? 0) + 1, updated_at: now() };
  // An existing record keeps its stored message: only the changed fields are written.
  if (stored) await deps.events.update(record.event_id, record.subscription, { status: record.status, attempts: record.attempts, updated_at: record.updated_at });
  else await deps.events.putAll([record]);

  const save = async (changes: Partial<EventRecord>) => {
    const update = { ...changes, updated_at: now() };
    record = { ...record, ...update };
    await deps.events.update(record.event_id, record.subscription, update);
  };
  const finalFailure = async (code: string, text: string): Promise<MessageOutcome> => {
    deps.logger.error('failed', { ...log, code, reason: text });
    await save({ status: 'failed', error: { code, message: text } });
    if (deps.deadLetters) {
      await deps.deadLetters.send(body, `${code}: ${text}`);
      return { kind: 'ack', status: 'failed' };
    }
    return { kind: 'retry', reason: text };
  };
  const retryLater = async (code: string, text: string): Promise<MessageOutcome> => {
    if (receiveCount >= deps.maxReceiveCount) {
      // The queue moves the message to the dead-letter queue after this receive.
      const reason = `gave up after ${receiveCount} attempts: ${text}`;
      deps.logger.error('failed', { ...log, code, reason });
      await save({ status: 'failed', error: { code, message: reason } });
      return { kind: 'retry', reason };
    }
    deps.logger.warn('will retry', { ...log, code, reason: text, attempt: receiveCount });
    await save({ status: 'queued', error: { code, message: text } });
    return { kind: 'retry', reason: text };
  };

  const subscription = await deps.subscriptions.get(message.subscription);
  if (!subscription) return finalFailure('subscription_not_found', `No subscription named '${message.subscription}' (deleted after the event arrived)`);

  let payload: Record<string, unknown>;
  try {
    payload = message.payload ?? (JSON.parse(await deps.payloads.get(message.payload_ref as string)) as Record<string, unknown>);
  } catch (error) {
    if (isHookError(error) && error.retryable) return retryLater(error.code, error.message);
    return finalFailure('payload_missing', isHookError(error) ? error.message : `The stored payload cannot be read: ${describeError(error)}`);
  }

  // The reply is generated once; a redelivery re-uses it.
  let reply = record.reply;
  if (reply === undefined) {
    const rendered = renderPrompt(subscription.prompt, payload, message.action ? `${message.event}.${message.action}` : message.event);
    let skills: Skill[];
    try {
      skills = subscription.skills.map((name) => deps.skills.load(name));
    } catch (error) {
      return finalFailure(isHookError(error) ? error.code : 'skill_invalid', isHookError(error) ? error.message : describeError(error));
    }
    await save({ prompt: cap(rendered.text), warnings: rendered.warnings });
    const agentStart = deps.clock.now();
    try {
      const result = await deps.agent.run({
        system: systemPrompt(skills), prompt: fencePrompt(rendered.text), rendered: rendered.text,
        allowedTools: [...new Set(skills.flatMap((s) => s.tools))], timeoutMs: deps.config.agent.timeout_ms, maxSteps: deps.config.agent.max_steps,
        message, payload,
      });
      reply = result.text;
      const warnings = [...rendered.warnings, ...result.refusedTools.map((t) => `tool '${t}' refused: no attached skill declares it`)];
      await save({ reply: cap(reply), warnings, timings: { ...record.timings, agent_ms: deps.clock.now() - agentStart }, error: undefined });
    } catch (error) {
      const code = isHookError(error) ? error.code : 'agent_failed';
      const text = isHookError(error) ? error.message : describeError(error);
      return isHookError(error) && error.retryable ? retryLater(code, text) : finalFailure(code, text);
    }
  }

  if (isSilent(reply)) {
    deps.logger.info('suppressed: the agent answered [SILENT]', log);
    await save({ status: 'suppressed', timings: { ...record.timings, total_ms: deps.clock.now() - started } });
    return { kind: 'ack', status: 'suppressed' };
  }

  const wanted: TargetKind[] = subscription.deliver.length > 0 ? subscription.deliver : ['log'];
  const pending = wanted.filter((kind) => record.targets?.[kind]?.status !== 'delivered');
  const outcomes = await Promise.all(pending.map(async (kind) => [kind, await deliverTo(kind, subscription, message, payload, reply as string, deps)] as const));
  const targets = { ...record.targets };
  for (const [kind, outcome] of outcomes) {
    targets[kind] = outcome.status === 'delivered'
      ? { status: 'delivered', ...(outcome.detail ? { detail: outcome.detail } : {}), at: now() }
      : { status: 'failed', detail: `${outcome.code}: ${outcome.message}`, at: now() };
    deps.logger[outcome.status === 'delivered' ? 'info' : 'warn'](`target ${kind} ${outcome.status}`, { ...log, target: kind, ...(outcome.status === 'failed' ? { code: outcome.code, reason: outcome.message } : {}) });
  }
  await save({ targets, timings: { ...record.timings, total_ms: deps.clock.now() - started } });

  const failures = outcomes.flatMap(([kind, o]) => (o.status === 'failed' ? [{ kind, ...o }] : []));
  if (failures.length === 0) {
    await save({ status: 'delivered', error: undefined });
    return { kind: 'ack', status: 'delivered' };
  }
  const summary = failures.map((f) => `${f.kind}: ${f.message}`).join('; ');
  const code = failures[0]?.code ?? 'delivery_failed';
  return failures.some((f) => f.retryable) ? retryLater(code, summary) : finalFailure(code, summary);
}

async function deliverTo(kind: TargetKind, subscription: Subscription, message: QueueMessage, payload: Record<string, unknown>, reply: string, deps: WorkerDeps): Promise<DeliveryOutcome> {
  const target = deps.targets[kind];
  if (!target) return { status: 'failed', retryable: false, code: 'target_unavailable', message: `Delivery target '${kind}' is not available in this build` };
  try {
    return await target.deliver({ subscription, message, payload, reply, settings: deps.config.delivery, logger: deps.logger });
  } catch (error) {
    // A target that throws instead of answering is treated as a passing failure.
    return { status: 'failed', retryable: true, code: isHookError(error) ? error.code : 'delivery_failed', message: describeError(error) };
  }
}

function newRecord(message: QueueMessage, at: string): EventRecord {
  return {
    event_id: message.event_id, subscription: message.subscription, status: 'queued', source: message.source, event: message.event,
    ...(message.action ? { action: message.action } : {}), delivery_id: message.delivery_id, received_at: message.received_at,
    updated_at: at, message, attempts: 0,
  };
}

