/**
 * The one way hookagent talks to a code-host API (delivery and agent tools alike):
 * headers per host, URLs built only from the validated subject (`events/subject.ts`),
 * requests kept under `{api_url}/repos/<owner>/<repo>/…` or `{api_url}/projects/<id>/…`,
 * no redirect followed with credentials, pagination (`Link: rel="next"`, which GitLab
 * sends for offset and keyset pagination alike) followed only on the `api_url` origin,
 * and each host's rate-limit answers read: GitHub's primary limit (`x-ratelimit-*`), its
 * secondary limit (403/429 "secondary rate limit": at least 60 s), GitLab's
 * `Retry-After` / `RateLimit-Reset`.
 */
import type { CodehostSettings } from '../config/types';
import { githubRepoPath, gitlabProjectPath, type Subject } from '../events/subject';
import { installationToken } from './github-app';
import { deliveryRequest, jsonMessage, retryAfterMs, type HttpOptions, type HttpResult } from './http';

export type Codehost = 'github' | 'gitlab';

/** GitHub asks to wait at least a minute after a secondary rate limit. */
export const SECONDARY_RATE_LIMIT_MS = 60_000;

export function githubHeaders(token: string, accept = 'application/vnd.github+json'): Record<string, string> {
  return { authorization: `Bearer ${token}`, accept, 'x-github-api-version': '2022-11-28', 'user-agent': 'hookagent' };
}

export function gitlabHeaders(token: string, accept = 'application/json'): Record<string, string> {
  return { 'private-token': token, accept };
}

/** GitHub: primary limits (403/429 with x-ratelimit-remaining: 0) and secondary limits (403/429 "secondary rate limit"). */
export function githubRateLimitWait(status: number, headers: Headers, body: string): number | undefined {
  if (status !== 403 && status !== 429) return undefined;
  const retryAfter = retryAfterMs(headers);
  if (/secondary rate limit/i.test(jsonMessage(body) ?? body)) return Math.max(SECONDARY_RATE_LIMIT_MS, retryAfter ?? 0);
  if (retryAfter !== undefined) return retryAfter;
  if (headers.get('x-ratelimit-remaining') === '0') return Math.max(0, Number(headers.get('x-ratelimit-reset')) * 1000 - Date.now());
  return status === 429 ? SECONDARY_RATE_LIMIT_MS : undefined;
}

/** GitLab: 429 with `Retry-After`, else `RateLimit-Reset` (epoch seconds), else a minute. */
export function gitlabRateLimitWait(status: number, headers: Headers): number | undefined {
  if (status !== 429) return undefined;
  const retryAfter = retryAfterMs(headers);
  if (retryAfter !== undefined) return retryAfter;
  const reset = Number(headers.get('ratelimit-reset'));
  return headers.get('ratelimit-reset') !== null && Number.isFinite(reset) ? Math.max(0, reset * 1000 - Date.now()) : 60_000;
}

export type ApiFailure = Extract<HttpResult, { ok: false }>;
export type Page<T> = { ok: true; items: T[]; truncated?: string } | ApiFailure;

export interface RequestInitLite {
  method?: 'GET' | 'POST' | 'PATCH' | 'PUT';
  body?: unknown;
  accept?: string;
  /** Attempts within this call (writes use 1 and rely on the marker search for retries). */
  attempts?: number;
}

const refused = (code: string, message: string): ApiFailure => ({ ok: false, failure: { status: 'failed', retryable: false, code, message } });

export interface CodehostClient {
  readonly host: Codehost;
  /** `{api_url}/repos/<owner>/<repo>` or `{api_url}/projects/<id>`: every request stays under it. */
  readonly scope: string;
  /** A request to `scope + path` (path starts with `/`, parts encoded by the caller). */
  request(path: string, init?: RequestInitLite): Promise<HttpResult>;
  /** A request outside the scope, to one of a few fixed API paths (GitHub search). */
  requestFixed(path: '/search/issues', query: Record<string, string>, init?: RequestInitLite): Promise<HttpResult>;
  /** Every page of a list (up to `maxItems`), following `rel="next"` only on the same origin and scope. */
  paginate<T>(path: string, maxItems: number, accept?: string): Promise<Page<T>>;
}

/**
 * A client for the subject's code host, or a failure with the reason: no host, the host
 * not configured, or no validated repository/project (e.g. `full_name: "../../admin/escape"`).
 */
export function codehostClient(subject: Subject, settings: Partial<Record<Codehost, CodehostSettings>>, http: Omit<HttpOptions, 'api' | 'rateLimitWait'>, auth: { installationId?: number } = {}): CodehostClient | ApiFailure {
  if (!subject.host) return refused('nothing_to_comment', 'This event names no GitHub repository or GitLab project (or one that breaks the naming rules): no code-host request is made');
  const config = settings[subject.host];
  if (!config) return refused('target_unconfigured', `delivery.codehost.${subject.host} is not configured in config.yaml`);
  const apiUrl = config.api_url.replace(/\/+$/, '');
  let root: URL;
  try {
    root = new URL(apiUrl);
  } catch {
    return refused('bad_api_url', `delivery.codehost.${subject.host}.api_url is not a URL`);
  }
  const scopePath = subject.host === 'github' ? (subject.repo ? githubRepoPath(subject.repo) : undefined) : (subject.project ? gitlabProjectPath(subject.project) : undefined);
  if (!scopePath) return refused('unsafe_subject', `The event's ${subject.host === 'github' ? 'repository' : 'project'} breaks ${subject.host === 'github' ? "GitHub's" : "GitLab's"} naming rules: no request is made`);
  const scope = `${apiUrl}${scopePath}`;
  const scopeUrl = new URL(scope);
  const host = subject.host;
  const api = host === 'github' ? 'GitHub' : 'GitLab';
  const options: HttpOptions = {
    ...http, api,
    rateLimitWait: host === 'github' ? githubRateLimitWait : (status, headers) => gitlabRateLimitWait(status, headers),
  };
  // A GitHub App acts through the installation that sent the event; else the configured token.
  const app = host === 'github' && config.app && auth.installationId !== undefined ? { ...config.app, installationId: auth.installationId } : undefined;
  if (host === 'github' && !app && !config.token) {
    return refused('github_app_no_installation', 'delivery.codehost.github uses a GitHub App, but this event names no installation (installation.id); events must come from the App\'s webhook');
  }
  // One installation token per client (one delivery or tool call), from the shared cache.
  let appToken: string | undefined;
  const tokenFor = async (): Promise<{ ok: true; token: string } | ApiFailure> => {
    if (!app) return { ok: true, token: config.token };
    if (appToken) return { ok: true, token: appToken };
    const got = await installationToken(apiUrl, app, app.installationId, http);
    if (got.ok) appToken = got.token;
    return got;
  };
  const headersFor = (token: string, init: RequestInitLite) => ({
    ...(host === 'github' ? githubHeaders(token, init.accept) : gitlabHeaders(token, init.accept)),
    ...(init.body === undefined ? {} : { 'content-type': 'application/json' }),
  });
  /** True when `url` stays on the api_url origin and under the scope (after dot segments are resolved). */
  const inScope = (url: URL, fixed?: string) => url.origin === root.origin && (fixed !== undefined
    ? url.pathname === `${root.pathname.replace(/\/+$/, '')}${fixed}`
    : url.pathname === scopeUrl.pathname || url.pathname.startsWith(`${scopeUrl.pathname}/`));
  const send = async (url: URL, init: RequestInitLite): Promise<HttpResult> => {
    const token = await tokenFor();
    if (!token.ok) return token;
    return sendWith(url, init, token.token);
  };
  const sendWith = async (url: URL, init: RequestInitLite, token: string): Promise<HttpResult> => deliveryRequest(url.href, {
    method: init.method ?? 'GET', headers: headersFor(token, init), redirect: 'manual',
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  }, init.attempts === undefined ? options : { ...options, attempts: init.attempts });
  const client: CodehostClient = {
    host, scope,
    async request(path, init = {}) {
      let url: URL;
      try {
        url = new URL(`${scope}${path}`);
      } catch {
        return refused('unsafe_path', `${api}: a request path could not be built`);
      }
      if (!path.startsWith('/') && path !== '' && !path.startsWith('?')) return refused('unsafe_path', `${api}: a request path must start with /`);
      if (!inScope(url)) return refused('unsafe_path', `${api}: a request would leave ${scopePath}; refused`);
      return send(url, init);
    },
    async requestFixed(path, query, init = {}) {
      const url = new URL(`${apiUrl}${path}`);
      for (const [key, value] of Object.entries(query)) url.searchParams.set(key, value);
      if (!inScope(url, path)) return refused('unsafe_path', `${api}: ${path} is not under api_url`);
      return send(url, init);
    },
    async paginate<T>(path: string, maxItems: number, accept?: string): Promise<Page<T>> {
      const items: T[] = [];
      const separator = path.includes('?') ? '&' : '?';
      let next: string | undefined = `${path}${separator}per_page=100`;
      let url: URL | undefined;
      let first = true;
      while (next !== undefined) {
        const answer: HttpResult = first ? await client.request(next, accept ? { accept } : {}) : await send(url as URL, accept ? { accept } : {});
        first = false;
        if (!answer.ok) return answer;
        let page: unknown;
        try {
          page = JSON.parse(answer.body);
        } catch {
          return { ok: false, failure: { status: 'failed', retryable: true, code: 'bad_answer', message: `${api} answered a list with something that is not JSON` } };
        }
        if (!Array.isArray(page)) return { ok: false, failure: { status: 'failed', retryable: false, code: 'bad_answer', message: `${api} answered a list with something that is not a list` } };
        for (const item of page as T[]) {
          if (items.length >= maxItems) return { ok: true, items, truncated: `stopped at ${maxItems} items` };
          items.push(item);
        }
        const link = /<([^>]+)>\s*;\s*rel="next"/.exec(answer.headers.get('link') ?? '')?.[1];
        if (!link) break;
        let target: URL;
        try {
          target = new URL(link, scopeUrl);
        } catch {
          return { ok: true, items, truncated: 'the next page link is not a URL' };
        }
        if (!inScope(target)) return { ok: true, items, truncated: `the next page is on another origin or path (${target.origin === root.origin ? 'outside the repository' : 'another host'}); not followed with credentials` };
        url = target;
        next = target.href;
      }
      return { ok: true, items };
    },
  };
  return client;
}

export function isFailure(value: unknown): value is ApiFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}
