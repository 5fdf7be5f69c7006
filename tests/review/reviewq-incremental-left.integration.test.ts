/**
 * A finding on a line removed since the last review, in an incremental review (hunt 12 D3).
 *
 * The comparison last...head (GitHub compare, GitLab /repository/compare) numbers its
 * removed lines as in the LAST REVIEWED commit. A LEFT inline comment (GitHub side LEFT,
 * GitLab old_line) is numbered as in the pull request's BASE. After an earlier push moved
 * lines, a finding on a removed line landed on another line (or was folded as "outside the
 * diff"). `get_change_diff {"since_last_review": true}` now shows a file with lines removed
 * since then as the change's own hunks (base...head) that hold those changes, so the model
 * reads the numbers delivery places on.
 *
 * src/auth.ts: base has 30 lines; line 15 `  validate(input);`, line 20 `  audit(user);`.
 * L (reviewed): 5 import lines added on top, base line 21 changed.
 * H (head): L without `validate(input);` (L's line 20).
 * The model reads the incremental diff, takes the removed line's number and records a LEFT
 * finding there. The comment must be on `validate(input);`, base line 15.
 */
import { BUILTIN_TOOLS, type ToolContext } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { reviewedMarker, stickyMarker } from '../../functions/core/events/loop-guard';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { Source } from '../../functions/core/types';
import { botComment, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { deliverComment, mrAt, reviewRequest, synchronize } from '../support/review-request';

const L = '1'.repeat(40);
const H = '2'.repeat(40);
const BASE = Array.from({ length: 30 }, (_, i) => (i + 1 === 15 ? '  validate(input);' : i + 1 === 20 ? '  audit(user);' : `  step(${i + 1});`));

// base...H, as the pull request shows it (3 lines of context; the two changes share a hunk).
const PR_PATCH = [
  '@@ -1,3 +1,8 @@', ...[1, 2, 3, 4, 5].map((i) => `+import { m${i} } from "./m${i}";`), ...[1, 2, 3].map((n) => ` ${BASE[n - 1]}`),
  '@@ -12,13 +17,12 @@ export function handle(input, user) {', ...[12, 13, 14].map((n) => ` ${BASE[n - 1]}`), `-${BASE[14]}`,
  ...[16, 17, 18, 19, 20].map((n) => ` ${BASE[n - 1]}`), `-${BASE[20]}`, '+  step(21, fast);', ...[22, 23, 24].map((n) => ` ${BASE[n - 1]}`),
].join('\n');
// L...H: the only change since the last review, numbered as in L (base line n is L line n + 5).
const SINCE_PATCH = ['@@ -17,7 +17,6 @@ export function handle(input, user) {', ...[12, 13, 14].map((n) => ` ${BASE[n - 1]}`), `-${BASE[14]}`, ...[16, 17, 18].map((n) => ` ${BASE[n - 1]}`)].join('\n');

/** The old-side number of the removed line holding `needle`, read from a patch as a model reads it. */
function removedLineOf(text: string, needle: string): number {
  let old = 0;
  for (const line of text.split('\n')) {
    const h = /^@@ -(\d+)/.exec(line);
    if (h) old = Number(h[1]);
    else if (line.startsWith('-') && line.includes(needle)) return old;
    else if (line.startsWith(' ') || line.startsWith('-')) old++;
  }
  throw new Error(`${needle} not removed in:\n${text}`);
}

let host: FakeCodehost;
useFakeCodehost((h) => {
  host = h;
});
const project = '/api/v4/projects/1';
beforeEach(() => {
  host.pullHead = H;
  host.mrHead = H;
  host.files = [{ filename: 'src/auth.ts', status: 'modified', additions: 6, deletions: 2, patch: PR_PATCH }];
  host.mrDiffs = [{ old_path: 'src/auth.ts', new_path: 'src/auth.ts', diff: `${PR_PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false }];
  host.comments.set('/repos/octo/widgets/issues/7', [botComment(1, `Review of L.\n${reviewedMarker(L)}\n${stickyMarker('review')}`)]);
  host.extra = (_req, res, url) => {
    if (url.pathname === `/repos/octo/widgets/compare/${L}...${H}`) return sendJson(res, 200, { status: 'ahead', total_commits: 1, commits: [{ sha: H, parents: [{ sha: L }] }], files: [{ filename: 'src/auth.ts', status: 'modified', additions: 0, deletions: 1, patch: SINCE_PATCH }] }), true;
    if (url.pathname === `${project}/repository/merge_base`) return sendJson(res, 200, { id: L }), true;
    if (url.pathname === `${project}/repository/compare`) return sendJson(res, 200, { commits: [{ id: H, parent_ids: [L] }], diffs: [{ old_path: 'src/auth.ts', new_path: 'src/auth.ts', diff: `${SINCE_PATCH}\n`, new_file: false, renamed_file: false, deleted_file: false }] }), true;
    return false;
  };
});

function context(source: Source): ToolContext {
  return {
    message: { v: 1, event_id: `evt_left_${source}`, subscription: 'review', source, event: source === 'github' ? 'pull_request' : 'merge_request', delivery_id: 'd', received_at: '' },
    payload: source === 'github' ? synchronize(H) : mrAt(H), delivery: codehostDelivery(host, 1000), signal: AbortSignal.timeout(5000),
  };
}

describe.each(['github', 'gitlab'] as const)('%s', (source: Source) => {
  test('a finding on a line removed since the last review is placed on that removed line', async () => {
    if (source === 'gitlab') host.comments.set(`${project}/merge_requests/1`, [botComment(1, `Review of L.\n${reviewedMarker(L)}\n${stickyMarker('review')}`, 'gitlab')]);
    const settings: Config['delivery'] = codehostDelivery(host, 1000);
    const since = await BUILTIN_TOOLS.get_change_diff!.run({ since_last_review: true }, context(source));
    expect(since).toContain('changes since the last review');
    const line = removedLineOf(since, 'validate(input);');
    expect(since).toContain('1 file(s) with lines removed since then are shown as this change\'s own diff (base...head)');
    const finding: Finding = { path: 'src/auth.ts', line, side: 'LEFT', severity: 'major', body: 'Input validation removed: unvalidated input now reaches the handler.' };
    const outcome = await deliverComment(settings, reviewRequest(settings, withFindings('Verdict.', [finding]), `evt_left_${source}`, H, source));
    expect(outcome).toMatchObject({ status: 'delivered' });
    const placed = source === 'github'
      ? host.reviews.flatMap((r) => (r.comments ?? []) as Array<{ side: string; line: number }>).map((c) => ({ side: c.side, oldLine: c.line }))
      : host.discussions.map((d) => d.notes[0]!.position as { old_line: number }).map((p) => ({ side: 'LEFT', oldLine: p.old_line }));
    const sticky = [...host.comments.values()].flat().map((c) => c.body).join('\n');
    expect({ placed: placed.map((p) => ({ ...p, code: BASE[p.oldLine - 1] })), folded: /Findings not on changed lines[^]*/.exec(sticky)?.[0].split('\n')[1] })
      .toEqual({ placed: [{ side: 'LEFT', oldLine: 15, code: '  validate(input);' }], folded: undefined });
  });

  test('a line an earlier push added and this one removed is in no version of the pull request\'s diff: it is not shown', async () => {
    if (source === 'gitlab') host.comments.set(`${project}/merge_requests/1`, [botComment(1, `Review of L.\n${reviewedMarker(L)}\n${stickyMarker('review')}`, 'gitlab')]);
    // L added `debug(input);` after base line 25 (L line 31); H removes it: there the file is as in the base again.
    const since = ['@@ -28,7 +27,6 @@', ...[23, 24, 25].map((n) => ` ${BASE[n - 1]}`), '-  debug(input);', ...[26, 27, 28].map((n) => ` ${BASE[n - 1]}`)].join('\n');
    host.extra = (_req, res, url) => {
      if (url.pathname === `/repos/octo/widgets/compare/${L}...${H}`) return sendJson(res, 200, { status: 'ahead', total_commits: 1, commits: [{ sha: H, parents: [{ sha: L }] }], files: [{ filename: 'src/auth.ts', status: 'modified', additions: 0, deletions: 1, patch: since }] }), true;
      if (url.pathname === `${project}/repository/merge_base`) return sendJson(res, 200, { id: L }), true;
      if (url.pathname === `${project}/repository/compare`) return sendJson(res, 200, { commits: [{ id: H, parent_ids: [L] }], diffs: [{ old_path: 'src/auth.ts', new_path: 'src/auth.ts', diff: `${since}\n`, new_file: false, renamed_file: false, deleted_file: false }] }), true;
      return false;
    };
    // The pull request's own diff changes only the top of the file (its first hunk).
    const own = PR_PATCH.split('\n').slice(0, 9).join('\n');
    host.files = [{ filename: 'src/auth.ts', status: 'modified', additions: 5, deletions: 0, patch: own }];
    host.mrDiffs = [{ old_path: 'src/auth.ts', new_path: 'src/auth.ts', diff: `${own}\n`, new_file: false, renamed_file: false, deleted_file: false }];
    const out = await BUILTIN_TOOLS.get_change_diff!.run({ since_last_review: true }, context(source));
    expect(out).toContain('in 1 file(s) what changed since then is back as in the base');
    expect(out).not.toContain('debug(input);');
    expect(out).not.toContain('--- src/auth.ts');
  });
});
