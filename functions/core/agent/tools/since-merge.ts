/**
 * Incremental review across a merge. When the commits since the last review include a
 * merge (typically the base branch merged into the change to bring it up to date), the
 * comparison from the last reviewed commit to the head holds everything the merge brought
 * in, as if it were the change's own code. The review then reads the change's own diff
 * (base...head, what the pull/merge request page shows) of the files that changed since
 * the last review: never the merged branch's code, and still only what is new.
 */
import { changedFiles, obj, s, type FileChange, type Opened } from './codehost';

export type MergeSign = { merge: string } | { unknown: string };

/**
 * A merge among the compare's commits: GitHub lists `commits[].parents`, GitLab
 * `commits[].parent_ids`. A commit listed without its parents, or fewer commits listed
 * than `total` (GitHub's `total_commits`), may hide one. No list at all says nothing.
 */
export function mergeAmong(commits: unknown, host: 'github' | 'gitlab', total?: unknown): MergeSign | undefined {
  if (!Array.isArray(commits)) return undefined;
  const listed = commits.map((c) => ({ id: s(obj(c)?.sha ?? obj(c)?.id), parents: host === 'github' ? obj(c)?.parents : obj(c)?.parent_ids }));
  const merge = listed.find((c) => Array.isArray(c.parents) && c.parents.length > 1);
  if (merge) return { merge: merge.id };
  const blind = listed.find((c) => !Array.isArray(c.parents));
  if (blind) return { unknown: `commit ${blind.id.slice(0, 12) || '(no id)'} is listed without its parents` };
  if (typeof total === 'number' && total > listed.length) return { unknown: `only ${listed.length} of its ${total} commits are listed` };
  return undefined;
}

export interface OwnDiff { header: string; files: FileChange[]; note: string }

/**
 * The change's own diff restricted to the files the comparison says changed since `last`
 * (by either name of a renamed file). `cut`: the comparison's file list is incomplete, so
 * the restriction cannot be trusted and the whole own diff is shown.
 */
export async function ownDiffSince(opened: Opened, last: string, sign: MergeSign, changed: FileChange[], cut: boolean): Promise<OwnDiff> {
  const since = last.slice(0, 12);
  const why = 'merge' in sign
    ? `a merge commit ${sign.merge.slice(0, 12)} is among the commits since the last review at ${since} (e.g. the base branch merged in)`
    : `hookagent cannot tell whether the commits since the last review at ${since} include a merge (${sign.unknown})`;
  const lead = `${why}: the comparison since then would show what a merge brought in as this change's own code.`;
  const { files, note } = await changedFiles(opened);
  if (cut) return { header: `(${lead} That comparison's file list is incomplete, so this is a review of the whole change: its own diff (base...head), every file)`, files, note };
  const names = (f: FileChange) => (f.previous === undefined ? [f.path] : [f.path, f.previous]);
  const touched = new Set(changed.flatMap(names));
  const own = files.filter((f) => names(f).some((n) => touched.has(n)));
  const ownNames = new Set(own.flatMap(names));
  const merged = changed.filter((f) => !names(f).some((n) => ownNames.has(n))).length;
  const left = merged > 0 ? ` ${merged} file(s) changed since then are not among this change's files (the merge brought them in) and are not shown.` : '';
  if (own.length === 0) return { header: `(${lead} Since then, none of this change's own files changed: nothing new of this change to review.${left})`, files: [], note: '' };
  return { header: `(${lead} Shown instead: this change's own diff (base...head) of the ${own.length} file(s) of it that changed since then; parts of it may have been reviewed before.${left})`, files: own, note };
}
