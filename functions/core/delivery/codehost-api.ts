/**
 * The one way hookagent talks to a code-host API (delivery and agent tools alike): URLs
 * built only from the validated subject (`events/subject.ts`), every request kept under
 * `{api_url}/repos/<owner>/<repo>/…` or `{api_url}/projects/<id>/…` after URL
 * normalisation, credentials never sent to another origin. GitHub goes through octokit
 * (github-client.ts); GitLab through the fetch client below: headers, no redirect
 * followed, pagination by `X-Next-Page` on the list's own URL (codehost-pages.ts), and
 * GitLab's rate-limit answers (`Retry-After`, `RateLimit-Reset`).
 */
import type { CodehostSettings } from '../config/types';
import { githubRepoPath, gitlabProjectPath, type Subject } from '../events/subject';
import { githubClient } from './github-client';
import { githubPages, gitlabPages, walkPages, type WalkOptions } from './codehost-pages';
import { deliveryRequest, retryAfterMs, type HttpOptions, type HttpResult } from './http';
import { authoredBy, selfId, type OwnComment } from './own-comments';

export type Codehost = 'github' | 'gitlab';

export function gitlabHeaders(token: string, accept = 'application/json'): Record<string, string> {
  return { 'private-token': token, accept };
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

export const refused = (code: string, message: string): ApiFailure => ({ ok: false, failure: { status: 'failed', retryable: false, code, message } });

export interface CodehostClient {
  readonly host: Codehost;
  /** `{api_url}/repos/<owner>/<repo>` or `{api_url}/projects/<id>`: every request stays under it. */
  readonly scope: string;
  /** A request to `scope + path` (path starts with `/`, parts encoded by the caller). */
  request(path: string, init?: RequestInitLite): Promise<HttpResult>;
  /** A request outside the scope, to one of a few fixed API paths (GitHub search). */
  requestFixed(path: '/search/issues', query: Record<string, string>, init?: RequestInitLite): Promise<HttpResult>;
  /** Every page of a list (up to `maxItems`), each next page a URL under the scope (codehost-pages.ts). */
  paginate<T>(path: string, maxItems: number, accept?: string): Promise<Page<T>>;
  /** Which listed comments these credentials wrote (own-comments.ts): markers count only in those. */
  ownComments(): Promise<OwnComment | ApiFailure>;
}

/** The client codehostClient makes: `paginate`, and a list read from either end, checked page by page. */
export interface ScopedClient extends CodehostClient {
  /**
   * Up to `maxItems` of a list, each page under the scope as `paginate` reads it: with
   * `fromLast`, newest first for lists the host gives oldest first and cannot sort (GitHub's
   * comments); `until` ends the walk at the page it is looking for.
   */
  readList<T>(path: string, maxItems: number, options?: WalkOptions<T>): Promise<Page<T>>;
}

/** `path` with `per_page=100`: the most either host gives. */
export const perPage100 = (path: string) => `${path}${path.includes('?') ? '&' : '?'}per_page=100`;

/** Where a client may send requests: the api_url and the subject's repository/project under it. */
export interface Scope {
  api: 'GitHub' | 'GitLab';
  /** api_url without a trailing slash. */
  apiUrl: string;
  root: URL;
  /** `{api_url}/repos/<owner>/<repo>` or `{api_url}/projects/<id>`. */
  url: string;
  /** The scope's path under api_url (for messages). */
  path: string;
  /** `scope + path` as a URL, or why it is refused (not under the scope after normalisation). */
  at(path: string): URL | ApiFailure;
  /** True when `url` stays on the api_url origin and under the scope (or is exactly `{api_url}{fixed}`). */
  contains(url: URL, fixed?: string): boolean;
}

function scopeOf(api: Scope['api'], apiUrl: string, root: URL, scopePath: string): Scope {
  const url = `${apiUrl}${scopePath}`;
  const scopeUrl = new URL(url);
  const scope: Scope = {
    api, apiUrl, root, url, path: scopePath,
    contains: (target, fixed) => target.origin === root.origin && (fixed !== undefined
      ? target.pathname === `${root.pathname.replace(/\/+$/, '')}${fixed}`
      : target.pathname === scopeUrl.pathname || target.pathname.startsWith(`${scopeUrl.pathname}/`)),
    at(path) {
      if (!path.startsWith('/') && path !== '' && !path.startsWith('?')) return refused('unsafe_path', `${api}: a request path must start with /`);
      let target: URL;
      try {
        target = new URL(`${url}${path}`);
      } catch {
        return refused('unsafe_path', `${api}: a request path could not be built`);
      }
      return scope.contains(target) ? target : refused('unsafe_path', `${api}: a request would leave ${scopePath}; refused`);
    },
  };
  return scope;
}

// github-client.ts reads its links with these.
export { nextLink, nextPageUrl } from './codehost-pages';

/**
 * A client for the subject's code host, or a failure with the reason: no host, the host
 * not configured, or no validated repository/project (e.g. `full_name: "../../admin/escape"`).
 */
export function codehostClient(subject: Subject, settings: Partial<Record<Codehost, CodehostSettings>>, http: Omit<HttpOptions, 'api' | 'rateLimitWait'>, auth: { installationId?: number } = {}): ScopedClient | ApiFailure {
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
  const github = subject.host === 'github';
  const scopePath = github ? (subject.repo ? githubRepoPath(subject.repo) : undefined) : (subject.project ? gitlabProjectPath(subject.project) : undefined);
  if (!scopePath) return refused('unsafe_subject', `The event's ${github ? 'repository' : 'project'} breaks ${github ? "GitHub's" : "GitLab's"} naming rules: no request is made`);
  const scope = scopeOf(github ? 'GitHub' : 'GitLab', apiUrl, root, scopePath);
  const client = github ? githubClient(scope, config, http, auth.installationId) : gitlabClient(scope, config.token, http);
  if (isFailure(client)) return client;
  // Each page through client.request, so it gets the client's rate-limit and retry handling; the URL is under the scope (scope.at checks it again).
  const scopePathname = new URL(scope.url).pathname;
  const fetchPage = (url: URL) => client.request(`${url.pathname.slice(scopePathname.length)}${url.search}`);
  return Object.assign(client, {
    readList<T>(path: string, maxItems: number, options?: WalkOptions<T>): Promise<Page<T>> {
      const first = scope.at(perPage100(path));
      if (!(first instanceof URL)) return Promise.resolve(first);
      return walkPages<T>(scope.api, fetchPage, first, github ? githubPages(scope) : gitlabPages(first), maxItems, options);
    },
  });
}

function gitlabClient(scope: Scope, token: string, http: Omit<HttpOptions, 'api' | 'rateLimitWait'>): CodehostClient {
  const options: HttpOptions = { ...http, api: 'GitLab', rateLimitWait: (status, headers) => gitlabRateLimitWait(status, headers) };
  const send = (url: URL, init: RequestInitLite = {}): Promise<HttpResult> => deliveryRequest(url.href, {
    method: init.method ?? 'GET', redirect: 'manual',
    headers: { ...gitlabHeaders(token, init.accept), ...(init.body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
  }, init.attempts === undefined ? options : { ...options, attempts: init.attempts });
  return {
    host: 'gitlab', scope: scope.url,
    async request(path, init) {
      const url = scope.at(path);
      return url instanceof URL ? send(url, init) : url;
    },
    async requestFixed(path) {
      return refused('unsafe_path', `GitLab: ${path} is a GitHub path`);
    },
    async ownComments() {
      const id = await selfId(`gitlab\0${scope.apiUrl}\0${token}`, 'GitLab', () => send(new URL(`${scope.apiUrl}/user`)));
      return typeof id === 'number' ? authoredBy(id) : id;
    },
    async paginate<T>(path: string, maxItems: number, accept?: string): Promise<Page<T>> {
      const first = scope.at(perPage100(path));
      if (!(first instanceof URL)) return first;
      return walkPages<T>('GitLab', (url) => send(url, accept ? { accept } : {}), first, gitlabPages(first), maxItems);
    },
  };
}

export function isFailure(value: unknown): value is ApiFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}
