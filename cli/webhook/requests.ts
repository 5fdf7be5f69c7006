/**
 * Issue 17 on the command line: the options of per-subscription settings (filters,
 * direct delivery, agent settings, caps, debounce) and `webhook requests`, the request log.
 */
import type { Options } from 'yargs';
import { HookError } from '../../functions/core/errors';
import type { SettingsInput } from '../../functions/core/subscriptions/settings';
import { omittedNote } from '../../functions/core/ingest/request-candidates';
import { isEventFilterMiss } from '../../functions/core/request-filtered';
import type { RequestOutcome, RequestRecord } from '../../functions/core/types';
import { table } from '../output';
import { withStores, type CliContext, type Stores } from '../context';
import type { RequestLog } from '../../functions/core/ports';
import { errors } from '../../functions/core/ingest/responses';

export const settingsOptions: Record<string, Options> = {
  filter: { type: 'string', requiresArg: true, array: true, describe: 'payload condition that must hold, repeatable (all must hold): path == v, !=, <, <=, >, >=, in [a, b], =~ /re/i, exists path, !exists path, any(path[*].field == v); --filter "" clears' },
  agent: { type: 'string', requiresArg: true, describe: "'none': deliver the rendered template as is, without the agent ('default' restores it)" },
  model: { type: 'string', requiresArg: true, describe: "the agent's model for this subscription (overrides agent.model; \"\" clears)" },
  'max-steps': { type: 'string', requiresArg: true, describe: 'tool-use rounds for this subscription (1-50; overrides agent.max_steps)' },
  timeout: { type: 'string', requiresArg: true, describe: "the agent's timeout for this subscription (e.g. 60s, 2m; at most 300s less 3 × delivery.timeout)" },
  'max-runs-per-hour': { type: 'string', requiresArg: true, describe: 'agent runs per hour; later events are recorded rate_limited (replayable); 0 = no cap' },
  debounce: { type: 'string', requiresArg: true, describe: 'run only the latest event per PR/MR/issue/commit/alert group of a burst, after this quiet time (e.g. 60s; at most 15m; 0 = off)' },
};

/** The settings options given on the command line (strings as typed). */
export function settingsOf(argv: Record<string, unknown>): SettingsInput {
  const input: SettingsInput = {};
  const text = (value: unknown) => (value === undefined ? undefined : String(Array.isArray(value) ? value[value.length - 1] : value));
  if (argv.filter !== undefined) input.filters = (Array.isArray(argv.filter) ? argv.filter : [argv.filter]).map(String);
  const pairs: Array<[keyof SettingsInput, unknown]> = [
    ['agent', argv.agent], ['model', argv.model], ['maxSteps', argv.maxSteps], ['timeout', argv.timeout],
    ['maxRunsPerHour', argv.maxRunsPerHour], ['debounce', argv.debounce],
  ];
  for (const [key, value] of pairs) {
    const v = text(value);
    if (v !== undefined) (input as Record<string, unknown>)[key] = v;
  }
  return input;
}

export const REQUEST_OUTCOMES: RequestOutcome[] = [
  'accepted', 'held', 'duplicate', 'not_handled', 'filtered', 'ignored_loop', 'ping', 'rejected_signature', 'ip_not_allowed',
  'payload_too_large', 'invalid_json', 'invalid_event', 'not_found', 'method_not_allowed', 'unavailable', 'in_progress',
];

function why(r: RequestRecord): string {
  if (r.message) return `${r.message}${r.count && r.count > 1 ? ` (×${r.count}: sampled)` : ''}`;
  const candidates = r.candidates ?? [];
  if (candidates.length === 0) return r.outcome === 'not_handled' ? 'no subscriptions' : '';
  // Subscriptions the event type reached come first (matched, filtered out, held): the
  // answer to "why didn't it fire?" is among them; the rest never listened for this event.
  // (Entries written since hunt 13 hold them first already; older ones are in name order.)
  const ordered = [...candidates.filter((c) => !isEventFilterMiss(c)), ...candidates.filter(isEventFilterMiss)];
  const omitted = omittedNote(candidates, r.candidates_omitted);
  return [...ordered.map((c) => `${c.subscription}: ${c.matched ? 'yes' : 'no'} (${c.reason})`), ...(omitted ? [omitted] : [])].join('; ');
}

/** Where ingest records requests to a custom name that is no subscription's (README "Request log"). */
const UNNAMED_ENDPOINT = 'custom/?';
/** How many of the newest `custom/?` 404s are searched for a name's own. */
const UNNAMED_SCAN = 1000;

interface Listed {
  records: RequestRecord[];
  /** `--endpoint custom/<name>` named no subscription: its requests are under `custom/?`. */
  unnamed?: string;
}

/**
 * The entries of `query`. For `custom/<name>` naming no subscription, also the 404s under
 * `custom/?` whose message is ingest's own for that name: only a 404 keeps the name (a 405,
 * 403 or 413 is answered before the name is looked up, and a sampled entry stands for
 * requests to any name), so the others are left to `--endpoint 'custom/?'`.
 */
async function listed(stores: Stores, requestLog: RequestLog, query: RequestsQuery): Promise<Listed> {
  const filters = { ...(query.endpoint ? { endpoint: query.endpoint } : {}), ...(query.outcome ? { outcome: query.outcome as RequestOutcome } : {}) };
  const own = await requestLog.list({ limit: query.limit, ...filters });
  const name = query.endpoint?.startsWith('custom/') ? query.endpoint.slice('custom/'.length) : undefined;
  if (name === undefined || query.endpoint === UNNAMED_ENDPOINT || (await stores.subscriptions.get(name))) return { records: own };
  if (query.outcome !== undefined && query.outcome !== 'not_found') return { records: own, unnamed: name };
  const message = (errors.subscriptionNotFound(name).body as { message: string }).message;
  const named = (await requestLog.list({ endpoint: UNNAMED_ENDPOINT, outcome: 'not_found', limit: UNNAMED_SCAN })).filter((r) => r.message === message);
  // A subscription deleted since keeps its older entries under its own name: newest first, both.
  const records = [...own, ...named].sort((a, b) => b.received_at.localeCompare(a.received_at)).slice(0, query.limit);
  return { records, unnamed: name };
}

const unnamedPointer = (name: string): string => `No subscription named '${name}': requests to it are recorded under --endpoint '${UNNAMED_ENDPOINT}'`;

export interface RequestsQuery {
  endpoint?: string;
  outcome?: string;
  limit: number;
}

export async function requests(ctx: CliContext, query: RequestsQuery, json: boolean): Promise<void> {
  const { records, unnamed } = await withStores(ctx, async (stores) => {
    if (!stores.requests) throw new HookError('unsupported', `The request log is not available in ${stores.where}`);
    return listed(stores, stores.requests, query);
  });
  const note = unnamed === undefined ? undefined
    : `note: no subscription named '${unnamed}': its requests are recorded under --endpoint '${UNNAMED_ENDPOINT}'; listed are the 404s there that name it (a 405, 403 or 413 answered before the name was looked up, and requests a sampled entry stands for, do not keep it)`;
  if (json) {
    ctx.out(JSON.stringify(records, null, 2));
    if (note) ctx.warn(records.length === 0 ? `note: ${unnamedPointer(unnamed as string)}` : note);
    return;
  }
  if (records.length === 0) return ctx.out(unnamed === undefined ? 'No requests recorded in the last 7 days that match.' : unnamedPointer(unnamed));
  ctx.out(table(['RECEIVED', 'ENDPOINT', 'STATUS', 'OUTCOME', 'EVENT', 'DELIVERY ID', 'WHY'], records.map((r) => [
    r.received_at.slice(0, 19).replace('T', ' '), r.endpoint, String(r.status), r.outcome,
    r.event ? (r.action ? `${r.event}.${r.action}` : r.event) : '-', (r.delivery_id ?? '-').slice(0, 40), why(r),
  ])));
  if (note) ctx.warn(note);
}
