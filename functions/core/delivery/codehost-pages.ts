/**
 * Paginated code-host lists: where a list's next, previous or last page is, always as a URL
 * under the validated scope, and the walk over its pages (forwards, or from the last page
 * back). GitHub's links are checked (`nextPageUrl`). GitLab's are never followed: GitLab
 * writes them with its own configured host and port (external_url), not the address
 * hookagent reaches it at (`Gitlab::Pagination::OffsetHeaderBuilder#base_request_uri`), so
 * behind an internal address every link named another origin and every GitLab list stopped
 * at 100 items (hunt 10). Its `X-Next-Page`/`X-Prev-Page`/`X-Total-Pages` are asked on the
 * list's own URL instead; a keyset link (no `X-Next-Page`) lends only its query.
 */
import type { ApiFailure, Page, Scope } from './codehost-api';
import type { HttpResult } from './http';

export type Rel = 'next' | 'prev' | 'last';

/** The target of the `rel` link in a `Link` header. */
export function linkRel(header: string | null | undefined, rel: Rel): string | undefined {
  for (const [, target, name] of (header ?? '').matchAll(/<([^<>]+)>\s*;\s*rel="([^"]*)"/g)) {
    if (name!.split(/\s+/).includes(rel)) return target;
  }
  return undefined;
}

export const nextLink = (header: string | null | undefined) => linkRel(header, 'next');

/**
 * The URL of a GitHub list's page from its link, or why the list stops there. GitHub writes
 * the link by repository id (`{api}/repositories/<id>/pulls/7/files?page=2`, as its
 * pagination guide shows): such a link is read as the same list under the scope's own path,
 * with the link's query (its page or cursor), so credentials still go only under the
 * validated scope. (Before, it was refused as outside the repository, and every GitHub list
 * stopped at its first 100 items: hunt 9.)
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
    const byId = target.pathname.startsWith(`${root}/`) ? /^\/repositories\/\d+(\/[^?#]*)$/.exec(target.pathname.slice(root.length)) : null;
    const same = byId ? scope.at(`${byId[1]}${target.search}`) : undefined;
    if (same instanceof URL) return same;
  }
  return `the next page is on another origin or path (${target.origin === scope.root.origin ? 'outside the repository' : 'another host'}); not followed with credentials`;
}

/** Where page `rel` of a list is, read from one of its answers: a URL, why the list stops there, or none. */
export type PageLocator = (rel: Rel, headers: Headers) => URL | string | undefined;

export const githubPages = (scope: Scope): PageLocator => (rel, headers) => {
  const link = linkRel(headers.get('link'), rel);
  return link === undefined ? undefined : nextPageUrl(scope, link);
};

const GITLAB_PAGE_HEADER: Record<Rel, string> = { next: 'x-next-page', prev: 'x-prev-page', last: 'x-total-pages' };

/** GitLab: the page number GitLab names, else the link's query, on the list's own scoped URL `list`. */
export const gitlabPages = (list: URL): PageLocator => (rel, headers) => {
  const target = new URL(list.href);
  const number = headers.get(GITLAB_PAGE_HEADER[rel]) ?? '';
  if (/^[1-9]\d{0,8}$/.test(number)) {
    target.searchParams.set('page', number);
    return target;
  }
  const link = linkRel(headers.get('link'), rel);
  if (link === undefined) return undefined;
  let query: URLSearchParams;
  try {
    query = new URL(link, list).searchParams;
  } catch {
    return 'the next page link is not a URL';
  }
  for (const key of new Set(query.keys())) target.searchParams.delete(key);
  for (const [key, value] of query) target.searchParams.append(key, value);
  return target;
};

const badAnswer = (api: string, retryable: boolean, what: string): ApiFailure => ({
  ok: false, failure: { status: 'failed', retryable, code: 'bad_answer', message: `${api} answered a list with something that is not ${what}` },
});

export interface WalkOptions<T> {
  /** From the list's last page back, each page's items last first. */
  fromLast?: boolean;
  /** Asked with each page's items as they arrive: true ends the walk there. */
  until?: (page: T[]) => Promise<boolean>;
}

/**
 * Up to `maxItems` of a list whose first page is `first`: forwards (`rel="next"`), or with
 * `fromLast` from its last page back (`rel="last"`, then each `rel="prev"`), so the newest
 * come first in a list the host gives oldest first and cannot sort. A list whose last page
 * the host does not name (or names where it may not be asked) is read forwards.
 */
export async function walkPages<T>(api: 'GitHub' | 'GitLab', fetchPage: (url: URL) => Promise<HttpResult>, first: URL, locate: PageLocator, maxItems: number, options: WalkOptions<T> = {}): Promise<Page<T>> {
  const items: T[] = [];
  let answer = await fetchPage(first);
  let backwards = false;
  if (options.fromLast && answer.ok && locate('next', answer.headers) !== undefined) {
    const last = locate('last', answer.headers);
    if (last instanceof URL) {
      backwards = true;
      answer = await fetchPage(last);
    }
  }
  for (;;) {
    if (!answer.ok) return answer;
    let page: unknown;
    try {
      page = JSON.parse(answer.body);
    } catch {
      return badAnswer(api, true, 'JSON');
    }
    if (!Array.isArray(page)) return badAnswer(api, false, 'a list');
    const taken = ((backwards ? [...page].reverse() : page) as T[]).slice(0, maxItems - items.length);
    items.push(...taken);
    if (options.until && await options.until(taken)) return { ok: true, items };
    const full = { ok: true as const, items, truncated: `stopped at ${maxItems} items` };
    if (taken.length < page.length) return full;
    const next = locate(backwards ? 'prev' : 'next', answer.headers);
    if (next === undefined) return { ok: true, items };
    if (items.length >= maxItems) return full;
    if (typeof next === 'string') return { ok: true, items, truncated: next };
    answer = await fetchPage(next);
  }
}
