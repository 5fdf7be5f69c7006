/**
 * A pull/merge request's diff at one of its earlier heads: the diff a review run read before
 * a push moved the change on. Its findings are numbered in that diff, so they are checked
 * against it and placed on it, never on whatever code sits at those numbers now.
 * - GitHub keeps no earlier diffs of a pull request. Its diff at a commit is the comparison
 *   from the base to that commit (`GET /compare/{base}...{commit}`, three dots: from their
 *   merge base, as the pull request's own diff), and a review comment whose `commit_id` is an
 *   earlier commit of the pull request is read in that commit's diff (GitHub shows it as
 *   outdated once a later commit changed its line). The compare lists at most 300 files.
 * - GitLab keeps every version of a merge request's diff (`GET …/versions`, newest first):
 *   the newest whose `head_commit_sha` is the commit gives its diffs (`GET …/versions/{id}`)
 *   and the `base_sha`, `start_sha` and `head_sha` of a position on it.
 */
import type { CodehostClient } from './codehost-api';
import { historyOf, type LiveChange } from './live-change';

type Obj = Record<string, unknown>;

/** GitHub's compare API lists at most this many files of a comparison. */
export const GITHUB_COMPARE_FILES = 300;
/** Versions of one merge request looked through (one per push). */
const MAX_VERSIONS = 1000;

export interface PastDiff {
  /** The host's file entries (GitHub compare `files`, GitLab version `diffs`). */
  files: Obj[];
  /** GitLab: the version's refs, for positions. */
  refs?: LiveChange['refs'];
  /** Why the list of files may be incomplete. */
  cut?: string;
}

export type PastRead = { ok: true; diff: PastDiff } | { ok: false; why: string };

const str = (v: unknown) => (typeof v === 'string' ? v : '');
function json(body: string): Obj | undefined {
  try {
    const value = JSON.parse(body) as unknown;
    return value && typeof value === 'object' && !Array.isArray(value) ? (value as Obj) : undefined;
  } catch {
    return undefined;
  }
}

/** The diff of `change` (its API path) when its head was `commit`; GitHub needs the pull request's `base` commit. */
export async function diffAt(client: CodehostClient, change: string, commit: string, base: string | undefined): Promise<PastRead> {
  if (client.host === 'github') {
    if (!base) return { ok: false, why: 'the pull request\'s base commit could not be read' };
    const answer = await client.request(`/compare/${encodeURIComponent(base)}...${encodeURIComponent(commit)}`);
    if (!answer.ok) return { ok: false, why: `GitHub's comparison up to it could not be read: ${answer.failure.code}` };
    const files = json(answer.body)?.files;
    if (!Array.isArray(files)) return { ok: false, why: 'GitHub answered the comparison without its files' };
    const cut = files.length >= GITHUB_COMPARE_FILES ? `GitHub lists at most ${GITHUB_COMPARE_FILES} files of a comparison` : undefined;
    return { ok: true, diff: { files: files as Obj[], ...(cut ? { cut } : {}) } };
  }
  const versions = await client.paginate<Obj>(`${change}/versions`, MAX_VERSIONS);
  if (!versions.ok) return { ok: false, why: `GitLab's versions of the merge request could not be read: ${versions.failure.code}` };
  const listed = versions.items.find((v) => v.head_commit_sha === commit);
  if (!listed) return { ok: false, why: 'GitLab lists no version of the merge request at that commit' };
  const id = typeof listed.id === 'number' || typeof listed.id === 'string' ? String(listed.id) : '';
  if (!id) return { ok: false, why: 'GitLab listed the version at that commit without its id' };
  const answer = await client.request(`${change}/versions/${encodeURIComponent(id)}`);
  const version = answer.ok ? json(answer.body) : undefined;
  if (!answer.ok || !version || !Array.isArray(version.diffs)) return { ok: false, why: `GitLab's version at that commit could not be read${answer.ok ? '' : `: ${answer.failure.code}`}` };
  const [base_sha, start_sha, head_sha] = [str(version.base_commit_sha), str(version.start_commit_sha), str(version.head_commit_sha)];
  if (!base_sha || !start_sha || head_sha !== commit) return { ok: false, why: 'GitLab\'s version at that commit names no base and start commits' };
  return { ok: true, diff: { files: version.diffs as Obj[], refs: { base_sha, start_sha, head_sha } } };
}

/** The diff findings are placed on, and how a comment names it. */
export interface Placement {
  files: Obj[];
  /** GitHub's `commit_id`; absent when no head could be read (GitHub then takes the latest commit, whose diff was read). */
  commit?: string;
  /** GitLab's position refs. */
  refs?: LiveChange['refs'];
  /** The head now, when the findings are placed on the earlier head the run read. */
  movedTo?: string;
  cut?: string;
}

const short = (sha: string) => sha.slice(0, 12);

/**
 * Where findings go: the live diff (`now`) when the run read this head or named none; else
 * the diff of the head it read (`read`), when that is still in the change and its diff can
 * be read. `why` otherwise: every finding is folded with it, none placed on other code.
 */
export async function placementOf(client: CodehostClient, change: string, now: { live: LiveChange; files: Obj[] }, read: string | undefined): Promise<Placement | { why: string }> {
  const head = now.live.head;
  if (!read || !head || read === head) return { files: now.files, ...(head ? { commit: head } : {}), ...(now.live.refs ? { refs: now.live.refs } : {}) };
  const moved = `the change moved on to ${short(head)} after the review read ${short(read)}`;
  if ((await historyOf(client, read, head)) === 'diverged') return { why: `${moved}, and a force-push took ${short(read)} out of it` };
  const past = await diffAt(client, change, read, now.live.base);
  if (!past.ok) return { why: `${moved}, and the diff it read cannot be read again (${past.why})` };
  return { files: past.diff.files, commit: read, movedTo: head, ...(past.diff.refs ? { refs: past.diff.refs } : {}), ...(past.diff.cut ? { cut: past.diff.cut } : {}) };
}
