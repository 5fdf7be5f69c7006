/**
 * A local Slack Web API (real HTTP on 127.0.0.1, port chosen at run time) speaking its
 * wire format for the two methods hookagent calls with a bot token:
 * - POST /api/chat.postMessage (JSON body, `Authorization: Bearer xoxb-…`): keeps the
 *   message with its `metadata` and answers `{ok, channel, ts, message}`;
 * - GET or POST (form or JSON) /api/conversations.history: `channel`, `oldest`, `latest`,
 *   `inclusive`, `limit`, `cursor`, `include_all_metadata`; messages newest first, their
 *   `metadata` only with `include_all_metadata`; `has_more` and an opaque
 *   `response_metadata.next_cursor`; `missing_scope` (with `needed`/`provided`) without the
 *   channel type's `*:history` scope, `not_in_channel` when the bot is not a member.
 * Errors are HTTP 200 with `{ok:false,error}`; a rate limit is HTTP 429 with `Retry-After`
 * (seconds) and `{ok:false,error:"ratelimited"}`. Tests script what the next calls meet.
 */
import type { ServerResponse } from 'node:http';
import { sendJson, startLocalServer, type LocalServer, type Recorded } from './local-http';

export interface SlackMessage {
  type: 'message';
  ts: string;
  text: string;
  bot_id?: string;
  user?: string;
  metadata?: { event_type: string; event_payload: Record<string, unknown> };
}

export type SlackMethod = 'chat.postMessage' | 'conversations.history';

/** What a scripted call meets instead of the normal answer. */
export type SlackScripted =
  | { kind: 'answer'; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: 'raw'; status: number; body: string; contentType: string }
  | { kind: 'rate_limited'; retryAfterSeconds: number }
  /** chat.postMessage only: the message is kept (it arrived), then the connection is reset: the answer is lost. */
  | { kind: 'keep_then_reset' }
  /** chat.postMessage only: the message is kept (it arrived), then this answer is given (a gateway's 5xx after the post). */
  | { kind: 'keep_then_answer'; status: number; body: unknown }
  /** chat.postMessage only: the request is read, nothing is kept, the connection is reset (it never arrived). */
  | { kind: 'drop' };

export interface FakeSlack {
  /** The Web API base, as `delivery.teamchat.api_url` takes it (`…/api`). */
  apiUrl: string;
  server: LocalServer;
  /** The bot token the server accepts. */
  token: string;
  /** The token's scopes (tests remove `channels:history` to see missing_scope). */
  scopes: Set<string>;
  /** Channels (by ID) the bot is a member of. */
  memberOf: Set<string>;
  /** Each channel's messages, oldest first. */
  channels: Map<string, SlackMessage[]>;
  /** Every chat.postMessage that was kept (arrived), in order. */
  posts: Array<{ channel: string; body: Record<string, unknown>; message: SlackMessage }>;
  /** Every conversations.history call, with the parameters it was read with. */
  historyCalls: Array<Record<string, string>>;
  /** Scripted answers for the next calls of a method, in order. */
  script: Record<SlackMethod, SlackScripted[]>;
  /** Adds `count` messages from someone else to `channel`, after those already there. */
  seed(channel: string, count: number, make?: (i: number) => Partial<SlackMessage>): void;
  reset(): void;
  close(): Promise<void>;
}

/** Channel names the fake knows, and their IDs. */
const NAMES: Record<string, string> = { '#ops': 'C0OPS', '#general': 'C0GENERAL' };

const historyScope = (channel: string) => (channel.startsWith('G') ? 'groups:history' : channel.startsWith('D') ? 'im:history' : 'channels:history');

export async function startFakeSlack(options: { token?: string; scopes?: string[] } = {}): Promise<FakeSlack> {
  const initialScopes = options.scopes ?? ['chat:write', 'channels:history', 'groups:history'];
  let clock = Math.floor(Date.now() / 1000) * 1_000_000;
  /** Slack timestamps: seconds with six digits of a unique per-channel sequence. */
  const nextTs = () => {
    clock = Math.max(clock + 1, Date.now() * 1000);
    return `${Math.floor(clock / 1_000_000)}.${String(clock % 1_000_000).padStart(6, '0')}`;
  };
  const fake: FakeSlack = {
    apiUrl: '', server: undefined as unknown as LocalServer, token: options.token ?? 'xoxb-fake-token',
    scopes: new Set(initialScopes), memberOf: new Set(['C0OPS', 'C0GENERAL', 'G0PRIVATE']), channels: new Map(), posts: [], historyCalls: [],
    script: { 'chat.postMessage': [], 'conversations.history': [] },
    seed(channel, count, make = () => ({})) {
      const list = fake.channels.get(channel) ?? [];
      for (let i = 0; i < count; i++) list.push({ type: 'message', ts: nextTs(), text: `chatter ${i}`, user: 'U0HUMAN', ...make(i) });
      fake.channels.set(channel, list);
    },
    reset() {
      fake.channels.clear();
      fake.posts.length = 0;
      fake.historyCalls.length = 0;
      fake.server.requests.length = 0;
      fake.script['chat.postMessage'] = [];
      fake.script['conversations.history'] = [];
      fake.scopes = new Set(initialScopes);
    },
    close: async () => fake.server.close(),
  };

  const error = (res: ServerResponse, name: string, extra: Record<string, unknown> = {}) => sendJson(res, 200, { ok: false, error: name, ...extra });

  /** Bearer header or `token` parameter, as Slack accepts; false when the call must stop (answered). */
  const authorised = (req: Recorded, params: Record<string, string>, res: ServerResponse): boolean => {
    const header = req.headers.authorization;
    const token = typeof header === 'string' && header.startsWith('Bearer ') ? header.slice(7) : params.token;
    if (!token) return error(res, 'not_authed'), false;
    if (token !== fake.token) return error(res, 'invalid_auth'), false;
    return true;
  };

  /** GET query, or a POST's form or JSON body, as strings. */
  const paramsOf = (req: Recorded): Record<string, string> | undefined => {
    const url = new URL(req.url, 'http://slack.local');
    const params: Record<string, string> = Object.fromEntries(url.searchParams);
    if (req.method !== 'POST' || req.body === '') return params;
    const type = String(req.headers['content-type'] ?? '');
    if (type.startsWith('application/x-www-form-urlencoded')) return { ...params, ...Object.fromEntries(new URLSearchParams(req.body)) };
    try {
      const body = JSON.parse(req.body) as Record<string, unknown>;
      if (!body || typeof body !== 'object' || Array.isArray(body)) return undefined;
      return { ...params, ...Object.fromEntries(Object.entries(body).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])) };
    } catch {
      return undefined;
    }
  };

  const scripted = (method: SlackMethod, res: ServerResponse): SlackScripted | undefined => {
    const next = fake.script[method].shift();
    if (!next) return undefined;
    if (next.kind === 'answer') sendJson(res, next.status, next.body, next.headers);
    else if (next.kind === 'raw') {
      res.writeHead(next.status, { 'content-type': next.contentType });
      res.end(next.body);
    } else if (next.kind === 'rate_limited') sendJson(res, 429, { ok: false, error: 'ratelimited' }, { 'retry-after': String(next.retryAfterSeconds) });
    return next;
  };

  const postMessage = (req: Recorded, res: ServerResponse) => {
    if (req.method !== 'POST') return error(res, 'invalid_request');
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(req.body) as Record<string, unknown>;
    } catch {
      return error(res, 'invalid_json');
    }
    if (!authorised(req, {}, res)) return;
    const step = fake.script['chat.postMessage'][0];
    if (step && step.kind !== 'keep_then_reset' && step.kind !== 'keep_then_answer' && step.kind !== 'drop') return void scripted('chat.postMessage', res);
    if (!fake.scopes.has('chat:write')) return error(res, 'missing_scope', { needed: 'chat:write', provided: [...fake.scopes].join(',') });
    const asked = typeof body.channel === 'string' ? body.channel : '';
    const channel = NAMES[asked] ?? asked;
    if (!/^[CGD][A-Z0-9]+$/.test(channel)) return error(res, 'channel_not_found');
    if (typeof body.text !== 'string' || body.text === '') return error(res, 'no_text');
    if (step?.kind === 'drop') {
      fake.script['chat.postMessage'].shift();
      return void res.socket?.destroy();
    }
    const metadata = body.metadata as SlackMessage['metadata'] | undefined;
    if (metadata !== undefined && (typeof metadata !== 'object' || typeof metadata.event_type !== 'string' || typeof metadata.event_payload !== 'object')) return error(res, 'invalid_metadata_format');
    const message: SlackMessage = { type: 'message', ts: nextTs(), text: body.text, bot_id: 'B0HOOKAGENT', ...(metadata ? { metadata } : {}) };
    fake.channels.set(channel, [...(fake.channels.get(channel) ?? []), message]);
    fake.posts.push({ channel, body, message });
    if (step?.kind === 'keep_then_reset') {
      fake.script['chat.postMessage'].shift();
      return void res.socket?.destroy();
    }
    if (step?.kind === 'keep_then_answer') {
      fake.script['chat.postMessage'].shift();
      return sendJson(res, step.status, step.body);
    }
    sendJson(res, 200, { ok: true, channel, ts: message.ts, message: { type: 'message', text: message.text, bot_id: message.bot_id, ts: message.ts } });
  };

  const history = (req: Recorded, res: ServerResponse) => {
    const params = paramsOf(req);
    if (!params) return error(res, 'invalid_json');
    fake.historyCalls.push(params);
    if (!authorised(req, params, res)) return;
    if (scripted('conversations.history', res)) return;
    const channel = params.channel ?? '';
    if (!channel) return error(res, 'channel_not_found');
    const needed = historyScope(channel);
    if (!fake.scopes.has(needed)) return error(res, 'missing_scope', { needed, provided: [...fake.scopes].join(',') });
    if (!/^[CGD][A-Z0-9]+$/.test(channel)) return error(res, 'channel_not_found');
    if (!fake.memberOf.has(channel)) return error(res, 'not_in_channel');
    const limit = Math.min(999, Math.max(1, Number(params.limit ?? 100) || 100));
    const inclusive = params.inclusive === 'true' || params.inclusive === '1';
    const oldest = Number(params.oldest ?? 0);
    const latest = params.latest === undefined ? Infinity : Number(params.latest);
    if (!Number.isFinite(oldest) || Number.isNaN(latest)) return error(res, 'invalid_ts_oldest');
    const metadataToo = params.include_all_metadata === 'true' || params.include_all_metadata === '1';
    let inRange = [...(fake.channels.get(channel) ?? [])].reverse().filter((m) => {
      const ts = Number(m.ts);
      return (inclusive ? ts >= oldest : ts > oldest) && (inclusive ? ts <= latest : ts < latest);
    });
    if (params.cursor) {
      const decoded = Buffer.from(params.cursor, 'base64').toString('utf8');
      if (!decoded.startsWith('next_ts:')) return error(res, 'invalid_cursor');
      const from = Number(decoded.slice('next_ts:'.length));
      inRange = inRange.filter((m) => Number(m.ts) <= from);
    }
    const page = inRange.slice(0, limit);
    const more = inRange.length > limit;
    const messages = page.map(({ metadata, ...rest }) => (metadataToo && metadata ? { ...rest, metadata } : rest));
    sendJson(res, 200, {
      ok: true, messages, has_more: more, pin_count: 0, channel_actions_ts: null, channel_actions_count: 0,
      ...(more ? { response_metadata: { next_cursor: Buffer.from(`next_ts:${inRange[limit]!.ts}`).toString('base64') } } : {}),
    });
  };

  fake.server = await startLocalServer((req, res) => {
    const path = new URL(req.url, 'http://slack.local').pathname;
    if (path === '/api/chat.postMessage') return postMessage(req, res);
    if (path === '/api/conversations.history') return history(req, res);
    error(res, 'unknown_method');
  });
  fake.apiUrl = `${fake.server.url}/api`;
  return fake;
}
