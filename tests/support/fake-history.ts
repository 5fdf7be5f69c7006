/**
 * A repository's commit graph for the fake code host (fake-codehost.ts `history`: each
 * commit's sha with its parents' shas), and what the two hosts answer from it:
 * - GitHub `GET /repos/{o}/{r}/compare/{base}...{head}`: `status` is `identical`, `ahead`
 *   (head has commits base lacks, and base none that head lacks), `behind` (the reverse)
 *   or `diverged` (both), with `ahead_by`, `behind_by`, `merge_base_commit`; 404 for an
 *   unknown commit or two with no common ancestor;
 * - GitLab `GET /projects/:id/repository/merge_base?refs[]=…`: the common ancestor as a
 *   commit (`id`, `short_id`, `parent_ids`); 400 "Could not find ref" for an unknown one,
 *   404 "Merge Base Not Found" when there is none.
 * For histories of single-parent commits (amend, rebase, force-push), where the nearest
 * common ancestor is git's merge-base.
 */
export type History = Record<string, string[]>;

/** `sha` and the commits it descends from, nearest first; empty for an unknown commit. */
function ancestry(history: History, sha: string): string[] {
  const seen: string[] = [];
  for (const queue = [sha]; queue.length > 0;) {
    const next = queue.shift()!;
    if (seen.includes(next) || !history[next]) continue;
    seen.push(next);
    queue.push(...history[next]!);
  }
  return seen;
}

/** GitHub's compare of `base...head`: [HTTP status, body]. */
export function compareCommits(history: History, base: string, head: string): [number, unknown] {
  if (!history[base] || !history[head]) return [404, { message: 'Not Found' }];
  const [from, to] = [ancestry(history, base), ancestry(history, head)];
  const mergeBase = to.find((sha) => from.includes(sha));
  if (!mergeBase) return [404, { message: `No common ancestor between ${base} and ${head}.` }];
  const ahead = to.filter((sha) => !from.includes(sha));
  const behind = from.filter((sha) => !to.includes(sha));
  const status = ahead.length && behind.length ? 'diverged' : ahead.length ? 'ahead' : behind.length ? 'behind' : 'identical';
  const commit = (sha: string) => ({ sha, parents: history[sha]!.map((p) => ({ sha: p })) });
  return [200, {
    status, ahead_by: ahead.length, behind_by: behind.length, total_commits: ahead.length,
    base_commit: commit(base), merge_base_commit: commit(mergeBase), commits: ahead.reverse().map(commit), files: [],
  }];
}

/** GitLab's merge_base of `refs`: [HTTP status, body]. */
export function mergeBase(history: History, refs: string[]): [number, unknown] {
  if (refs.length < 2) return [400, { message: 'Provide at least 2 refs' }];
  const unknown = refs.filter((ref) => !history[ref]);
  if (unknown.length > 0) return [400, { message: `Could not find ${unknown.length > 1 ? 'refs' : 'ref'}: ${unknown.join(', ')}` }];
  const others = refs.slice(1).map((ref) => ancestry(history, ref));
  const id = ancestry(history, refs[0]!).find((sha) => others.every((a) => a.includes(sha)));
  if (!id) return [404, { message: '404 Merge Base Not Found' }];
  return [200, { id, short_id: id.slice(0, 8), title: '', parent_ids: history[id] }];
}
