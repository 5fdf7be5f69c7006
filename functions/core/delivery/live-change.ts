/**
 * The pull/merge request as the code host shows it now (GitHub `GET /pulls/{n}`, GitLab
 * `GET /merge_requests/{iid}`), read at most once per delivery. The agent's tools read the
 * live diff, and so does the inline check, so:
 * - the inline review is posted against this head (GitHub `commit_id`, GitLab `diff_refs`),
 *   not against an older head an event named before a push;
 * - a sticky footer names this head when the event names no commit (`issue_comment`);
 * - a review of an older push that is delivered after the newer one's is told apart.
 */
import { commitSha, type Subject } from '../events/subject';
import type { CodehostClient } from './codehost-api';

export interface LiveChange {
  /** The head commit now; absent when it could not be read. */
  head?: string;
  /** GitLab's diff_refs, when all three are there (positions need them). */
  refs?: { base_sha: string; start_sha: string; head_sha: string };
}

export type LiveChangeReader = () => Promise<LiveChange>;

type Obj = Record<string, unknown>;
const obj = (v: unknown): Obj | undefined => (v && typeof v === 'object' ? (v as Obj) : undefined);
const str = (v: unknown) => (typeof v === 'string' ? v : '');

/** The change's API path: GitHub `/pulls/{n}`, GitLab `/merge_requests/{iid}`; none for other subjects. */
export function changePathOf(client: CodehostClient, subject: Subject): string | undefined {
  if (subject.number === undefined) return undefined;
  if (client.host === 'github' && subject.kind === 'pull_request') return `/pulls/${subject.number}`;
  if (client.host === 'gitlab' && subject.kind === 'merge_request') return `/merge_requests/${subject.number}`;
  return undefined;
}

/** A reader that asks the host once, on first use; a failed read is an empty answer (callers fall back). */
export function liveChange(client: CodehostClient, subject: Subject): LiveChangeReader {
  let read: Promise<LiveChange> | undefined;
  return () => (read ??= readChange(client, subject));
}

async function readChange(client: CodehostClient, subject: Subject): Promise<LiveChange> {
  const path = changePathOf(client, subject);
  if (!path) return {};
  const answer = await client.request(path);
  if (!answer.ok) return {};
  let change: Obj | undefined;
  try {
    change = obj(JSON.parse(answer.body));
  } catch {
    return {};
  }
  if (client.host === 'github') {
    const head = commitSha(obj(change?.head)?.sha);
    return head ? { head } : {};
  }
  const refs = obj(change?.diff_refs) ?? {};
  const [base_sha, start_sha, head_sha] = [str(refs.base_sha), str(refs.start_sha), str(refs.head_sha)];
  const head = commitSha(head_sha || change?.sha);
  return { ...(head ? { head } : {}), ...(base_sha && start_sha && head_sha ? { refs: { base_sha, start_sha, head_sha } } : {}) };
}

/**
 * True when the event's commit is older than `last` (the commit the sticky comment already
 * reviewed: an ancestor of it) and is not the head now: the review of an earlier push,
 * delivered after the newer push's. A force-push back to that commit makes it the head
 * again, so it is reviewed. When anything cannot be read, false: posted as before.
 */
export async function superseded(client: CodehostClient, subject: Subject, last: string, live: LiveChangeReader): Promise<boolean> {
  const event = subject.commit;
  if (!event || event === last) return false;
  const { head } = await live();
  if (!head || head === event) return false;
  if (client.host === 'github') {
    // compare/{last}...{event}: `behind` when the event's commit is an ancestor of the last reviewed one.
    const compared = await client.request(`/compare/${last}...${event}?per_page=1`);
    return compared.ok && jsonField(compared.body, 'status') === 'behind';
  }
  const base = await client.request(`/repository/merge_base?refs[]=${encodeURIComponent(event)}&refs[]=${encodeURIComponent(last)}`);
  return base.ok && jsonField(base.body, 'id') === event;
}

function jsonField(body: string, key: string): string {
  try {
    return str(obj(JSON.parse(body))?.[key]);
  } catch {
    return '';
  }
}
