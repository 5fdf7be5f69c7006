/**
 * Which listed comments and notes hookagent wrote itself. Its hidden markers (the sticky
 * comment, the last reviewed commit, an event's comment) are plain text anyone who can
 * comment could copy; only a comment written by hookagent's own credentials counts:
 * - a token (GitHub or GitLab): the comment's `user.id` / `author.id` is the token's user
 *   (`GET /user`, asked once per process and token);
 * - a GitHub App: the comment was made through the App (`performed_via_github_app.id`),
 *   or, on review comments that do not carry that field, by a bot account.
 */
import type { ApiFailure } from './codehost-api';
import type { HttpResult } from './http';

export type OwnComment = (item: unknown) => boolean;

interface Authored {
  user?: { id?: unknown; type?: unknown; login?: unknown } | null;
  author?: { id?: unknown } | null;
  performed_via_github_app?: { id?: unknown } | null;
}

const selfIds = new Map<string, number>();

/** The id of the user `key`'s credentials act as; a failure (not remembered) when `/user` cannot say. */
export async function selfId(key: string, api: 'GitHub' | 'GitLab', ask: () => Promise<HttpResult>): Promise<number | ApiFailure> {
  const known = selfIds.get(key);
  if (known !== undefined) return known;
  const answer = await ask();
  if (!answer.ok) return { ok: false, failure: { ...answer.failure, message: `${api}: cannot tell which comments are hookagent's own (GET /user): ${answer.failure.message}` } };
  let id: unknown;
  try {
    id = (JSON.parse(answer.body) as { id?: unknown }).id;
  } catch {
    id = undefined;
  }
  if (typeof id !== 'number') return { ok: false, failure: { status: 'failed', retryable: true, code: 'bad_answer', message: `${api} answered GET /user without a user id` } };
  selfIds.set(key, id);
  return id;
}

export const authoredBy = (id: number): OwnComment => (item) => {
  const c = (item ?? {}) as Authored;
  return (c.user?.id ?? c.author?.id) === id;
};

export const madeByApp = (appId: number): OwnComment => (item) => {
  const c = (item ?? {}) as Authored;
  if (c.performed_via_github_app) return c.performed_via_github_app.id === appId;
  return c.performed_via_github_app === undefined && c.user?.type === 'Bot' && typeof c.user.login === 'string' && c.user.login.endsWith('[bot]');
};
