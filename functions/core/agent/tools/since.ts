/**
 * Incremental reviews: the commit the last review looked at is named in the footer of the
 * subscription's sticky comment (no other store). The diff since then comes from the
 * compare API, up to the event's head (for an event that names none, such as a comment
 * asking for a review, the head the host shows now); when that commit is no longer an
 * ancestor of the head (a force-push) or is gone, the caller falls back to the full diff
 * and says so. When a merge is among the new commits, the comparison would hold the
 * merged branch's code: see `since-merge.ts`.
 */
import { reviewedCommitOf, stickyMarker } from '../../events/loop-guard';
import { commitSha } from '../../events/subject';
import { isFailure } from '../../delivery/codehost-api';
import { searchMarkers, textOf } from '../../delivery/marker-search';
import type { ToolContext } from '../tools';
import { changePath, getJson, githubFile, gitlabFile, listAll, obj, s, safeRef, toolError, type FileChange, type Opened } from './codehost';
import { mergeAmong, ownDiffSince } from './since-merge';


/** GitHub's compare API lists at most this many files of a comparison. */
export const GITHUB_COMPARE_FILES = 300;

export interface Since {
  header: string;
  /** The files to show (changed since the last review); absent → use the full diff. */
  files?: FileChange[];
  /** Says when the list of `files` was cut. */
  note?: string;
}

/**
 * The commit the subscription's sticky comment names as reviewed. It is looked for as the
 * delivery looks for it (marker-search.ts: both ends of a long thread, newest first, among the
 * comments hookagent's credentials wrote: a copied marker would pick the range reviewed).
 */
async function reviewedBefore(opened: Opened, subscription: string): Promise<string | undefined> {
  const github = opened.client.host === 'github';
  // Who wrote the comments cannot be told: no earlier review is taken for one (asked once per
  // process and token; the search below reuses the answer).
  if (isFailure(await opened.client.ownComments())) return undefined;
  const marker = stickyMarker(subscription);
  const found = await searchMarkers(opened.client, github ? `/issues/${opened.number}/comments` : `${changePath(opened)}/notes`, !github, marker, marker);
  if (isFailure(found)) throw toolError(found.failure);
  const sticky = found.event ?? found.sticky;
  return sticky ? commitSha(reviewedCommitOf(textOf(sticky))) : undefined;
}

/** The change's head as the host shows it now. */
async function headOf(opened: Opened): Promise<string> {
  const c = await getJson<Record<string, unknown>>(opened, changePath(opened));
  const head = opened.client.host === 'github' ? s(obj(c.head)?.sha) : s(obj(c.diff_refs)?.head_sha ?? c.sha);
  return safeRef(head);
}

/**
 * The head the run's tools read: the event's commit, or, for an event that names none (a
 * comment asking for a review), the head as first read in this run, kept for the rest of it
 * so that get_file, get_ci_status, since_last_review and the sticky footer agree when a push
 * lands during the run. A failed read is not kept (the next call asks again).
 */
export function headRead(opened: Opened, context: ToolContext): Promise<string> {
  if (opened.subject.commit) return Promise.resolve(opened.subject.commit);
  const reads = context.reads;
  if (!reads) return headOf(opened);
  const read = (reads.head ??= headOf(opened).catch((error: unknown) => {
    if (reads.head === read) delete reads.head;
    throw error;
  }));
  return read;
}

export async function lastReviewedCommit(opened: Opened, context: ToolContext): Promise<Since> {
  const last = await reviewedBefore(opened, context.message.subscription);
  if (!last) return { header: '(no earlier hookagent review of this change: the full diff)' };
  // An event that names no head (a comment asking for a review): the head as the other tools read it.
  const head = commitSha(await headRead(opened, context).catch(() => undefined));
  if (!head) return { header: `(the head commit is unknown: the full diff; last review was at ${last.slice(0, 12)})` };
  if (last === head) return { header: `(already reviewed at ${head.slice(0, 12)}: nothing new; the full diff follows)` };
  if (opened.client.host === 'github') {
    const answer = await opened.client.request(`/compare/${encodeURIComponent(last)}...${encodeURIComponent(head)}`);
    if (!answer.ok) return { header: `(the last reviewed commit ${last.slice(0, 12)} cannot be compared (${answer.failure.code}), e.g. after a force-push: the full diff)` };
    const compare = JSON.parse(answer.body) as { status?: string; files?: Array<Record<string, unknown>>; commits?: unknown; total_commits?: unknown };
    if (compare.status !== 'ahead') return { header: `(history was rewritten since the last review at ${last.slice(0, 12)} (compare: ${s(compare.status)}), e.g. a force-push: the full diff)` };
    const files = (compare.files ?? []).map(githubFile);
    // GitHub's compare lists at most 300 files of a comparison, with no sign of the rest.
    const full = files.length >= GITHUB_COMPARE_FILES;
    const sign = mergeAmong(compare.commits, 'github', compare.total_commits);
    if (sign) return ownDiffSince(opened, last, sign, files, full);
    const cut = full ? `; GitHub lists at most ${GITHUB_COMPARE_FILES} files of a comparison, so files may be missing here: list_changed_files lists them all` : '';
    return { header: `(changes since the last review at ${last.slice(0, 12)}, up to ${head.slice(0, 12)}${cut})`, files };
  }
  const base = await opened.client.request(`/repository/merge_base?refs[]=${encodeURIComponent(last)}&refs[]=${encodeURIComponent(head)}`);
  if (!base.ok || s(obj(JSON.parse(base.body))?.id) !== last) return { header: `(the last reviewed commit ${last.slice(0, 12)} is not an ancestor of the head any more, e.g. after a force-push: the full diff)` };
  const compare = await getJson<{ diffs?: Array<Record<string, unknown>>; commits?: unknown; overflow?: unknown; compare_timeout?: unknown }>(opened, `/repository/compare?from=${encodeURIComponent(last)}&to=${encodeURIComponent(head)}`);
  // GitLab's compare says it left diffs out (its diff limits) with `compare_timeout` (its entity: `diffs.overflow?`); `overflow` is the MR changes API's name for it.
  const over = compare.compare_timeout === true || compare.overflow === true;
  const files = (compare.diffs ?? []).map(gitlabFile);
  const sign = mergeAmong(compare.commits, 'gitlab');
  if (sign) return ownDiffSince(opened, last, sign, files, over);
  const cut = over ? '; GitLab left some diffs out of this comparison (overflow: compare_timeout): list_changed_files lists every file' : '';
  return { header: `(changes since the last review at ${last.slice(0, 12)}, up to ${head.slice(0, 12)}${cut})`, files };
}
