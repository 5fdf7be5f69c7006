/**
 * The one way hookagent talks to a code-host API (delivery and agent tools alike): URLs
 * built only from the validated subject (`events/subject.ts`), every request kept under
 * `{api_url}/repos/<owner>/<repo>/…` or `{api_url}/projects/<id>/…` after URL
 * normalisation, credentials never sent to another origin. GitHub goes through octokit
 * (github-client.ts); GitLab through the fetch client below: headers, no redirect
 * followed, `Link: rel="next"` pagination (GitLab sends it for offset and keyset
 * pagination alike) only on the api_url origin and scope, and GitLab's rate-limit answers
 * (`Retry-After`, `RateLimit-Reset`).
 */
import type { CodehostSettings } from '../config/types';
import { githubRepoPath, gitlabProjectPath, type Subject } from '../events/subject';
import { githubClient } from './github-client';
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
  /** Every page of a list (up to `maxItems`), following `rel="next"` only on the same origin and scope. */
  paginate<T>(path: string, maxItems: number, accept?: string): Promise<Page<T>>;
  /** Which listed comments these credentials wrote (own-comments.ts): markers count only in those. */
  ownComments(): Promise<OwnComment | ApiFailure>;
}

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

/**
 * The URL of a list's next page from its `rel="next"` link, or why the list stops there.
 * GitHub writes the link by repository id (`{api}/repositories/<id>/pulls/7/files?page=2`,
 * as its pagination guide shows), GitLab may by project id: such a link is read as the same
 * list under the scope's own path, with the link's query (its page or cursor), so credentials
 * still go only under the validated scope. (Before, it was refused as outside the
 * repository, and every GitHub list stopped at its first 100 items: hunt 9.)
 */
export function nextPageUrl(scope: Scope, link: string): URL | string {
  let target: URL;
  try {
    target = new URL(link, scope.url);
  } catch {
    return 'the next page link is not a URL';
  }
  if (scope.contains(target)) return target;
  if (target.origin === scope.root.origin) {
    const root = scope.root.pathname.replace(/\/+$/, '');
    const byId = target.pathname.startsWith(`${root}/`) ? (scope.api === 'GitHub' ? /^\/repositories\/\d+(\/[^?#]*)$/ : /^\/projects\/[^/]+(\/[^?#]*)$/).exec(target.pathname.slice(root.length)) : null;
    const same = byId ? scope.at(`${byId[1]}${target.search}`) : undefined;
    if (same instanceof URL) return same;
  }
  return `the next page is on another origin or path (${target.origin === scope.root.origin ? 'outside the repository' : 'another host'}); not followed with credentials`;
}

export const nextLink = (header: string | null | undefined) => /<([^<>]+)>\s*;\s*rel="next"/.exec(header ?? '')?.[1];

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
  const github = subject.host === 'github';
  const scopePath = github ? (subject.repo ? githubRepoPath(subject.repo) : undefined) : (subject.project ? gitlabProjectPath(subject.project) : undefined);
  if (!scopePath) return refused('unsafe_subject', `The event's ${github ? 'repository' : 'project'} breaks ${github ? "GitHub's" : "GitLab's"} naming rules: no request is made`);
  const scope = scopeOf(github ? 'GitHub' : 'GitLab', apiUrl, root, scopePath);
  return github ? githubClient(scope, config, http, auth.installationId) : gitlabClient(scope, config.token, http);
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
      const first = scope.at(`${path}${path.includes('?') ? '&' : '?'}per_page=100`);
      if (!(first instanceof URL)) return first;
      const items: T[] = [];
      for (let url: URL | undefined = first; url !== undefined;) {
        const answer = await send(url, accept ? { accept } : {});
        if (!answer.ok) return answer;
        let page: unknown;
        try {
          page = JSON.parse(answer.body);
        } catch {
          return { ok: false, failure: { status: 'failed', retryable: true, code: 'bad_answer', message: 'GitLab answered a list with something that is not JSON' } };
        }
        if (!Array.isArray(page)) return { ok: false, failure: { status: 'failed', retryable: false, code: 'bad_answer', message: 'GitLab answered a list with something that is not a list' } };
        for (const item of page as T[]) {
          if (items.length >= maxItems) return { ok: true, items, truncated: `stopped at ${maxItems} items` };
          items.push(item);
        }
        const link = nextLink(answer.headers.get('link'));
        if (link === undefined) break;
        const next = nextPageUrl(scope, link);
        if (typeof next === 'string') return { ok: true, items, truncated: next };
        url = next;
      }
      return { ok: true, items };
    },
  };
}

export function isFailure(value: unknown): value is ApiFailure {
  return typeof value === 'object' && value !== null && (value as { ok?: unknown }).ok === false;
}
