/**
 * The pull/merge request as the code host shows it now (GitHub `GET /pulls/{n}`, GitLab
 * `GET /merge_requests/{iid}`), read once per delivery, and again only by the inline check
 * (after it read the diff, to tell whether a push landed in between). The agent's tools
 * record the head their diff reads were of (agent/tools/codehost.ts changedFiles; the reply's
 * `hookagent-read` block), so:
 * - the inline review is posted against the head the run read: this head when it is that
 *   one, else that earlier head's own diff (past-diff.ts), never the lines of one diff under
 *   another head;
 * - a sticky footer names the head the run read, or this head when the reply names none;
 * - a review of an older push that is delivered after the newer one's is told apart, and
 *   so is a review of a commit a force-push removed from the pull request.
 */
import { commitSha, type Subject } from '../events/subject';
import type { CodehostClient } from './codehost-api';

export interface LiveChange {
  /** The head commit now; absent when it could not be read. */
  head?: string;
  /** GitHub: the pull request's base commit (`base.sha`), from which its diff at an earlier head is compared. */
  base?: string;
  /** GitLab's diff_refs, when all three are there (positions need them). */
  refs?: { base_sha: string; start_sha: string; head_sha: string };
}

export interface LiveChangeReader {
  /** The change as first read (asked once, on first use). */
  (): Promise<LiveChange>;
  /** Asks the host again; later calls answer with this read, unless it lost the head. */
  again: () => Promise<LiveChange>;
}

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
  const first = () => (read ??= readChange(client, subject));
  const again = async (): Promise<LiveChange> => {
    const before = await first();
    const now = await readChange(client, subject);
    if (!now.head) return before;
    read = Promise.resolve(now);
    return now;
  };
  return Object.assign(first, { again });
}

/** The change as the host shows it now; empty when it cannot be read. */
export async function readChange(client: CodehostClient, subject: Subject): Promise<LiveChange> {
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
    const base = commitSha(obj(change?.base)?.sha);
    return head ? { head, ...(base ? { base } : {}) } : {};
  }
  const refs = obj(change?.diff_refs) ?? {};
  const [base_sha, start_sha, head_sha] = [str(refs.base_sha), str(refs.start_sha), str(refs.head_sha)];
  const head = commitSha(head_sha || change?.sha);
  return { ...(head ? { head } : {}), ...(base_sha && start_sha && head_sha ? { refs: { base_sha, start_sha, head_sha } } : {}) };
}

export type Superseded = 'head' | 'newer' | 'gone';

/**
 * Why the sticky comment (its footer names `last`) is not to take this event's review:
 * - `head`: it reviews the head now, and the event's commit is not the head: an earlier
 *   push, or a commit a force-push replaced (after an amend or a rebase it is no ancestor
 *   of the head, so its history tells nothing);
 * - `newer`: neither is the head, and the event's commit is an ancestor of `last`;
 * - `gone`: neither is the head, and the event's commit is no longer in the pull request:
 *   it and the head diverged (a force-push replaced it), so it reviewed a diff that is not
 *   there; an ancestor of the head is judged against `last` as above.
 * A force-push back to the event's commit makes it the head again, so it is reviewed.
 * Undefined (replace it) otherwise, and when anything cannot be read. A commit the head as
 * read does not contain yet (the read lags the push) is replaced too: it may be the newest.
 */
export async function superseded(client: CodehostClient, subject: Subject, last: string, live: LiveChangeReader): Promise<Superseded | undefined> {
  const event = subject.commit;
  if (!event || event === last) return undefined;
  const { head } = await live();
  if (!head || head === event) return undefined;
  if (last === head) return 'head';
  if ((await historyOf(client, event, last)) === 'ancestor') return 'newer';
  return (await historyOf(client, event, head)) === 'diverged' ? 'gone' : undefined;
}

export type Standing = 'ancestor' | 'descendant' | 'diverged';
/** GitHub compare `status` of base...head, as where head stands to base (`identical` is not asked). */
const GITHUB_COMPARE = new Map<string, Standing>([['behind', 'ancestor'], ['ahead', 'descendant'], ['diverged', 'diverged']]);

/**
 * Where `commit` stands in the history of `of` (two different commits): GitHub
 * `GET /compare/{of}...{commit}` (`behind`, `ahead`, `diverged`); GitLab
 * `/repository/merge_base` of the two (`commit` itself, `of`, or a third commit).
 * Undefined when it cannot be read.
 */
export async function historyOf(client: CodehostClient, commit: string, of: string): Promise<Standing | undefined> {
  if (client.host === 'github') {
    const compared = await client.request(`/compare/${of}...${commit}?per_page=1`);
    return compared.ok ? GITHUB_COMPARE.get(jsonField(compared.body, 'status')) : undefined;
  }
  const base = await client.request(`/repository/merge_base?refs[]=${encodeURIComponent(commit)}&refs[]=${encodeURIComponent(of)}`);
  const id = base.ok ? commitSha(jsonField(base.body, 'id')) : undefined;
  if (!id) return undefined;
  return id === commit ? 'ancestor' : id === of ? 'descendant' : 'diverged';
}

function jsonField(body: string, key: string): string {
  try {
    return str(obj(JSON.parse(body))?.[key]);
  } catch {
    return '';
  }
}
