/**
 * Finding what an earlier attempt posted to Slack (bot token only). Every bot-token post
 * carries message metadata naming its delivery (event id, subscription, target); a retry
 * reads the channel's recent history (`conversations.history` with `include_all_metadata`)
 * for it before posting again, so a post whose answer was never read (kill -9, a Lambda
 * timeout, a lost connection) is not posted twice. Incoming webhooks offer nothing to read.
 */
import { deliveryRequest, IN_PLACE_RATE_LIMIT_WAIT_MS, type HttpOptions } from './http';
import type { DeliveryRequest } from './target';

/** The metadata `event_type` of hookagent's posts (Slack: a human-readable alphanumeric name). */
export const DELIVERY_EVENT_TYPE = 'hookagent_delivery';

/** What names one delivery: nothing secret, nothing from the payload. */
export interface DeliveryMark {
  event_id: string;
  subscription: string;
  target: string;
}

export interface DeliveryMetadata {
  event_type: typeof DELIVERY_EVENT_TYPE;
  event_payload: DeliveryMark;
}

export function deliveryMetadata(request: Pick<DeliveryRequest, 'message' | 'subscription'>, target = 'teamchat'): DeliveryMetadata {
  return { event_type: DELIVERY_EVENT_TYPE, event_payload: { event_id: request.message.event_id, subscription: request.subscription.name, target } };
}

/** Pages of history read at most (newest first), and messages asked per page (Slack: at most 999, 200 advised). */
export const LOOKUP_PAGES = 3;
export const LOOKUP_PAGE_SIZE = 200;
/** Slack's clock and ours may differ: the search reaches this far before the event's arrival. */
export const CLOCK_MARGIN_MS = 5 * 60_000;
/** The longest rate-limit wait the search honours; beyond it the reply is posted without it. */
export const LOOKUP_MAX_WAIT_MS = 5_000;

/** What it takes for the search to work, said whenever it cannot be made. */
export const LOOKUP_NEEDS = 'the bot token needs channels:history (groups:history for a private channel, im:history / mpim:history for a direct message), the bot must be in the channel, and the channel must be given by its ID (C…)';

export type EarlierPost =
  | { kind: 'found'; ts: string }
  /** The history back to before the event's arrival holds no post of this delivery. */
  | { kind: 'absent' }
  /** The search could not be made or finished: the caller posts anyway. */
  | { kind: 'unknown'; reason: string };

interface HistoryAnswer {
  ok?: unknown;
  error?: unknown;
  needed?: unknown;
  messages?: unknown;
  has_more?: unknown;
  response_metadata?: { next_cursor?: unknown };
}

/** Slack's `oldest`: seconds since the epoch, with microseconds, as message timestamps are written. */
function oldestOf(since: string): string | undefined {
  const at = Date.parse(since);
  return Number.isFinite(at) ? (Math.max(0, at - CLOCK_MARGIN_MS) / 1000).toFixed(6) : undefined;
}

function isMark(value: unknown, mark: DeliveryMark): boolean {
  if (!value || typeof value !== 'object') return false;
  const m = value as { event_type?: unknown; event_payload?: unknown };
  if (m.event_type !== DELIVERY_EVENT_TYPE || !m.event_payload || typeof m.event_payload !== 'object') return false;
  const p = m.event_payload as Record<string, unknown>;
  return p.event_id === mark.event_id && p.subscription === mark.subscription && p.target === mark.target;
}

/** Why Slack refused the read, with what would let it work. */
function refusal(answer: HistoryAnswer): string {
  const error = typeof answer.error === 'string' ? answer.error : 'unknown_error';
  if (error === 'missing_scope') return `missing_scope: the bot token lacks ${typeof answer.needed === 'string' ? answer.needed : 'channels:history'}`;
  if (error === 'not_in_channel') return 'not_in_channel: the bot is not a member of the channel';
  if (error === 'channel_not_found') return 'channel_not_found: conversations.history needs the channel ID (C…), not its name';
  return error;
}

/**
 * Looks for this delivery's post in `channel`, newest first, back to shortly before
 * `since` and at most `LOOKUP_PAGES` pages. Never throws: every failure is `unknown`.
 */
export async function findEarlierPost(
  apiUrl: string, token: string, channel: string, mark: DeliveryMark, since: string,
  http: Omit<HttpOptions, 'api'>,
): Promise<EarlierPost> {
  if (channel.startsWith('#')) return { kind: 'unknown', reason: `channel ${channel} is a name; conversations.history needs the channel ID (C…)` };
  const options: HttpOptions = {
    ...http, api: 'Slack conversations.history', attempts: 2,
    maxWaitMs: Math.min(http.maxWaitMs ?? IN_PLACE_RATE_LIMIT_WAIT_MS, LOOKUP_MAX_WAIT_MS),
    errorMessage: (body) => { try { return String((JSON.parse(body) as { error?: unknown }).error ?? '') || undefined; } catch { return undefined; } },
  };
  const oldest = oldestOf(since);
  let cursor: string | undefined;
  let read = 0;
  for (let page = 1; page <= LOOKUP_PAGES; page++) {
    const query = new URLSearchParams({ channel, limit: String(LOOKUP_PAGE_SIZE), include_all_metadata: 'true', ...(oldest ? { oldest } : {}), ...(cursor ? { cursor } : {}) });
    const result = await deliveryRequest(`${apiUrl}/conversations.history?${query.toString()}`, {
      method: 'GET', headers: { authorization: `Bearer ${token}` }, redirect: 'manual',
    }, options);
    if (!result.ok) return { kind: 'unknown', reason: `${result.failure.code}: ${result.failure.message}` };
    let answer: HistoryAnswer;
    try {
      answer = JSON.parse(result.body) as HistoryAnswer;
    } catch {
      return { kind: 'unknown', reason: 'Slack conversations.history answered with something that is not JSON' };
    }
    if (!answer || typeof answer !== 'object') return { kind: 'unknown', reason: 'Slack conversations.history answered with something that is not an object' };
    if (answer.ok !== true) return { kind: 'unknown', reason: `Slack conversations.history refused: ${refusal(answer)}` };
    if (!Array.isArray(answer.messages)) return { kind: 'unknown', reason: 'Slack conversations.history answered without a messages list' };
    for (const message of answer.messages as unknown[]) {
      const m = (message ?? {}) as { ts?: unknown; metadata?: unknown };
      if (typeof m.ts === 'string' && isMark(m.metadata, mark)) return { kind: 'found', ts: m.ts };
    }
    read += answer.messages.length;
    const next = answer.response_metadata?.next_cursor;
    const more = typeof next === 'string' && next !== '';
    if (answer.has_more === false || (!more && answer.has_more !== true)) return { kind: 'absent' };
    if (!more) return { kind: 'unknown', reason: 'Slack conversations.history has more messages but gave no cursor' };
    cursor = next;
  }
  return { kind: 'unknown', reason: `read ${read} messages (${LOOKUP_PAGES} pages) without reaching the event's arrival` };
}
