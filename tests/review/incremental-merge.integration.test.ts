/**
 * Incremental review after the base branch was merged into the pull/merge request: the
 * comparison from the last reviewed commit to the new head then holds all of the base
 * branch's changes, which are not the change's own. `get_change_diff {"since_last_review": true}`
 * must show only the change's own diff (base...head) of the files that changed since the
 * last review, never the merged-in code. GitHub's compare lists `commits[].parents`,
 * GitLab's `commits[].parent_ids`; a commit whose parents are not given may be a merge.
 */
import { BUILTIN_TOOLS, type ToolContext } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { reviewedMarker, stickyMarker } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { botComment, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';

const HEAD = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const OLD = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
const FIX = 'cccccccccccccccccccccccccccccccccccccccc';
const MERGE = 'dddddddddddddddddddddddddddddddddddddddd';
const MAIN_TIP = 'eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee';

// The change's own diff of src/f.ts (base...head) and of src/g.ts (reviewed before, untouched since).
const PR_F = '@@ -1,2 +1,3 @@\n a\n+pr line\n b';
const PR_G = '@@ -1 +1,2 @@\n x\n+pr older line';
// The comparison since the last review: the fix to src/f.ts mixed with what main brought into it, and main's own file.
const CMP_F = '@@ -1,3 +1,4 @@\n a\n+pr line\n b\n+main change in f';
const CMP_MAIN = '@@ -0,0 +1 @@\n+main only code';

let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});

const delivery = (): Config['delivery'] => codehostDelivery(host, 500);
const context = (source: Source, event: string, payload: Record<string, unknown>): ToolContext => ({
  message: { v: 1, event_id: 'evt_1', subscription: 'review', source, event, delivery_id: 'd', received_at: '' },
  payload, delivery: delivery(), signal: AbortSignal.timeout(5000),
});
const diff = (ctx: ToolContext, input: Record<string, unknown> = { since_last_review: true }) => BUILTIN_TOOLS.get_change_diff!.run(input, ctx);

describe('GitHub', () => {
  const pr = () => context('github', 'pull_request', { action: 'synchronize', repository: { full_name: 'octo/widgets' }, pull_request: { number: 7, head: { sha: HEAD } } });
  const ghCommit = (sha: string, parents: string[] | undefined) => ({ sha, commit: { message: sha === MERGE ? "Merge branch 'main' into feat" : 'fix' }, ...(parents ? { parents: parents.map((p) => ({ sha: p, url: 'x', html_url: 'x' })) } : {}) });
  function scene(commits: unknown[], files = [
    { filename: 'src/f.ts', status: 'modified', additions: 2, deletions: 0, patch: CMP_F },
    { filename: 'main/lib.ts', status: 'added', additions: 1, deletions: 0, patch: CMP_MAIN },
  ], extra: Record<string, unknown> = {}): void {
    host.comments.set('/repos/octo/widgets/issues/7', [botComment(1, `old review\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`)]);
    host.files = [
      { filename: 'src/f.ts', status: 'modified', additions: 1, deletions: 0, patch: PR_F },
      { filename: 'src/g.ts', status: 'modified', additions: 1, deletions: 0, patch: PR_G },
    ];
    host.extra = (_req, res, url) => (url.pathname === `/repos/octo/widgets/compare/${OLD}...${HEAD}`
      ? (sendJson(res, 200, { status: 'ahead', ahead_by: commits.length, behind_by: 0, total_commits: commits.length, commits, files, ...extra }), true) : false);
  }

  test('after the base branch was merged in: the change\'s own diff of the files changed since, none of main\'s code', async () => {
    scene([ghCommit(FIX, [OLD]), ghCommit(MERGE, [FIX, MAIN_TIP])]);
    const out = await diff(pr());
    expect(out).not.toContain('main only code');
    expect(out).not.toContain('main change in f');
    expect(out).toContain(`merge commit ${MERGE.slice(0, 12)}`);
    expect(out).toContain(`--- src/f.ts\n${PR_F}`);
    expect(out).not.toContain('main/lib.ts');
    // Reviewed before and not touched since: not shown again.
    expect(out).not.toContain('pr older line');
  });

  test('a merge that brought only the base branch\'s files: nothing of the change to review, and no main code', async () => {
    scene([ghCommit(MERGE, [OLD, MAIN_TIP])], [{ filename: 'main/lib.ts', status: 'added', additions: 1, deletions: 0, patch: CMP_MAIN }]);
    const out = await diff(pr());
    expect(out).toMatch(/none of this change's own files changed/);
    expect(out).not.toContain('main only code');
  });

  test('asking for a merged-in file by path is refused; the change\'s own file is shown from its own diff', async () => {
    scene([ghCommit(FIX, [OLD]), ghCommit(MERGE, [FIX, MAIN_TIP])]);
    await expect(diff(pr(), { since_last_review: true, path: 'main/lib.ts' })).rejects.toMatchObject({ code: 'tool_bad_input' });
    const one = await diff(pr(), { since_last_review: true, path: 'src/f.ts' });
    expect(one).toContain(`--- src/f.ts\n${PR_F}`);
    expect(one).not.toContain('main change in f');
  });

  test('bad input: a listed commit without parents may be a merge, so the change\'s own diff is used', async () => {
    scene([ghCommit(FIX, [OLD]), ghCommit(MERGE, undefined)]);
    const out = await diff(pr());
    expect(out).toMatch(/cannot tell whether/);
    expect(out).toContain(`--- src/f.ts\n${PR_F}`);
    expect(out).not.toContain('main only code');
  });

  test('bad input: more commits than listed (total_commits) may hide a merge', async () => {
    scene([ghCommit(FIX, [OLD])], undefined, { total_commits: 400 });
    const out = await diff(pr());
    expect(out).toMatch(/cannot tell whether/);
    expect(out).not.toContain('main only code');
  });

  test('a merge whose comparison lists 300 files (cut): the change\'s whole own diff, saying so', async () => {
    const many = Array.from({ length: 300 }, (_, i) => ({ filename: `main/m${i}.ts`, status: 'added', additions: 1, deletions: 0, patch: CMP_MAIN }));
    scene([ghCommit(MERGE, [OLD, MAIN_TIP])], many);
    const out = await diff(pr());
    expect(out).toMatch(/the whole change/);
    expect(out).toContain(`--- src/f.ts\n${PR_F}`);
    expect(out).toContain(`--- src/g.ts\n${PR_G}`);
    expect(out).not.toContain('main only code');
  });

  test('control: no merge among the new commits keeps the plain comparison', async () => {
    scene([ghCommit(FIX, [OLD])], [{ filename: 'src/f.ts', status: 'modified', additions: 1, deletions: 0, patch: '@@ -2 +2,2 @@\n b\n+only the fix' }]);
    const out = await diff(pr());
    expect(out).toContain(`changes since the last review at ${OLD.slice(0, 12)}`);
    expect(out).toContain('+only the fix');
    expect(out).not.toContain('merge');
  });
});

describe('GitLab', () => {
  const project = '/api/v4/projects/1';
  const mr = () => context('gitlab', 'merge_request', { object_kind: 'merge_request', project: { id: 1 }, object_attributes: { iid: 1, action: 'update', last_commit: { id: HEAD } } });
  const glCommit = (id: string, parents: unknown) => ({ id, short_id: id.slice(0, 8), title: 'c', ...(parents === undefined ? {} : { parent_ids: parents }) });
  const glDiff = (path: string, text: string, added = false) => ({ old_path: path, new_path: path, diff: `${text}\n`, new_file: added, renamed_file: false, deleted_file: false });
  function scene(commits: unknown[], extra: Record<string, unknown> = {}): void {
    host.comments.set(`${project}/merge_requests/1`, [botComment(1, `old review\n${reviewedMarker(OLD)}\n${stickyMarker('review')}`, 'gitlab')]);
    host.mrDiffs = [glDiff('src/f.ts', PR_F), glDiff('src/g.ts', PR_G)];
    host.extra = (_req, res, url) => {
      if (url.pathname === `${project}/repository/merge_base`) return sendJson(res, 200, { id: OLD }), true;
      if (url.pathname === `${project}/repository/compare`) {
        return sendJson(res, 200, { commit: commits[commits.length - 1], commits, diffs: [glDiff('src/f.ts', CMP_F), glDiff('main/lib.ts', CMP_MAIN, true)], compare_timeout: false, compare_same_ref: false, ...extra }), true;
      }
      return false;
    };
  }

  test('after the target branch was merged in: the merge request\'s own diff of the files changed since, none of main\'s code', async () => {
    scene([glCommit(FIX, [OLD]), glCommit(MERGE, [FIX, MAIN_TIP])]);
    const out = await diff(mr());
    expect(out).not.toContain('main only code');
    expect(out).not.toContain('main change in f');
    expect(out).toContain(`merge commit ${MERGE.slice(0, 12)}`);
    expect(out).toContain(`--- src/f.ts\n${PR_F}`);
    expect(out).not.toContain('pr older line');
  });

  test('bad input: parent_ids null on a commit may hide a merge', async () => {
    scene([glCommit(FIX, [OLD]), glCommit(MERGE, null)]);
    const out = await diff(mr());
    expect(out).toMatch(/cannot tell whether/);
    expect(out).not.toContain('main only code');
  });

  test('a merge with an overflowing comparison: the whole own diff, saying so', async () => {
    scene([glCommit(MERGE, [OLD, MAIN_TIP])], { compare_timeout: true });
    const out = await diff(mr());
    expect(out).toMatch(/the whole change/);
    expect(out).toContain(`--- src/g.ts\n${PR_G}`);
    expect(out).not.toContain('main only code');
  });

  test('GitLab\'s compare says it left diffs out with compare_timeout (its Compare entity has no overflow field)', async () => {
    scene([glCommit(FIX, [OLD])], { compare_timeout: true });
    const out = await diff(mr());
    expect(out).toMatch(/left some diffs out/);
  });

  test('control: no merge keeps the plain comparison', async () => {
    scene([glCommit(FIX, [OLD])]);
    const out = await diff(mr());
    expect(out).toContain(`changes since the last review at ${OLD.slice(0, 12)}`);
    expect(out).toContain('main change in f');
  });
});
