/**
 * Incremental reviews: the commit the last review looked at is named in the footer of the
 * subscription's sticky comment (no other store). The diff since then comes from the
 * compare API, up to the head the run's diffs are of (codehost.ts diffHead); when that
 * commit is no longer an ancestor of the head (a force-push) or is gone, the caller falls
 * back to the full diff and says so. The comparison numbers its removed lines as in the
 * last reviewed commit, but an inline finding on a removed line is placed by the pull
 * request's own numbering (its base), so a file with lines removed since then is shown as
 * the change's own hunks that hold those changes (sinceLast). When a merge is among the new
 * commits, the comparison would hold the merged branch's code: see `since-merge.ts`.
 */
import { reviewedCommitOf, stickyMarker } from '../../events/loop-guard';
import { commitSha } from '../../events/subject';
import { isFailure } from '../../delivery/codehost-api';
import { searchMarkers, textOf } from '../../delivery/marker-search';
import { GITHUB_COMPARE_FILES } from '../../delivery/past-diff';
import type { ToolContext } from '../tools';
import { changedFiles, changePath, diffHead, getJson, githubFile, gitlabFile, obj, s, toolError, type FileChange, type Opened } from './codehost';
import { mergeAmong, ownDiffSince } from './since-merge';

export { GITHUB_COMPARE_FILES };

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

export async function lastReviewedCommit(opened: Opened, context: ToolContext): Promise<Since> {
  const last = await reviewedBefore(opened, context.message.subscription);
  if (!last) return { header: '(no earlier hookagent review of this change: the full diff)' };
  // The head the run's diffs are of (for a comment asking for a review, the head as the other tools read it).
  const head = commitSha(await diffHead(opened).catch(() => undefined));
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
    return sinceLast(opened, last, head, files, cut);
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
  return sinceLast(opened, last, head, files, cut);
}

const HUNK = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/;

/** A hunk of a patch and the head lines it spans (one line for a hunk with none). */
interface Hunk { lines: string[]; from: number; to: number }

function hunksOf(patch: string): Hunk[] {
  const hunks: Hunk[] = [];
  for (const line of patch.split('\n')) {
    const h = HUNK.exec(line);
    if (h) hunks.push({ lines: [line], from: Number(h[1]), to: Number(h[1]) + Math.max(h[2] === undefined ? 1 : Number(h[2]), 1) - 1 });
    else hunks.at(-1)?.lines.push(line);
  }
  return hunks;
}

const removesLines = (f: FileChange) => f.patch !== undefined && hunksOf(f.patch).some((h) => h.lines.some((l, i) => i > 0 && l.startsWith('-')));
const names = (f: FileChange) => (f.previous === undefined ? [f.path] : [f.path, f.previous]);
const hunkText = (h: Hunk) => h.lines.join('\n').replace(/\n+$/, '');

/**
 * What changed since the last review (`changed`: the comparison's files). The comparison
 * numbers a removed line as in the last reviewed commit; an inline finding on a removed line
 * is placed by the pull request's base numbering: after an earlier push moved lines, the
 * same number is another line. So a file with lines removed since then is shown as the
 * change's own hunks (base...head) near the comparison's hunks (both number the head side
 * alike): both sides then carry the pull request's numbers. A line an earlier push added and
 * this one removed is in neither version of the pull request's diff: where only such changes
 * are, nothing is shown. Kept as compared: a file without removed lines (only head numbers),
 * one the change adds (its diff has no removed lines) or does not touch (no inline finding
 * is placed on it).
 */
async function sinceLast(opened: Opened, last: string, head: string, changed: FileChange[], cut: string): Promise<Since> {
  const header = `changes since the last review at ${last.slice(0, 12)}, up to ${head.slice(0, 12)}`;
  if (!changed.some(removesLines)) return { header: `(${header}${cut})`, files: changed };
  const { files: own, note } = await changedFiles(opened);
  let shown = 0;
  let back = 0;
  const files = changed.flatMap((f): FileChange[] => {
    const mine = removesLines(f) ? own.find((o) => names(o).some((n) => names(f).includes(n))) : undefined;
    if (!mine || mine.status === 'added') return [f];
    const near = hunksOf(f.patch ?? '');
    const kept = mine.patch === undefined ? undefined : hunksOf(mine.patch).filter((h) => near.some((n) => h.from - 1 <= n.to && n.from <= h.to + 1));
    if (kept?.length === 0) {
      back++;
      return [];
    }
    shown++;
    return [kept ? { ...mine, patch: kept.map(hunkText).join('\n') } : mine];
  });
  const ownNote = shown > 0 ? `; ${shown} file(s) with lines removed since then are shown as this change's own diff (base...head), only its hunks that hold those changes, so that removed lines carry the pull request's line numbers (such a hunk may hold earlier changes too)` : '';
  const gone = back > 0 ? `; in ${back} file(s) what changed since then is back as in the base (lines an earlier push added), not shown` : '';
  return { header: `(${header}${ownNote}${gone}${cut})`, files, note };
}
