/**
 * The code-host client for GitHub, over the octokit transport (github-octokit.ts): URLs
 * from the validated scope only, each `rel="next"` link read into a URL under the scope
 * (codehost-api.ts `nextPageUrl`) before plugin-paginate-rest fetches it, and octokit's errors read into hookagent's delivery
 * failures. Rate limits: GitHub's primary limit (`x-ratelimit-*`) and its secondary limit
 * (403/429 "secondary rate limit": its Retry-After, else at least 60 s) are waited out here, through `sleep`,
 * when the wait is within `maxWaitMs`; a longer one is a retryable `rate_limited` failure
 * carrying `retryAfterMs`, which the queue's paced retry honours.
 */
import type { CodehostSettings } from '../config/types';
import type { Logger } from '../log';
import { headerUnsafe } from '../config/header-safe';
import { nextLink, nextPageUrl, refused, type ApiFailure, type CodehostClient, type Page, type RequestInitLite, type Scope } from './codehost-api';
import { usablePrivateKey } from './github-app';
import { guardedFetch, READ_RETRIES, RefusedRequest } from './github-fetch';
import { githubOctokit, type CallOptions, type GithubIdentity } from './github-octokit';
import { abandoned, jsonMessage, pause, retryAfterMs, type HttpOptions, type HttpResult } from './http';
import { authoredBy, madeByApp, selfId } from './own-comments';

/** GitHub asks to wait at least a minute after a secondary rate limit that names no wait. */
export const SECONDARY_RATE_LIMIT_MS = 60_000;
const API_VERSION = '2022-11-28';

/**
 * GitHub: primary limits (403/429 with x-ratelimit-remaining: 0) and secondary limits
 * (403/429 "secondary rate limit"), in the order GitHub's REST docs give ("Exceeding the
 * rate limit"): Retry-After when present, else the x-ratelimit-reset of an exhausted
 * limit, else at least a minute.
 */
export function githubRateLimitWait(status: number, headers: Headers, body: string): number | undefined {
  if (status !== 403 && status !== 429) return undefined;
  const retryAfter = retryAfterMs(headers);
  if (retryAfter !== undefined) return retryAfter;
  if (headers.get('x-ratelimit-remaining') === '0') return Math.max(0, Number(headers.get('x-ratelimit-reset')) * 1000 - Date.now());
  // A 403 without these headers and message is a permission refusal, not a limit.
  return status === 429 || /secondary rate limit/i.test(jsonMessage(body) ?? body) ? SECONDARY_RATE_LIMIT_MS : undefined;
}

const failed = (code: string, message: string, retryable: boolean, retryAfter?: number): ApiFailure => ({
  ok: false, failure: { status: 'failed', retryable, code, message, ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }) },
});

/** What octokit threw, as a delivery failure: our own refusals, network errors, rate limits, 5xx and other statuses. */
export function githubFailure(error: unknown): ApiFailure {
  if (error instanceof RefusedRequest) return failed(error.code, error.message, error.code === 'delivery_timeout');
  const e = error as { status?: unknown; message?: unknown; request?: { url?: string }; response?: { headers?: Record<string, unknown>; data?: unknown } };
  const api = /\/access_tokens$/.test(e.request?.url ?? '') ? 'GitHub (App installation token)' : 'GitHub';
  if (typeof e.status !== 'number' || !e.response) {
    const cause = (error as { cause?: unknown }).cause;
    const why = cause instanceof Error ? cause.message : typeof e.message === 'string' ? e.message : String(error);
    return failed('network_error', `${api} could not be reached: ${why.replace(/https?:\/\/\S+/g, '<url>')}`, true);
  }
  const status = e.status;
  const headers = new Headers(Object.entries(e.response.headers ?? {}).filter(([, v]) => typeof v === 'string') as Array<[string, string]>);
  const data = e.response.data;
  const body = typeof data === 'string' ? data : data instanceof ArrayBuffer ? '' : JSON.stringify(data ?? '');
  const message = jsonMessage(body) ?? `HTTP ${status}`;
  const wait = githubRateLimitWait(status, headers, body);
  if (wait !== undefined) return failed('rate_limited', `${api} rate limit: ${message} (retry after ${Math.ceil(wait / 1000)} s)`, true, wait);
  if (status >= 500) return failed(`http_${status}`, `${api} answered ${status}: ${message}`, true);
  return failed(`http_${status}`, `${api} refused the delivery (${status}): ${message}`, false);
}

/** The identity a request acts as: the App through the event's installation, else the configured token. */
function identityOf(config: CodehostSettings, installationId: number | undefined): GithubIdentity | ApiFailure {
  if (config.app && installationId !== undefined) {
    if (!usablePrivateKey(config.app.private_key)) return refused('github_app_key', 'delivery.codehost.github.app.private_key is not a usable PEM private key');
    return { app: config.app, installationId };
  }
  if (config.token) {
    // Else fetch throws building the header, which read as "could not be reached" and was retried (hunt 5 D3).
    const problem = headerUnsafe(config.token);
    return problem ? refused('config_invalid', `delivery.codehost.github.token has ${problem}, which cannot be sent in an HTTP header: set its variable to the token itself`) : { token: config.token };
  }
  return refused('github_app_no_installation', 'delivery.codehost.github uses a GitHub App, but this event names no installation (installation.id); events must come from the App\'s webhook');
}

/** The client's HTTP options; `logger` is the delivery's or agent run's (event id, subscription), which the library's notes go to. */
export type GithubHttp = Omit<HttpOptions, 'api' | 'rateLimitWait'> & { logger?: Logger };

export function githubClient(scope: Scope, config: CodehostSettings, http: GithubHttp, installationId?: number): CodehostClient | ApiFailure {
  const identity = identityOf(config, installationId);
  if ('ok' in identity) return identity;
  const octokit = githubOctokit(scope.apiUrl, identity);
  const caller = http.signal;
  // Every wait (rate limits here, plugin-retry's pauses) ends when the caller's time runs out.
  const sleep = (ms: number) => pause(ms, http.sleep, caller);
  const maxWait = http.maxWaitMs ?? 15_000;
  // This call's time limit, sleep, logger, the caller's signal (octokit hands it to fetch: an
  // abort closes the request's socket) and API version ride along to every page and retry.
  const request = octokit.request.defaults({
    headers: { 'x-github-api-version': API_VERSION },
    request: {
      fetch: guardedFetch(scope.root, http.timeoutMs), sleep, ...(caller ? { signal: caller } : {}), ...(http.logger ? { logger: http.logger } : {}),
    } satisfies CallOptions & { fetch: typeof fetch; signal?: AbortSignal },
  });

  /** One call with up to `attempts` tries over rate limits (plugin-retry handles 5xx and network errors inside each). */
  const withRateLimits = async <T>(attempts: number, send: () => Promise<T>): Promise<T | ApiFailure> => {
    for (let attempt = 1; ; attempt++) {
      if (caller?.aborted) return abandoned('GitHub');
      try {
        return await send();
      } catch (error) {
        if (caller?.aborted) return abandoned('GitHub');
        const failure = githubFailure(error);
        const wait = failure.failure.retryAfterMs;
        if (wait === undefined || wait > maxWait || attempt >= attempts) return failure;
        await sleep(wait);
      }
    }
  };
  const send = (url: URL, init: RequestInitLite = {}): Promise<HttpResult> => {
    const attempts = init.attempts ?? READ_RETRIES + 1;
    return withRateLimits(attempts, async (): Promise<HttpResult> => {
      const response = await request({
        method: init.method ?? 'GET', url: url.href,
        headers: { accept: init.accept ?? 'application/vnd.github+json' },
        ...(init.body === undefined ? {} : { data: init.body }),
        // The raw body: callers read JSON, diffs or raw files alike.
        // `retries` only to turn retries off (writes): plugin-retry's limiter retries any error
        // whose request names a count, 404 and secondary rate limits too (its doNotRetry is
        // checked only where it sets the count itself); reads take the instance's READ_RETRIES.
        request: { ...(attempts <= 1 ? { retries: 0 } : {}), parseSuccessResponseBody: false },
      });
      const body = response.data ? await new Response(response.data as ReadableStream).text() : '';
      return { ok: true, status: response.status, body, headers: new Headers(response.headers as Record<string, string>) };
    });
  };

  return {
    host: 'github', scope: scope.url,
    async ownComments() {
      if ('app' in identity) return madeByApp(Number(identity.app.app_id));
      const id = await selfId(`github\0${scope.apiUrl}\0${identity.token}`, 'GitHub', () => send(new URL(`${scope.apiUrl}/user`)));
      return typeof id === 'number' ? authoredBy(id) : id;
    },
    async request(path, init) {
      const url = scope.at(path);
      return url instanceof URL ? send(url, init) : url;
    },
    async requestFixed(path, query, init) {
      const url = new URL(`${scope.apiUrl}${path}`);
      for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
      if (!scope.contains(url, path)) return refused('unsafe_path', `GitHub: ${path} is not under api_url`);
      return send(url, init);
    },
    async paginate<T>(path: string, maxItems: number, accept?: string): Promise<Page<T>> {
      const first = scope.at(`${path}${path.includes('?') ? '&' : '?'}per_page=100`);
      if (!(first instanceof URL)) return first;
      const list = request.defaults({ headers: { accept: accept ?? 'application/vnd.github+json' } });
      // Each page the iterator asks for is fetched at the URL nextPageUrl makes of its link (the
      // check below has stopped the list already where it makes none).
      const fetchPage = list as unknown as (options: { url: string }) => ReturnType<typeof list>;
      const scoped = Object.assign((options: { url: string }) => {
        const url = options.url === first.href ? first : nextPageUrl(scope, options.url);
        if (typeof url === 'string') return Promise.reject(new RefusedRequest('unsafe_path', url));
        return fetchPage({ ...options, url: url.href });
      }, { endpoint: list.endpoint }) as unknown as typeof list;
      const pages = octokit.paginate.iterator(scoped, `GET ${first.href}`)[Symbol.asyncIterator]();
      const items: T[] = [];
      for (;;) {
        // A failed page is asked again by the next call: the iterator moves on only after an answer.
        const page = await withRateLimits(READ_RETRIES + 1, () => pages.next());
        if ('ok' in page) return page;
        if (page.done) return { ok: true, items };
        const data: unknown = page.value.data;
        if (!Array.isArray(data)) {
          return { ok: false, failure: { status: 'failed', retryable: typeof data === 'string', code: 'bad_answer', message: `GitHub answered a list with something that is not ${typeof data === 'string' ? 'JSON' : 'a list'}` } };
        }
        for (const item of data as T[]) {
          if (items.length >= maxItems) return { ok: true, items, truncated: `stopped at ${maxItems} items` };
          items.push(item);
        }
        const link = nextLink(page.value.headers.link);
        const next = link === undefined ? undefined : nextPageUrl(scope, link);
        if (typeof next === 'string') return { ok: true, items, truncated: next };
      }
    },
  };
}
