/**
 * The console over HTTP: the page (one HTML file shipped in the bundle) at /console and a
 * small JSON API under /console/api. Used by `hookagent console` and mounted by `serve`.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HookError } from '../../functions/core/errors';
import { SUBSCRIPTION_NAME_PATTERN } from '../../functions/core/types';
import type { Logger } from '../../functions/core/log';
import { ConsoleData, type ConsoleSources } from './data';
import { AbandonedCheck } from './abandoned-check';
import { decodeCursor } from './event-list';
import { actionFor, bodyOptions } from './action-input';
import { runUseCase } from './lifecycle';
import { REQUEST_OUTCOMES } from '../webhook/requests';
import { isRequestId } from './shape';
import page from './page.html';
import { ConsoleGuard, SESSION_COOKIE, cookies, hostIsLoopback, isLoopbackPeer, securityHeaders } from './security';

export interface ConsoleOptions {
  /** Required when the console is reachable off loopback, and always on serve's port. */
  authToken?: string;
  /** The key of the auth cookie's digest. serve keeps one across restarts, so the cookie outlives the process; default: a new one per process. */
  authCookieKey?: Buffer;
  /** Where the user finds the token, for the 401 answers (default: the --auth-token value). */
  tokenFrom?: string;
  /** Answer only peers on this machine (serve's mount). */
  loopbackPeersOnly?: boolean;
  /** Refuse Host headers that do not name loopback (DNS rebinding); on unless bound elsewhere with a token. */
  loopbackHostsOnly?: boolean;
  /** How often the page polls for new events, in ms. */
  pollMs?: number;
  now?: () => number;
  /** Where pause, resume and replay from the console are logged (with subscription and event id). */
  logger?: Logger;
  /** Records one event-list answer reads at most (tests set a small one). */
  searchBudget?: number;
}

export type ConsoleHandler = (req: IncomingMessage, res: ServerResponse) => Promise<boolean>;

/** Runs `fn` with the stores open: fixed ones (serve, AWS), or opened per request (the local store's lock). */
export type SourcesProvider = <T>(fn: (sources: ConsoleSources) => Promise<T>) => Promise<T>;

const STATUSES = new Set(['held', 'queued', 'processing', 'delivered', 'suppressed', 'failed', 'superseded', 'rate_limited', 'over_budget', 'abandoned']);

function json(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', ...securityHeaders() });
  res.end(JSON.stringify(body));
}

const problem = (res: ServerResponse, status: number, code: string, message: string) => json(res, status, { status: 'error', code, message });

function readSmallBody(req: IncomingMessage, limit = 4096): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      text += chunk;
      if (text.length > limit) reject(new HookError('payload_too_large', 'Request body too large'));
    });
    req.on('end', () => resolve(text));
    req.on('error', reject);
  });
}

function numberParam(value: string | null, fallback: number, min: number, max: number): number {
  if (value === null || value === '') return fallback;
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max) throw new HookError('bad_request', `Expected a whole number from ${min} to ${max}, got '${value}'`);
  return n;
}

/** The last millisecond whose ISO form has a four-digit year (what stored times are compared as). */
const LAST_ISO_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function sinceParam(value: string | null): number | undefined {
  if (value === null || value === '') return undefined;
  const at = /^\d+$/.test(value) ? Number(value) : Date.parse(value);
  // Beyond what a Date holds (year 275760) is no time either; past year 9999 its ISO form
  // (`+010000-…`) would sort before today's and take in every event.
  if (!Number.isFinite(at) || Number.isNaN(new Date(at).getTime()) || at > LAST_ISO_MS) throw new HookError('bad_request', `'since' must be epoch milliseconds or an ISO date up to the year 9999, got '${value.slice(0, 40)}'`);
  return at;
}

/** Whether a proxy forwarded the request (the headers proxies add for the client they forward). */
function forwardedByProxy(req: IncomingMessage): boolean {
  return req.headers['x-forwarded-for'] !== undefined || req.headers.forwarded !== undefined || req.headers['x-real-ip'] !== undefined;
}

export function createConsoleHandler(provide: ConsoleSources | SourcesProvider, options: ConsoleOptions = {}): ConsoleHandler {
  const consoleOptions = options;
  const guard = new ConsoleGuard(options.authToken, options.authCookieKey);
  // One for the handler's life: it checks each subscription at most once a minute across requests.
  const abandoned = new AbandonedCheck(options.logger ? { logger: options.logger } : {});
  const withSources: SourcesProvider = typeof provide === 'function' ? provide : (fn) => fn(provide);
  const now = options.now ?? Date.now;
  const loopbackHostsOnly = options.loopbackHostsOnly ?? true;

  function servePage(req: IncomingMessage, res: ServerResponse): void {
    const jar = cookies(req);
    const session = jar[SESSION_COOKIE] ?? guard.newSession();
    const nonce = randomBytes(16).toString('base64');
    const html = page
      .replaceAll('<script>', `<script nonce="${nonce}">`)
      .replaceAll('<style>', `<style nonce="${nonce}">`)
      .replace('__CSRF__', guard.csrfFor(session))
      .replace('__POLL_MS__', String(options.pollMs ?? 2000));
    res.writeHead(200, {
      'content-type': 'text/html; charset=utf-8', ...securityHeaders(nonce),
      'set-cookie': `${SESSION_COOKIE}=${session}; Path=/console; HttpOnly; SameSite=Strict`,
    });
    res.end(html);
  }

  async function api(req: IncomingMessage, res: ServerResponse, path: string, url: URL, sources: ConsoleSources): Promise<void> {
    const data = new ConsoleData(sources, consoleOptions.searchBudget, abandoned);
    const method = req.method ?? 'GET';
    const q = url.searchParams;
    if (method === 'POST') {
      if (!guard.csrfValid(req)) return problem(res, 403, 'csrf', 'Missing or wrong CSRF token: reload the console page and try again');
      const options = bodyOptions(await readSmallBody(req));
      if (!options) return problem(res, 400, 'invalid_json', 'The request body is not a JSON object');
      const action = actionFor(path, options);
      if (!action) return problem(res, 404, 'not_found', 'No such console action');
      const lines = await runUseCase(sources, action);
      if (action.kind !== 'replay') {
        consoleOptions.logger?.info(`console ${action.kind}`, { subscription: action.name });
        return json(res, 200, { status: 'ok', messages: lines });
      }
      // One entry per message line (null where the line names no new event): the page links each line to its own event.
      const eventIds = lines.map((line) => /^(?:Queued|Held) (\S+)/.exec(line)?.[1] ?? null);
      consoleOptions.logger?.info('console replay', { event_id: action.eventId, replays: eventIds.filter((id) => id !== null), ...(action.subscription ? { subscription: action.subscription } : {}) });
      return json(res, 200, { status: 'ok', messages: lines, event_ids: eventIds });
    }
    if (method !== 'GET') return problem(res, 405, 'method_not_allowed', 'Use GET or POST');
    if (path === '/info') return json(res, 200, await data.info());
    if (path === '/events') {
      const status = q.get('status') ?? undefined;
      if (status && !STATUSES.has(status)) throw new HookError('bad_request', `Unknown status '${status}'`);
      const since = sinceParam(q.get('since'));
      // A deleted subscription's name is a valid filter too: only the shape is checked.
      const subscription = q.get('subscription');
      if (subscription && !SUBSCRIPTION_NAME_PATTERN.test(subscription)) throw new HookError('bad_request', `'subscription' must be a subscription name (lower-case letters, digits, '-' and '_'), got '${subscription.slice(0, 80)}'`);
      return json(res, 200, await data.listEvents({
        limit: numberParam(q.get('limit'), 200, 1, 1000),
        ...(q.get('subscription') ? { subscription: q.get('subscription')! } : {}), ...(status ? { status } : {}),
        ...(q.get('endpoint') ? { endpoint: q.get('endpoint')! } : {}), ...(since !== undefined ? { since } : {}),
        ...(q.get('q') ? { q: q.get('q')! } : {}), ...(q.get('cursor') ? { cursor: decodeCursor(q.get('cursor')!) } : {}),
      }));
    }
    if (path === '/chart') return json(res, 200, await data.chart(now()));
    if (path === '/subscriptions') return json(res, 200, await data.listSubscriptions(req.headers.host ? `http://${req.headers.host}` : undefined));
    if (path === '/requests') {
      const since = sinceParam(q.get('since'));
      const outcome = q.get('outcome');
      // A misspelt outcome is said, not answered with an empty list that reads as "none".
      if (outcome && !(REQUEST_OUTCOMES as string[]).includes(outcome)) return problem(res, 400, 'bad_request', `'outcome' must be one of ${REQUEST_OUTCOMES.join(', ')}; got '${outcome.slice(0, 40)}'`);
      const entries = await data.listRequests({
        limit: numberParam(q.get('limit'), 200, 1, 1000), ...(since !== undefined ? { since } : {}),
        ...(q.get('endpoint') ? { endpoint: q.get('endpoint')! } : {}), ...(q.get('outcome') ? { outcome: q.get('outcome')! } : {}),
      });
      return json(res, 200, entries === null ? { available: false, requests: [] } : { available: true, requests: entries });
    }
    const entry = /^\/requests\/([^/]+)$/.exec(path);
    if (entry) {
      // A `req_…` id as `webhook events` lists it for a request the payload filters turned away.
      const id = decodeURIComponent(entry[1]!);
      if (!data.hasRequestLog) return problem(res, 404, 'event_not_found', 'This store has no request log');
      const found = isRequestId(id) ? await data.requestEntry(id) : undefined;
      return found ? json(res, 200, found) : problem(res, 404, 'event_not_found', `No request '${id.slice(0, 80)}' in the request log (entries are kept 7 days)`);
    }
    const match = /^\/events\/([^/]+)$/.exec(path);
    if (match) {
      const id = decodeURIComponent(match[1]!);
      const event = await data.event(id);
      if (event) return json(res, 200, event);
      return problem(res, 404, 'event_not_found', isRequestId(id)
        ? `'${id.slice(0, 80)}' is a request-log id, not an event: GET /console/api/requests/${encodeURIComponent(id.slice(0, 80))}`
        : 'No such event in the event log (it keeps 14 days)');
    }
    return problem(res, 404, 'not_found', 'No such console API');
  }

  return async (req, res) => {
    const url = new URL(req.url ?? '/', 'http://console.local');
    const path = url.pathname;
    if (path !== '/console' && !path.startsWith('/console/')) return false;
    // A proxy on this machine (nginx's proxy_pass to 127.0.0.1) makes every client a loopback
    // peer: a request it forwarded is from elsewhere, whatever --trust-proxy says.
    if (options.loopbackPeersOnly && (!isLoopbackPeer(req.socket.remoteAddress) || forwardedByProxy(req))) return false;
    try {
      if (loopbackHostsOnly && !hostIsLoopback(req)) return problem(res, 421, 'host_not_allowed', 'The console answers only to loopback host names: 127.x.y.z, localhost or [::1]'), true;
      // `/console?token=` and `/console/?token=` alike: the cookie is set, then the page opens without the token in its URL.
      if (guard.needsToken && (path === '/console' || path === '/console/') && url.searchParams.has('token')) {
        if (!guard.tokenMatches(url.searchParams.get('token') ?? '')) return problem(res, 401, 'unauthorized', `Wrong token: use ${options.tokenFrom ?? 'the one given to hookagent console --auth-token'}`), true;
        res.writeHead(303, { location: path, 'set-cookie': `${guard.authCookieName}=${guard.authCookieValue()}; Path=/console; HttpOnly; SameSite=Strict`, ...securityHeaders() });
        res.end();
        return true;
      }
      if (!guard.authorized(req)) return problem(res, 401, 'unauthorized', `This console needs its token: open /console?token=<${options.tokenFrom ?? 'the --auth-token value'}>, or send Authorization: Bearer <token>`), true;
      if (path === '/console' || path === '/console/') {
        if (req.method !== 'GET' && req.method !== 'HEAD') return problem(res, 405, 'method_not_allowed', 'Use GET'), true;
        servePage(req, res);
        return true;
      }
      if (path.startsWith('/console/api/')) {
        await withSources((sources) => api(req, res, path.slice('/console/api'.length), url, sources));
        return true;
      }
      problem(res, 404, 'not_found', 'No such console page');
    } catch (error) {
      if (res.headersSent) return res.end(), true;
      // decodeURIComponent on a path segment with a broken %-escape.
      if (error instanceof URIError) return problem(res, 400, 'bad_request', 'The path holds a malformed %-escape'), true;
      if (error instanceof HookError) {
        // A refused operation (event_held, subscription_exists…) is the caller's to fix, not the console's failure.
        const status = error.code === 'bad_request' ? 400 : error.code.endsWith('not_found') ? 404 : error.code === 'payload_too_large' ? 413 : error.retryable || error.code.startsWith('store_') ? 503 : 409;
        problem(res, status, error.code, error.message);
      } else {
        consoleOptions.logger?.error('console request failed', { path, error: error instanceof Error ? error.message : String(error) });
        problem(res, 500, 'console_error', error instanceof Error ? error.message : String(error));
      }
    }
    return true;
  };
}
