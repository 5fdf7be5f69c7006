/**
 * `webhook replay req_…` for a request one subscription took and another's filters turned
 * away: it runs the request for the latter, from the event stored for the former, once the
 * latter's filters take it. The sender's redelivery cannot: a delivery id is claimed per
 * endpoint for 24 h by the request that was accepted, so it is answered `duplicate`. Runs
 * for a subscription only when all hold: the request-log entry has an `event_id`, that
 * subscription's verdict in it was a filter refusal (event filter or payload filter), and
 * the subscription as it is now takes the event (routing, event and payload filters).
 * Otherwise it is refused with the reason.
 */
import { HookError, isHookError } from '../errors';
import { selectSubscriptions } from '../ingest/select';
import type { CandidateVerdict, EventRecord, QueueMessage, RequestRecord, Subscription } from '../types';
import { requireSubscription, type LifecycleDeps } from './lifecycle';
import { copyFor, startCopies, type ReplayResult } from './replay';

/** A verdict that was a filter refusal, as ingest words it (ingest/select.ts, events/filters.ts' routeMatches). */
const FILTER_REFUSAL = /^(filter "|event filters |no events: reached only through its custom endpoint)/;
const refusedByFilters = (v: CandidateVerdict): boolean => !v.matched && FILTER_REFUSAL.test(v.reason);

/** Refusals named in a message; the rest are counted. */
const NAMED = 5;

/** The subscriptions whose filters turned `entry`'s request away, each with whether (and why not) it takes the event now. */
interface Now { name: string; subscription: Subscription | undefined; takes: boolean; reason: string }

/** Runs the request of `entry` (which has an `event_id`) for `only`, or for the one subscription its filters turned away that takes it now. */
export async function replayRequest(deps: LifecycleDeps, entry: RequestRecord, only?: string): Promise<ReplayResult> {
  const id = entry.request_id;
  const eventId = entry.event_id;
  if (!eventId) throw new HookError('event_not_found', `Request '${id}' stored no event: there is nothing to replay`);
  const verdicts = entry.candidates ?? [];
  let refusing = verdicts.filter(refusedByFilters);
  if (only !== undefined) {
    const verdict = verdicts.find((v) => v.subscription === only);
    if (!verdict) throw new HookError('event_not_found', `Request '${id}' has no verdict of '${only}' (it was not a subscription then, or not one this endpoint reaches): 'hookagent webhook event ${id}' lists the subscriptions it was checked against`);
    if (verdict.matched) throw new HookError('bad_option', `'${only}' took request '${id}': it is event ${eventId}; replay that with 'hookagent webhook replay ${eventId} --subscription ${only}'`);
    if (!refusedByFilters(verdict)) throw new HookError('unsupported', `'${only}' turned request '${id}' away for another reason than its filters (${verdict.reason}): there is nothing to run`);
    refusing = [verdict];
  } else if (refusing.length === 0) {
    const took = verdicts.filter((v) => v.matched).map((v) => `'${v.subscription}'`);
    throw new HookError('bad_option', `No subscription's filters turned request '${id}' away${took.length ? ` (${took.join(', ')} took it)` : ''}: replay its event with 'hookagent webhook replay ${eventId}'`);
  }

  const records = await deps.events.getEvent(eventId);
  const source = records.find((r) => r.message.payload !== undefined || r.message.payload_ref) ?? records[0];
  if (!source) throw new HookError('event_not_found', `The event ${eventId} of request '${id}' is no longer in the event log (it keeps 14 days): there is nothing to replay`);
  const payload = await payloadOf(deps, source.message);
  const now = await Promise.all(refusing.map((v) => takesNow(deps, v.subscription, source.message, payload)));
  const takers = now.filter((s) => s.takes);

  if (only !== undefined && takers.length === 0) {
    if (!now[0]?.subscription) await requireSubscription(deps, only);
    throw new HookError('unsupported', `'${only}' as it is now still does not take request '${id}' (${now[0]?.reason}): change its filters ('hookagent webhook update ${only} --events …' or '--filter …') and run this again`);
  }
  if (takers.length === 0) {
    // Payload filter refusals first: those are the ones a user changes filters for.
    const listed = [...now].sort((a, b) => Number(b.reason.startsWith('filter "')) - Number(a.reason.startsWith('filter "')));
    const named = listed.slice(0, NAMED).map((s) => `'${s.name}' (${s.reason})`).join('; ');
    const more = listed.length > NAMED ? `; and ${listed.length - NAMED} more` : '';
    throw new HookError('unsupported', `None of the subscriptions whose filters turned request '${id}' away takes it as it is now: ${named}${more}. Change the filters ('hookagent webhook update <name> …') and run this again`);
  }
  if (takers.length > 1) {
    const names = takers.map((s) => `'${s.name}'`).join(', ');
    throw new HookError('bad_option', `The filters of ${names} turned request '${id}' away and each takes it now: name one with --subscription (e.g. 'hookagent webhook replay ${id} --subscription ${takers[0]!.name}')`);
  }
  const { name, subscription } = takers[0]!;
  const template: EventRecord = { ...source, subscription: name, message: { ...source.message, subscription: name } };
  const copies = await startCopies(deps, [copyFor(template, subscription as Subscription, deps.clock.now())]);
  return { copies, stillHeld: [] };
}

/** Whether `name` as it is now takes the event (undefined `subscription`: deleted since). */
async function takesNow(deps: LifecycleDeps, name: string, message: QueueMessage, payload: unknown): Promise<Now> {
  const subscription = await deps.subscriptions.get(name);
  if (!subscription) return { name, subscription, takes: false, reason: 'deleted since' };
  const [verdict] = selectSubscriptions([subscription], message.source, message.event, message.action, payload).verdicts;
  return { name, subscription, takes: verdict?.matched === true, reason: verdict?.reason ?? 'no verdict' };
}

/** The event's payload: inline, or read through its pointer. */
async function payloadOf(deps: LifecycleDeps, message: QueueMessage): Promise<unknown> {
  if (message.payload !== undefined) return message.payload;
  const missing = (why: string) => new HookError('payload_missing', `The stored payload of event ${message.event_id} cannot be read${why}: there is nothing to replay`);
  if (!message.payload_ref || !deps.payloads) throw missing(message.payload_ref ? ' from here' : ' (it is gone)');
  try {
    return JSON.parse(await deps.payloads.get(message.payload_ref));
  } catch (error) {
    // A store failing for a moment is said as it is: running the command again may work.
    if (isHookError(error) && error.retryable) throw error;
    throw missing(isHookError(error) ? ` (${error.message})` : '');
  }
}
