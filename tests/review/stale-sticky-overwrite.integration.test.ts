/**
 * An older push's review delivered after the newer one's does not replace it (hunt 8 D5).
 * Two pushes a minute apart run side by side (agent.concurrency 4 by default; the lease
 * orders the edits, not the reviews). When the run for the first push is the slower one,
 * its delivery comes second: the sticky comment would show the review of an outdated
 * commit, and its footer would move "last reviewed" back. It is left alone when the
 * event's commit is an ancestor of the commit the sticky already reviewed (GitHub compare
 * `behind`, GitLab merge_base) and is not the head now; a force-push back to that commit
 * makes it the head, and then it is reviewed.
 */
import type { Config } from '../../functions/core/config/types';
import { withFindings, type Finding } from '../../functions/core/delivery/findings';
import type { DeliveryRequest } from '../../functions/core/delivery/target';
import { reviewedCommitOf } from '../../functions/core/events/loop-guard';
import type { Source } from '../../functions/core/types';
import { SAMPLE_PATCH, codehostDelivery, type FakeCodehost, useFakeCodehost } from '../support/fake-codehost';
import { sendJson } from '../support/local-http';
import { deliverComment, reviewRequest } from '../support/review-request';

const HEAD_A = 'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa';
const HEAD_B = 'bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb';
let host: FakeCodehost;
/** The pull/merge request's head as the host shows it now. */
let head = HEAD_B;
useFakeCodehost((started) => {
  host = started;
});
beforeEach(() => {
  // A, then B, were pushed; A is B's parent.
  head = HEAD_B;
  host.files = [{ filename: 'src/f.ts', status: 'modified', additions: 2, deletions: 1, patch: SAMPLE_PATCH }];
  host.extra = (_req, res, url) => {
    if (url.pathname === '/repos/octo/widgets/pulls/7') return sendJson(res, 200, { number: 7, state: 'open', head: { sha: head } }), true;
    if (url.pathname === `/repos/octo/widgets/compare/${HEAD_B}...${HEAD_A}`) return sendJson(res, 200, { status: 'behind', ahead_by: 0, behind_by: 1, total_commits: 0, commits: [], files: [] }), true;
    if (url.pathname === `/repos/octo/widgets/compare/${HEAD_A}...${HEAD_B}`) return sendJson(res, 200, { status: 'ahead', ahead_by: 1, behind_by: 0, total_commits: 1, commits: [{ sha: HEAD_B, parents: [{ sha: HEAD_A }] }], files: [] }), true;
    if (url.pathname === '/api/v4/projects/1/merge_requests/1') return sendJson(res, 200, { iid: 1, sha: head, diff_refs: { base_sha: '0'.repeat(39) + '1', start_sha: '0'.repeat(39) + '1', head_sha: head } }), true;
    if (url.pathname === '/api/v4/projects/1/repository/merge_base') {
      // The older of the two: A is B's parent.
      const refs = url.searchParams.getAll('refs[]');
      return sendJson(res, 200, { id: refs.includes(HEAD_A) ? HEAD_A : refs[0] }), true;
    }
    return false;
  };
});

const settings = (): Config['delivery'] => codehostDelivery(host, 1000);
const request = (reply: string, eventId: string, sha: string, source: Source = 'github') => reviewRequest(settings(), reply, eventId, sha, source);
const deliver = (r: DeliveryRequest) => deliverComment(settings(), r);
const githubSticky = () => host.comments.get('/repos/octo/widgets/issues/7')!;
const FINDING: Finding = { path: 'src/f.ts', line: 12, side: 'RIGHT', severity: 'critical', body: 'Division by zero.' };

test('GitHub: the review of an older push delivered last does not replace the review of the head, nor posts its findings', async () => {
  expect(await deliver(request('Review of B (the head): all good now.', 'evt_b', HEAD_B))).toMatchObject({ status: 'delivered' });
  // The slower run, for the earlier push A, finishes now.
  const outcome = await deliver(request(withFindings('Review of A: critical bug in f().', [FINDING]), 'evt_a', HEAD_A));
  expect(outcome).toMatchObject({ status: 'delivered', detail: expect.stringContaining(`not replaced: it already reviews ${HEAD_B.slice(0, 12)}`) });
  expect(githubSticky()).toHaveLength(1);
  const body = githubSticky()[0]!.body;
  expect({ shows: body.split('\n')[0], lastReviewed: reviewedCommitOf(body) }).toEqual({ shows: 'Review of B (the head): all good now.', lastReviewed: HEAD_B });
  expect(host.reviews).toHaveLength(0);
});

test('GitHub: a newer push\'s review replaces the older one as before', async () => {
  head = HEAD_B;
  await deliver(request('Review of A.', 'evt_a', HEAD_A));
  expect(await deliver(request('Review of B.', 'evt_b', HEAD_B))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  expect(reviewedCommitOf(githubSticky()[0]!.body)).toBe(HEAD_B);
});

test('GitHub: after a force-push back to the older commit (the head again), its review replaces the sticky comment', async () => {
  await deliver(request('Review of B.', 'evt_b', HEAD_B));
  head = HEAD_A;
  expect(await deliver(request('Review of A, the head again.', 'evt_a2', HEAD_A))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('(edited)') });
  const body = githubSticky()[0]!.body;
  expect({ shows: body.split('\n')[0], lastReviewed: reviewedCommitOf(body) }).toEqual({ shows: 'Review of A, the head again.', lastReviewed: HEAD_A });
});

test('GitLab: the same through merge_base', async () => {
  expect(await deliver(request('MR review of B.', 'evt_gb', HEAD_B, 'gitlab'))).toMatchObject({ status: 'delivered' });
  expect(await deliver(request('MR review of A.', 'evt_ga', HEAD_A, 'gitlab'))).toMatchObject({ status: 'delivered', detail: expect.stringContaining('not replaced') });
  const note = [...host.comments.entries()].find(([k]) => k.startsWith('/api/v4/'))![1];
  expect(note).toHaveLength(1);
  expect({ shows: note[0]!.body.split('\n')[0], lastReviewed: reviewedCommitOf(note[0]!.body) }).toEqual({ shows: 'MR review of B.', lastReviewed: HEAD_B });
});
