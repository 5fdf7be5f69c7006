/**
 * `webhook event req_…`: the request-log entry behind a `filtered` row of `webhook events`.
 * A request every subscription turned away stored nothing: its request-log entry (7 days)
 * is the whole story. One that another subscription took stored its event: `webhook replay
 * req_…` runs it for a subscription whose filters turned it away (replay-request.ts).
 */
import { HookError } from '../../functions/core/errors';
import { omittedNote } from '../../functions/core/ingest/request-candidates';
import { escapeTerminal } from '../../functions/core/log';
import type { RequestLog } from '../../functions/core/ports';
import type { EventRecord, RequestOutcome, RequestRecord } from '../../functions/core/types';
import { endpointOf } from '../console/list-view';
import type { Stores } from '../context';
import { commandName } from '../invocation';

/** `req_` + 9 base-36 digits of the receive time in ms + a sequence and a process tag (ingest/request-log.ts). */
const REQUEST_ID = /^req_([0-9a-z]{9})[0-9a-z]{4,}$/;

/** Entries received at or after the id's time that the lookup reads through at most. */
const SCAN_LIMIT = 10_000;
/** Request-log outcomes of a request that stored an event. */
const STORING_OUTCOMES: RequestOutcome[] = ['accepted', 'held'];
/** Ingest writes the entry right after it stamps the event; a margin either side for a clock stepped in between. */
const EVENT_CLOCK_SLACK_MS = 60_000;

export const isRequestId = (id: string): boolean => id.startsWith('req_');

/** The entry with this id; undefined when it is not (or no longer) in the request log, or the store has none (also the console's lookup). */
export async function findRequestEntry(requests: RequestLog | undefined, id: string): Promise<RequestRecord | undefined> {
  const time = REQUEST_ID.exec(id)?.[1];
  if (!requests || time === undefined) return undefined;
  // The id's own millisecond: the entry is there, whatever came after it.
  const at = parseInt(time, 36);
  const entries = await requests.list({ since: at, until: at, limit: SCAN_LIMIT });
  return entries.find((entry) => entry.request_id === id);
}

export const findRequest = (stores: Stores, id: string): Promise<RequestRecord | undefined> => findRequestEntry(stores.requests, id);

/**
 * The entry of the request that stored `stored`'s event. The request log has no index by
 * event id; it is read by time (its index) in a window around the event's own time, at
 * the event's endpoint, among the outcomes that store events (as the console's event page
 * finds it). A replay came from no request.
 */
export async function findEventRequest(requests: RequestLog | undefined, stored: EventRecord): Promise<RequestRecord | undefined> {
  if (!requests || stored.message.replay_of) return undefined;
  const at = Date.parse(stored.received_at);
  const window = { since: at - EVENT_CLOCK_SLACK_MS, until: at + EVENT_CLOCK_SLACK_MS };
  const found = await Promise.all(STORING_OUTCOMES.map((outcome) => requests.list({ endpoint: endpointOf(stored), outcome, ...window, limit: SCAN_LIMIT })));
  return found.flat().find((entry) => entry.event_id === stored.event_id);
}

export function requestNotFound(id: string): HookError {
  return new HookError('event_not_found', `No request '${id.slice(0, 80)}' in the request log (entries are kept 7 days); list recent ones with 'hookagent webhook requests'`);
}

/**
 * `replay req_…` for an entry that stored no event: refused with why. A sender's redelivery
 * is advised only where it would be taken: no subscription took the request, so its
 * delivery id was not claimed (a duplicate's was, by the earlier request).
 */
export function refuseRequestReplay(entry: RequestRecord): HookError {
  const id = entry.request_id.slice(0, 80);
  const see = `See why with 'hookagent webhook event ${id}'`;
  const why: Partial<Record<RequestRecord['outcome'], string>> = {
    filtered: `its payload filters turned that request away, so nothing was stored to replay. ${see}; to run it, change the filters and have the sender deliver it again`,
    not_handled: `no subscription's event filters took that request, so nothing was stored to replay. ${see}; to run it, change a subscription's events and have the sender deliver it again`,
    duplicate: `that request repeated the delivery id of an earlier request (answered duplicate), so it stored nothing itself. 'hookagent webhook requests' lists the earlier one: 'hookagent webhook replay' with its req_… id runs it for a subscription whose filters turned it away`,
  };
  return new HookError('event_not_found', `'${id}' is a request-log id, not an event: ${why[entry.outcome] ?? `that request was answered ${entry.outcome} (HTTP ${entry.status}), so nothing was stored to replay. ${see}`}`);
}

export function requestText(r: RequestRecord): string {
  const type = r.event ? (r.action ? `${r.event}.${r.action}` : r.event) : '-';
  const lines = [
    `${r.request_id}: a request-log entry (${r.outcome}, HTTP ${r.status}); ${r.event_id
      ? `its event is stored for the subscriptions that took it; '${commandName()} webhook replay ${r.request_id}' runs it for one whose filters turned it away, once they take it`
      : 'requests turned away by payload filters are not stored as events, so there is nothing to replay'}`,
    `  request:  ${r.method} /webhooks/${r.endpoint} ${type}, delivery ${r.delivery_id ?? '-'}, received ${r.received_at}${r.source_ip ? ` from ${r.source_ip}` : ''}`,
  ];
  if (r.event_id) lines.push(`  event:    ${r.event_id} (for the subscriptions that took it: '${commandName()} webhook event ${r.event_id}')`);
  if (r.message) lines.push(`  message:  ${r.message}`);
  lines.push(`  subscriptions:${r.candidates?.length ? '' : ' (none)'}`);
  for (const c of r.candidates ?? []) lines.push(`    ${c.subscription}: ${c.matched ? 'yes' : 'no'} (${c.reason})`);
  // Misses past the entry's room are counted, not listed (ingest/request-candidates.ts).
  const omitted = omittedNote(r.candidates ?? [], r.candidates_omitted);
  if (omitted) lines.push(`    ${omitted}`);
  return escapeTerminal(lines.join('\n'));
}
