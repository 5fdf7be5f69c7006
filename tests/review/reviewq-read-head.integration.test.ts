/**
 * Findings belong to the commit the run read (hunt 12 D1). A run reads the diff at A, the
 * author pushes B (three import lines on top: every line moves down by 3), and the review is
 * delivered while the change is at B. The run's diff reads stay at A: a later read in the
 * same run shows A's diff again (GitHub compare base...A, GitLab's version at A). The reply
 * names A (`hookagent-read`); delivery checks the findings against A's diff and posts them
 * on A (GitHub `commit_id` A, GitLab that version's refs): never at the same numbers in B.
 * When A's diff cannot be read again, or a force-push took A out of the change, the
 * findings are folded with that reason. A push before the run's first read is reviewed in
 * the run: the footer names the head the run read.
 */
import { BUILTIN_TOOLS, type RunReads, type ToolContext } from '../../functions/core/agent/tools';
import type { Config } from '../../functions/core/config/types';
import { findingBody, withFindings, type Finding } from '../../functions/core/delivery/findings';
import { reviewedCommitOf } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { FAKE_BASE_SHA, FAKE_BOT, FAKE_START_SHA, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { deliverComment, mrAt, reviewRequest, synchronize } from '../support/review-request';

const A = 'a'.repeat(40);
const B = 'c'.repeat(40);
const BODY_A = ['export function ratio(a: number, b: number) {', '  // ratio of a to b', ...Array.from({ length: 9 }, (_, i) => `  const v${i} = ${i};`), '  return a / b;', '}'];
const BODY_B = ['import { a } from "./a";', 'import { b } from "./b";', 'import { c } from "./c";', ...BODY_A];
const textAt: Record<string, string[]> = { [A]: BODY_A, [B]: BODY_B };
const added = (lines: string[]) => `@@ -0,0 +1,${lines.length} @@\n${lines.map((l) => `+${l}`).join('\n')}`;
const githubFiles = (sha: string) => [{ filename: 'src/calc.ts', status: 'added', additions: textAt[sha]!.length, deletions: 0, patch: added(textAt[sha]!) }];
const gitlabDiffs = (sha: string) => [{ old_path: 'src/calc.ts', new_path: 'src/calc.ts', diff: `${added(textAt[sha]!)}\n`, new_file: true, renamed_file: false, deleted_file: false }];
const short = (sha: string) => sha.slice(0, 12);

let host: FakeCodehost;
useFakeCodehost((started) => {
  host = started;
});
/** The change's head is `sha` now; the host keeps the diff of every earlier head in `diffsAt`. */
function at(sha: string): void {
  host.pullHead = sha;
  host.mrHead = sha;
  host.files = githubFiles(sha);
  host.mrDiffs = gitlabDiffs(sha);
}
beforeEach(() => {
  at(A);
  host.diffsAt.set(A, { files: githubFiles(A), mrDiffs: gitlabDiffs(A) });
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const project = '/api/v4/projects/1';
function runContext(source: Source, reads: RunReads): ToolContext {
  return {
    message: { v: 1, event_id: `evt_${source}`, subscription: 'review', source, event: source === 'github' ? 'pull_request' : 'merge_request', delivery_id: 'd', received_at: '' },
    payload: source === 'github' ? synchronize(A) : mrAt(A), delivery: settings(), signal: AbortSignal.timeout(5000), reads, findings: [],
  };
}
const division = (line: number): Finding => ({ path: 'src/calc.ts', line, side: 'RIGHT', severity: 'critical', body: 'Division by zero when b is 0.' });
const sticky = (source: Source) => [...host.comments.entries()].find(([k]) => k.startsWith(source === 'github' ? '/repos/' : '/api/v4/'))?.[1][0]?.body ?? '';
/** What each posted inline comment sits on: the line of the commit it names. */
function placed(source: Source): Array<{ commit: string; line: number; code: string | undefined }> {
  if (source === 'github') {
    return host.reviews.flatMap((r) => (r.comments as Array<{ line: number }>).map((c) => ({ commit: String(r.commit_id), line: c.line, code: textAt[String(r.commit_id)]?.[c.line - 1] })));
  }
  return host.discussions.map((d) => d.notes[0]!.position as { head_sha: string; new_line: number }).map((p) => ({ commit: p.head_sha, line: p.new_line, code: textAt[p.head_sha]?.[p.new_line - 1] }));
}
/** The reply of a run that read its diff at `read`, as the tool loop writes it. */
const replyOf = (findings: Finding[], read: string) => withFindings('One critical finding: division by zero.', findings, undefined, read);

describe.each(['github', 'gitlab'] as const)('%s', (source) => {
  test('a second diff read after a push shows the diff the run first read, not the new one', async () => {
    const reads: RunReads = {};
    const first = await BUILTIN_TOOLS.get_change_diff!.run({}, runContext(source, reads));
    expect(first).toContain('+  return a / b;');
    at(B);
    const again = await BUILTIN_TOOLS.get_change_diff!.run({ path: 'src/calc.ts' }, runContext(source, reads));
    expect(again).not.toContain('import { a }');
    expect(again).toContain(`the change moved on from ${short(A)}, the head this review reads, to ${short(B)}`);
    expect(await reads.head).toBe(A);
  });

  test('a finding read at A and delivered after B was pushed sits on A\'s line, and the footer names A', async () => {
    at(B);
    const outcome = await deliverComment(settings(), reviewRequest(settings(), replyOf([division(12), division(15)], A), `evt_moved_${source}`, A, source));
    expect(outcome).toMatchObject({ status: 'delivered' });
    // Line 15 is a line of B's diff only: it is not placed on B's code.
    expect(placed(source)).toEqual([{ commit: A, line: 12, code: '  return a / b;' }]);
    if (source === 'gitlab') expect(host.discussions[0]!.notes[0]!.position).toMatchObject({ base_sha: FAKE_BASE_SHA, start_sha: FAKE_START_SHA, head_sha: A });
    const summary = sticky(source);
    expect(reviewedCommitOf(summary)).toBe(A);
    expect(summary).toContain(`1 finding(s) are posted as inline comments on the diff of \`${short(A)}\`, the commit reviewed: the change moved on to \`${short(B)}\``);
    expect(summary).toContain('`src/calc.ts` line 15: Division by zero when b is 0. _(outside the diff)_');
  });

  test('when A\'s diff cannot be read again, the findings are folded with that reason, none placed on B', async () => {
    host.diffsAt.clear();
    at(B);
    await deliverComment(settings(), reviewRequest(settings(), replyOf([division(12)], A), `evt_lost_${source}`, A, source));
    expect(placed(source)).toEqual([]);
    expect(sticky(source)).toContain(`line 12: Division by zero when b is 0. _(the change moved on to ${short(B)} after the review read ${short(A)}, and the diff it read cannot be read again (`);
  });

  test('a force-push that took A out of the change folds the findings with that reason', async () => {
    const parent = '1'.repeat(40);
    host.history = { [parent]: [], [A]: [parent], [B]: [parent] };
    at(B);
    await deliverComment(settings(), reviewRequest(settings(), replyOf([division(12)], A), `evt_forced_${source}`, A, source));
    expect(placed(source)).toEqual([]);
    expect(sticky(source)).toContain(`_(the change moved on to ${short(B)} after the review read ${short(A)}, and a force-push took ${short(A)} out of it)_`);
  });

  test('a finding already posted on A (its thread) is not posted again after the push', async () => {
    at(B);
    const body = findingBody('review', division(12));
    if (source === 'github') {
      // GitHub moves the comment with its code (line 15 of B) and keeps where it was made.
      host.reviewComments.push({ path: 'src/calc.ts', line: 15, side: 'RIGHT', body, commit_id: B, original_commit_id: A, original_line: 12, user: { ...FAKE_BOT, type: 'User' } } as never);
    } else {
      host.discussions.push({ id: 'd0', notes: [{ body, position: { base_sha: FAKE_BASE_SHA, start_sha: FAKE_START_SHA, head_sha: A, new_path: 'src/calc.ts', old_path: 'src/calc.ts', new_line: 12 }, author: { id: FAKE_BOT.id, username: FAKE_BOT.login } } as never] });
    }
    await deliverComment(settings(), reviewRequest(settings(), replyOf([division(12)], A), `evt_again_${source}`, A, source));
    expect(source === 'github' ? host.reviews : host.discussions.slice(1)).toEqual([]);
    expect(sticky(source)).toContain('1 finding(s) were already posted as inline comments on the same lines by an earlier review.');
  });

  test('a push before the run\'s first read is reviewed in the run: findings and footer are of the head it read', async () => {
    at(B);
    const reads: RunReads = {};
    const read = await BUILTIN_TOOLS.get_change_diff!.run({}, runContext(source, reads));
    expect(read).toContain('import { a }');
    const head = await reads.head!;
    expect(head).toBe(B);
    await deliverComment(settings(), reviewRequest(settings(), replyOf([division(15)], head), `evt_before_${source}`, A, source));
    expect(placed(source)).toEqual([{ commit: B, line: 15, code: '  return a / b;' }]);
    expect(reviewedCommitOf(sticky(source))).toBe(B);
  });
});

test('GitLab: a version GitLab does not list folds the findings, and get_change_diff says why it cannot read', async () => {
  const reads: RunReads = {};
  await BUILTIN_TOOLS.get_change_diff!.run({}, runContext('gitlab', reads));
  host.diffsAt.clear();
  at(B);
  await expect(BUILTIN_TOOLS.get_change_diff!.run({}, runContext('gitlab', reads))).rejects.toMatchObject({
    code: 'tool_moved_on', message: expect.stringContaining('GitLab lists no version of the merge request at that commit'),
  });
  expect(host.server.requests.some((r) => r.url.startsWith(`${project}/merge_requests/1/versions`))).toBe(true);
});

test('a review asked for in a comment, read at A and delivered after the review of the newer push B, does not replace it', async () => {
  at(B);
  expect(await deliverComment(settings(), reviewRequest(settings(), 'Review of B.', 'evt_b', B))).toMatchObject({ status: 'delivered' });
  const asked = reviewRequest(settings(), replyOf([division(12)], A), 'evt_asked', A);
  const comment = { action: 'created', repository: { full_name: 'octo/widgets' }, issue: { number: 7, pull_request: { url: 'https://api.github.com/repos/octo/widgets/pulls/7' } }, comment: { id: 55, body: 'review again', user: { id: 1, login: 'dev' } } };
  const outcome = await deliverComment(settings(), { ...asked, message: { ...asked.message, event: 'issue_comment' }, payload: comment });
  expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining(`(not replaced: it already reviews ${short(B)}, the head now; this event's ${short(A)} is not)`) });
  expect({ shows: sticky('github').split('\n')[0], reviews: host.reviews.length }).toEqual({ shows: 'Review of B.', reviews: 0 });
});
