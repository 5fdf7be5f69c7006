/**
 * One HTTP call to a delivery API, with the failure handling every target shares:
 * `delivery.timeout` per request (the **Delivery timeouts** condition), 5xx and network
 * errors retried with exponential backoff and jitter (for chat posts, network errors only
 * when nothing was sent: `postsOnce`), rate limits waited out as the API
 * says (bounded), other 4xx permanent with the API's own message. URLs are never echoed:
 * Telegram's carries the bot token.
 */
import type { Logger } from '../log';
import type { DeliveryOutcome } from './target';
import { cutText } from '../cut-text';

export interface HttpOptions {
  timeoutMs: number;
  /** Attempts within this call before the queue takes over (retryable failure). */
  attempts?: number;
  /** The longest rate-limit wait honoured in-process. */
  maxWaitMs?: number;
  /** Injected so tests do not wait for real. */
  sleep?: (ms: number) => Promise<void>;
  /** The API's name in messages. */
  api: string;
  /** The delivery's or agent run's logger (event id, subscription): where a client library's own notes go. */
  logger?: Logger;
  /** Reads a rate-limit wait (ms) from an answer, beyond `Retry-After`. */
  rateLimitWait?: (status: number, headers: Headers, body: string) => number | undefined;
  /** Reads the API's own error message from a body. */
  errorMessage?: (body: string) => string | undefined;
  /**
   * A post the API cannot recognise when it comes twice (Slack, Telegram: no marker to
   * search for). A network error that may have come after the body was sent (a reset, a
   * closed socket) is then not tried again in place, only a failure to connect is; the
   * queue's retry may still post it again.
   */
  postsOnce?: boolean;
  /**
   * Asked before a request answered with a 5xx is sent again in place (a post such an answer
   * may have followed: a gateway's 502/503 after the API made it). False stops: the caller
   * found that it arrived, and the 5xx failure is returned for it to read as such.
   */
  beforeResend?: () => Promise<boolean>;
  /**
   * The caller's own end (an agent run's `agent.timeout`): aborts the request in flight
   * (its socket is closed) and ends any wait; nothing is tried again after it.
   */
  signal?: AbortSignal;
}

export type HttpResult = { ok: true; status: number; body: string; headers: Headers } | { ok: false; failure: Extract<DeliveryOutcome, { status: 'failed' }> };

export const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * A wait of `ms` through `sleep` (injected by tests; else a timer), over early when
 * `signal` aborts: the timer is cleared then, the caller checks `signal.aborted`.
 */
export function pause(ms: number, sleep: ((ms: number) => Promise<void>) | undefined, signal: AbortSignal | undefined): Promise<void> {
  if (!signal) return (sleep ?? realSleep)(ms);
  if (signal.aborted) return Promise.resolve();
  return new Promise<void>((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    };
    signal.addEventListener('abort', done, { once: true });
    if (sleep) sleep(ms).then(done, (error: unknown) => {
      signal.removeEventListener('abort', done);
      reject(error);
    });
    else timer = setTimeout(done, ms);
  });
}

/** The failure of a request abandoned because the caller's time ran out (retryable: the run is). */
export const abandoned = (api: string): Extract<HttpResult, { ok: false }> => ({
  ok: false, failure: { status: 'failed', retryable: true, code: 'cancelled', message: `${api}: the request was abandoned, the caller's time ran out (agent.timeout)` },
});

/** The longest rate-limit wait honoured in-process (beyond it, the queue's paced retry). */
export const IN_PLACE_RATE_LIMIT_WAIT_MS = 15_000;

/**
 * The message of common JSON error bodies (`message`, `description`, `error`), with the
 * validation details code hosts put beside or inside it, so "too long" is not lost:
 * - GitHub 422: `{"message":"Validation Failed","errors":[{"field":"body","code":"custom","message":"body is too long"}]}`
 *   ("Client errors": each error has `resource`, `field` and `code`; `custom` ones a `message`);
 * - GitLab 400: `{"message":{"note":["is too long"]}}` ("Data validation and error
 *   reporting": property names to lists of messages, nested for embedded entities).
 */
export function jsonMessage(body: string): string | undefined {
  let parsed: Record<string, unknown>;
  try {
    parsed = JSON.parse(body) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!parsed || typeof parsed !== 'object') return undefined;
  const details = Array.isArray(parsed.errors) ? parsed.errors.map(githubError).filter(Boolean).join('; ') : '';
  for (const key of ['message', 'description', 'error']) {
    const value = parsed[key];
    if (typeof value === 'string' && value) return details ? `${value}: ${details}` : value;
    if (value && typeof value === 'object' && typeof (value as { message?: unknown }).message === 'string') return (value as { message: string }).message;
    const fields = key === 'message' && value && typeof value === 'object' ? gitlabErrors(value, '').join('; ') : '';
    if (fields) return fields;
  }
  return details || undefined;
}

function githubError(error: unknown): string {
  if (typeof error === 'string') return error;
  const e = (error ?? {}) as { resource?: unknown; field?: unknown; code?: unknown; message?: unknown };
  if (typeof e.message === 'string' && e.message) return e.message;
  return [e.resource, e.field, e.code].filter((part) => typeof part === 'string' && part).join(' ');
}

/** `{note: ["is too long"], position: {line: ["is invalid"]}}` → ["note is too long", "position line is invalid"]. */
function gitlabErrors(value: unknown, path: string): string[] {
  if (typeof value === 'string') return [path ? `${path} ${value}` : value];
  if (Array.isArray(value)) return value.flatMap((item) => gitlabErrors(item, path));
  if (!value || typeof value !== 'object') return [];
  // Rails puts errors about the whole record under `base`.
  return Object.entries(value).flatMap(([key, item]) => gitlabErrors(item, key === 'base' ? path : path ? `${path} ${key}` : key));
}

export function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds * 1000);
  const date = Date.parse(value);
  return Number.isFinite(date) ? Math.max(0, date - Date.now()) : undefined;
}

const failed = (code: string, message: string, retryable: boolean): HttpResult => ({ ok: false, failure: { status: 'failed', retryable, code, message } });

export async function deliveryRequest(url: string, init: RequestInit, options: HttpOptions): Promise<HttpResult> {
  const attempts = options.attempts ?? 3;
  const sleep = options.sleep;
  const maxWait = options.maxWaitMs ?? IN_PLACE_RATE_LIMIT_WAIT_MS;
  const caller = options.signal;
  let last: HttpResult = failed('delivery_failed', `${options.api}: no attempt made`, true);
  for (let attempt = 1; attempt <= attempts; attempt++) {
    if (caller?.aborted) return abandoned(options.api);
    let response: Response;
    let body: string;
    try {
      const limit = AbortSignal.timeout(options.timeoutMs);
      response = await fetch(url, { ...init, signal: caller ? AbortSignal.any([caller, limit]) : limit });
      body = await response.text();
    } catch (error) {
      if (caller?.aborted) return abandoned(options.api);
      // Node 20's DOMException is not an Error subclass: compare names.
      const name = (error as { name?: unknown } | null)?.name;
      const timedOut = name === 'TimeoutError' || name === 'AbortError';
      if (timedOut) return failed('delivery_timeout', `Delivery timeouts: ${options.api} did not answer within ${options.timeoutMs} ms (delivery.timeout)`, true);
      // fetch refused the URL before connecting: nothing was sent, and no retry can help.
      if (invalidUrl(error)) return failed('config_invalid', `${options.api}: its URL is not a valid http(s) URL, so nothing was sent; correct its api_url or webhook_url in config.yaml`, false);
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : error instanceof Error ? error.message : String(error);
      const reason = cause.replace(/https?:\/\/\S+/g, '<url>');
      if (options.postsOnce && !failedBeforeSending(error)) {
        return failed('network_error', `${options.api}: the connection failed once the message may have been sent (${reason}); not tried again at once, so it is not posted twice`, true);
      }
      last = failed('network_error', `${options.api} could not be reached: ${reason}`, true);
      await pause(backoff(attempt), sleep, caller);
      continue;
    }
    if (response.ok) return { ok: true, status: response.status, body, headers: response.headers };
    // Only reached with `redirect: 'manual'`: credentials are never sent after a redirect.
    if (response.status >= 300 && response.status < 400) {
      return failed('redirect_refused', `${options.api} answered ${response.status} with a redirect; not followed, so the credentials stay with api_url`, false);
    }
    const message = (options.errorMessage ?? jsonMessage)(body) ?? `HTTP ${response.status}`;
    const wait = options.rateLimitWait?.(response.status, response.headers, body) ?? (response.status === 429 ? retryAfterMs(response.headers) ?? 1000 : undefined);
    if (wait !== undefined) {
      last = failed('rate_limited', `${options.api} rate limit: ${message} (retry after ${Math.ceil(wait / 1000)} s)`, true);
      if (!last.ok) last.failure.retryAfterMs = wait;
      if (wait > maxWait || attempt === attempts) return last;
      await pause(wait, sleep, caller);
      continue;
    }
    if (response.status >= 500) {
      last = failed(`http_${response.status}`, `${options.api} answered ${response.status}: ${message}`, true);
      if (attempt === attempts) break;
      await pause(backoff(attempt), sleep, caller);
      if (caller?.aborted) return abandoned(options.api);
      if (options.beforeResend && !(await options.beforeResend())) return last;
      continue;
    }
    return failed(`http_${response.status}`, `${options.api} refused the delivery (${response.status}): ${message}`, false);
  }
  return last;
}

/** fetch's `TypeError: Failed to parse URL`, whose cause is Node's ERR_INVALID_URL (compared by code: realms differ). */
function invalidUrl(error: unknown): boolean {
  const e = error as { code?: unknown; cause?: { code?: unknown } } | null;
  return e?.code === 'ERR_INVALID_URL' || e?.cause?.code === 'ERR_INVALID_URL';
}

/** Errors of a connection that was never made (refused, no such host, connect timeout): nothing was sent. */
const NOTHING_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

/** True when fetch's error (or what it wraps: `cause`, an AggregateError's `errors`) says the request never left. */
export function failedBeforeSending(error: unknown, depth = 0): boolean {
  if (!error || typeof error !== 'object' || depth > 5) return false;
  const e = error as { code?: unknown; cause?: unknown; errors?: unknown };
  if (typeof e.code === 'string' && NOTHING_SENT.has(e.code)) return true;
  if (Array.isArray(e.errors) && e.errors.length > 0 && e.errors.every((inner) => failedBeforeSending(inner, depth + 1))) return true;
  return failedBeforeSending(e.cause, depth + 1);
}

/** Exponential backoff with full jitter: 0..(250 ms × 2^attempt). */
function backoff(attempt: number): number {
  return Math.floor(Math.random() * 250 * 2 ** attempt);
}

/** The visible note that ends a cut reply. */
export const cutNote = (replyLength: number) => `\n\n…(cut: the reply was ${replyLength} characters)`;

/** Cuts a reply to fit `limit` characters together with `suffix`, saying so visibly. */
export function fitReply(reply: string, limit: number, suffix: string): string {
  if (reply.length + suffix.length <= limit) return reply + suffix;
  const note = cutNote(reply.length);
  return cutText(reply, Math.max(0, limit - suffix.length - note.length)) + note + suffix;
}

/**
 * Posting exactly once under retries: before each attempt look for what an earlier one
 * may have posted (the marker), so a 5xx or a lost answer never leads to a second post.
 */
export async function postOnce(
  find: () => Promise<DeliveryOutcome | undefined>,
  post: () => Promise<DeliveryOutcome>,
  options: { attempts?: number; sleep?: (ms: number) => Promise<void> } = {},
): Promise<DeliveryOutcome> {
  const attempts = options.attempts ?? 3;
  let outcome: DeliveryOutcome = { status: 'failed', retryable: true, code: 'delivery_failed', message: 'no attempt made' };
  for (let attempt = 1; attempt <= attempts; attempt++) {
    const existing = await find();
    if (existing) return existing;
    outcome = await post();
    if (outcome.status === 'delivered' || !outcome.retryable || outcome.code === 'delivery_timeout') return outcome;
    if (outcome.code === 'rate_limited') {
      // Waited out in place when the API asks for little (as reads are), the marker search first again; longer waits are the queue's.
      const wait = outcome.retryAfterMs;
      if (wait === undefined || wait > IN_PLACE_RATE_LIMIT_WAIT_MS || attempt === attempts) return outcome;
      await (options.sleep ?? realSleep)(wait);
      continue;
    }
    if (attempt < attempts) await (options.sleep ?? realSleep)(backoff(attempt));
  }
  return outcome;
}
